package compact_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// A full compaction with PartitionIdleTime compacts only the partitions
// whose newest file is at least that old at the run's clock (Paimon's
// partition_idle_time), judged on the whole partition even when the run
// is restricted to a bucket range; the rows are unchanged.
func TestPartitionIdleTimeCompactsOnlyIdlePartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tb := newTable(t, map[string]string{"bucket": "2", "write-only": "true"})
	commit := func(part int64) {
		w, err := write.NewWriter(ctx, tb, "w")
		if err != nil {
			t.Fatal(err)
		}
		for k := part; k < 60; k += 3 { // k%3 is the partition p<k%3>
			if err := w.Write(table.RowKindInsert, table.Row{k, fmt.Sprintf("p%d", k%3), k, nil, nil}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		commit(0)
	}
	time.Sleep(20 * time.Millisecond) // p1's files are strictly newer than p0's
	for range 3 {
		commit(1)
	}
	want := scanRows(t, tb)
	v, err := compact.LoadView(ctx, reopen(t, tb), 0)
	if err != nil {
		t.Fatal(err)
	}
	newest := map[string]time.Time{}
	for _, b := range v.View.Buckets {
		for _, f := range b.Files {
			if p := v.PartitionPath[b.Partition]; f.CreationTime.After(newest[p]) {
				newest[p] = f.CreationTime
			}
		}
	}
	if !newest["p=p0"].Before(newest["p=p1"]) {
		t.Fatalf("newest files: %v", newest)
	}
	const idle = time.Hour
	now := newest["p=p0"].Add(idle) // p0 idle exactly that long, p1 not
	runs := func() map[string]int {
		n := map[string]int{}
		vv, err := compact.LoadView(ctx, reopen(t, tb), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range vv.View.Buckets {
			n[vv.PartitionPath[b.Partition]] += len(b.Files)
		}
		return n
	}
	before := runs()
	sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true, PartitionIdleTime: idle, Now: func() time.Time { return now },
		Buckets: &compact.BucketRange{From: 0}})
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, j := range sum.Jobs {
		if p := v.PartitionPath[j.Job.Partition]; !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	if !slices.Equal(parts, []string{"p=p0"}) {
		t.Fatalf("compacted partitions %v, want only the idle p=p0", parts)
	}
	after := runs()
	if after["p=p1"] != before["p=p1"] || after["p=p0"] >= before["p=p0"] {
		t.Fatalf("files per partition before %v, after %v", before, after)
	}
	if got := scanRows(t, tb); !slices.Equal(got, want) {
		t.Fatalf("rows changed: %d before, %d after", len(want), len(got))
	}
	// A moment earlier, nothing is idle.
	sum, err = compact.Run(ctx, reopen(t, tb), compact.Options{Full: true, PartitionIdleTime: idle,
		Now: func() time.Time { return now.Add(-time.Millisecond) }})
	if err != nil || sum.Snapshot != 0 {
		t.Fatalf("nothing idle: %+v, %v", sum, err)
	}
}
