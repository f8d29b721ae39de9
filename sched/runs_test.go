package sched_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// With buckets-per-run the single daemon compacts a 16-bucket table as
// four bucket-range runs on several workers at once (the fleet's unit
// split), at most compact.max-share of the workers; the rows stay right,
// every bucket is compacted, the round is one job in /status and the
// table's backlog covers all 16 buckets.
func TestTheDaemonSplitsALargeTableIntoBucketRangeRuns(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, share string) (most int32, ranges []string) {
		wh := t.TempDir()
		tb := createTable(t, wh, "big", map[string]string{"bucket": "16"})
		m := newModel(t, tb)
		rng := rand.New(rand.NewPCG(9, 10))
		for range 7 {
			m.commit(t, rng, 200)
		}
		before := runsPerBucket(t, tb)
		var c concurrency
		var mu sync.Mutex
		r := &hookRunner{compact: func(ctx context.Context, tb *table.Table, o *compact.Options) error {
			mu.Lock()
			if o.Buckets != nil {
				ranges = append(ranges, o.Buckets.String())
			} else {
				ranges = append(ranges, "whole table")
			}
			mu.Unlock()
			return c.hook(ctx, tb, o)
		}}
		cfg := config(t, wh, compactOnly(map[string]string{"compact.max-share": share}))
		cfg.Workers, cfg.BucketsPerRun = 4, 4
		s, stop := start(t, cfg, sched.Options{Runner: r})
		var ts sched.TableStatus
		waitFor(t, "the split compaction", 20*time.Second, func() bool {
			ts, _ = tableStatus(s, "db.big")
			return successes(ts, policy.Compact) > 0
		})
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if after := runsPerBucket(t, tb); after >= before {
			t.Errorf("a bucket still has %d sorted runs (%d before)", after, before)
		}
		m.check(t)
		if ts.Backlog.Buckets != 16 {
			t.Errorf("backlog of the split table covers %d buckets", ts.Backlog.Buckets)
		}
		j := ts.LastJobs[len(ts.LastJobs)-1]
		if j.Outcome != "success" || j.Buckets == 0 || j.Snapshot == 0 {
			t.Errorf("the round's record: %+v", j)
		}
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(ranges)
		return c.most.Load(), slices.Compact(ranges)
	}
	t.Run("whole share", func(t *testing.T) {
		t.Parallel()
		most, ranges := run(t, "1")
		if !slices.Equal(ranges, []string{"[0,4)", "[12,∞)", "[4,8)", "[8,12)"}) {
			t.Fatalf("compacted as %v", ranges)
		}
		if most < 3 {
			t.Fatalf("at most %d runs at once on 4 workers", most)
		}
	})
	t.Run("half share", func(t *testing.T) {
		t.Parallel()
		if most, _ := run(t, "0.5"); most != 2 {
			t.Fatalf("compact.max-share 0.5 of 4 workers: %d runs at once, want 2", most)
		}
	})
}

// A bucket-range run that fails permanently halts the table once the
// round's other runs ended, naming the range, as a whole-table job would;
// the round starts no further range after the failure.
func TestAFailedBucketRangeRunHaltsTheTable(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	tb := createTable(t, wh, "big", map[string]string{"bucket": "16"})
	m := newModel(t, tb)
	rng := rand.New(rand.NewPCG(11, 12))
	for range 7 {
		m.commit(t, rng, 200)
	}
	r := &hookRunner{compact: func(ctx context.Context, tb *table.Table, o *compact.Options) error {
		if o.Buckets != nil && o.Buckets.From == 0 {
			return &sched.PermanentError{Err: errors.New("corrupt file data-0.parquet")}
		}
		time.Sleep(100 * time.Millisecond)
		return nil
	}}
	cfg := config(t, wh, compactOnly(nil))
	cfg.Workers, cfg.BucketsPerRun = 2, 4 // two ranges at a time: [0,4) fails in the first pair
	s, stop := start(t, cfg, sched.Options{Runner: r})
	var ts sched.TableStatus
	waitFor(t, "the table halted", 20*time.Second, func() bool {
		ts, _ = tableStatus(s, "db.big")
		return ts.Halted != ""
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ts.Halted, "buckets [0,4)") || !strings.Contains(ts.Halted, "corrupt file") {
		t.Fatalf("halted: %q", ts.Halted)
	}
	if n := r.count("db.big"); n != 2 {
		t.Fatalf("%d range runs started; want the first two only", n)
	}
	m.check(t)
}
