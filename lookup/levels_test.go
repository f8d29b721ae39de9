package lookup

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

var keyTypes = []table.DataType{{Root: table.TypeBigInt}}

func newTable(t *testing.T) *table.Table {
	t.Helper()
	fields := table.RowType{
		{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true}},
		{ID: 2, Name: "n", Type: table.DataType{Root: table.TypeInt, Nullable: true}},
	}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, map[string]string{"bucket": "1"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(context.Background(), fileio.NewLocal(), t.TempDir(), "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// writeFile writes recs (in key order) as one data file at level and
// returns its manifest entry (not committed: the lookup only reads files).
func writeFile(t *testing.T, tb *table.Table, level int32, recs []table.KeyValue) *manifest.Entry {
	t.Helper()
	part, err := table.EncodeBinaryRow(nil, table.Row{})
	if err != nil {
		t.Fatal(err)
	}
	r := write.NewRoller(context.Background(), tb, part, 0, level, manifest.FileSourceCompact)
	for _, kv := range recs {
		if err := r.Write(kv); err != nil {
			t.Fatal(err)
		}
	}
	metas, err := r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(metas) != 1 {
		t.Fatalf("%d files written, want 1", len(metas))
	}
	return &manifest.Entry{Kind: manifest.FileKindAdd, Partition: part, Bucket: 0, TotalBuckets: 1, File: metas[0]}
}

func kv(k int64, seq int64, kind table.RowKind, v string) table.KeyValue {
	return table.KeyValue{Key: table.Row{k}, Seq: seq, Kind: kind, Value: table.Row{k, v, int32(k * 10)}}
}

func open(t *testing.T, tb *table.Table, files []*manifest.Entry, opts Options, byRows bool) (*Levels, error) {
	t.Helper()
	s := tb.Schema()
	read := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
	schemaOf := func(context.Context, int64) (datafile.Schema, error) { return read, nil }
	h, err := New(context.Background(), tb, files, keyTypes, read, schemaOf, opts)
	if err == nil && byRows {
		h.keyCodec, h.kvCodec = nil, nil
	}
	return h, err
}

// dvSet is an in-memory deletion vector.
type dvSet map[int64]bool

func (d dvSet) IsDeleted(pos int64) bool { return d[pos] }

// higherFiles are level 5 = files [0,2,4] and [10,12], level 3 = [5,7].
func higherFiles(t *testing.T, tb *table.Table) []*manifest.Entry {
	ins := table.RowKindInsert
	return []*manifest.Entry{
		writeFile(t, tb, 5, []table.KeyValue{kv(0, 1, ins, "a0"), kv(2, 2, ins, "a2"), kv(4, 3, ins, "a4")}),
		writeFile(t, tb, 5, []table.KeyValue{kv(10, 4, ins, "b10"), kv(12, 5, ins, "b12")}),
		writeFile(t, tb, 3, []table.KeyValue{kv(5, 6, ins, "c5"), kv(7, 7, ins, "c7")}),
	}
}

func TestLevelsAnswerWhereALevelHoldsAKey(t *testing.T) {
	type ask struct {
		key  int64
		file int   // index into higherFiles, -1: not held
		pos  int64 // position in that file
	}
	cases := []struct {
		name    string
		missing int // a file deleted from storage first (-1: none)
		asks    []ask
		wantErr string // for the last ask
	}{
		{"ascending keys, held or not, across levels and gaps", -1, []ask{
			{-1, -1, 0}, {0, 0, 0}, {1, -1, 0}, {3, -1, 0}, {4, 0, 2}, {5, 2, 0}, {6, -1, 0}, {7, 2, 1},
			{8, -1, 0}, {10, 1, 0}, {11, -1, 0}, {12, 1, 1}, {13, -1, 0}}, ""},
		{"keys asked out of order are still answered", -1, []ask{
			{4, 0, 2}, {2, 0, 1}, {0, 0, 0}, {12, 1, 1}, {10, 1, 0}, {7, 2, 1}, {5, 2, 0}, {6, -1, 0}, {3, -1, 0}}, ""},
		{"a key asked twice gets the same answer", -1, []ask{{2, 0, 1}, {2, 0, 1}, {4, 0, 2}}, ""},
		{"a file no asked key falls into is never read", 1, []ask{
			{0, 0, 0}, {4, 0, 2}, {5, 2, 0}, {8, -1, 0}, {13, -1, 0}}, ""},
		{"a file an asked key falls into must be readable", 1, []ask{
			{0, 0, 0}, {11, -1, 0}}, "level 5"},
	}
	for _, c := range cases {
		for _, values := range []bool{false, true} {
			for _, byRows := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/values %v/by rows %v", c.name, values, byRows), func(t *testing.T) {
					ctx := context.Background()
					tb := newTable(t)
					files := higherFiles(t, tb)
					if c.missing >= 0 {
						path, err := tb.DataFilePath(files[c.missing])
						if err != nil {
							t.Fatal(err)
						}
						if err := tb.FileIO().Delete(ctx, path); err != nil {
							t.Fatal(err)
						}
					}
					h, err := open(t, tb, files, Options{Values: values}, byRows)
					if err != nil {
						t.Fatal(err)
					}
					defer h.Close()
					if h.Levels() != 2 {
						t.Fatalf("%d levels, want 2", h.Levels())
					}
					for i, a := range c.asks {
						hit, ok, err := h.Lookup(table.Row{a.key})
						if i == len(c.asks)-1 && c.wantErr != "" {
							if err == nil || !strings.Contains(err.Error(), c.wantErr) {
								t.Fatalf("Lookup(%d): error %v, want one naming %q", a.key, err, c.wantErr)
							}
							return
						}
						if err != nil {
							t.Fatalf("Lookup(%d): %v", a.key, err)
						}
						if ok != (a.file >= 0) {
							t.Fatalf("Lookup(%d) found %v, want %v", a.key, ok, a.file >= 0)
						}
						if !ok {
							continue
						}
						f := files[a.file]
						if hit.File != f.File.FileName || hit.Entry != f || hit.Level != int(f.File.Level) || hit.Pos != a.pos {
							t.Errorf("Lookup(%d) = %s level %d pos %d, want %s level %d pos %d", a.key, hit.File, hit.Level, hit.Pos, f.File.FileName, f.File.Level, a.pos)
						}
						if hit.HasValue != values || fmt.Sprint(hit.KV.Key) != fmt.Sprint(table.Row{a.key}) {
							t.Errorf("Lookup(%d): key %v, has value %v", a.key, hit.KV.Key, hit.HasValue)
						}
					}
				})
			}
		}
	}
}

