package sched

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/policy"
)

// Coordinator makes the scheduler one replica of a fleet; package fleet
// implements it over PostgreSQL. The scheduler keeps deciding what is due
// (on the leader only) and how a unit runs; the coordinator keeps the
// queue, the leases and who leads.
type Coordinator interface {
	// Leader says whether this replica leads the fleet now: only the
	// leader discovers tables, resolves policies and enqueues.
	Leader() bool
	// Enqueue adds due units in the order given (most urgent first); a
	// unit equal to one queued or running is not added again.
	Enqueue(ctx context.Context, units []Unit) error
	// Status is the fleet as last seen (no I/O: /status must not wait on
	// the database).
	Status() *FleetStatus
	// Drain stops taking units and waits for the running ones, cancelling
	// those still running after grace. Run calls it on shutdown before it
	// closes the warehouses' catalogs the units use.
	Drain(grace time.Duration) error
	// Halted lists the fleet's halted tables: a replica halts a table
	// after a unit's permanent error, `compactd resume` removes it. The
	// leader syncs them as the single daemon syncs its state directory.
	Halted(ctx context.Context) ([]HaltedRecord, error)
}

// Unit is one job of a fleet: a whole-table job, or the compaction of a
// bucket range of a fixed-bucket table.
type Unit struct {
	Warehouse string               `json:"warehouse"` // resolved path
	Table     string               `json:"table"`     // db.table
	Kind      policy.Kind          `json:"job"`
	Buckets   *compact.BucketRange `json:"buckets,omitempty"`
}

// String names the unit in logs and errors.
func (u Unit) String() string {
	s := string(u.Kind) + " of " + u.Table
	if u.Buckets != nil {
		s += " buckets " + u.Buckets.String()
	}
	return s
}

// FleetStatus is the fleet in /status.
type FleetStatus struct {
	Replica string `json:"replica"` // this one
	Leader  string `json:"leader"`  // "" while none is elected
	// Replicas are those that reported within three heartbeats.
	Replicas []ReplicaStatus `json:"replicas"`
	// QueueDepth counts units waiting (available, scheduled or retryable);
	// OldestDueSeconds is how long the oldest one that is due has waited.
	QueueDepth int `json:"queueDepth"`
	// Workers sums the live replicas' workers: what a table's
	// compact.max-share is a share of.
	Workers          int          `json:"workers"`
	OldestDueSeconds float64      `json:"oldestDueSeconds"`
	Running          []UnitStatus `json:"running"`
	Observed         time.Time    `json:"observed"`
	// Error is the last failure to reach the database ("" if the last
	// heartbeat succeeded): a replica that cannot reach it takes no work.
	Error string `json:"error,omitempty"`
}

// ReplicaStatus is one live replica.
type ReplicaStatus struct {
	ID       string    `json:"id"`
	Host     string    `json:"host"`
	Started  time.Time `json:"started"`
	LastSeen time.Time `json:"lastSeen"`
	Workers  int       `json:"workers"`
}

// UnitStatus is a running unit.
type UnitStatus struct {
	Unit
	Replica string    `json:"replica"`
	Since   time.Time `json:"since"`
	Attempt int       `json:"attempt"`
}

// unitsOf splits a due job into units: a compaction of a fixed-bucket
// table with more buckets than perUnit becomes one unit per bucket range
// (the last open-ended, for partitions written before a rescale to fewer
// buckets); every other job is one unit.
func unitsOf(w string, t string, k policy.Kind, eff *policy.Effective, perUnit int) []Unit {
	if k != policy.Compact && k != policy.FullCompaction || perUnit <= 0 {
		return []Unit{{Warehouse: w, Table: t, Kind: k}}
	}
	n, err := strconv.Atoi(strings.TrimSpace(eff.MergedTableOptions()["bucket"]))
	if err != nil || n <= perUnit {
		return []Unit{{Warehouse: w, Table: t, Kind: k}}
	}
	var us []Unit
	for from := 0; from < n; from += perUnit {
		r := &compact.BucketRange{From: from, To: from + perUnit}
		if r.To >= n {
			r.To = 0
		}
		us = append(us, Unit{Warehouse: w, Table: t, Kind: k, Buckets: r})
	}
	return us
}

