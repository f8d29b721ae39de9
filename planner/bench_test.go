package planner

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchView generates a table of nBuckets buckets with filesPerBucket files
// each: a few level-0 files over a stack of levels, so most buckets have a
// pick to make (the expensive path).
func benchView(nBuckets, filesPerBucket int) View {
	r := rand.New(rand.NewPCG(1, 2))
	v := View{Buckets: make([]Bucket, nBuckets)}
	for bi := range v.Buckets {
		b := &v.Buckets[bi]
		b.Partition = fmt.Sprintf("dt=2026-11-%02d", bi%28+1)
		b.Bucket = bi
		b.Files = make([]File, 0, filesPerBucket)
		seq := int64(0)
		nL0 := 4 + r.IntN(6)
		perLevel := (filesPerBucket - nL0) / 5
		zero := int64(0)
		for lvl := 1; lvl <= 5; lvl++ {
			n := perLevel
			if lvl == 5 {
				n = filesPerBucket - nL0 - 4*perLevel
			}
			for k := range n {
				seq++
				b.Files = append(b.Files, File{
					Name: fmt.Sprintf("data-%d-%d-%d", bi, lvl, k), Level: lvl,
					Size: int64(32+r.IntN(160)) << 20, RowCount: 1000, MinSeq: seq, MaxSeq: seq,
					MinKey: fmt.Appendf(nil, "%08d", k*1000), MaxKey: fmt.Appendf(nil, "%08d", k*1000+999),
					DeleteRowCount: &zero,
				})
			}
		}
		for k := range nL0 {
			seq++
			lo := r.IntN(perLevel * 1000)
			b.Files = append(b.Files, File{
				Name: fmt.Sprintf("data-%d-0-%d", bi, k), Level: 0,
				Size: int64(1+r.IntN(16)) << 20, RowCount: 100, MinSeq: seq, MaxSeq: seq,
				MinKey: fmt.Appendf(nil, "%08d", lo), MaxKey: fmt.Appendf(nil, "%08d", lo+r.IntN(50000)),
				DeleteRowCount: &zero,
			})
		}
	}
	return v
}

// BenchmarkPlan plans a whole table: 100 buckets × 100 files and
// 1,000 buckets × 100 files (100,000 files).
func BenchmarkPlan(b *testing.B) {
	opts := DefaultOptions(true)
	now := time.Unix(1_800_000_000, 0)
	for _, n := range []int{100, 1000} {
		v := benchView(n, 100)
		b.Run(fmt.Sprintf("buckets=%d/files=%d", n, n*100), func(b *testing.B) {
			b.ReportAllocs()
			jobs := 0
			for b.Loop() {
				p := Plan(v, nil, opts, now)
				jobs = len(p.Jobs)
			}
			b.ReportMetric(float64(jobs), "jobs")
		})
	}
}
