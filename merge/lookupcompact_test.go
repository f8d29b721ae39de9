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

// hitSet is a HigherLookup over fixed hits by INT key; it checks the
// ascending-order contract and records what was asked. Without values its
// hits carry keys only, as a position-only lookup's do.
type hitSet struct {
	hits   map[int32]Hit
	values bool
	asked  []int32
	err    error
}

func (s *hitSet) Lookup(key table.Row) (Hit, bool, error) {
	k := key[0].(int32)
	if n := len(s.asked); n > 0 && s.asked[n-1] >= k {
		return Hit{}, false, fmt.Errorf("key %d asked after %d", k, s.asked[n-1])
	}
	s.asked = append(s.asked, k)
	if s.err != nil {
		return Hit{}, false, s.err
	}
	h, ok := s.hits[k]
	if !ok {
		return Hit{}, false, nil
	}
	if !s.values {
		h.KV = table.KeyValue{Key: h.KV.Key}
		h.HasValue = false
	} else {
		h.KV = cloneKVs([]table.KeyValue{h.KV})[0]
		h.HasValue = true
	}
	return h, true, nil
}

// deletions records NotifyNewDeletion calls as "file@pos".
type deletions struct {
	got []string
	err error
}

func (d *deletions) NotifyNewDeletion(file string, pos int64) error {
	d.got = append(d.got, fmt.Sprintf("%s@%d", file, pos))
	return d.err
}

func hit(file string, level int, pos int64, kv table.KeyValue) Hit {
	return Hit{File: file, Level: level, Pos: pos, KV: kv}
}

type levelRecs struct {
	level int
	recs  []table.KeyValue
}

