package merge

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// keySet is a HigherLookup over a set of INT keys that also checks the
// ascending-order contract and records what was asked.
type keySet struct {
	held  map[int32]bool
	asked []int32
	err   error // returned by every Contains when set
}

func (s *keySet) Lookup(key table.Row) (Hit, bool, error) {
	k := key[0].(int32)
	if n := len(s.asked); n > 0 && s.asked[n-1] >= k {
		return Hit{}, false, fmt.Errorf("key %d asked after %d", k, s.asked[n-1])
	}
	s.asked = append(s.asked, k)
	if s.err != nil {
		return Hit{}, false, s.err
	}
	return Hit{KV: table.KeyValue{Key: key}}, s.held[k], nil
}

// leveledRun is a sliceRun whose records come from one level.
type leveledRun struct {
	*sliceRun
	level int
}

func (r *leveledRun) Level() int { return r.level }

func TestFirstRowCompactionDropsKeysHeldAbove(t *testing.T) {
	type run struct {
		level int
		recs  []table.KeyValue
	}
	cases := []struct {
		name         string
		ignoreDelete bool
		runs         []run
		held         []int32 // nil: no lookup (nothing above the output level)
		want         string  // "" with wantErr
		wantErr      error
		asked        []int32
	}{
		{
			name: "level-0 keys a higher level holds are dropped",
			runs: []run{
				{0, []table.KeyValue{rec("+I", 5, 1, "a"), rec("+I", 6, 2, "b")}},
				{0, []table.KeyValue{rec("+I", 7, 2, "c"), rec("+I", 8, 3, "d")}},
			},
			held:  []int32{2, 3},
			want:  "+I5(1,a)",
			asked: []int32{1, 2, 3},
		},
		{
			name: "the oldest level-0 record of a key no higher level holds is kept",
			runs: []run{
				{0, []table.KeyValue{rec("+I", 9, 1, "new")}},
				{0, []table.KeyValue{rec("+I", 3, 1, "old"), rec("+I", 4, 4, "x")}},
			},
			held:  []int32{2},
			want:  "+I3(1,old) +I4(4,x)",
			asked: []int32{1, 4},
		},
		{
			name: "a key with a record from a level above 0 is kept without a lookup",
			runs: []run{
				{0, []table.KeyValue{rec("+I", 9, 1, "new"), rec("+I", 10, 2, "n2")}},
				{3, []table.KeyValue{rec("+I", 2, 1, "old")}},
			},
			held:  []int32{1, 2},
			want:  "+I2(1,old)",
			asked: []int32{2},
		},
		{
			name: "records of levels above 0 alone are kept without a lookup",
			runs: []run{
				{2, []table.KeyValue{rec("+I", 1, 7, "a")}},
				{3, []table.KeyValue{rec("+I", 2, 8, "b")}},
			},
			held:  []int32{7, 8},
			want:  "+I1(7,a) +I2(8,b)",
			asked: nil,
		},
		{
			name: "nothing above the output level keeps every key",
			runs: []run{
				{0, []table.KeyValue{rec("+I", 5, 1, "a"), rec("+I", 6, 2, "b")}},
			},
			held: nil,
			want: "+I5(1,a) +I6(2,b)",
		},
		{
			name:         "a lone retraction with ignore-delete yields nothing and asks nothing",
			ignoreDelete: true,
			runs: []run{
				{0, []table.KeyValue{rec("-D", 5, 1, "a"), rec("+I", 6, 2, "b")}},
			},
			held:  []int32{},
			want:  "+I6(2,b)",
			asked: []int32{2},
		},
		{
			// FirstRowMergeFunction.containsHighLevel counts only records it
			// takes: a skipped retraction from above level 0 does not keep
			// the key from the lookup.
			name:         "a retraction from a level above 0 skipped by ignore-delete does not count",
			ignoreDelete: true,
			runs: []run{
				{0, []table.KeyValue{rec("+I", 9, 1, "new"), rec("+I", 10, 2, "n2")}},
				{2, []table.KeyValue{rec("-D", 3, 1, "old"), rec("-D", 4, 2, "old")}},
			},
			held:  []int32{1},
			want:  "+I10(2,n2)",
			asked: []int32{1, 2},
		},
		{
			// No reducer: unlike a plain merge, a lone retraction reaches the
			// merge function, as in Paimon's FirstRowMergeFunctionWrapper.
			name:    "a lone retraction without ignore-delete fails",
			runs:    []run{{0, []table.KeyValue{rec("-D", 5, 1, "a")}}},
			held:    []int32{},
			wantErr: ErrFirstRowRetract,
		},
	}
	rt := schema("v", tString)
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			options := map[string]string{"merge-engine": "first-row"}
			if c.ignoreDelete {
				options["ignore-delete"] = "true"
			}
			e, err := NewEngine(options, rt, []string{"k"})
			if err != nil {
				t.Fatal(err)
			}
			lookup := func() (*keySet, HigherLookup) {
				if c.held == nil {
					return nil, nil
				}
				s := &keySet{held: map[int32]bool{}}
				for _, k := range c.held {
					s.held[k] = true
				}
				return s, s
			}
			check := func(path string, got []table.KeyValue, gotErr error, s *keySet) {
				t.Helper()
				if c.wantErr != nil {
					if !errors.Is(gotErr, c.wantErr) {
						t.Fatalf("%s: error %v, want %v", path, gotErr, c.wantErr)
					}
					return
				}
				if gotErr != nil {
					t.Fatalf("%s: %v", path, gotErr)
				}
				if fmtKVs(got) != c.want {
					t.Errorf("%s: %s, want %s", path, fmtKVs(got), c.want)
				}
				if s != nil && !slices.Equal(s.asked, c.asked) {
					t.Errorf("%s: asked %v, want %v", path, s.asked, c.asked)
				}
			}
			for _, dropDelete := range []bool{false, true} {
				s, l := lookup()
				opts, err := e.FirstRowCompactOptions(dropDelete, l)
				if err != nil {
					t.Fatal(err)
				}
				var iters []Iterator
				for _, r := range c.runs {
					iters = append(iters, WithLevel(FromSlice(cloneKVs(r.recs)), r.level))
				}
				got, gotErr := Collect(e.NewReaderWith(context.Background(), iters, opts))
				check(fmt.Sprintf("row path, dropDelete=%v", dropDelete), got, gotErr, s)

				s, l = lookup()
				opts, _ = e.FirstRowCompactOptions(dropDelete, l)
				closed := 0
				rng := rand.New(rand.NewSource(1))
				var bruns []BatchRun
				for _, r := range c.runs {
					bruns = append(bruns, &leveledRun{&sliceRun{codec: codec, recs: cloneKVs(r.recs), rng: rng, closed: &closed}, r.level})
				}
				br, err := e.NewBatchReaderWith(context.Background(), codec, bruns, opts, 2)
				if err != nil {
					t.Fatal(err)
				}
				got, gotErr = collectBatches(t, codec, br, 2)
				check(fmt.Sprintf("batch path, dropDelete=%v", dropDelete), got, gotErr, s)
			}
		})
	}
}