func TestLevelsRefuseWhatNoValidTableHolds(t *testing.T) {
	tb := newTable(t)
	files := higherFiles(t, tb)
	l5, l3 := files[0], files[2]
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
		if _, err := open(t, tb, c.files, Options{}, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.want)
		}
	}
}

// modelFile is a written file with its records in file order.
type modelFile struct {
	e    *manifest.Entry
	recs []table.KeyValue
	dv   dvSet
}

// TestLevelsMatchANaiveModel checks random levels of real Parquet files
// with random existing deletion vectors against the definition: the hit
// for a key is the first (lowest) level with a file holding a row of the
// key that its deletion vector does not delete, at that row's position.
func TestLevelsMatchANaiveModel(t *testing.T) {
	seed := int64(20261201)
	for round := 0; round < 24; round++ {
		rnd := rand.New(rand.NewSource(seed + int64(round)))
		values, byRows, shuffled := round%2 == 1, round%4 >= 2, round%8 >= 6
		t.Run(fmt.Sprintf("seed %d/values %v/by rows %v/shuffled %v", seed+int64(round), values, byRows, shuffled), func(t *testing.T) {
			tb := newTable(t)
			var model []modelFile
			var files []*manifest.Entry
			dvs := map[string]DeletionVector{}
			seq := int64(0)
			for level := int32(1); level <= 5; level++ {
				if rnd.Intn(4) == 0 {
					continue // an empty level
				}
				// Disjoint key ranges for the level's files, in key order.
				lo := int64(rnd.Intn(10))
				for f := 0; f < 1+rnd.Intn(3); f++ {
					var recs []table.KeyValue
					for k := lo; k < lo+int64(5+rnd.Intn(40)); k++ {
						if rnd.Intn(3) == 0 {
							continue
						}
						seq += int64(rnd.Intn(5)) - 1 // sequence numbers not ordered by level
						kind := table.RowKindInsert
						if rnd.Intn(6) == 0 {
							kind = table.RowKindDelete
						}
						recs = append(recs, kv(k, seq, kind, fmt.Sprintf("l%d-%d", level, k)))
					}
					if len(recs) == 0 {
						continue
					}
					lo = recs[len(recs)-1].Key[0].(int64) + 1 + int64(rnd.Intn(5))
					e := writeFile(t, tb, level, recs)
					mf := modelFile{e: e, recs: recs}
					if rnd.Intn(2) == 0 {
						mf.dv = dvSet{}
						for p := range recs {
							if rnd.Intn(3) == 0 {
								mf.dv[int64(p)] = true
							}
						}
						dvs[e.File.FileName] = mf.dv
					}
					model = append(model, mf)
					files = append(files, e)
				}
			}
			rnd.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
			h, err := open(t, tb, files, Options{Values: values, DeletionVectors: dvs}, byRows)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			var keys []int64
			for k := int64(-2); k < 200; k++ {
				if rnd.Intn(3) > 0 {
					keys = append(keys, k)
				}
			}
			if shuffled {
				rnd.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			}
			hits := 0
			for _, k := range keys {
				want, wantOK := naiveLookup(model, k)
				got, ok, err := h.Lookup(table.Row{k})
				if err != nil {
					t.Fatalf("Lookup(%d): %v", k, err)
				}
				if ok != wantOK {
					t.Fatalf("Lookup(%d) found %v, want %v", k, ok, wantOK)
				}
				if !ok {
					continue
				}
				hits++
				if got.File != want.File || got.Level != want.Level || got.Pos != want.Pos {
					t.Fatalf("Lookup(%d) = %s level %d pos %d, want %s level %d pos %d", k, got.File, got.Level, got.Pos, want.File, want.Level, want.Pos)
				}
				if values {
					if !got.HasValue || fmt.Sprint(got.KV) != fmt.Sprint(want.KV) {
						t.Fatalf("Lookup(%d) record %v, want %v", k, got.KV, want.KV)
					}
				} else if got.HasValue {
					t.Fatalf("Lookup(%d) has a value without Options.Values", k)
				}
			}
			if len(model) > 0 && hits == 0 {
				t.Fatalf("no key was found: the round checks nothing")
			}
		})
	}
}

func naiveLookup(model []modelFile, k int64) (merge.Hit, bool) {
	var best merge.Hit
	found := false
	for _, f := range model {
		if found && int(f.e.File.Level) >= best.Level {
			continue
		}
		for p, r := range f.recs {
			if r.Key[0].(int64) == k && !f.dv[int64(p)] {
				best = merge.Hit{File: f.e.File.FileName, Level: int(f.e.File.Level), Pos: int64(p), KV: r}
				found = true
			}
		}
	}
	return best, found
}
