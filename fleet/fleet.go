// Package fleet makes compactd daemons one fleet coordinated through
// PostgreSQL: a durable queue of units (River, github.com/riverqueue/river),
// River's leader election (the leader's scheduler discovers tables and
// enqueues due units), and leases on tables and buckets held as
// PostgreSQL advisory locks on a connection kept for the unit's run, so
// that they end with the replica's connection.
//
// Every replica runs a worker pool of cfg.Workers over the queue. A unit
// takes, on one dedicated connection:
//
//   - a compaction of a bucket range: the table's lock shared and each of
//     its buckets' locks exclusive;
//   - any other unit (a whole-table compaction, expiration, orphan
//     cleanup, tags, partitions): the table's lock exclusive.
//
// So two units never run on one bucket at once, and expire or orphan never
// runs on a table while a compaction unit of it does. A unit that cannot
// take its locks is snoozed (put back without counting an attempt). The
// lease connection is pinged every heartbeat: a failed ping cancels the
// unit, whose uncommitted files are then unreferenced (orphan cleanup's).
// A replica killed mid-unit leaves its job "running" in the queue until
// River's rescuer (on the leader) makes it retryable after RescueAfter;
// its locks ended with its connection.
//
// Where things are: fleet.go opens the database, migrates it and runs the
// River client; lease.go holds the locks; status.go reports the fleet.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

// Executor runs a unit (sched.Scheduler.RunUnit).
type Executor interface {
	RunUnit(ctx context.Context, u sched.Unit, commitUser string) (sched.JobRecord, error)
	// Started says whether units can run (the warehouses are open).
	Started() bool
	// Admit reserves room for u on this replica (its caps on compactions
	// and their memory); ok false means not now. release ends the
	// reservation.
	Admit(u sched.Unit) (release func(), ok bool)
	// UnitLimit is how many units of u's table and kind may run at once
	// in a fleet of workers workers (the table's max-share).
	UnitLimit(ctx context.Context, u sched.Unit, workers int) (int, error)
}

// Options configure a Fleet.
type Options struct {
	// URL is the PostgreSQL connection string.
	URL string
	// ID names this replica (in River, the unit log and commit users);
	// empty means host-pid.
	ID string
	// Workers bounds the units this replica runs at once.
	Workers int
	// Coordinator holds the timings (policy.Config.Coordinator, with
	// defaults applied).
	Coordinator policy.Coordinator
	// Retry is the backoff of failed units (the single daemon's).
	Retry  policy.Retry
	Logger *slog.Logger
	// Registerer takes the fleet's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// Fleet is this replica's membership of the fleet. Open it, give it the
// scheduler with Start, Stop it after the scheduler's Run returned.
type Fleet struct {
	o      Options
	log    *slog.Logger
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]
	exec   Executor
	host   string
	start  time.Time

	leaderMu sync.Mutex
	leader   bool
	status   *sched.FleetStatus

	m        *metrics
	stopBeat context.CancelFunc
	beatDone chan struct{}

	drainOnce sync.Once
	drainErr  error
}

const (
	unitKind = "compactd_unit"
	queue    = river.QueueDefault
	// migrateLock serializes the migrations of replicas starting at once.
	migrateLock = 0x636f6d70616374 // "compact"
)

// unitArgs is a unit in the queue; its JSON is what uniqueness compares.
type unitArgs struct {
	sched.Unit
}

func (unitArgs) Kind() string { return unitKind }