// tickFleet is the loop's pass in a fleet: the leader discovers and
// enqueues what is due, in the single daemon's order; the others only
// keep the policy store fresh. A due compaction of a table split into
// bucket units is first observed over the whole table by the leader
// (observeSplit): that sets its backlog, gauges and place in the order
// (no unit sees the whole table), and a table with nothing to compact
// gets no units.
func (s *Scheduler) tickFleet(ctx context.Context, now time.Time) {
	c := s.opts.Coordinator
	if !c.Leader() {
		return
	}
	s.refreshTables(ctx, now)
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return
	}
	perUnit := s.cfg.Coordinator.BucketsPerUnit
	cands := s.dueCandidates(now, false)
	var split []splitCandidate
	for _, cd := range cands {
		if cd.k == policy.Compact && len(unitsOf(cd.t.wh.path, cd.t.name, cd.k, cd.t.eff, perUnit)) > 1 {
			split = append(split, splitCandidate{cd.t, cd.t.eff})
		}
	}
	s.mu.Unlock()
	idle := s.observeSplit(ctx, split)
	s.mu.Lock()
	if len(split) > 0 {
		orderCandidates(cands, now) // with the backlogs just observed
	}
	var units []Unit
	for _, cd := range cands {
		if cd.k == policy.Compact && idle[cd.t] {
			continue
		}
		units = append(units, unitsOf(cd.t.wh.path, cd.t.name, cd.k, cd.t.eff, perUnit)...)
	}
	s.mu.Unlock()
	if len(units) > 0 {
		if err := c.Enqueue(ctx, units); err != nil {
			s.log.Error("enqueue due units: retrying at the next tick", "units", len(units), "err", err)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cd := range cands {
		// Next due on schedule from now: the queue keeps the unit until a
		// replica ran it (and retries it), not the leader's memory.
		if j := cd.t.jobs[cd.k]; j.Schedule != nil {
			cd.t.next[cd.k] = j.Schedule.Next(now)
		}
	}
}

// splitCandidate is a due compaction of a table split into bucket units,
// with the policy it was found due under.
type splitCandidate struct {
	t   *tableState
	eff *policy.Effective
}

// observeSplit observes the tables of cands (a few at once) and returns
// those with nothing to compact. A table that cannot be observed is
// enqueued anyway: its units report the error.
func (s *Scheduler) observeSplit(ctx context.Context, cands []splitCandidate) map[*tableState]bool {
	nothing := map[*tableState]bool{}
	var mu sync.Mutex
	p := pool.New().WithMaxGoroutines(observeParallelism)
	for _, cd := range cands {
		p.Go(func() {
			work, err := s.observeWhole(ctx, cd.t, cd.eff)
			if err != nil {
				s.log.Warn("observe a split table before enqueueing its units", "table", cd.t.name, "err", err)
				return
			}
			if !work {
				mu.Lock()
				nothing[cd.t] = true
				mu.Unlock()
			}
		})
	}
	p.Wait()
	return nothing
}

// observeParallelism bounds the tables the leader observes at once.
const observeParallelism = 4

// Started says whether Run opened the warehouses: a coordinator runs no
// unit before.
func (s *Scheduler) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.started.IsZero()
}

// ErrUnknownWarehouse means a unit names a warehouse this replica's
// config does not have (replicas must share one config).
var ErrUnknownWarehouse = errors.New("warehouse not in this replica's config")

// RunUnit runs one unit on this replica: it opens the table, resolves its
// policy as the leader did, and runs the job (restricted to the unit's
// buckets) through the same code as the single daemon. commitUser names
// the unit in the snapshot it commits. The coordinator holds the unit's
// lease around the call; the error is classified with Classify.
func (s *Scheduler) RunUnit(ctx context.Context, u Unit, commitUser string) (JobRecord, error) {
	start := s.opts.Now()
	rec := JobRecord{Warehouse: u.Warehouse, Table: u.Table, Kind: u.Kind, Start: start}
	if u.Buckets != nil {
		rec.BucketRange = u.Buckets.String()
	}
	s.mu.Lock()
	w := s.warehouses[u.Warehouse]
	cfg, store := s.cfg, s.store
	s.mu.Unlock()
	log := s.log.With("table", u.Table, "warehouse", u.Warehouse, "job", string(u.Kind), "buckets", rec.BucketRange)
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = permanent(fmt.Errorf("%s panicked: %v", u, r))
			}
		}()
		if w == nil {
			return permanent(fmt.Errorf("unit %s: warehouse %s: %w", u, u.Warehouse, ErrUnknownWarehouse))
		}
		db, name, ok := strings.Cut(u.Table, ".")
		if !ok {
			return permanent(fmt.Errorf("unit %s: table name %q is not db.table", u, u.Table))
		}
		tb, err := w.cat.OpenTable(ctx, db, name)
		if err != nil {
			return fmt.Errorf("open table %s: %w", u.Table, err)
		}
		eff := policy.Resolve(u.Table, tb.Schema().EffectiveOptions(), cfg.Defaults, store.Overrides(u.Table))
		j, err := eff.Job(u.Kind)
		if err != nil {
			return permanent(fmt.Errorf("policy of %s: %w", u.Table, err))
		}
		t := s.unitTable(w, u.Table, eff)
		return s.execute(ctx, t, u.Kind, j, eff, cfg.BucketParallelism, u.Buckets, commitUser, &rec, log)
	}()
	rec.Seconds = s.opts.Now().Sub(start).Seconds()
	switch {
	case err == nil:
		rec.Outcome = "success"
	case ctx.Err() != nil:
		rec.Outcome, rec.Error = "cancelled", err.Error()
	default:
		rec.Outcome, rec.Class, rec.Error = "failed", Classify(err).String(), err.Error()
		s.m.failures.WithLabelValues(u.Warehouse, u.Table, string(u.Kind), rec.Class).Inc()
	}
	if w != nil {
		s.mu.Lock()
		if t := s.tables[w.path+"|"+u.Table]; t != nil {
			s.record(t, rec)
			if rec.Outcome == "success" {
				t.last[u.Kind] = s.opts.Now()
			}
		}
		s.mu.Unlock()
	}
	return rec, err
}

// unitTable is the table's state on this replica, created for a unit of
// a table this replica did not discover (it is not the leader).
func (s *Scheduler) unitTable(w *warehouse, name string, eff *policy.Effective) *tableState {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := w.path + "|" + name
	t := s.tables[key]
	if t == nil {
		t = &tableState{key: key, wh: w, name: name, next: map[policy.Kind]time.Time{},
			last: map[policy.Kind]time.Time{}, failures: map[policy.Kind]int{}, eff: eff}
		s.tables[key] = t
	}
	return t
}
