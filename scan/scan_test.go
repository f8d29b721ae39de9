package scan_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
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

// liveFiles returns the live files of the latest snapshot.
func liveFiles(t *testing.T, tb *table.Table) []*manifest.Entry {
	t.Helper()
	ctx := context.Background()
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tb.FileSet(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var out []*manifest.Entry
	for _, b := range fs.Buckets() {
		for i := range b.Files {
			out = append(out, &b.Files[i])
		}
	}
	return out
}

// higherTable is a first-row table with level 5 = files [0,2,4] and
// [10,12], level 3 = file [5,7].
func higherTable(t *testing.T) *table.Table {
	tb := newFirstRowTable(t)
	writeKeys(t, tb, "w1", "a", 0, 2, 4)
	writeKeys(t, tb, "w2", "b", 10, 12)
	lift(t, tb, 5, nil)
	writeKeys(t, tb, "w3", "c", 5, 7)
	lift(t, tb, 3, nil)
	return reopen(t, tb)
}

func openHigher(t *testing.T, tb *table.Table, files []*manifest.Entry) (*scan.HigherLevels, error) {
	s := tb.Schema()
	read := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
	schemaOf := func(context.Context, int64) (datafile.Schema, error) { return read, nil }
	return scan.NewHigherLevels(context.Background(), tb, files, []table.DataType{{Root: table.TypeBigInt}}, read, schemaOf)
}

func TestHigherLevelsAnswersWhetherALevelHoldsAKey(t *testing.T) {
	type ask struct {
		key  int64
		want bool
	}
	cases := []struct {
		name    string
		missing int64 // a key of a file deleted from storage first (-1: none)
		asks    []ask
		wantErr string // for the last ask
	}{
		{"ascending keys, held or not, across levels and gaps", -1, []ask{
			{-1, false}, {0, true}, {1, false}, {3, false}, {4, true}, {5, true}, {6, false}, {7, true},
			{8, false}, {10, true}, {11, false}, {12, true}, {13, false}}, ""},
		{"keys asked out of order are still answered", -1, []ask{
			{4, true}, {2, true}, {0, true}, {12, true}, {10, true}, {7, true}, {5, true}, {6, false}, {3, false}}, ""},
		{"a file no asked key falls into is never read", 10, []ask{
			{0, true}, {4, true}, {5, true}, {8, false}, {13, false}}, ""},
		{"a file an asked key falls into must be readable", 10, []ask{
			{0, true}, {11, false}}, "level 5"},
	}
	for _, c := range cases {
		for _, byRows := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/by rows %v", c.name, byRows), func(t *testing.T) {
				ctx := context.Background()
				tb := higherTable(t)
				files := liveFiles(t, tb)
				if c.missing >= 0 {
					for _, e := range files {
						lo, _ := table.DecodeBinaryRow([]table.DataType{{Root: table.TypeBigInt}}, e.File.MinKey)
						hi, _ := table.DecodeBinaryRow([]table.DataType{{Root: table.TypeBigInt}}, e.File.MaxKey)
						if lo[0].(int64) <= c.missing && c.missing <= hi[0].(int64) {
							path, err := tb.DataFilePath(e)
							if err != nil {
								t.Fatal(err)
							}
							if err := tb.FileIO().Delete(ctx, path); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				h, err := openHigher(t, tb, files)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				if byRows {
					scan.ReadKeysByRows(h)
				}
				if h.Levels() != 2 {
					t.Fatalf("%d levels, want 2", h.Levels())
				}
				for i, a := range c.asks {
					got, err := h.Contains(table.Row{a.key})
					if i == len(c.asks)-1 && c.wantErr != "" {
						if err == nil || !strings.Contains(err.Error(), c.wantErr) {
							t.Fatalf("Contains(%d): error %v, want one naming %q", a.key, err, c.wantErr)
						}
						return
					}
					if err != nil {
						t.Fatalf("Contains(%d): %v", a.key, err)
					}
					if got != a.want {
						t.Errorf("Contains(%d) = %v, want %v", a.key, got, a.want)
					}
				}
			})
		}
	}
}

func TestHigherLevelsRefusesWhatNoValidTableHolds(t *testing.T) {
	tb := higherTable(t)
	files := liveFiles(t, tb)
	var l3, l5 *manifest.Entry
	for _, e := range files {
		switch e.File.Level {
		case 3:
			l3 = e
		case 5:
			l5 = e
		}
	}
	overlap := *l5
	overlap.File.Level = 3
	overlap.File.MinKey, overlap.File.MaxKey = l3.File.MinKey, l3.File.MaxKey
	overlap.File.FileName = "overlapping.parquet"
	level0 := *l5
	level0.File.Level = 0
	for name, c := range map[string]struct {
		files []*manifest.Entry
		want  string
	}{
		"two files of one level overlap": {[]*manifest.Entry{l3, &overlap}, "overlapping data files"},
		"a level-0 file":                 {[]*manifest.Entry{&level0}, "level 0"},
	} {
		if _, err := openHigher(t, tb, c.files); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.want)
		}
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