// Open connects, migrates River's schema and the fleet's own tables, and
// prepares the River client (not started).
func Open(ctx context.Context, o Options) (*Fleet, error) {
	if o.URL == "" {
		return nil, errors.New("fleet: no coordinator URL")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	host, _ := os.Hostname()
	if o.ID == "" {
		o.ID = host + "-" + strconv.Itoa(os.Getpid())
	}
	cfg, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("coordinator: parse URL: %w", err)
	}
	// pg_stat_activity names the replica of each session.
	cfg.ConnConfig.RuntimeParams["application_name"] = "compactd-fleet-" + o.ID
	// One lease connection per running unit, plus River's: its LISTEN
	// connection, producer, completer and, on the leader, its maintenance
	// services (rescuer, scheduler, cleaners), plus the heartbeat. A pool
	// too small for those starves the rescuer and hangs units waiting
	// for a lease connection.
	cfg.MaxConns = int32(max(o.Workers, 1) + 12)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	f := &Fleet{o: o, log: o.Logger.With("replica", o.ID), pool: pool, host: host, start: time.Now()}
	if err := f.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if o.Registerer != nil {
		if f.m, err = newMetrics(o.Registerer); err != nil {
			pool.Close()
			return nil, err
		}
	}
	return f, nil
}

// migrate brings River's schema and the fleet's tables up to date, one
// replica at a time: River's migrations each run in a transaction of
// their own (some cannot share one), so a session advisory lock held on
// one connection serializes replicas starting together.
func (f *Fleet) migrate(ctx context.Context) error {
	conn, err := f.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLock)); err != nil {
		return fmt.Errorf("coordinator: lock for migration: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrateLock)); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // closing the session unlocks
		}
	}()
	m, err := rivermigrate.New(riverpgxv5.New(f.pool), nil)
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("coordinator: migrate River's schema: %w", err)
	}
	if _, err := conn.Exec(ctx, schemaSQL); err != nil {
		return fmt.Errorf("coordinator: create the fleet's tables: %w", err)
	}
	return nil
}

// schemaSQL is the fleet's own tables: the replicas (heartbeats, for
// /status), the log of units run (who ran which buckets when: what an
// operator, and the fleet's tests, check exclusion against) and the
// halted tables (the single daemon's state directory, shared).
const schemaSQL = `
CREATE TABLE IF NOT EXISTS compactd_fleet_replica (
	id text PRIMARY KEY,
	host text NOT NULL,
	started timestamptz NOT NULL,
	last_seen timestamptz NOT NULL
);
ALTER TABLE compactd_fleet_replica ADD COLUMN IF NOT EXISTS workers int NOT NULL DEFAULT 1;
CREATE TABLE IF NOT EXISTS compactd_fleet_unit (
	id bigserial PRIMARY KEY,
	job_id bigint NOT NULL,
	attempt int NOT NULL,
	replica text NOT NULL,
	commit_user text NOT NULL,
	warehouse text NOT NULL,
	tbl text NOT NULL,
	kind text NOT NULL,
	bucket_from int,
	bucket_to int,
	started timestamptz NOT NULL,
	finished timestamptz,
	outcome text,
	snapshot bigint,
	error text
);
CREATE INDEX IF NOT EXISTS compactd_fleet_unit_tbl ON compactd_fleet_unit (warehouse, tbl, started);
CREATE TABLE IF NOT EXISTS compactd_fleet_halted (
	warehouse text NOT NULL,
	tbl text NOT NULL,
	job text NOT NULL,
	reason text NOT NULL,
	at timestamptz NOT NULL,
	PRIMARY KEY (warehouse, tbl)
);
`

// ID is this replica's name.
func (f *Fleet) ID() string { return f.o.ID }

