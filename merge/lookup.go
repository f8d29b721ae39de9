package merge

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/table"
)

// Hit is the answer of a HigherLookup for one key: the first live record
// of the key in the levels above a compaction's output level, lowest level
// first (Paimon's LookupLevels with a position-persisting processor).
type Hit struct {
	// File is the data file holding the record, Entry its manifest entry.
	File  string
	Entry *table.ManifestEntry
	// Level is the file's level (> 0).
	Level int
	// Pos is the record's physical position in File: 0-based over every
	// row of the file, including rows its deletion vector deletes. It is
	// what a deletion vector of File marks.
	Pos int64
	// KV is the record. Its Key is always set; Seq, Kind and Value only
	// when the lookup was opened with values (HasValue).
	KV       table.KeyValue
	HasValue bool
}

// HigherLookup is Paimon's LookupLevels seen from a compaction: point
// lookups of a key in the levels above the output level. Rows that a
// file's existing deletion vector deletes are invisible to it.
//
// A merge asks for its keys in ascending key order (its output is in key
// order); implementations may be faster for that order but must answer
// any order correctly.
type HigherLookup interface {
	// Lookup returns the first record of key (the trimmed primary key, in
	// KeyTypes order) stored above the output level; ok=false if none is.
	Lookup(key table.Row) (hit Hit, ok bool, err error)
}

// DeletionSink receives the rows a lookup compaction of a deletion-vector
// table supersedes: the row at position pos of data file file (a file
// above the output level) must be marked deleted in that file's deletion
// vector (Paimon's BucketedDvMaintainer.notifyNewDeletion). It is called
// at most once per key, in the merge's key order, before the key's merged
// record is returned. An error fails the merge.
type DeletionSink interface {
	NotifyNewDeletion(file string, pos int64) error
}

// FirstRowCompactOptions returns the Options of Paimon's first-row
// compaction of sorted runs that include level-0 files into a level above 0
// (LookupMergeTreeCompactRewriter with FirstRowMergeFunctionWrapper): every
// key goes through the merge function, a lone record included (no reducer),
// and a key none of whose added records comes from a level above 0 is
// dropped when higher holds it, so no key is ever stored at two levels
// above 0. A nil higher means nothing is stored above the output level.
// Records get their level from iterators implementing Leveled (BatchRun for
// the batch merge).
//
// This is the invariant Paimon's batch read of first-row tables relies on:
// it skips level 0 and reads levels >= 1 without merging them.
func (e *Engine) FirstRowCompactOptions(dropDelete bool, higher HigherLookup) (Options, error) {
	if e.name != EngineFirstRow {
		return Options{}, fmt.Errorf("first-row compaction options for a %s table", e.name)
	}
	o := e.ReaderOptions(dropDelete)
	o.NoReducer = true
	o.Higher = higher
	return o, nil
}

// NewReaderWith merges runs of this table with a fresh merge function and
// the given options (ReaderOptions, LookupOptions, FirstRowCompactOptions,
// LookupCompactOptions).
func (e *Engine) NewReaderWith(ctx context.Context, runs []Iterator, opts Options) *Reader {
	return NewReader(ctx, runs, e.NewFunction(), opts)
}