func TestLookupCompactionPerEngine(t *testing.T) {
	cases := []struct {
		name       string
		options    map[string]string
		rt         table.RowType
		noDV       bool // a lookup table without deletion vectors (values always merged)
		dropDelete bool
		runs       []levelRecs
		hits       map[int32]Hit // nil: nothing above the output level
		want       string
		wantDel    []string
		asked      []int32
		changelog  string // with a changelog hook: "before>after" per key with a level-0 record
	}{
		{
			name: "deduplicate keeps only positions: the compaction's record wins even when the higher one has a larger sequence number",
			rt:   schema("v", tString),
			runs: []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, "new"), rec("+I", 11, 2, "b")}}},
			hits: map[int32]Hit{1: hit("f3", 3, 7, rec("+I", 20, 1, "higher"))},
			want: "+I10(1,new) +I11(2,b)", wantDel: []string{"f3@7"}, asked: []int32{1, 2},
		},
		{
			name: "a key with a record from a level above 0 among the inputs is not looked up",
			rt:   schema("v", tString),
			runs: []levelRecs{
				{0, []table.KeyValue{rec("+I", 10, 1, "new"), rec("+I", 12, 3, "c")}},
				{2, []table.KeyValue{rec("+I", 30, 1, "l2"), rec("+I", 5, 2, "lone")}},
			},
			hits: map[int32]Hit{1: hit("f3", 3, 0, rec("+I", 1, 1, "x")), 2: hit("f3", 3, 1, rec("+I", 1, 2, "x")), 3: hit("f4", 4, 9, rec("+I", 2, 3, "y"))},
			want: "+I30(1,l2) +I5(2,lone) +I12(3,c)", wantDel: []string{"f4@9"}, asked: []int32{3},
		},
		{
			name:    "of several input levels above 0 only the lowest merges with level 0",
			rt:      schema("a", tInt, "b", tString),
			options: map[string]string{"merge-engine": "aggregation", "fields.a.aggregate-function": "sum"},
			runs: []levelRecs{
				{0, []table.KeyValue{rec("+I", 10, 1, int32(1), "l0")}},
				{1, []table.KeyValue{rec("+I", 5, 1, int32(10), "l1")}},
				{3, []table.KeyValue{rec("+I", 2, 1, int32(100), "l3")}},
			},
			hits: map[int32]Hit{},
			want: "+I10(1,11,l0)",
		},
		{
			name:    "sequence.field: the looked-up record joins at its sequence position and may win",
			rt:      schema("ts", tInt, "v", tString),
			options: map[string]string{"sequence.field": "ts"},
			runs:    []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, int32(5), "l0"), rec("+I", 11, 2, int32(5), "l0")}}},
			hits: map[int32]Hit{
				1: hit("f2", 2, 3, rec("+I", 3, 1, int32(9), "higher")),
				2: hit("f2", 2, 4, rec("+I", 30, 2, int32(1), "older ts")),
			},
			want: "+I3(1,9,higher) +I11(2,5,l0)", wantDel: []string{"f2@3", "f2@4"}, asked: []int32{1, 2},
		},
		{
			name:    "sequence.field tie: the looked-up record goes after equal ones (sequence number decides next)",
			rt:      schema("ts", tInt, "v", tString),
			options: map[string]string{"sequence.field": "ts"},
			runs:    []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, int32(5), "l0"), rec("+I", 11, 2, int32(5), "l0")}}},
			hits: map[int32]Hit{
				1: hit("f2", 2, 0, rec("+I", 10, 1, int32(5), "same seq")),
				2: hit("f2", 2, 1, rec("+I", 9, 2, int32(5), "lower seq")),
			},
			want: "+I10(1,5,same seq) +I11(2,5,l0)", wantDel: []string{"f2@0", "f2@1"}, asked: []int32{1, 2},
		},
		{
			name:    "partial-update merges the looked-up row under the level-0 one",
			rt:      schema("a", tString, "b", tString),
			options: map[string]string{"merge-engine": "partial-update"},
			runs:    []levelRecs{{0, []table.KeyValue{rec("+U", 10, 1, nil, "b0"), rec("+I", 11, 2, "a2", nil)}}},
			hits:    map[int32]Hit{1: hit("f5", 5, 2, rec("+I", 4, 1, "a1", "b1"))},
			want:    "+I10(1,a1,b0) +I11(2,a2,null)", wantDel: []string{"f5@2"}, asked: []int32{1, 2},
		},
		{
			name:    "partial-update with an out-of-order sequence: the higher record is newer and overwrites",
			rt:      schema("a", tString, "b", tString),
			options: map[string]string{"merge-engine": "partial-update"},
			runs:    []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, "a0", "b0")}}},
			hits:    map[int32]Hit{1: hit("f5", 5, 2, rec("+I", 40, 1, nil, "b-newer"))},
			want:    "+I40(1,a0,b-newer)", wantDel: []string{"f5@2"}, asked: []int32{1},
		},
		{
			name:    "partial-update sequence group: an older-ordered level-0 update leaves the group alone",
			rt:      schema("g", tInt, "a", tString, "b", tString),
			options: map[string]string{"merge-engine": "partial-update", "fields.g.sequence-group": "a"},
			runs:    []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, int32(1), "a-old-order", "b0")}}},
			hits:    map[int32]Hit{1: hit("f2", 2, 0, rec("+I", 5, 1, int32(2), "a-kept", nil))},
			want:    "+I10(1,2,a-kept,b0)", wantDel: []string{"f2@0"}, asked: []int32{1},
		},
		{
			name:    "aggregation sums the looked-up row; a key without a hit is merged alone (no reducer)",
			rt:      schema("n", tInt, "s", tString),
			options: map[string]string{"merge-engine": "aggregation", "fields.n.aggregate-function": "sum"},
			runs:    []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, int32(5), "x"), rec("-D", 11, 2, int32(3), "y")}}},
			hits:    map[int32]Hit{1: hit("f4", 4, 6, rec("+I", 2, 1, int32(7), "w"))},
			// key 2: a lone -D goes through the merge function (sum retract of
			// nothing is -3, last_non_null_value retract is null) and becomes +I.
			want: "+I10(1,12,x) +I11(2,-3,null)", wantDel: []string{"f4@6"}, asked: []int32{1, 2},
		},
		{
			name:       "deduplicate retraction: the superseded row is marked and the -D dropped",
			rt:         schema("v", tString),
			dropDelete: true,
			runs:       []levelRecs{{0, []table.KeyValue{rec("-D", 10, 1, "gone"), rec("+I", 11, 2, "b")}}},
			hits:       map[int32]Hit{1: hit("f3", 3, 1, rec("+I", 2, 1, "old")), 2: hit("f3", 3, 2, rec("+I", 3, 2, "old"))},
			want:       "+I11(2,b)", wantDel: []string{"f3@1", "f3@2"}, asked: []int32{1, 2},
		},
		{
			name: "deduplicate retraction kept without dropDelete",
			rt:   schema("v", tString),
			runs: []levelRecs{{0, []table.KeyValue{rec("-D", 10, 1, "gone")}}},
			hits: map[int32]Hit{1: hit("f3", 3, 1, rec("+I", 2, 1, "old"))},
			want: "-D10(1,gone)", wantDel: []string{"f3@1"}, asked: []int32{1},
		},
		{
			name:       "partial-update remove-record-on-delete: a level-0 -D removes the key and its higher row",
			rt:         schema("a", tString),
			options:    map[string]string{"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
			dropDelete: true,
			runs:       []levelRecs{{0, []table.KeyValue{rec("-D", 10, 1, nil), rec("+I", 11, 2, "x")}}},
			hits:       map[int32]Hit{1: hit("f1", 1, 0, rec("+I", 2, 1, "old"))},
			want:       "+I11(2,x)", wantDel: []string{"f1@0"}, asked: []int32{1, 2},
		},
		{
			name: "keys without a hit mark nothing",
			rt:   schema("v", tString),
			runs: []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, "a"), rec("+I", 11, 2, "b")}}},
			hits: map[int32]Hit{},
			want: "+I10(1,a) +I11(2,b)", asked: []int32{1, 2},
		},
		{
			name: "nothing above the output level: nothing is asked",
			rt:   schema("v", tString),
			runs: []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, "a")}}, {0, []table.KeyValue{rec("+I", 12, 1, "a2")}}},
			want: "+I12(1,a2)",
		},
		{
			name: "without deletion vectors the looked-up record always joins and nothing is marked",
			rt:   schema("v", tString),
			noDV: true,
			runs: []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, "l0")}}},
			hits: map[int32]Hit{1: hit("f3", 3, 7, rec("+I", 20, 1, "higher seq"))},
			want: "+I20(1,higher seq)", asked: []int32{1},
		},
		{
			name:    "the changelog seam sees before=high and after=result for keys with a level-0 record",
			rt:      schema("n", tInt),
			options: map[string]string{"merge-engine": "aggregation", "fields.n.aggregate-function": "sum"},
			runs:    []levelRecs{{0, []table.KeyValue{rec("+I", 10, 1, int32(1)), rec("+I", 11, 3, int32(3))}}, {1, []table.KeyValue{rec("+I", 5, 2, int32(2)), rec("+I", 6, 3, int32(30))}}},
			hits:    map[int32]Hit{1: hit("f4", 4, 0, rec("+I", 1, 1, int32(100)))},
			want:    "+I10(1,101) +I5(2,2) +I11(3,33)", wantDel: []string{"f4@0"}, asked: []int32{1},
			changelog: "+I1(1,100)>+I10(1,101) +I6(3,30)>+I11(3,33)",
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
			codec, err := datafile.NewKVCodec(datafile.Schema{Fields: c.rt, KeyNames: []string{"k"}})
			if err != nil {
				t.Fatal(err)
			}
			values := c.noDV || e.LookupPersistsValues(c.changelog != "")
			for _, batch := range []bool{false, true} {
				path := map[bool]string{false: "row path", true: "batch path"}[batch]
				var hs *hitSet
				lc := LookupCompact{Values: values}
				if c.hits != nil {
					hs = &hitSet{hits: c.hits, values: values}
					lc.Higher = hs
				}
				dels := &deletions{}
				if !c.noDV {
					lc.Deletions = dels
				}
				var cl []string
				if c.changelog != "" {
					lc.Changelog = func(before *table.KeyValue, after table.KeyValue, ok bool) error {
						b := "nil"
						if before != nil {
							b = fmtKV(*before)
						}
						cl = append(cl, b+">"+fmtKV(after))
						return nil
					}
				}
				opts, err := e.LookupCompactOptions(c.dropDelete, lc)
				if err != nil {
					t.Fatal(err)
				}
				var got []table.KeyValue
				if batch {
					closed := 0
					rng := rand.New(rand.NewSource(7))
					var bruns []BatchRun
					for _, r := range c.runs {
						bruns = append(bruns, &leveledRun{&sliceRun{codec: codec, recs: cloneKVs(r.recs), rng: rng, closed: &closed}, r.level})
					}
					br, err := e.NewBatchReaderWith(context.Background(), codec, bruns, opts, 2)
					if err != nil {
						t.Fatal(err)
					}
					got, err = collectBatches(t, codec, br, 2)
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
				} else {
					var iters []Iterator
					for _, r := range c.runs {
						iters = append(iters, WithLevel(FromSlice(cloneKVs(r.recs)), r.level))
					}
					got, err = Collect(e.NewReaderWith(context.Background(), iters, opts))
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
				}
				if fmtKVs(got) != c.want {
					t.Errorf("%s: %s, want %s", path, fmtKVs(got), c.want)
				}
				if !slices.Equal(dels.got, c.wantDel) {
					t.Errorf("%s: deletions %v, want %v", path, dels.got, c.wantDel)
				}
				if hs != nil && !slices.Equal(hs.asked, c.asked) {
					t.Errorf("%s: asked %v, want %v", path, hs.asked, c.asked)
				}
				if c.changelog != "" && strings.Join(cl, " ") != c.changelog {
					t.Errorf("%s: changelog %s, want %s", path, strings.Join(cl, " "), c.changelog)
				}
			}
		})
	}
}

