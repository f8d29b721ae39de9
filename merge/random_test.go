package merge

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/compactd/compactd/table"
)

var seedFlag = flag.Int64("seed", 0, "seed for TestRandomMergeMatchesReference (0: MERGE_SEED or the clock)")

func randomSeed(t *testing.T) int64 {
	seed := *seedFlag
	if seed == 0 {
		if s := os.Getenv("MERGE_SEED"); s != "" {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("MERGE_SEED: %v", err)
			}
			seed = v
		}
	}
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (reproduce with -seed=%d or MERGE_SEED=%d)", seed, seed, seed)
	return seed
}

// Columns of the random table: k INT NOT NULL (key), v BIGINT, m INT,
// s STRING, ts INT (sequence field in some configurations).
var randomRowType = schema("v", tBigInt, "m", tInt, "s", tString, "ts", tInt)

type randomConfig struct {
	name      string
	options   map[string]string
	retracts  bool // whether -U/-D may be generated
	reference func(recs []table.KeyValue) (table.KeyValue, bool)
}

// The reference folds are written independently from the engines, from the
// semantics in the spec, for the subset of options they cover.
func randomConfigs() []randomConfig {
	lastOf := func(ignoreDelete bool) func([]table.KeyValue) (table.KeyValue, bool) {
		return func(recs []table.KeyValue) (table.KeyValue, bool) {
			for i := len(recs) - 1; i >= 0; i-- {
				if !ignoreDelete || recs[i].Kind.IsAdd() {
					return recs[i], true
				}
			}
			return table.KeyValue{}, false
		}
	}
	return []randomConfig{
		{name: "deduplicate", retracts: true, reference: lastOf(false)},
		{name: "deduplicate ignore-delete", options: map[string]string{"ignore-delete": "true"}, retracts: true, reference: lastOf(true)},
		{name: "deduplicate sequence.field", options: map[string]string{"sequence.field": "ts"}, retracts: true, reference: lastOf(false)},
		{name: "deduplicate sequence.field descending", options: map[string]string{"sequence.field": "ts", "sequence.field.sort-order": "descending"}, retracts: true, reference: lastOf(false)},
		{name: "first-row ignore-delete", options: map[string]string{"merge-engine": "first-row", "ignore-delete": "true"}, retracts: true,
			reference: func(recs []table.KeyValue) (table.KeyValue, bool) {
				for _, r := range recs {
					if r.Kind.IsAdd() {
						return r, true
					}
				}
				return table.KeyValue{}, false
			}},
		{name: "partial-update", options: map[string]string{"merge-engine": "partial-update"},
			reference: func(recs []table.KeyValue) (table.KeyValue, bool) {
				row := make(table.Row, len(randomRowType))
				for _, r := range recs {
					for i, v := range r.Value {
						if v != nil {
							row[i] = v
						}
					}
				}
				last := recs[len(recs)-1]
				return table.KeyValue{Key: last.Key, Seq: last.Seq, Kind: table.RowKindInsert, Value: row}, true
			}},
		{name: "aggregation sum/max/last_non_null", retracts: true,
			options: map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "fields.m.aggregate-function": "max", "fields.m.ignore-retract": "true", "fields.ts.aggregate-function": "last_value"},
			reference: func(recs []table.KeyValue) (table.KeyValue, bool) {
				row := make(table.Row, len(randomRowType))
				row[0] = recs[0].Key[0]
				for _, r := range recs {
					add := r.Kind.IsAdd()
					if v := r.Value[1]; v != nil {
						switch {
						case row[1] == nil && add:
							row[1] = v
						case row[1] == nil:
							row[1] = -v.(int64)
						case add:
							row[1] = row[1].(int64) + v.(int64)
						default:
							row[1] = row[1].(int64) - v.(int64)
						}
					}
					if m := r.Value[2]; add && m != nil && (row[2] == nil || m.(int32) > row[2].(int32)) {
						row[2] = m
					}
					if s := r.Value[3]; s != nil {
						if add {
							row[3] = s
						} else {
							row[3] = nil
						}
					}
					if add {
						row[4] = r.Value[4]
					} else {
						row[4] = nil
					}
				}
				last := recs[len(recs)-1]
				return table.KeyValue{Key: last.Key, Seq: last.Seq, Kind: table.RowKindInsert, Value: row}, true
			}},
	}
}