// Start starts taking units (run by exec) and the heartbeat.
func (f *Fleet) Start(ctx context.Context, exec Executor) error {
	f.exec = exec
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &worker{f: f}); err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	c := f.o.Coordinator
	client, err := river.NewClient(riverpgxv5.New(f.pool), &river.Config{
		ID: f.o.ID,
		// River's own info logs (a line per producer every few seconds)
		// would drown the daemon's; its warnings and errors stay.
		Logger:      slog.New(minLevel{slog.LevelWarn, f.log.Handler()}).With("component", "river"),
		RetryPolicy: retryPolicy{f.o.Retry},
		Queues:      map[string]river.QueueConfig{queue: {MaxWorkers: max(f.o.Workers, 1)}},
		Workers:     workers,
		// River rescues only jobs past their timeout, so units have one:
		// just under RescueAfter (which must exceed it).
		JobTimeout:                  unitTimeout(c),
		RescueStuckJobsAfter:        c.RescueAfter.D(),
		MaxAttempts:                 10,
		FetchPollInterval:           200 * time.Millisecond,
		CompletedJobRetentionPeriod: time.Hour,
	})
	if err != nil {
		return fmt.Errorf("coordinator: %w", err)
	}
	f.client = client
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("coordinator: start queue client: %w", err)
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.stopBeat, f.beatDone = cancel, make(chan struct{})
	f.beat(bctx) // once before anything asks Leader
	go func() {
		defer close(f.beatDone)
		t := time.NewTicker(c.Heartbeat.D())
		defer t.Stop()
		for {
			select {
			case <-bctx.Done():
				return
			case <-t.C:
				f.beat(bctx)
			}
		}
	}()
	return nil
}

// Drain stops taking units, lets running ones finish within grace, then
// cancels them (sched.Coordinator; the scheduler's Run calls it before
// closing its catalogs). Only the first call does anything.
func (f *Fleet) Drain(grace time.Duration) error {
	f.drainOnce.Do(func() {
		if f.client == nil {
			return
		}
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		err := f.client.Stop(sctx)
		cancel()
		if err != nil {
			f.log.Warn("grace period over: cancelling running units", "err", err)
			err = f.client.StopAndCancel(context.Background())
		}
		f.drainErr = err
	})
	return f.drainErr
}

// Stop drains (if the scheduler did not), stops the heartbeat and leaves
// the fleet.
func (f *Fleet) Stop(ctx context.Context, grace time.Duration) error {
	err := f.Drain(grace)
	if f.stopBeat != nil {
		f.stopBeat()
		<-f.beatDone
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = f.pool.Exec(dctx, "DELETE FROM compactd_fleet_replica WHERE id = $1", f.o.ID)
	f.pool.Close()
	return err
}

// Leader says whether River elected this replica.
func (f *Fleet) Leader() bool {
	f.leaderMu.Lock()
	defer f.leaderMu.Unlock()
	return f.leader
}

// uniqueStates are the states in which an equal unit is not enqueued
// again: queued or running, not finished.
var uniqueStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled}

// Enqueue inserts the units, skipping those queued or running already
// (River's unique jobs, by arguments).
func (f *Fleet) Enqueue(ctx context.Context, units []sched.Unit) error {
	params := make([]river.InsertManyParams, len(units))
	for i, u := range units {
		params[i] = river.InsertManyParams{Args: unitArgs{u}, InsertOpts: &river.InsertOpts{
			Queue: queue, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueStates}}}
	}
	res, err := f.client.InsertMany(ctx, params)
	if err != nil {
		return fmt.Errorf("coordinator: enqueue: %w", err)
	}
	added := 0
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			added++
		}
	}
	if added > 0 {
		f.log.Debug("enqueued units", "added", added, "due", len(units))
	}
	return nil
}

// retryPolicy is the single daemon's backoff: Retry.Initial doubled per
// failed attempt up to Retry.Max (River's default grows as attempt⁴
// seconds, which leaves a unit that failed twice idle for minutes).
type retryPolicy struct{ r policy.Retry }

func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	d := max(p.r.Initial.D(), time.Second)
	for i := 1; i < job.Attempt && d < p.r.Max.D(); i++ {
		d *= 2
	}
	return time.Now().Add(min(d, max(p.r.Max.D(), time.Second)))
}

// minLevel drops records under a level.
type minLevel struct {
	min slog.Level
	slog.Handler
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.min, h.Handler.WithAttrs(a)}
}
func (h minLevel) WithGroup(g string) slog.Handler { return minLevel{h.min, h.Handler.WithGroup(g)} }

