package merge

import (
	"context"
	"errors"
	"fmt"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// Hit is the answer of a HigherLookup for one key: the first live record
// of the key in the levels above a compaction's output level, lowest level
// first (Paimon's LookupLevels with a position-persisting processor).
type Hit struct {
	// File is the data file holding the record, Entry its manifest entry.
	File  string
	Entry *manifest.Entry
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
// at most once per key, in the merge's key order, before the merge returns
// the key's record (or the batch holding it), never for a row an existing
// deletion vector already deletes. Calls are sequential but may come from
// a goroutine other than the caller's (the executor's batch path merges
// on its own goroutine). An error fails the merge.
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

// LookupCompact configures Paimon's lookup compaction of a lookup-style
// table other than first-row (LookupMergeTreeCompactRewriter with
// LookupChangelogMergeFunctionWrapper over LookupMergeFunction): the merge
// of sorted runs that include level-0 files into a level above 0. For each
// key, every record goes through it, a lone one included (no reducer):
//
//  1. high is the key's input record of the lowest level above 0, if any.
//  2. Without one, the key is looked up in Higher (the levels above the
//     output level). On a hit, a deletion-vector table (Deletions set)
//     marks the row it found deleted; the found record becomes high and
//     joins the key's records when Values is set (and always without
//     deletion vectors), placed before the first record it is older than
//     (sequence.field, then sequence number; equal goes after).
//  3. The result merges the key's level-0 records and high through the
//     merge function, in merge order.
//  4. For a key with a level-0 record, Changelog (when set) receives
//     before=high and after=result: the seam of changelog-producer=lookup.
//  5. With DropDelete a retract result is not output.
type LookupCompact struct {
	// Higher answers for the levels above the output level (nil: nothing
	// is stored there, nothing is looked up). With Values it must be
	// opened with values (Hit.HasValue).
	Higher HigherLookup
	// Deletions receives the rows the lookups supersede: set for
	// deletion-vector tables, nil otherwise.
	Deletions DeletionSink
	// Values inserts looked-up records among the key's records: Paimon
	// persists values in the lookup files of deletion-vector tables when
	// they produce changelog, use an engine other than deduplicate, or a
	// sequence.field (Engine.LookupPersistsValues); without deletion
	// vectors it always does.
	Values bool
	// Changelog, when set, is called for every key with a level-0 record
	// with before = high (nil if there is none) and after = the merged
	// record (ok=false: the merge function yielded none). The records are
	// the merge's; a hook keeping them must copy what it keeps. No
	// changelog files are written by this package.
	Changelog func(before *table.KeyValue, after table.KeyValue, ok bool) error
	// Equal and Batches, on the batch path, replace Changelog: the
	// changelog records (Changes with Equal as the equaliser) arrive as
	// batches of the codec's layout in key order, written column by column
	// (the batch is the reader's: consume it before returning).
	Equal   func(a, b table.Row) bool
	Batches func(*datafile.Batch) error
}

// LookupPersistsValues is the processor Paimon picks for the lookup files
// of a deletion-vector table (MergeTreeCompactManagerFactory): the looked
// up record's value joins the merge when the table produces changelog, its
// engine is not deduplicate, or it has a sequence.field; otherwise only the
// row's position is kept (the found row is marked deleted and the
// compaction's own records win).
func (e *Engine) LookupPersistsValues(changelog bool) bool {
	return changelog || e.name != EngineDeduplicate || len(e.seqFields) > 0
}

// LookupCompactOptions returns the Options of Paimon's lookup compaction
// of sorted runs that include level-0 files into a level above 0, for any
// engine: first-row as FirstRowCompactOptions (lc.Higher only; first-row
// tables have no deletion vectors), the others as LookupCompact says.
func (e *Engine) LookupCompactOptions(dropDelete bool, lc LookupCompact) (Options, error) {
	if e.name == EngineFirstRow {
		if lc.Deletions != nil || lc.Changelog != nil || lc.Values {
			return Options{}, errors.New("first-row lookup compaction takes no deletion vectors, values or changelog hook")
		}
		return e.FirstRowCompactOptions(dropDelete, lc.Higher)
	}
	if lc.Deletions == nil && lc.Higher != nil && !lc.Values {
		return Options{}, errors.New("a lookup compaction without deletion vectors merges the looked-up records: it needs values")
	}
	o := e.ReaderOptions(dropDelete)
	o.Lookup = true
	o.NoReducer = true
	o.LookupCompact = &lc
	return o, nil
}