type taggedKV struct {
	kv  table.KeyValue
	run int
}

func TestRandomMergeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(randomSeed(t)))
	configs := randomConfigs()
	iterations := 300
	if testing.Short() {
		iterations = 50
	}
	for it := 0; it < iterations; it++ {
		cfg := configs[rng.Intn(len(configs))]
		dropDelete := rng.Intn(2) == 0
		e, err := NewEngine(cfg.options, randomRowType, []string{"k"})
		if err != nil {
			t.Fatalf("%s: %v", cfg.name, err)
		}
		numRuns := 1 + rng.Intn(6)
		keySpace := 1 + rng.Intn(40)
		var all []taggedKV
		runs := make([][]table.KeyValue, numRuns)
		for r := range runs {
			for k := 0; k < keySpace; k++ {
				if rng.Intn(3) == 0 {
					continue
				}
				kv := randomRecord(rng, int32(k), cfg.retracts)
				runs[r] = append(runs[r], kv)
				all = append(all, taggedKV{kv, r})
			}
		}
		iters := make([]Iterator, numRuns)
		for r, kvs := range runs {
			// Split each run in up to three "files" to exercise Concat.
			a, b := splitPoints(rng, len(kvs))
			iters[r] = Concat(FromSlice(kvs[:a]), FromSlice(kvs[a:b]), FromSlice(kvs[b:]))
		}
		got, err := Collect(e.NewReader(context.Background(), iters, dropDelete))
		if err != nil {
			t.Fatalf("iteration %d (%s): %v", it, cfg.name, err)
		}
		want := referenceMerge(all, e.SeqCompare(), cfg.reference, dropDelete)
		if fmtKVs(got) != fmtKVs(want) {
			t.Fatalf("iteration %d (%s, dropDelete=%v, %d runs):\ngot  %s\nwant %s", it, cfg.name, dropDelete, numRuns, fmtKVs(got), fmtKVs(want))
		}
	}
}

func splitPoints(rng *rand.Rand, n int) (int, int) {
	a, b := rng.Intn(n+1), rng.Intn(n+1)
	if a > b {
		a, b = b, a
	}
	return a, b
}

func randomRecord(rng *rand.Rand, k int32, retracts bool) table.KeyValue {
	kinds := []string{"+I", "+U"}
	if retracts {
		kinds = append(kinds, "-U", "-D")
	}
	maybe := func(v any) any {
		if rng.Intn(4) == 0 {
			return nil
		}
		return v
	}
	// A small sequence range makes full ties (same seq) happen.
	return rec(kinds[rng.Intn(len(kinds))], int64(rng.Intn(20)), k,
		maybe(int64(rng.Intn(100)-50)), maybe(int32(rng.Intn(100))), maybe(fmt.Sprintf("s%d", rng.Intn(5))), maybe(int32(rng.Intn(4))))
}

// referenceMerge: collect everything, sort by the documented merge order,
// group by key and fold (a single record passes unchanged).
func referenceMerge(all []taggedKV, seqCmp func(a, b table.Row) int, fold func([]table.KeyValue) (table.KeyValue, bool), dropDelete bool) []table.KeyValue {
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if c := table.CompareRows(intKey, a.kv.Key, b.kv.Key); c != 0 {
			return c < 0
		}
		if seqCmp != nil {
			if c := seqCmp(a.kv.Value, b.kv.Value); c != 0 {
				return c < 0
			}
		}
		if a.kv.Seq != b.kv.Seq {
			return a.kv.Seq < b.kv.Seq
		}
		if a.kv.Kind.IsAdd() != b.kv.Kind.IsAdd() {
			return !a.kv.Kind.IsAdd()
		}
		return a.run < b.run
	})
	var out []table.KeyValue
	for i := 0; i < len(all); {
		j := i
		var group []table.KeyValue
		for j < len(all) && table.CompareRows(intKey, all[j].kv.Key, all[i].kv.Key) == 0 {
			group = append(group, all[j].kv)
			j++
		}
		i = j
		res, ok := group[0], true
		if len(group) > 1 {
			res, ok = fold(group)
		}
		if !ok || (dropDelete && !res.Kind.IsAdd()) {
			continue
		}
		out = append(out, res)
	}
	return out
}
