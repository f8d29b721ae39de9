package merge

import (
	"context"
	"math/rand"
	"strings"
	"testing"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

func TestChangesFollowJavasChangelogWrapper(t *testing.T) {
	vals := schema("v", tString, "seen", tInt)
	eq, err := ChangelogEqualiser(map[string]string{OptRowDeduplicate: "true", OptRowDeduplicateIgnoreField: "seen"}, vals)
	if err != nil {
		t.Fatal(err)
	}
	add := rec("+I", 5, 1, "a", int32(1))
	upd := rec("+U", 9, 1, "b", int32(2))
	same := rec("+I", 9, 1, "a", int32(7))
	del := rec("-D", 9, 1, "a", int32(1))
	for _, c := range []struct {
		name   string
		before *table.KeyValue
		after  table.KeyValue
		ok     bool
		equal  func(a, b table.Row) bool
		want   string
	}{
		{"new key", nil, upd, true, nil, "+I9(1,b,2)"},
		{"new key retracted", nil, del, true, nil, ""},
		{"no result", &add, table.KeyValue{}, false, nil, "-D5(1,a,1)"},
		{"deleted", &add, del, true, nil, "-D5(1,a,1)"},
		{"updated", &add, upd, true, nil, "-U5(1,a,1) +U9(1,b,2)"},
		{"unchanged without row-deduplicate", &add, same, true, nil, "-U5(1,a,1) +U9(1,a,7)"},
		{"unchanged but an ignored field, row-deduplicate", &add, same, true, eq, ""},
		{"changed, row-deduplicate", &add, upd, true, eq, "-U5(1,a,1) +U9(1,b,2)"},
		{"a retraction before counts as none", &del, upd, true, nil, "+I9(1,b,2)"},
	} {
		var got []table.KeyValue
		if err := Changes(c.before, c.after, c.ok, c.equal, func(kv table.KeyValue) error { got = append(got, kv); return nil }); err != nil {
			t.Fatal(err)
		}
		if fmtKVs(got) != c.want {
			t.Errorf("%s: %q, want %q", c.name, fmtKVs(got), c.want)
		}
	}
}

func TestChangelogEqualiserOptions(t *testing.T) {
	vals := schema("a", tString, "b", tInt)
	if eq, err := ChangelogEqualiser(map[string]string{}, vals); err != nil || eq != nil {
		t.Fatalf("off by default: %v, %v", eq != nil, err)
	}
	if _, err := ChangelogEqualiser(map[string]string{OptRowDeduplicate: "yes"}, vals); err == nil {
		t.Fatal("an invalid boolean is accepted")
	}
	// Java splits the ignore list on commas without trimming: " b" names
	// no field, so b still counts.
	eq, err := ChangelogEqualiser(map[string]string{OptRowDeduplicate: "TRUE", OptRowDeduplicateIgnoreField: "x, b"}, vals)
	if err != nil {
		t.Fatal(err)
	}
	if eq(table.Row{"v", int32(1)}, table.Row{"v", int32(2)}) {
		t.Fatal(`" b" ignored b`)
	}
	if !eq(table.Row{"v", nil}, table.Row{"v", nil}) || eq(table.Row{"v", nil}, table.Row{"v", int32(0)}) {
		t.Fatal("nulls compare wrongly")
	}
}

// TestFullChangelogMergeOnBothPaths: the full-compaction changelog of a
// merge into the top level (5) on the row and the batch path: new keys
// +I, changed ones -U/+U, deleted ones -D, a top-level record alone
// nothing, and the output is the plain merge's.
func TestFullChangelogMergeOnBothPaths(t *testing.T) {
	cases := []struct {
		name      string
		options   map[string]string
		rt        table.RowType
		runs      []levelRecs
		want      string
		changelog string
	}{
		{
			name: "deduplicate",
			rt:   schema("v", tString),
			runs: []levelRecs{
				{0, []table.KeyValue{rec("+I", 20, 1, "new1"), rec("-D", 21, 2, nil), rec("+I", 22, 4, "fresh"), rec("-D", 23, 6, nil)}},
				{5, []table.KeyValue{rec("+I", 1, 1, "old1"), rec("+I", 2, 2, "old2"), rec("+I", 3, 3, "kept")}},
			},
			want:      "+I20(1,new1) +I3(3,kept) +I22(4,fresh)",
			changelog: "-U1(1,old1) +U20(1,new1) -D2(2,old2) +I22(4,fresh)",
		},
		{
			name:    "partial-update merges before the changelog compares",
			options: map[string]string{"merge-engine": "partial-update"},
			rt:      schema("a", tString, "b", tString),
			runs: []levelRecs{
				{0, []table.KeyValue{rec("+I", 30, 1, nil, "b1"), rec("+I", 31, 2, "x", nil)}},
				{1, []table.KeyValue{rec("+I", 10, 1, "a1", nil)}},
				{5, []table.KeyValue{rec("+I", 1, 1, "a0", "b0")}},
			},
			want:      "+I30(1,a1,b1) +I31(2,x,null)",
			changelog: "-U1(1,a0,b0) +U30(1,a1,b1) +I31(2,x,null)",
		},
		{
			name:    "row-deduplicate drops an update to equal values",
			options: map[string]string{OptRowDeduplicate: "true"},
			rt:      schema("v", tString),
			runs: []levelRecs{
				{0, []table.KeyValue{rec("+U", 20, 1, "same"), rec("+U", 21, 2, "other")}},
				{5, []table.KeyValue{rec("+I", 1, 1, "same"), rec("+I", 2, 2, "was")}},
			},
			want:      "+U20(1,same) +U21(2,other)",
			changelog: "-U2(2,was) +U21(2,other)",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			options := map[string]string{}
			for k, v := range c.options {
				options[k] = v
			}
			e, err := NewEngine(options, c.rt, []string{"k"})
			if err != nil {
				t.Fatal(err)
			}
			eq, err := ChangelogEqualiser(options, c.rt)
			if err != nil {
				t.Fatal(err)
			}
			codec, err := datafile.NewKVCodec(datafile.Schema{Fields: c.rt, KeyNames: []string{"k"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{"row path", "batch path", "batch path, changelog batches"} {
				batch := path != "row path"
				var cl []table.KeyValue
				opts := e.ReaderOptions(true)
				opts.FullChangelog = &FullChangelog{MaxLevel: 5, Changelog: func(before *table.KeyValue, after table.KeyValue, ok bool) error {
					return Changes(before, after, ok, eq, func(kv table.KeyValue) error { cl = append(cl, kv); return nil })
				}}
				if strings.HasSuffix(path, "batches") {
					opts.FullChangelog = &FullChangelog{MaxLevel: 5, Equal: eq, Batches: func(b *datafile.Batch) error {
						for i := range b.N {
							kv, err := codec.Record(b, i)
							if err != nil {
								return err
							}
							cl = append(cl, kv)
						}
						return nil
					}}
				}
				got := mergeLeveled(t, e, codec, c.runs, opts, batch)
				if fmtKVs(got) != c.want {
					t.Errorf("%s: %s, want %s", path, fmtKVs(got), c.want)
				}
				if fmtKVs(cl) != c.changelog {
					t.Errorf("%s: changelog %s, want %s", path, fmtKVs(cl), c.changelog)
				}
			}
		})
	}
}

// TestFirstRowChangelogOnBothPaths: the first-row lookup changelog gives
// exactly the keys new to the bucket: not held above the output level and
// without an input record from a level above 0.
func TestFirstRowChangelogOnBothPaths(t *testing.T) {
	rt := schema("v", tString)
	e, err := NewEngine(map[string]string{"merge-engine": "first-row"}, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	runs := []levelRecs{
		{0, []table.KeyValue{rec("+I", 20, 1, "l0"), rec("+I", 21, 2, "l0"), rec("+I", 22, 3, "l0"), rec("+I", 23, 4, "l0")}},
		{0, []table.KeyValue{rec("+I", 30, 4, "later"), rec("+I", 31, 5, "l0b")}},
		{2, []table.KeyValue{rec("+I", 2, 2, "l2")}},
	}
	higher := map[int32]Hit{3: hit("f4", 4, 0, rec("+I", 1, 3, "held"))}
	for _, withHigher := range []bool{true, false} {
		for _, batch := range []bool{false, true} {
			var hl HigherLookup
			want, wantCL := "+I20(1,l0) +I2(2,l2) +I23(4,l0) +I31(5,l0b)", "+I20(1,l0) +I23(4,l0) +I31(5,l0b)"
			if withHigher {
				hl = &hitSet{hits: higher}
			} else {
				want, wantCL = "+I20(1,l0) +I2(2,l2) +I22(3,l0) +I23(4,l0) +I31(5,l0b)", "+I20(1,l0) +I22(3,l0) +I23(4,l0) +I31(5,l0b)"
			}
			opts, err := e.FirstRowCompactOptions(true, hl)
			if err != nil {
				t.Fatal(err)
			}
			var cl []table.KeyValue
			opts.FirstRowChangelog = func(kv table.KeyValue) error { cl = append(cl, kv); return nil }
			got := mergeLeveled(t, e, codec, runs, opts, batch)
			if fmtKVs(got) != want || fmtKVs(cl) != wantCL {
				t.Errorf("higher %v, batch %v: merged %s changelog %s, want %s and %s", withHigher, batch, fmtKVs(got), fmtKVs(cl), want, wantCL)
			}
		}
	}
}

// mergeLeveled merges runs of records at their levels on the row or the
// batch path (batches of 2 rows, so groups straddle batches).
func mergeLeveled(t *testing.T, e *Engine, codec *datafile.KVCodec, runs []levelRecs, opts Options, batch bool) []table.KeyValue {
	t.Helper()
	if batch {
		closed := 0
		rng := rand.New(rand.NewSource(3))
		var bruns []BatchRun
		for _, r := range runs {
			bruns = append(bruns, &leveledRun{&sliceRun{codec: codec, recs: cloneKVs(r.recs), rng: rng, closed: &closed}, r.level})
		}
		br, err := e.NewBatchReaderWith(context.Background(), codec, bruns, opts, 2)
		if err != nil {
			t.Fatal(err)
		}
		got, err := collectBatches(t, codec, br, 2)
		if err != nil {
			t.Fatalf("batch path: %v", err)
		}
		return got
	}
	var iters []Iterator
	for _, r := range runs {
		iters = append(iters, WithLevel(FromSlice(cloneKVs(r.recs)), r.level))
	}
	got, err := Collect(e.NewReaderWith(context.Background(), iters, opts))
	if err != nil {
		t.Fatalf("row path: %v", err)
	}
	return got
}

// TestLookupChangelogBatchesEqualTheHook: the lookup compaction's
// changelog written as batches (LookupCompact.Batches, the batch path) is
// the row path's hook output through Changes, record for record.
func TestLookupChangelogBatchesEqualTheHook(t *testing.T) {
	rt := schema("a", tString, "b", tString)
	e, err := NewEngine(map[string]string{"merge-engine": "partial-update"}, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	runs := []levelRecs{
		{0, []table.KeyValue{rec("+I", 10, 1, nil, "b0"), rec("+I", 11, 2, "a2", nil), rec("+I", 12, 4, "a4", "b4")}},
		{0, []table.KeyValue{rec("+I", 13, 2, nil, "b2"), rec("+I", 14, 5, "x", "y")}},
		{2, []table.KeyValue{rec("+I", 3, 3, "a3", "b3"), rec("+I", 4, 4, "old", "old")}},
	}
	hits := map[int32]Hit{1: hit("f5", 5, 0, rec("+I", 1, 1, "a1", "b1")), 5: hit("f5", 5, 1, rec("+I", 2, 5, "x", "y"))}
	eq, err := ChangelogEqualiser(map[string]string{OptRowDeduplicate: "true"}, rt)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []table.KeyValue
	lc := LookupCompact{Values: true, Higher: &hitSet{hits: hits, values: true}, Changelog: func(before *table.KeyValue, after table.KeyValue, ok bool) error {
		return Changes(before, after, ok, eq, func(kv table.KeyValue) error { want = append(want, kv); return nil })
	}}
	opts, err := e.LookupCompactOptions(true, lc)
	if err != nil {
		t.Fatal(err)
	}
	rowOut := mergeLeveled(t, e, codec, runs, opts, false)
	lc = LookupCompact{Values: true, Higher: &hitSet{hits: hits, values: true}, Equal: eq, Batches: func(b *datafile.Batch) error {
		for i := range b.N {
			kv, err := codec.Record(b, i)
			if err != nil {
				return err
			}
			got = append(got, kv)
		}
		return nil
	}}
	if opts, err = e.LookupCompactOptions(true, lc); err != nil {
		t.Fatal(err)
	}
	batchOut := mergeLeveled(t, e, codec, runs, opts, true)
	if len(want) < 4 || fmtKVs(got) != fmtKVs(want) || fmtKVs(batchOut) != fmtKVs(rowOut) {
		t.Fatalf("changelog: batches %s, hook %s; merged: batch %s, row %s", fmtKVs(got), fmtKVs(want), fmtKVs(batchOut), fmtKVs(rowOut))
	}
	t.Logf("changelog %s", fmtKVs(want))
}
