package merge

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/table"
)

// KeyLookup answers one question for a compaction: does a level above the
// output level already hold this key? It is where Paimon's LookupLevels
// sits. Implementations may rely on a merge asking for its keys in
// ascending key order (the merged output is produced in key order); a
// random-access lookup satisfies the contract trivially.
type KeyLookup interface {
	// Contains reports whether a record with key (the trimmed primary key,
	// in KeyTypes order) is stored above the output level.
	Contains(key table.Row) (bool, error)
}

// FirstRowCompactOptions returns the Options of Paimon's first-row
// compaction of sorted runs that include level-0 files into a level above 0
// (LookupMergeTreeCompactRewriter with FirstRowMergeFunctionWrapper): every
// key goes through the merge function, a lone record included (no reducer),
// and a key none of whose records comes from a level above 0 is dropped when
// higher holds it, so no key is ever stored at two levels above 0. A nil
// higher means nothing is stored above the output level. Records get their
// level from iterators implementing Leveled (BatchRun for the batch merge).
//
// This is the invariant Paimon's batch read of first-row tables relies on:
// it skips level 0 and reads levels >= 1 without merging them.
func (e *Engine) FirstRowCompactOptions(dropDelete bool, higher KeyLookup) (Options, error) {
	if e.name != EngineFirstRow {
		return Options{}, fmt.Errorf("first-row compaction options for a %s table", e.name)
	}
	o := e.ReaderOptions(dropDelete)
	o.NoReducer = true
	o.Higher = higher
	return o, nil
}

// NewReaderWith merges runs of this table with a fresh merge function and
// the given options (ReaderOptions, LookupOptions, FirstRowCompactOptions).
func (e *Engine) NewReaderWith(ctx context.Context, runs []Iterator, opts Options) *Reader {
	return NewReader(ctx, runs, e.NewFunction(), opts)
}
