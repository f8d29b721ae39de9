package merge

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/compactd/compactd/table"
)

// genIter generates n records of one run without holding them: run r of
// numRuns yields keys i*stride + r%stride for i in [0, n), so with stride <
// numRuns several runs share every key. Each record gets fresh rows, as a
// file reader would.
type genIter struct {
	run, n, i, stride int
}

func (g *genIter) Next() (table.KeyValue, error) {
	if g.i >= g.n {
		return table.KeyValue{}, io.EOF
	}
	k := int32(g.i*g.stride + g.run%g.stride)
	g.i++
	seq := int64(g.i)*8 + int64(g.run)
	return table.KeyValue{Key: table.Row{k}, Seq: seq, Kind: table.RowKindInsert, Value: table.Row{k, seq, "payload"}}, nil
}

func (g *genIter) Close() error { return nil }

var benchRowType = schema("v", tBigInt, "s", tString)

func genRuns(numRuns, perRun, stride int) []Iterator {
	runs := make([]Iterator, numRuns)
	for r := range runs {
		runs[r] = &genIter{run: r, n: perRun, stride: stride}
	}
	return runs
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A million records over 8 runs must merge in memory bounded by the number of
// runs, not the number of records: the live heap midway and at the end stays
// within a small constant of the starting heap, far below what retaining the
// records would take (~100 bytes each).
func TestMergeMemoryIsBoundedByRuns(t *testing.T) {
	const numRuns, perRun = 8, 125_000
	for _, engine := range []string{EngineDeduplicate, EngineAggregation, EnginePartialUpdate} {
		t.Run(engine, func(t *testing.T) {
			e, err := NewEngine(map[string]string{"merge-engine": engine, "fields.v.aggregate-function": "sum"}, benchRowType, []string{"k"})
			if engine != EngineAggregation {
				e, err = NewEngine(map[string]string{"merge-engine": engine}, benchRowType, []string{"k"})
			}
			if err != nil {
				t.Fatal(err)
			}
			base := heapInUse()
			r := e.NewReader(context.Background(), genRuns(numRuns, perRun, 4), true)
			var rows int
			var peak uint64
			for {
				_, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rows++
				if rows%100_000 == 0 {
					peak = max(peak, heapInUse())
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			// stride 4 over 8 runs: every key is in exactly two runs.
			if want := numRuns * perRun / 2; rows != want {
				t.Fatalf("merged %d rows, want %d", rows, want)
			}
			growth := int64(peak) - int64(base)
			t.Logf("heap base %d B, peak during merge %d B (growth %d B) for %d input records", base, peak, growth, numRuns*perRun)
			if growth > 2<<20 {
				t.Fatalf("live heap grew by %d bytes while merging; memory is not bounded by the number of runs", growth)
			}
		})
	}
}

// BenchmarkMerge measures merged input records per second over 8 generated
// runs in which every key appears in two runs.
func BenchmarkMerge(b *testing.B) {
	const numRuns, perRun = 8, 50_000
	for _, engine := range []string{EngineDeduplicate, EnginePartialUpdate, EngineAggregation} {
		b.Run(engine, func(b *testing.B) {
			opts := map[string]string{"merge-engine": engine}
			if engine == EngineAggregation {
				opts["fields.v.aggregate-function"] = "sum"
			}
			e, err := NewEngine(opts, benchRowType, []string{"k"})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			for i := 0; i < b.N; i++ {
				r := e.NewReader(context.Background(), genRuns(numRuns, perRun, 4), true)
				for {
					_, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(numRuns*perRun*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
