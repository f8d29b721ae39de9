package sched

import (
	"context"
	"fmt"
	"strings"

	"github.com/sourcegraph/conc"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/policy"
)

// Bucket-range runs of the single daemon: with buckets-per-run set, a due
// compaction of a fixed-bucket table with more buckets is split into
// bucket ranges as a fleet splits it into units (unitsOf), each run on a
// worker of its own and committing its own snapshot (ranges touch
// disjoint buckets, so their commits rebase onto each other). The table
// holds at most its max-share of the workers; no other kind of job runs
// on it until its last range ended, and the round is settled (schedule,
// retries, halting) once, as one job.

// startRanges starts t's pending ranges while a worker, the table's share
// and the compaction caps allow; it returns 1 if some must wait. s.mu is
// held.
func (s *Scheduler) startRanges(ctx context.Context, wg *conc.WaitGroup, t *tableState, k policy.Kind) int {
	limit := t.jobs[k].MaxUnits(s.cfg.Workers)
	for len(t.ranges) > 0 {
		if s.busy >= s.cfg.Workers || t.runs >= limit {
			return 1
		}
		r := t.ranges[0]
		est := s.jobMemory(t, k, unitBuckets(Unit{Buckets: r}, t.backlog.Buckets, s.cfg.BucketsPerRun))
		if !s.fits(est) {
			return 1
		}
		t.ranges = t.ranges[1:]
		s.reserve(est)
		s.busy++
		t.runs++
		wg.Go(func() { s.runRange(ctx, t, k, r, est) })
	}
	return 0
}

// runRange runs one range of a split compaction.
func (s *Scheduler) runRange(ctx context.Context, t *tableState, k policy.Kind, r *compact.BucketRange, est int64) {
	s.mu.Lock()
	j, eff, par := t.jobs[k], t.eff, s.cfg.BucketParallelism
	s.mu.Unlock()
	rec := JobRecord{Warehouse: t.wh.path, Table: t.name, Kind: k, Start: s.opts.Now(), BucketRange: r.String()}
	log := s.log.With("table", t.name, "warehouse", t.wh.path, "job", string(k), "buckets", r.String())
	log.Debug("bucket-range run started")
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = permanent(fmt.Errorf("%s of %s buckets %s panicked: %v", k, t.name, r, p))
			}
		}()
		return s.execute(ctx, t, k, j, eff, par, r, "", &rec, log)
	}()
	s.mu.Lock()
	s.busy--
	s.m.busy.Set(float64(s.busy))
	s.unreserve(est)
	t.runs--
	a := &t.roundRec
	a.Snapshot = max(a.Snapshot, rec.Snapshot)
	a.Buckets += rec.Buckets
	a.RowsIn, a.RowsOut, a.BytesIn, a.BytesOut = a.RowsIn+rec.RowsIn, a.RowsOut+rec.RowsOut, a.BytesIn+rec.BytesIn, a.BytesOut+rec.BytesOut
	if err != nil && t.roundErr == nil {
		// The round starts no more ranges: it is retried (or the table
		// halted) as a whole once the running ones ended.
		t.roundErr = fmt.Errorf("buckets %s: %w", r, err)
		t.ranges = nil
	}
	if s.stopping || ctx.Err() != nil {
		t.ranges = nil
	}
	last := t.runs == 0 && len(t.ranges) == 0
	round, roundErr := t.roundRec, t.roundErr
	s.mu.Unlock()
	if err != nil {
		log.Warn("bucket-range run failed", "err", err)
	}
	if !last {
		return
	}
	if roundErr == nil {
		// The ranges each saw their own buckets: the table's backlog
		// (and its gauges) comes from one look at the whole table.
		if _, err := s.observeWhole(ctx, t, eff); err != nil {
			s.log.Warn("observe the backlog of a split table", "table", t.name, "err", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle(ctx, t, k, j, round, roundErr, s.log.With("table", t.name, "warehouse", t.wh.path, "job", string(k)))
}

// observeWhole measures t's backlog over all its buckets and publishes
// it (the gauges), and says whether compaction has work; on an error the
// previous backlog stays.
func (s *Scheduler) observeWhole(ctx context.Context, t *tableState, eff *policy.Effective) (work bool, err error) {
	db, name, _ := strings.Cut(t.name, ".")
	tb, err := t.wh.cat.OpenTable(ctx, db, name)
	if err != nil {
		return false, fmt.Errorf("open table %s: %w", t.name, err)
	}
	b, work, err := s.observe(ctx, tb, eff.PaimonOverrides(), nil)
	if err != nil {
		return false, err
	}
	s.setBacklog(t, b)
	return work, nil
}
