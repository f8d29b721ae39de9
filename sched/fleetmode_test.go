package sched_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// fakeCoordinator records what the scheduler enqueues.
type fakeCoordinator struct {
	leader  atomic.Bool
	mu      sync.Mutex
	units   []sched.Unit
	halted  []sched.HaltedRecord
	status  *sched.FleetStatus
	drained atomic.Bool
}

func (c *fakeCoordinator) Leader() bool { return c.leader.Load() }
func (c *fakeCoordinator) Enqueue(_ context.Context, us []sched.Unit) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.units = append(c.units, us...)
	return nil
}
func (c *fakeCoordinator) Status() *sched.FleetStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status != nil {
		st := *c.status
		return &st
	}
	return &sched.FleetStatus{Replica: "fake"}
}
func (c *fakeCoordinator) Drain(time.Duration) error { c.drained.Store(true); return nil }
func (c *fakeCoordinator) Halted(context.Context) ([]sched.HaltedRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.halted), nil
}
func (c *fakeCoordinator) enqueued() []sched.Unit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.units)
}

// With a coordinator the scheduler takes no warehouse lock, enqueues due
// units only while it leads (a 16-bucket table's compaction as 4 bucket
// ranges) and runs none itself; RunUnit compacts just the unit's buckets
// and commits under the given user; shutdown drains the coordinator.
func TestFleetModeEnqueuesOnTheLeaderAndRunsUnitsOnRequest(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	tb := createTable(t, wh, "big", map[string]string{"bucket": "16"})
	m := newModel(t, tb)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 7 {
		m.commit(t, rng, 200)
	}
	before := runsPerBucket(t, tb)
	cfg := config(t, wh, compactOnly(nil))
	c := &fakeCoordinator{}
	s, stop := start(t, cfg, sched.Options{Coordinator: c})
	time.Sleep(300 * time.Millisecond)
	if n := len(c.enqueued()); n != 0 {
		t.Fatalf("a replica that does not lead enqueued %d units", n)
	}
	if files, _ := filepath.Glob(filepath.Join(wh, sched.LockFile+"*")); len(files) > 0 {
		t.Fatalf("a fleet replica took the warehouse lock: %v", files)
	}
	c.leader.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for len(c.enqueued()) < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	us := c.enqueued()
	if len(us) < 4 || us[0].Buckets == nil || us[3].Buckets == nil || us[3].Buckets.From != 12 || us[3].Buckets.To != 0 {
		t.Fatalf("enqueued %v, want the 16-bucket compaction as 4 ranges", us)
	}
	if got := runsPerBucket(t, tb); got != before {
		t.Fatalf("the scheduler compacted by itself: %d runs per bucket, was %d", got, before)
	}
	rec, err := s.RunUnit(context.Background(), us[0], "compactd-test-unit")
	if err != nil || rec.Outcome != "success" || rec.Snapshot == 0 || rec.BucketRange != "[0,4)" {
		t.Fatalf("RunUnit: %+v, %v", rec, err)
	}
	fresh, err := table.OpenPath(context.Background(), tb.FileIO(), tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	snap, err := fresh.LatestSnapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.CommitUser != "compactd-test-unit" || snap.CommitKind != "COMPACT" {
		t.Fatalf("latest snapshot by %s (%s)", snap.CommitUser, snap.CommitKind)
	}
	fs, err := fresh.FileSet(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range fs.Buckets() {
		if inUnit := b.Bucket < 4; inUnit != (len(b.Runs) < before) {
			t.Errorf("bucket %d has %d sorted runs after the unit [0,4) (%d before)", b.Bucket, len(b.Runs), before)
		}
	}
	m.check(t)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !c.drained.Load() {
		t.Fatal("shutdown did not drain the coordinator")
	}
}

// The leader syncs the fleet's halted tables as the single daemon syncs
// its state directory: a table another replica halted gets no more units
// (and /status shows it halted), a resumed one gets them again.
func TestTheFleetLeaderEnqueuesNothingForAHaltedTable(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []string{"bad", "good"} {
		m := newModel(t, createTable(t, wh, n, nil))
		for range 3 {
			m.commit(t, rng, 10)
		}
	}
	cfg := config(t, wh, compactOnly(nil))
	c := &fakeCoordinator{}
	c.halted = []sched.HaltedRecord{{Warehouse: wh, Table: "db.bad", Job: "compact", Reason: "compact: unsupported", Time: time.Now()}}
	c.leader.Store(true)
	s, _ := start(t, cfg, sched.Options{Coordinator: c})
	count := func(tbl string) int {
		n := 0
		for _, u := range c.enqueued() {
			if u.Table == tbl {
				n++
			}
		}
		return n
	}
	waitFor(t, "db.good enqueued twice", 10*time.Second, func() bool { return count("db.good") >= 2 })
	if n := count("db.bad"); n != 0 {
		t.Fatalf("the halted table got %d units", n)
	}
	if ts, _ := tableStatus(s, "db.bad"); !strings.Contains(ts.Halted, "unsupported") {
		t.Fatalf("db.bad in /status: halted %q", ts.Halted)
	}
	c.mu.Lock()
	c.halted = nil
	c.mu.Unlock()
	waitFor(t, "db.bad enqueued after resume", 10*time.Second, func() bool { return count("db.bad") > 0 })
}

// The leader observes a split table over all its buckets before it
// enqueues the table's units: its backlog (in /status and the gauges)
// covers every bucket though no unit sees more than its range, and a
// split table with nothing to compact gets no units at all.
func TestTheFleetLeaderObservesSplitTablesAndSkipsThoseWithNothingToDo(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	big := newModel(t, createTable(t, wh, "big", map[string]string{"bucket": "16"}))
	for range 7 {
		big.commit(t, rng, 200)
	}
	calm := newModel(t, createTable(t, wh, "calm", map[string]string{"bucket": "16"}))
	calm.commit(t, rng, 200) // one sorted run per bucket: under the trigger
	c := &fakeCoordinator{}
	c.leader.Store(true)
	s, _ := start(t, config(t, wh, compactOnly(nil)), sched.Options{Coordinator: c})
	waitFor(t, "db.big's units enqueued twice", 10*time.Second, func() bool {
		n := 0
		for _, u := range c.enqueued() {
			if u.Table == "db.big" {
				n++
			}
		}
		return n >= 8
	})
	for _, u := range c.enqueued() {
		if u.Table == "db.calm" {
			t.Fatalf("a split table with nothing to compact got unit %v", u)
		}
	}
	for _, n := range []string{"db.big", "db.calm"} {
		ts, _ := tableStatus(s, n)
		if ts.Backlog.Buckets != 16 || ts.Backlog.Observed.IsZero() {
			t.Errorf("%s: backlog %+v, want all 16 buckets observed", n, ts.Backlog)
		}
	}
	if ts, _ := tableStatus(s, "db.big"); ts.Backlog.RunsOverTrigger == 0 {
		t.Errorf("db.big's backlog shows no runs over the trigger: %+v", ts.Backlog)
	}
	metrics := get(t, s.Handler(), "/metrics")
	for _, n := range []string{"db.big", "db.calm"} {
		if !strings.Contains(metrics, `compactd_table_sorted_runs_max{table="`+n+`"`) {
			t.Errorf("no backlog gauge for %s", n)
		}
	}
}
