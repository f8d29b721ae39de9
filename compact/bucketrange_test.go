package compact_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/compactd/compactd/compact"
)

// A run restricted to a bucket range compacts only those buckets, in every
// partition, and commits; the complementary open-ended range compacts the
// rest; the rows are the same as before (a fleet's units of one table).
func TestBucketRangeRestrictsTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tb := newTable(t, map[string]string{"bucket": "4", "write-only": "true", "num-sorted-run.compaction-trigger": "2"})
	writeRandom(t, tb, rand.New(rand.NewPCG(5, 6)), "w", 4, 80, 60, true)
	want := scanRows(t, tb)
	level0 := func() map[int]int {
		n := map[int]int{}
		for _, p := range latestFileSet(t, tb).Partitions {
			for _, b := range p.Buckets {
				for _, e := range b.Files {
					if e.File.Level == 0 {
						n[int(b.Bucket)]++
					}
				}
			}
		}
		return n
	}
	before := level0()
	for b := range 4 {
		if before[b] < 2 {
			t.Fatalf("bucket %d has %d level-0 files, the test needs at least 2: %v", b, before[b], before)
		}
	}
	sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{Buckets: &compact.BucketRange{From: 1, To: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Snapshot == 0 {
		t.Fatal("nothing committed")
	}
	var touched []int
	for _, j := range sum.Jobs {
		if !slices.Contains(touched, j.Job.Bucket) {
			touched = append(touched, j.Job.Bucket)
		}
	}
	slices.Sort(touched)
	if !slices.Equal(touched, []int{1, 2}) {
		t.Fatalf("range [1,3) compacted buckets %v", touched)
	}
	after := level0()
	if after[0] != before[0] || after[3] != before[3] || after[1] != 0 || after[2] != 0 {
		t.Fatalf("level-0 files per bucket before %v, after [1,3): %v", before, after)
	}
	if _, err := compact.Run(ctx, reopen(t, tb), compact.Options{Buckets: &compact.BucketRange{From: 3}}); err != nil {
		t.Fatal(err)
	}
	if after := level0(); after[3] != 0 || after[0] != before[0] {
		t.Fatalf("after [3,∞): %v", after)
	}
	if got := scanRows(t, tb); !slices.Equal(got, want) {
		t.Fatalf("rows changed: %d before, %d after", len(want), len(got))
	}
	if !(compact.BucketRange{From: 3}).Contains(99) || (compact.BucketRange{From: 1, To: 3}).Contains(3) {
		t.Fatal("Contains")
	}
}
