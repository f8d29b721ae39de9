package compact_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
)

func TestPolicyLimitsBoundTheBucketsOfOneRun(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		o           compact.Options
		wantBuckets int
	}{
		{"no limit compacts every bucket (4 buckets x 3 partitions)", compact.Options{Full: true}, 12},
		{"max buckets 1 compacts one bucket", compact.Options{Full: true, MaxBuckets: 1}, 1},
		{"max bytes 1 still compacts the first bucket", compact.Options{Full: true, MaxBytes: 1}, 1},
		{"max buckets 3 compacts three", compact.Options{Full: true, MaxBuckets: 3}, 3},
		{"a spent time budget starts nothing", compact.Options{Full: true, TimeBudget: time.Nanosecond}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := newTable(t, map[string]string{"bucket": "4"})
			writeRandom(t, tb, rand.New(rand.NewPCG(1, 2)), "writer", 3, 40, 200, false)
			before := scanRows(t, tb)
			sum, err := compact.Run(ctx, reopen(t, tb), c.o)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Buckets != c.wantBuckets {
				t.Fatalf("compacted %d buckets, want %d", sum.Buckets, c.wantBuckets)
			}
			if (sum.Snapshot != 0) != (c.wantBuckets > 0) {
				t.Fatalf("snapshot %d with %d buckets", sum.Snapshot, c.wantBuckets)
			}
			if after := scanRows(t, tb); len(after) != len(before) {
				t.Fatalf("rows %d -> %d", len(before), len(after))
			}
		})
	}
}