// worker runs units from the queue.
type worker struct {
	river.WorkerDefaults[unitArgs]
	f *Fleet
}

func (w *worker) Work(ctx context.Context, job *river.Job[unitArgs]) error {
	f, u := w.f, job.Args.Unit
	if !f.exec.Started() {
		return river.JobSnooze(f.o.Coordinator.Heartbeat.D())
	}
	// A unit of a table halted since it was enqueued is dropped: it would
	// only fail as its table's other unit did.
	var reason string
	switch err := f.pool.QueryRow(ctx, `SELECT reason FROM compactd_fleet_halted WHERE warehouse = $1 AND tbl = $2`,
		u.Warehouse, u.Table).Scan(&reason); {
	case err == nil:
		return river.JobCancel(fmt.Errorf("%s: table %s is halted (compactd resume %s): %s", u, u.Table, u.Table, reason))
	case !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("coordinator: read halted state of %s: %w", u.Table, err)
	}
	admitted, ok := f.exec.Admit(u)
	if !ok {
		// This replica runs as many compactions, or as much estimated
		// memory, as it may: another replica, or this one later, takes it.
		return river.JobSnooze(f.o.Coordinator.Heartbeat.D())
	}
	defer admitted()
	limit := 0
	if u.Buckets != nil {
		var err error
		if limit, err = f.exec.UnitLimit(ctx, u, f.Status().Workers); err != nil {
			if sched.Classify(err) == sched.Permanent {
				return river.JobCancel(err)
			}
			return err
		}
	}
	l, ok, err := f.lease(ctx, u, limit)
	if err != nil {
		return err // retried by River's backoff
	}
	if !ok {
		// Another unit holds the table or a bucket: try again soon,
		// without counting an attempt.
		return river.JobSnooze(f.o.Coordinator.Heartbeat.D())
	}
	defer l.release()
	user := fmt.Sprintf("compactd-%s-job%d-%d", f.o.ID, job.ID, job.Attempt)
	var from, to *int
	if u.Buckets != nil {
		from, to = &u.Buckets.From, &u.Buckets.To
	}
	var logID int64
	if err := l.conn.QueryRow(ctx, `INSERT INTO compactd_fleet_unit (job_id, attempt, replica, commit_user, warehouse, tbl, kind, bucket_from, bucket_to, started)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, clock_timestamp()) RETURNING id`,
		job.ID, job.Attempt, f.o.ID, user, u.Warehouse, u.Table, string(u.Kind), from, to).Scan(&logID); err != nil {
		return fmt.Errorf("coordinator: log unit %s: %w", u, err)
	}
	// The watcher pings the lease connection while the unit runs; it is
	// stopped before the connection is used again (a pgx connection is
	// one session, not safe for concurrent use).
	uctx, cancel := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); l.watch(uctx, f.o.Coordinator.Heartbeat.D(), cancel) }()
	rec, err := f.exec.RunUnit(uctx, u, user)
	leaseLost := false
	if cause := context.Cause(uctx); err != nil && cause != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w (%w)", err, cause)
		leaseLost = true
	}
	cancel(nil)
	<-watched
	var snap *int64
	if rec.Snapshot != 0 {
		snap = &rec.Snapshot
	}
	var msg *string
	if err != nil {
		s := err.Error()
		msg = &s
	}
	// On the lease connection, so the log says finished before the locks
	// are released (the exclusion a reader checks holds in the log too).
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	_, lerr := l.conn.Exec(fctx, `UPDATE compactd_fleet_unit SET finished = clock_timestamp(), outcome = $2, snapshot = $3, error = $4 WHERE id = $1`,
		logID, rec.Outcome, snap, msg)
	fcancel()
	if lerr != nil {
		f.log.Warn("log unit end", "unit", u.String(), "err", lerr)
	}
	if err == nil || ctx.Err() != nil || leaseLost {
		return err // a cancelled unit is retried, never counted towards halting
	}
	// As the single daemon: a permanent error halts the table at once, an
	// error not known to be transient after retry.attempts attempts (of
	// this unit; River retries transient ones up to its MaxAttempts).
	switch class := sched.Classify(err); {
	case class == sched.Permanent:
		f.halt(ctx, u, fmt.Sprintf("%s: %v", u.Kind, err))
		return river.JobCancel(err)
	case class == sched.Unknown && job.Attempt >= max(f.o.Retry.Attempts, 1):
		f.halt(ctx, u, fmt.Sprintf("%s failed %d times in a row: %v", u.Kind, job.Attempt, err))
		return river.JobCancel(err)
	}
	return err
}

