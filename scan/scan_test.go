package scan_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

func newFirstRowTable(t *testing.T) *table.Table {
	t.Helper()
	fields := table.RowType{
		{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true}},
	}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, map[string]string{"merge-engine": "first-row", "bucket": "1"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(context.Background(), fileio.NewLocal(), t.TempDir(), "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func writeKeys(t *testing.T, tb *table.Table, user, tag string, keys ...int64) {
	t.Helper()
	ctx := context.Background()
	w, err := write.NewWriter(ctx, tb, user)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := w.Write(table.RowKindInsert, table.Row{k, fmt.Sprintf("%s%d", tag, k)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func reopen(t *testing.T, tb *table.Table) *table.Table {
	t.Helper()
	tb, err := table.OpenPath(context.Background(), fileio.NewLocal(), tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// lift moves the level-0 files of the latest snapshot to level by a
// metadata-only COMPACT commit; edit may change the added file's metadata.
func lift(t *testing.T, tb *table.Table, level int32, edit func(*manifest.DataFileMeta)) {
	t.Helper()
	ctx := context.Background()
	tb = reopen(t, tb)
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tb.FileSet(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var dels, adds []manifest.Entry
	for _, b := range fs.Buckets() {
		for _, e := range b.Files {
			if e.File.Level != 0 {
				continue
			}
			del := e
			del.Kind = manifest.FileKindDelete
			add := e
			add.Kind = manifest.FileKindAdd
			add.File.Level = level
			if edit != nil {
				edit(&add.File)
			}
			dels, adds = append(dels, del), append(adds, add)
		}
	}
	if _, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "lift", CommitIdentifier: int64(level),
		Entries: append(dels, adds...)}); err != nil {
		t.Fatal(err)
	}
}

func scanAll(t *testing.T, tb *table.Table) []string {
	t.Helper()
	ctx := context.Background()
	sc, err := scan.New(ctx, reopen(t, tb), nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	if err := sc.Each(ctx, func(r table.Row) error {
		rows = append(rows, fmt.Sprint(r...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}

// Java's batch read of a first-row table skips level 0 and, when every file
// above has a known delete row count of 0, reads those files without merging
// (MergeTreeSplitGenerator / PrimaryKeyTableRawFileSplitReadProvider): a key
// stored at two levels >= 1 is read twice. compactd's scan does the same, so
// it shows what Java shows, duplicates included; otherwise it merges.
func TestFirstRowScanReadsLevelsAboveZeroAsJavaDoes(t *testing.T) {
	zero := int64(0)
	cases := []struct {
		name string
		// edit is applied to the lifted level-4 file.
		edit func(*manifest.DataFileMeta)
		want []string
	}{
		{"known zero delete counts are read raw, so a key at two levels is read twice",
			func(m *manifest.DataFileMeta) { m.DeleteRowCount = &zero },
			[]string{"0first0", "0later0", "1first1", "1later1", "2first2", "3first3"}},
		{"an unknown delete count makes the read merge the levels",
			func(m *manifest.DataFileMeta) { m.DeleteRowCount = nil },
			[]string{"0first0", "1first1", "2first2", "3first3"}},
		{"a file counting retractions makes the read merge the levels",
			func(m *manifest.DataFileMeta) { n := int64(1); m.DeleteRowCount = &n },
			[]string{"0first0", "1first1", "2first2", "3first3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := newFirstRowTable(t)
			writeKeys(t, tb, "w1", "first", 0, 1, 2, 3)
			if got := scanAll(t, tb); len(got) != 0 {
				t.Fatalf("level-0 rows are visible: %v", got)
			}
			lift(t, tb, 5, nil)
			writeKeys(t, tb, "w2", "later", 0, 1)
			lift(t, tb, 4, c.edit)
			got := scanAll(t, tb)
			// Rows come in key order (the records of one key in any order).
			if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i][0] < got[j][0] }) {
				t.Errorf("rows not in key order: %v", got)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("scan = %v, want %v", got, c.want)
			}
		})
	}
}

// Java reads a lookup-style table (here force-lookup) through
// LookupMergeFunction: of a key's records above level 0 only the lowest
// level's counts, since Java's lookup compaction merged the levels above into
// it. An aggregation table shows the difference: the level-4 record already
// carries level 5's sum.
func TestLookupTablesMergeOnlyTheLowestLevelAboveZero(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "force-lookup": "true"}, "[1 13]"},
		{map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}, "[1 14]"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.opts), func(t *testing.T) {
			fields := table.RowType{
				{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}},
				{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
			}
			opts := map[string]string{"bucket": "1"}
			for k, v := range c.opts {
				opts[k] = v
			}
			s, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, opts, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := write.CreateTable(ctx, fileio.NewLocal(), t.TempDir(), "db", "t", s)
			if err != nil {
				t.Fatal(err)
			}
			put := func(user string, v int64) {
				w, err := write.NewWriter(ctx, tb, user)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Write(table.RowKindInsert, table.Row{int64(1), v}); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			put("w1", 1)
			lift(t, tb, 5, nil)
			put("w2", 3) // what Java's lookup compaction writes: level 5's 1 plus 2
			lift(t, tb, 4, nil)
			put("w3", 10)
			sc, err := scan.New(ctx, reopen(t, tb), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if err := sc.Each(ctx, func(r table.Row) error { got = append(got, fmt.Sprint(r)); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("scan = %v, want [%s]", got, c.want)
			}
		})
	}
}
