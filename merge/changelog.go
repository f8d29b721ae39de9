package merge

import (
	"strings"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// Options of Paimon's compaction changelog (CoreOptions).
const (
	OptChangelogProducer         = "changelog-producer"
	OptRowDeduplicate            = "changelog-producer.row-deduplicate"
	OptRowDeduplicateIgnoreField = "changelog-producer.row-deduplicate-ignore-fields"
)

// FullChangelog configures Paimon's full-compaction changelog
// (changelog-producer=full-compaction: FullChangelogMergeTreeCompactRewriter
// with FullChangelogMergeFunctionWrapper), for a merge whose output is the
// highest level: the changelog of a key is the difference between its
// record at MaxLevel before the compaction (the previous full compaction's
// result) and the merged one. The merge keeps the reducer: a lone record
// is not given to the merge function.
//
// Changelog is called for every key that has a record below MaxLevel, with
// before = the key's MaxLevel record (nil if none) and after = the merged
// record (ok=false: the merge function yielded none); a key whose only
// record is at MaxLevel did not change and has no changelog. Changes turns
// the pair into changelog records. The records are the merge's: a hook that
// keeps them must copy them.
//
// On the batch path, Batches (when set) replaces Changelog: the changelog
// records, Changes with Equal as the equaliser, arrive as batches of the
// codec's layout in key order (the batch is the reader's: consume it
// before returning), so that records new to the top level are copied
// column by column rather than materialized.
type FullChangelog struct {
	MaxLevel  int
	Changelog func(before *table.KeyValue, after table.KeyValue, ok bool) error
	Equal     func(a, b table.Row) bool
	Batches   func(*datafile.Batch) error
}

// Changes emits the changelog records of one key whose record before the
// compaction is before (nil: none) and after it after (ok=false: none), as
// Paimon's changelog wrappers do (LookupChangelogMergeFunctionWrapper.
// setChangelog; FullChangelogMergeFunctionWrapper alike):
//
//   - no previous record (or a retraction): +I of after, if it is an addition;
//   - after is not an addition: -D of before;
//   - else -U of before and +U of after, unless equal (nil: never) says their
//     values are equal (changelog-producer.row-deduplicate).
//
// Each record keeps the key, sequence number and value of the record it
// comes from, with the changelog's row kind.
func Changes(before *table.KeyValue, after table.KeyValue, ok bool, equal func(a, b table.Row) bool, emit func(table.KeyValue) error) error {
	added := ok && after.Kind.IsAdd()
	if before == nil || !before.Kind.IsAdd() {
		if added {
			return emit(withKind(after, table.RowKindInsert))
		}
		return nil
	}
	if !added {
		return emit(withKind(*before, table.RowKindDelete))
	}
	if equal != nil && equal(before.Value, after.Value) {
		return nil
	}
	if err := emit(withKind(*before, table.RowKindUpdateBefore)); err != nil {
		return err
	}
	return emit(withKind(after, table.RowKindUpdateAfter))
}

func withKind(kv table.KeyValue, k table.RowKind) table.KeyValue {
	kv.Kind = k
	return kv
}

// ChangelogEqualiser is the value equaliser of
// changelog-producer.row-deduplicate (KeyValueFileStore's
// ValueEqualiserSupplier.fromIgnoreFields): nil when the option is off;
// otherwise it compares two value rows on every field but those named in
// changelog-producer.row-deduplicate-ignore-fields (split on commas, names
// as written: Java does not trim them).
func ChangelogEqualiser(options map[string]string, fields table.RowType) (func(a, b table.Row) bool, error) {
	on, err := boolOption(options, OptRowDeduplicate, false)
	if err != nil || !on {
		return nil, err
	}
	ignore := map[string]bool{}
	if v, ok := options[OptRowDeduplicateIgnoreField]; ok {
		for _, name := range strings.Split(v, ",") {
			ignore[name] = true
		}
	}
	var idx []int
	var types []table.DataType
	for i, f := range fields {
		if !ignore[f.Name] {
			idx = append(idx, i)
			types = append(types, f.Type)
		}
	}
	return func(a, b table.Row) bool {
		for j, i := range idx {
			var x, y any
			if i < len(a) {
				x = a[i]
			}
			if i < len(b) {
				y = b[i]
			}
			if table.CompareValues(types[j], x, y) != 0 {
				return false
			}
		}
		return true
	}, nil
}