func TestFirstRowCompactionLookupErrorSurfaces(t *testing.T) {
	rt := schema("v", tString)
	e, err := NewEngine(map[string]string{"merge-engine": "first-row"}, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	recs := []table.KeyValue{rec("+I", 1, 1, "a")}
	opts, _ := e.FirstRowCompactOptions(false, &keySet{err: boom})
	_, rowErr := Collect(e.NewReaderWith(context.Background(), []Iterator{FromSlice(cloneKVs(recs))}, opts))
	opts, _ = e.FirstRowCompactOptions(false, &keySet{err: boom})
	closed := 0
	br, err := e.NewBatchReaderWith(context.Background(), codec, []BatchRun{&sliceRun{codec: codec, recs: cloneKVs(recs), rng: rand.New(rand.NewSource(1)), closed: &closed}}, opts, 4)
	if err != nil {
		t.Fatal(err)
	}
	_, batchErr := collectBatches(t, codec, br, 4)
	for path, err := range map[string]error{"row": rowErr, "batch": batchErr} {
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "merge key [1]") {
			t.Errorf("%s path: error %v, want boom naming the key", path, err)
		}
	}
}

func TestFirstRowCompactOptionsRefuseOtherEngines(t *testing.T) {
	rt := schema("v", tString)
	for _, engine := range []string{"deduplicate", "partial-update", "aggregation"} {
		e, err := NewEngine(map[string]string{"merge-engine": engine}, rt, []string{"k"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.FirstRowCompactOptions(false, nil); err == nil {
			t.Errorf("%s: FirstRowCompactOptions accepted", engine)
		}
	}
}