func TestLookupPersistsValuesAsJavaPicksTheProcessor(t *testing.T) {
	rt := schema("ts", tInt, "v", tString)
	for _, c := range []struct {
		options   map[string]string
		changelog bool
		want      bool
	}{
		{map[string]string{}, false, false},
		{map[string]string{}, true, true},
		{map[string]string{"sequence.field": "ts"}, false, true},
		{map[string]string{"merge-engine": "partial-update"}, false, true},
		{map[string]string{"merge-engine": "aggregation"}, false, true},
	} {
		e, err := NewEngine(c.options, rt, []string{"k"})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.LookupPersistsValues(c.changelog); got != c.want {
			t.Errorf("%v changelog=%v: persists values %v, want %v", c.options, c.changelog, got, c.want)
		}
	}
}

func TestLookupCompactionErrorsSurface(t *testing.T) {
	rt := schema("v", tString)
	e, err := NewEngine(nil, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: rt, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	recs := []table.KeyValue{rec("+I", 1, 1, "a")}
	hits := map[int32]Hit{1: hit("f", 2, 0, rec("+I", 0, 1, "x"))}
	for name, lc := range map[string]func() LookupCompact{
		"lookup": func() LookupCompact { return LookupCompact{Higher: &hitSet{err: boom}, Deletions: &deletions{}} },
		"deletion": func() LookupCompact {
			return LookupCompact{Higher: &hitSet{hits: hits}, Deletions: &deletions{err: boom}}
		},
	} {
		opts, _ := e.LookupCompactOptions(false, lc())
		_, rowErr := Collect(e.NewReaderWith(context.Background(), []Iterator{FromSlice(cloneKVs(recs))}, opts))
		opts, _ = e.LookupCompactOptions(false, lc())
		closed := 0
		br, err := e.NewBatchReaderWith(context.Background(), codec, []BatchRun{&sliceRun{codec: codec, recs: cloneKVs(recs), rng: rand.New(rand.NewSource(1)), closed: &closed}}, opts, 4)
		if err != nil {
			t.Fatal(err)
		}
		_, batchErr := collectBatches(t, codec, br, 4)
		for path, err := range map[string]error{"row": rowErr, "batch": batchErr} {
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), "merge key [1]") {
				t.Errorf("%s: %s path: error %v, want boom naming the key", name, path, err)
			}
		}
	}
	// A lookup without values cannot feed a merge that needs them.
	opts, _ := e.LookupCompactOptions(false, LookupCompact{Higher: &hitSet{hits: hits}, Deletions: &deletions{}, Values: true})
	if _, err := Collect(e.NewReaderWith(context.Background(), []Iterator{FromSlice(cloneKVs(recs))}, opts)); err == nil || !strings.Contains(err.Error(), "no record") {
		t.Errorf("values asked of a position-only lookup: error %v", err)
	}
	if _, err := e.LookupCompactOptions(false, LookupCompact{Higher: &hitSet{}}); err == nil {
		t.Error("a lookup compaction without deletion vectors or values was accepted")
	}
	fr, err := NewEngine(map[string]string{"merge-engine": "first-row"}, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fr.LookupCompactOptions(false, LookupCompact{Deletions: &deletions{}}); err == nil {
		t.Error("first-row lookup compaction accepted deletion vectors")
	}
}