// halt records u's table halted for the whole fleet: the leader stops
// enqueueing its units at its next tick, and replicas drop those queued.
// A failure to record is logged; the unit is cancelled anyway.
func (f *Fleet) halt(ctx context.Context, u sched.Unit, reason string) {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	f.log.Error("table halted: it is left alone until `compactd resume`", "unit", u.String(), "reason", reason)
	if _, err := f.pool.Exec(hctx, `INSERT INTO compactd_fleet_halted (warehouse, tbl, job, reason, at) VALUES ($1, $2, $3, $4, now())
		ON CONFLICT (warehouse, tbl) DO NOTHING`, u.Warehouse, u.Table, string(u.Kind), reason); err != nil {
		f.log.Error("record halted table: its units are enqueued again", "table", u.Table, "err", err)
	}
}

// Halted lists the fleet's halted tables (sched.Coordinator).
func (f *Fleet) Halted(ctx context.Context) ([]sched.HaltedRecord, error) {
	return listHalted(ctx, f.pool)
}

func scanHalted(r pgx.CollectableRow) (sched.HaltedRecord, error) {
	var h sched.HaltedRecord
	var job string
	err := r.Scan(&h.Warehouse, &h.Table, &job, &h.Reason, &h.Time)
	h.Job = policy.Kind(job)
	return h, err
}

// undefinedTable: the fleet's tables were never created.
func undefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}

func listHalted(ctx context.Context, pool *pgxpool.Pool) ([]sched.HaltedRecord, error) {
	rows, err := pool.Query(ctx, `SELECT warehouse, tbl, job, reason, at FROM compactd_fleet_halted ORDER BY warehouse, tbl`)
	if err != nil {
		return nil, fmt.Errorf("coordinator: read halted tables: %w", err)
	}
	recs, err := pgx.CollectRows(rows, scanHalted)
	if err != nil {
		return nil, fmt.Errorf("coordinator: read halted tables: %w", err)
	}
	return recs, nil
}

// Resume removes the fleet's halted records of table "db.table" (in
// every warehouse, or only in warehouse if not empty) and returns them;
// the leader resumes the table at its next tick. A database the fleet
// never used has none.
func Resume(ctx context.Context, url, tbl, warehouse string) ([]sched.HaltedRecord, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `DELETE FROM compactd_fleet_halted WHERE tbl = $1 AND ($2 = '' OR warehouse = $2)
		RETURNING warehouse, tbl, job, reason, at`, tbl, warehouse)
	if err != nil {
		if undefinedTable(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("coordinator: resume %s: %w", tbl, err)
	}
	recs, err := pgx.CollectRows(rows, scanHalted)
	if err != nil {
		if undefinedTable(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("coordinator: resume %s: %w", tbl, err)
	}
	return recs, nil
}

// Timeout is unitTimeout: River's rescuer leaves alone jobs without one.
func (w *worker) Timeout(*river.Job[unitArgs]) time.Duration { return unitTimeout(w.f.o.Coordinator) }

// unitTimeout bounds a unit's run: nine tenths of RescueAfter, so that a
// unit is cancelled (and retried, its files unreferenced) before the
// rescuer could hand it to another replica while it still ran.
func unitTimeout(c policy.Coordinator) time.Duration {
	return max(c.RescueAfter.D()*9/10, time.Second)
}
