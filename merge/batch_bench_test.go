package merge

import (
	"context"
	"errors"
	"io"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/compactd/compactd/table/datafile"
)

// memRun serves pre-built batches of one sorted run, copying each into the
// merge's batch as a file reader would decode it, so the benchmark measures
// the merge and not record generation.
type memRun struct {
	batches [][]datafile.Take
	next    int
}

func (m *memRun) Next(b *datafile.Batch, max int) error {
	b.Reset()
	if m.next >= len(m.batches) {
		return io.EOF
	}
	t := m.batches[m.next]
	if len(t) > max {
		t, m.batches[m.next] = t[:max], t[max:]
	} else {
		m.next++
	}
	return b.AppendTake(t)
}

func (m *memRun) Close() error { return nil }

// BenchmarkBatchMerge measures merged input records per second of the batch
// merge (the compaction path) over 8 runs of 25k records: "overlap" has every
// key in two runs (deduplicate picks a record, partial-update merges column
// by column, aggregation materializes records), "distinct" every key in one
// run (records are copied column by column, the same for every engine).
func BenchmarkBatchMerge(b *testing.B) {
	const numRuns, perRun = 8, 25_000
	for _, c := range []struct {
		layout, engine string
		stride         int
	}{
		{"overlap", EngineDeduplicate, 4},
		{"overlap", EnginePartialUpdate, 4},
		{"overlap", EngineAggregation, 4},
		{"distinct", EngineDeduplicate, numRuns},
	} {
		b.Run(c.layout+"/"+c.engine, func(b *testing.B) {
			opts := map[string]string{"merge-engine": c.engine}
			if c.engine == EngineAggregation {
				opts["fields.v.aggregate-function"] = "sum"
			}
			e, err := NewEngine(opts, benchRowType, []string{"k"})
			if err != nil {
				b.Fatal(err)
			}
			codec, err := datafile.NewKVCodec(datafile.Schema{Fields: benchRowType, KeyNames: []string{"k"}})
			if err != nil {
				b.Fatal(err)
			}
			// Every run's records, in batches of 1024.
			runs := make([][]*datafile.Batch, numRuns)
			for r, it := range genRuns(numRuns, perRun, c.stride) {
				var cur *datafile.Batch
				for {
					kv, err := it.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					if cur == nil || cur.N == 1024 {
						cur = codec.NewBatch()
						runs[r] = append(runs[r], cur)
					}
					if err := codec.Append(cur, kv); err != nil {
						b.Fatal(err)
					}
				}
			}
			takes := make([][][]datafile.Take, numRuns)
			for r, batches := range runs {
				for _, src := range batches {
					t := make([]datafile.Take, src.N)
					for j := range t {
						t[j] = datafile.Take{Src: src, Row: int32(j)}
					}
					takes[r] = append(takes[r], t)
				}
			}
			out := codec.NewBatch()
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			for i := 0; i < b.N; i++ {
				bruns := make([]BatchRun, numRuns)
				for r := range takes {
					bruns[r] = &memRun{batches: slices.Clone(takes[r])}
				}
				br, err := e.NewBatchReader(context.Background(), codec, bruns, true, 1024)
				if err != nil {
					b.Fatal(err)
				}
				for {
					err := br.NextInto(out)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if err := br.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(numRuns*perRun*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// reportCPU, deferred after ResetTimer, reports the process's CPU time
// (user + system) per iteration: on a shared machine wall time measures the
// neighbours as much as the code.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
