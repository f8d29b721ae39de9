package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river/rivertype"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

// testURL is a schema of its own on the shared PostgreSQL
// (scripts/db-servers.sh: a missing server fails the test), dropped after.
func testURL(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("COMPACTD_PG_DSN")
	if dsn == "" {
		t.Fatal("COMPACTD_PG_DSN is not set: bash scripts/db-servers.sh start; eval \"$(bash scripts/db-servers.sh env)\"")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	name := fmt.Sprintf("fleet_unit_%d_%d", os.Getpid(), rand.Uint32())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
		admin.Close(ctx)
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + name
}

func open(t *testing.T, url, id string) *Fleet {
	t.Helper()
	c := policy.Coordinator{RescueAfter: policy.Duration(time.Minute), Heartbeat: policy.Duration(200 * time.Millisecond), BucketsPerUnit: 4}
	f, err := Open(context.Background(), Options{URL: url, ID: id, Workers: 1, Coordinator: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.pool.Close() })
	return f
}

// Leases exclude as the protocol says: overlapping bucket ranges of one
// table exclude each other, disjoint ones do not; a whole-table unit
// (expire) excludes every compaction unit of the table and is excluded by
// them; other tables are not affected; a lease whose connection dies is
// gone (a killed replica's).
func TestLeasesExclude(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	a, b := open(t, url, "a"), open(t, url, "b")
	ctx := context.Background()
	unit := func(tbl string, k policy.Kind, from, to int) sched.Unit {
		u := sched.Unit{Warehouse: "/" + t.Name(), Table: tbl, Kind: k}
		if from >= 0 {
			u.Buckets = &compact.BucketRange{From: from, To: to}
		}
		return u
	}
	take := func(f *Fleet, u sched.Unit) *lease {
		l, ok, err := f.lease(ctx, u, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return nil
		}
		t.Cleanup(l.release) // before the pool closes, which waits for its connections
		return l
	}
	l1 := take(a, unit("db.t", policy.Compact, 0, 4))
	if l1 == nil {
		t.Fatal("first lease refused")
	}
	if take(b, unit("db.t", policy.Compact, 0, 4)) != nil {
		t.Fatal("the same bucket range was leased twice")
	}
	tail := take(b, unit("db.t", policy.Compact, 4, 0)) // [4,∞) is disjoint from [0,4)
	if tail == nil {
		t.Fatal("a disjoint bucket range was refused")
	}
	if take(b, unit("db.t", policy.Expire, -1, 0)) != nil {
		t.Fatal("expire leased while a compaction unit of the table runs")
	}
	if take(b, unit("db.t", policy.Compact, -1, 0)) != nil {
		t.Fatal("a whole-table compaction leased while a bucket unit runs")
	}
	if l := take(b, unit("db.other", policy.Expire, -1, 0)); l == nil {
		t.Fatal("another table's expire was refused")
	} else {
		l.release()
	}
	// The refused attempts left no lock behind: once the two compaction
	// leases end, expire gets the table (on a replica that never tried).
	l1.release()
	tail.release()
	c := open(t, url, "c")
	e := take(c, unit("db.t", policy.Expire, -1, 0))
	if e == nil {
		t.Fatal("expire refused after every compaction lease ended")
	}
	if take(a, unit("db.t", policy.Compact, 8, 12)) != nil {
		t.Fatal("a compaction unit leased while expire holds the table")
	}
	// A dead connection ends the lease, once the server saw it close.
	kill(t, e)
	waitUntil(t, "the lease to end with its connection", func() bool {
		l := take(a, unit("db.t", policy.Compact, 8, 12))
		if l != nil {
			l.release()
		}
		return l != nil
	})
}

// Enqueue adds a unit once while it is queued (River's unique jobs), and
// the heartbeat sees the queue, the replica and River's leader.
func TestEnqueueIsUniqueAndStatusSeesTheQueue(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	f := open(t, url, "solo")
	ctx := context.Background()
	never := neverStarted{}
	if err := f.Start(ctx, never); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Stop(ctx, time.Second) }()
	u := []sched.Unit{{Warehouse: "/" + t.Name(), Table: "db.t", Kind: policy.Compact, Buckets: &compact.BucketRange{From: 0, To: 4}},
		{Warehouse: "/" + t.Name(), Table: "db.t", Kind: policy.Expire}}
	for range 3 {
		if err := f.Enqueue(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := f.pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = $1", unitKind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d jobs after enqueueing 2 units 3 times", n)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		f.beat(ctx)
		st := f.Status()
		if st.Error == "" && st.Leader == "solo" && len(st.Replicas) == 1 && st.QueueDepth == 2 && f.Leader() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the leader, the replica and 2 queued units: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// neverStarted snoozes every unit (its warehouses never open).
type neverStarted struct{}

func (neverStarted) RunUnit(context.Context, sched.Unit, string) (sched.JobRecord, error) {
	return sched.JobRecord{}, fmt.Errorf("not started")
}
func (neverStarted) Started() bool                                           { return false }
func (neverStarted) Admit(sched.Unit) (func(), bool)                         { return func() {}, true }
func (neverStarted) UnitLimit(context.Context, sched.Unit, int) (int, error) { return 0, nil }

// Failed units back off as the single daemon's jobs do: retry.initial
// doubled per attempt up to retry.max.
func TestRetryPolicyIsTheDaemons(t *testing.T) {
	t.Parallel()
	p := retryPolicy{policy.Retry{Initial: policy.Duration(5 * time.Second), Max: policy.Duration(30 * time.Second)}}
	for attempt, want := range map[int]time.Duration{1: 5 * time.Second, 2: 10 * time.Second, 3: 20 * time.Second, 4: 30 * time.Second, 9: 30 * time.Second} {
		got := time.Until(p.NextRetry(&rivertype.JobRow{Attempt: attempt}))
		if got > want || got < want-time.Second {
			t.Errorf("attempt %d: retry in %v, want %v", attempt, got, want)
		}
	}
}

// The fleet's metrics pass promlint and are named compactd_fleet_*.
func TestMetricsLint(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	if _, err := newMetrics(reg); err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	n, err := testutil.GatherAndCount(reg, "compactd_fleet_queue_depth", "compactd_fleet_oldest_due_job_age_seconds")
	if err != nil || n != 2 {
		t.Fatalf("queue metrics: %d (%v)", n, err)
	}
}

// blocking runs a unit until its context ends and reports why.
type blocking struct {
	running chan struct{}
	ended   chan error
	once    *sync.Once // a retry runs again, reporting nothing
}

func (b blocking) RunUnit(ctx context.Context, u sched.Unit, _ string) (sched.JobRecord, error) {
	b.once.Do(func() { close(b.running) })
	<-ctx.Done()
	select {
	case b.ended <- context.Cause(ctx):
	default:
	}
	return sched.JobRecord{Outcome: "cancelled"}, ctx.Err()
}
func (blocking) Started() bool                   { return true }
func (blocking) Admit(sched.Unit) (func(), bool) { return func() {}, true }
func (blocking) UnitLimit(context.Context, sched.Unit, int) (int, error) {
	return 0, nil
}

// A unit whose lease connection dies (the database restarted, the network
// cut, an operator terminated the session) is cancelled within a
// heartbeat or two: its locks may be gone, so it must stop before another
// replica takes its buckets.
func TestUnitStopsWhenItsLeaseConnectionDies(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	id := fmt.Sprintf("victim-%d", rand.Uint32())
	f := open(t, url, id)
	ctx := context.Background()
	b := blocking{running: make(chan struct{}), ended: make(chan error, 1), once: &sync.Once{}}
	if err := f.Start(ctx, b); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Stop(ctx, time.Second) }()
	if err := f.Enqueue(ctx, []sched.Unit{{Warehouse: "/" + t.Name(), Table: "db.t", Kind: policy.Expire}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.running:
	case <-time.After(15 * time.Second):
		t.Fatal("the unit never started")
	}
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// The lease's session is this replica's one holding an advisory lock
	// (the database is shared: only our own sessions are touched).
	var n int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1`, "compactd-fleet-"+id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no session holds the unit's lease")
	}
	start := time.Now()
	select {
	case cause := <-b.ended:
		if cause == nil || !strings.Contains(cause.Error(), "lease connection lost") {
			t.Fatalf("unit ended by %v, want the lost lease", cause)
		}
		t.Logf("unit cancelled %v after its lease connection was terminated", time.Since(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("the unit kept running after its lease connection died")
	}
	// Retried, not halted: a lost lease says nothing about the table
	// (the test's retry.attempts is 1, so an unknown error would halt).
	waitUntil(t, "the unit back in the queue", func() bool {
		var n int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1 AND state <> 'running'`, unitKind).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	var state string
	if err := f.pool.QueryRow(ctx, `SELECT state FROM river_job WHERE kind = $1`, unitKind).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if hs, err := f.Halted(ctx); err != nil || len(hs) != 0 || state == "cancelled" {
		t.Fatalf("a unit whose lease was lost: job %s, halted %+v (%v)", state, hs, err)
	}
}

// A table's quota holds across replicas: with a limit of two, a third
// bucket-range unit of the table is refused on any replica while two run,
// though its buckets are free; another table, and the table's other kind,
// are not affected; a unit that ends (or whose connection dies) frees its
// slot.
func TestATablesQuotaLimitsItsRunningUnitsAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	a, b := open(t, url, "a"), open(t, url, "b")
	ctx := context.Background()
	unit := func(tbl string, k policy.Kind, from int) sched.Unit {
		return sched.Unit{Warehouse: "/" + t.Name(), Table: tbl, Kind: k, Buckets: &compact.BucketRange{From: from, To: from + 4}}
	}
	take := func(f *Fleet, u sched.Unit, limit int) *lease {
		t.Helper()
		l, ok, err := f.lease(ctx, u, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return nil
		}
		t.Cleanup(l.release)
		return l
	}
	l1 := take(a, unit("db.big", policy.Compact, 0), 2)
	l2 := take(b, unit("db.big", policy.Compact, 4), 2)
	if l1 == nil || l2 == nil {
		t.Fatal("a unit within the quota was refused")
	}
	if take(a, unit("db.big", policy.Compact, 8), 2) != nil || take(b, unit("db.big", policy.Compact, 12), 2) != nil {
		t.Fatal("a third unit of a table limited to two ran")
	}
	if l := take(a, unit("db.small", policy.Compact, 0), 2); l == nil {
		t.Fatal("another table's unit was refused by db.big's quota")
	} else {
		l.release()
	}
	if l := take(b, unit("db.big", policy.FullCompaction, 8), 2); l == nil {
		t.Fatal("the table's full compaction was refused by its compact quota")
	} else {
		l.release()
	}
	// The refused attempts took no slot, and a released unit frees one.
	l1.release()
	l3 := take(b, unit("db.big", policy.Compact, 8), 2)
	if l3 == nil {
		t.Fatal("a slot stayed taken after its unit ended")
	}
	if take(a, unit("db.big", policy.Compact, 12), 2) != nil {
		t.Fatal("a third unit ran after the freed slot was taken again")
	}
	// A dead connection frees its slot (a killed replica's), once the
	// server saw it close.
	kill(t, l2)
	waitUntil(t, "a dead replica's slot freed", func() bool {
		l := take(a, unit("db.big", policy.Compact, 12), 2)
		if l != nil {
			l.release()
		}
		return l != nil
	})
	l3.release()
}