// TestBatchLookupMergesMatchRowMerge runs random runs at random levels
// through both paths in the lookup modes: LookupMergeFunction with the
// reducer (plain rewrites of lookup tables) and the lookup compaction with
// random hits above the output level, with and without values and a
// changelog hook. Outputs, deletions, lookups and changelog must agree.
func TestBatchLookupMergesMatchRowMerge(t *testing.T) {
	rng := rand.New(rand.NewSource(randomSeed(t)))
	configs := append(randomConfigs(),
		randomConfig{name: "aggregation without retractions", options: map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "fields.s.aggregate-function": "listagg"}},
		randomConfig{name: "partial-update sequence groups", options: map[string]string{"merge-engine": "partial-update", "fields.ts.sequence-group": "v,m"}},
	)
	codec, err := datafile.NewKVCodec(datafile.Schema{Fields: randomRowType, KeyNames: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	iterations := 30
	if testing.Short() {
		iterations = 6
	}
	for _, cfg := range configs {
		e, err := NewEngine(cfg.options, randomRowType, []string{"k"})
		if err != nil {
			t.Fatalf("%s: %v", cfg.name, err)
		}
		if e.Name() == EngineFirstRow {
			continue // first-row has its own compaction (TestFirstRowCompactionDropsKeysHeldAbove)
		}
		for it := range iterations {
			numRuns := 1 + rng.Intn(5)
			runs := make([][]table.KeyValue, numRuns)
			levels := make([]int, numRuns)
			used := map[int]bool{}
			for r := range runs {
				if l := rng.Intn(4); l > 0 && !used[l] {
					levels[r], used[l] = l, true
				}
				for k := int32(0); k < 20; k++ {
					if rng.Intn(3) == 0 {
						runs[r] = append(runs[r], randomRecord(rng, k, cfg.retracts))
					}
				}
			}
			hits := map[int32]Hit{}
			for k := int32(0); k < 20; k++ {
				if rng.Intn(2) == 0 {
					hits[k] = hit(fmt.Sprintf("f%d", k%3), 4+rng.Intn(2), int64(rng.Intn(100)), randomRecord(rng, k, cfg.retracts))
				}
			}
			mode := it % 4 // 0: reducer lookup; 1: positions; 2: values; 3: values and changelog
			for _, dropDelete := range []bool{false, true} {
				type outcome struct {
					out       string
					err       error
					dels, cls []string
					asked     []int32
				}
				run := func(batch bool) outcome {
					var o outcome
					var opts Options
					hs := &hitSet{hits: hits, values: mode >= 2}
					dels := &deletions{}
					if mode == 0 {
						opts = e.LookupOptions(dropDelete, false)
					} else {
						lc := LookupCompact{Higher: hs, Deletions: dels, Values: mode >= 2}
						if mode == 3 {
							lc.Changelog = func(before *table.KeyValue, after table.KeyValue, ok bool) error {
								b := "nil"
								if before != nil {
									b = fmtKV(*before)
								}
								o.cls = append(o.cls, fmt.Sprintf("%s>%s/%v", b, fmtKV(after), ok))
								return nil
							}
						}
						if opts, err = e.LookupCompactOptions(dropDelete, lc); err != nil {
							t.Fatal(err)
						}
					}
					var got []table.KeyValue
					if batch {
						closed := 0
						var bruns []BatchRun
						for r, kvs := range runs {
							bruns = append(bruns, &leveledRun{&sliceRun{codec: codec, recs: cloneKVs(kvs), rng: rng, closed: &closed}, levels[r]})
						}
						br, err := e.NewBatchReaderWith(context.Background(), codec, bruns, opts, 1+rng.Intn(5))
						if err != nil {
							t.Fatal(err)
						}
						got, o.err = collectBatches(t, codec, br, 5)
					} else {
						var iters []Iterator
						for r, kvs := range runs {
							iters = append(iters, WithLevel(FromSlice(cloneKVs(kvs)), levels[r]))
						}
						got, o.err = Collect(e.NewReaderWith(context.Background(), iters, opts))
					}
					o.out, o.dels, o.asked = fmtKeyed(got), dels.got, hs.asked
					return o
				}
				row, batch := run(false), run(true)
				where := fmt.Sprintf("%s, iteration %d, mode %d, dropDelete=%v, levels %v", cfg.name, it, mode, dropDelete, levels)
				if (row.err == nil) != (batch.err == nil) {
					t.Fatalf("%s:\nrow path error   %v\nbatch path error %v", where, row.err, batch.err)
				}
				if row.err != nil {
					continue
				}
				if row.out != batch.out || !slices.Equal(row.dels, batch.dels) || !slices.Equal(row.asked, batch.asked) || !slices.Equal(row.cls, batch.cls) {
					t.Fatalf("%s:\nruns %v\nrow   %s %v %v %v\nbatch %s %v %v %v", where, runs, row.out, row.dels, row.asked, row.cls, batch.out, batch.dels, batch.asked, batch.cls)
				}
			}
		}
	}
}