// kill closes a lease's connection as a dying replica's closes: the
// server ends its session (and locks) when it notices.
func kill(t *testing.T, l *lease) {
	t.Helper()
	if err := l.conn.Conn().Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.conn.Release()
	l.done = true
}

// failing fails every unit with err and counts its runs.
type failing struct {
	err  error
	runs atomic.Int32
}

func (f *failing) RunUnit(context.Context, sched.Unit, string) (sched.JobRecord, error) {
	f.runs.Add(1)
	return sched.JobRecord{Outcome: "failed"}, f.err
}
func (*failing) Started() bool                   { return true }
func (*failing) Admit(sched.Unit) (func(), bool) { return func() {}, true }
func (*failing) UnitLimit(context.Context, sched.Unit, int) (int, error) {
	return 0, nil
}

// A unit's permanent error halts its table for the whole fleet, as the
// single daemon's state directory does: the halted record is in
// PostgreSQL (where the leader syncs it from), a unit of the table queued
// afterwards is cancelled without running, and Resume removes the record.
func TestAPermanentErrorHaltsTheTableForTheFleet(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	f := open(t, url, "halter")
	ctx := context.Background()
	ex := &failing{err: &sched.PermanentError{Err: errors.New("table db.bad: unsupported merge engine")}}
	if err := f.Start(ctx, ex); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Stop(ctx, time.Second) }()
	wh := "/" + t.Name()
	u := sched.Unit{Warehouse: wh, Table: "db.bad", Kind: policy.Compact, Buckets: &compact.BucketRange{From: 0, To: 4}}
	if err := f.Enqueue(ctx, []sched.Unit{u}); err != nil {
		t.Fatal(err)
	}
	cancelled := func() int {
		var n int
		if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'cancelled'`, unitKind).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitUntil(t, "the unit cancelled", func() bool { return cancelled() == 1 })
	hs, err := f.Halted(ctx)
	if err != nil || len(hs) != 1 || hs[0].Table != "db.bad" || hs[0].Warehouse != wh || hs[0].Job != policy.Compact ||
		!strings.Contains(hs[0].Reason, "unsupported merge engine") {
		t.Fatalf("halted after a permanent error: %+v, %v", hs, err)
	}
	u2 := u
	u2.Buckets = &compact.BucketRange{From: 4, To: 0}
	if err := f.Enqueue(ctx, []sched.Unit{u2}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the halted table's next unit cancelled", func() bool { return cancelled() == 2 })
	if n := ex.runs.Load(); n != 1 {
		t.Fatalf("a halted table's unit ran: %d runs", n)
	}
	recs, err := Resume(ctx, url, "db.bad", "")
	if err != nil || len(recs) != 1 || recs[0].Table != "db.bad" {
		t.Fatalf("resume: %+v, %v", recs, err)
	}
	if hs, err := f.Halted(ctx); err != nil || len(hs) != 0 {
		t.Fatalf("halted after resume: %+v, %v", hs, err)
	}
	if recs, err := Resume(ctx, url, "db.bad", ""); err != nil || len(recs) != 0 {
		t.Fatalf("resuming twice: %+v, %v", recs, err)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// recorder runs units for a while and records, across the replicas
// sharing it, how many of each table ran at once; admit false makes its
// replica refuse every compaction (its caps are full).
type recorder struct {
	shared *unitCounts
	id     string
	admit  bool
}

type unitCounts struct {
	mu   sync.Mutex
	now  map[string]int
	most map[string]int
	by   map[string]int // units run per replica
}

func (r recorder) RunUnit(ctx context.Context, u sched.Unit, _ string) (sched.JobRecord, error) {
	c := r.shared
	c.mu.Lock()
	c.now[u.Table]++
	c.most[u.Table] = max(c.most[u.Table], c.now[u.Table])
	c.by[r.id]++
	c.mu.Unlock()
	select {
	case <-time.After(250 * time.Millisecond):
	case <-ctx.Done():
	}
	c.mu.Lock()
	c.now[u.Table]--
	c.mu.Unlock()
	return sched.JobRecord{Outcome: "success"}, nil
}
func (recorder) Started() bool { return true }
func (r recorder) Admit(sched.Unit) (func(), bool) {
	return func() {}, r.admit
}

// UnitLimit: db.big may hold one worker of the fleet, others any.
func (recorder) UnitLimit(_ context.Context, u sched.Unit, _ int) (int, error) {
	if u.Table == "db.big" {
		return 1, nil
	}
	return 0, nil
}

// Through the queue: a replica whose caps refuse compactions leaves them
// to the others (snoozed, not failed), and a table limited to one unit at
// once never has two running though two replicas with free workers take
// its units, while another table's units run beside it.
func TestTheQueueHonoursReplicaCapsAndTableQuotas(t *testing.T) {
	t.Parallel()
	url := testURL(t)
	ctx := context.Background()
	counts := &unitCounts{now: map[string]int{}, most: map[string]int{}, by: map[string]int{}}
	for _, r := range []recorder{{id: "full", admit: false}, {id: "b", admit: true}, {id: "c", admit: true}} {
		r.shared = counts
		f := open(t, url, r.id)
		f.o.Workers = 2
		if err := f.Start(ctx, r); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = f.Stop(ctx, 5*time.Second) }()
	}
	var units []sched.Unit
	for _, tbl := range []string{"db.big", "db.other"} {
		for from := 0; from < 16; from += 4 {
			units = append(units, sched.Unit{Warehouse: "/" + t.Name(), Table: tbl, Kind: policy.Compact, Buckets: &compact.BucketRange{From: from, To: from + 4}})
		}
	}
	enq := open(t, url, "enqueuer")
	if err := enq.Start(ctx, neverStarted{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = enq.Stop(ctx, time.Second) }()
	if err := enq.Enqueue(ctx, units); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "every unit run", func() bool {
		var n int
		if err := enq.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'completed'`, unitKind).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == len(units)
	})
	counts.mu.Lock()
	defer counts.mu.Unlock()
	if counts.by["full"] != 0 {
		t.Errorf("the replica whose caps are full ran %d units", counts.by["full"])
	}
	if counts.by["b"] == 0 || counts.by["c"] == 0 {
		t.Errorf("units per replica %v: want both free replicas working", counts.by)
	}
	if counts.most["db.big"] != 1 {
		t.Errorf("db.big, limited to one unit, had %d at once", counts.most["db.big"])
	}
	if counts.most["db.other"] < 2 {
		t.Errorf("db.other had at most %d units at once: db.big's quota held back another table", counts.most["db.other"])
	}
}
