package sched

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/internal/backoff"
	"github.com/compactd/compactd/maint"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/planner"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// Runner runs the jobs. PackageRunner calls compact, expire and orphan;
// tests substitute failures.
type Runner interface {
	Compact(ctx context.Context, t *table.Table, o compact.Options) (*compact.Summary, error)
	Expire(ctx context.Context, t *table.Table, o expire.RunOptions) (expire.Report, error)
	Orphan(ctx context.Context, t *table.Table, o orphan.RunOptions) (orphan.Report, error)
}

// PackageRunner is the Runner of the daemon.
type PackageRunner struct{}

// Compact runs compact.Run.
func (PackageRunner) Compact(ctx context.Context, t *table.Table, o compact.Options) (*compact.Summary, error) {
	return compact.Run(ctx, t, o)
}

// Expire runs expire.Run on the table's main branch.
func (PackageRunner) Expire(ctx context.Context, t *table.Table, o expire.RunOptions) (expire.Report, error) {
	return expire.Run(ctx, reach.TableSource(t), o)
}

// Orphan runs orphan.RunTable.
func (PackageRunner) Orphan(ctx context.Context, t *table.Table, o orphan.RunOptions) (orphan.Report, error) {
	return orphan.RunTable(ctx, t, o)
}

func (s *Scheduler) runJob(ctx context.Context, t *tableState, k policy.Kind) {
	start := s.opts.Now()
	s.mu.Lock()
	j, eff, par := t.jobs[k], t.eff, s.cfg.BucketParallelism
	s.mu.Unlock()
	rec := JobRecord{Warehouse: t.wh.path, Table: t.name, Kind: k, Start: start}
	log := s.log.With("table", t.name, "warehouse", t.wh.path, "job", string(k))
	log.Debug("job started")
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = permanent(fmt.Errorf("%s of %s panicked: %v", k, t.name, r))
			}
		}()
		return s.execute(ctx, t, k, j, eff, par, nil, "", &rec, log)
	}()
	s.finish(ctx, t, k, j, rec, err, log)
}

// execute runs one job; buckets, if not nil, restricts a compaction to
// them (a fleet's unit, which then leaves the table's backlog to the
// whole-table observations); commitUser empty means a fresh one.
func (s *Scheduler) execute(ctx context.Context, t *tableState, k policy.Kind, j policy.Job, eff *policy.Effective, par int,
	buckets *compact.BucketRange, commitUser string, rec *JobRecord, log *slog.Logger) error {
	db, name, _ := strings.Cut(t.name, ".")
	tb, err := t.wh.cat.OpenTable(ctx, db, name)
	if err != nil {
		return fmt.Errorf("open table %s: %w", t.name, err)
	}
	now := s.opts.Now()
	overrides := eff.PaimonOverrides()
	switch k {
	case policy.Compact, policy.FullCompaction:
		if err := compact.Supported(tb, overrides); err != nil {
			return permanent(err)
		}
		o := compact.Options{Full: k == policy.FullCompaction, Overrides: overrides, Parallelism: par,
			MaxBuckets: j.MaxBuckets, MaxBytes: j.MaxBytes, TimeBudget: j.TimeBudget, Buckets: buckets, CommitUser: commitUser,
			PartitionIdleTime: j.PartitionIdleTime}
		if _, err := compact.PlannerOptions(tb, o); err != nil {
			return permanent(err)
		}
		if k == policy.Compact {
			b, work, err := s.observe(ctx, tb, overrides, buckets)
			if err != nil {
				return err
			}
			if buckets == nil {
				s.setBacklog(t, b)
			}
			if !work {
				rec.Note = "nothing to compact"
				return nil
			}
		}
		sum, err := s.runner.Compact(ctx, tb, o)
		if sum != nil {
			rec.Snapshot, rec.Buckets = sum.Snapshot, sum.Buckets
			rec.RowsIn, rec.RowsOut, rec.BytesIn, rec.BytesOut = sum.RowsIn, sum.RowsOut, sum.BytesIn, sum.BytesOut
			if sum.Abandoned > 0 {
				rec.Note = fmt.Sprintf("%d bucket jobs abandoned after concurrent changes", sum.Abandoned)
			}
			lv := []string{t.wh.path, t.name, string(k)}
			s.m.commitRebases.WithLabelValues(lv...).Add(float64(sum.Commits.Rebases))
			s.m.commitConflicts.WithLabelValues(lv...).Add(float64(sum.Commits.Conflicts))
			s.m.abandoned.WithLabelValues(lv...).Add(float64(sum.Abandoned))
		}
		if err != nil {
			return err
		}
		if sum != nil && sum.Snapshot != 0 {
			log.Info("compacted", "snapshot", sum.Snapshot, "buckets", sum.Buckets, "rows_in", sum.RowsIn, "rows_out", sum.RowsOut,
				"bytes_in", sum.BytesIn, "bytes_out", sum.BytesOut)
		}
		if b, _, err := s.observe(ctx, tb, overrides, buckets); err == nil && buckets == nil {
			s.setBacklog(t, b)
		}
		return nil
	case policy.Expire:
		eo, err := expire.OptionsFromTable(eff.MergedTableOptions())
		if err != nil {
			return permanent(fmt.Errorf("expire %s: %w", t.name, err))
		}
		if j.TimeBudget > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, j.TimeBudget)
			defer cancel()
		}
		rep, err := s.runner.Expire(ctx, tb, expire.RunOptions{Options: eo, Now: now})
		rec.FilesDeleted = rep.Files()
		if err != nil {
			return err
		}
		if len(rep.Snapshots) > 0 {
			rec.Snapshot = rep.End
			log.Info("expired snapshots", "snapshot", rep.End, "expired", len(rep.Snapshots), "files_deleted", rep.Files())
		}
		if n := len(rep.Changelog.Changelogs); n > 0 {
			log.Info("expired long-lived changelogs", "changelog", rep.Changelog.End, "expired", n, "files_deleted", rep.Changelog.Files())
		}
		if ids, err := tb.SnapshotIDs(ctx); err == nil {
			s.mu.Lock()
			t.backlog.Snapshots = len(ids)
			s.mu.Unlock()
			s.m.snapshots.WithLabelValues(t.wh.path, t.name).Set(float64(len(ids)))
		}
		return nil
	case policy.Orphan:
		if j.OlderThan < orphan.MinOlderThan {
			return permanent(fmt.Errorf("orphan cleanup of %s: orphan.older-than=%s is under %s", t.name, j.OlderThan, orphan.MinOlderThan))
		}
		if j.TimeBudget > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, j.TimeBudget)
			defer cancel()
		}
		rep, err := s.runner.Orphan(ctx, tb, orphan.RunOptions{Now: now, OlderThan: j.OlderThan})
		rec.FilesDeleted = rep.Count()
		if err != nil {
			return err
		}
		if rep.Count() > 0 {
			log.Info("deleted orphan files", "files_deleted", rep.Count(), "bytes", rep.Bytes)
		}
		return nil
	case policy.TagExpire:
		if v := table.ParseTagOptions(eff.MergedTableOptions()).AutomaticCreation; v != "" && v != "none" {
			rep, err := maint.RunTagAutoManager(ctx, tb, now, false)
			if err != nil {
				return err
			}
			rec.Note = fmt.Sprintf("%d tags created, %d expired", len(rep.Created), len(rep.Expired))
			return nil
		}
		rep, err := maint.ExpireTags(ctx, tb, now, false)
		if err != nil {
			return err
		}
		rec.Note = fmt.Sprintf("%d tags expired", len(rep.Expired))
		return nil
	case policy.PartitionExpire:
		raw := eff.MergedTableOptions()
		if raw["partition.expiration-time"] == "" {
			rec.Note = "partition.expiration-time not set"
			return nil
		}
		po, err := maint.PartitionExpireOptionsFromTable(raw)
		if err != nil {
			return permanent(err)
		}
		rep, err := maint.ExpirePartitions(ctx, tb, maint.PartitionExpireRunOptions{Options: &po, Now: now})
		if err != nil {
			return err
		}
		rec.Note = fmt.Sprintf("%d partitions expired", len(rep.Partitions))
		if n := len(rep.Snapshots); n > 0 {
			rec.Snapshot = rep.Snapshots[n-1]
		}
		return nil
	}
	return permanent(fmt.Errorf("job kind %s is not implemented", k))
}

// observe measures a table's backlog and says whether compaction has work.
func (s *Scheduler) observe(ctx context.Context, tb *table.Table, overrides map[string]string, buckets *compact.BucketRange) (Backlog, bool, error) {
	now := s.opts.Now()
	v, plan, popts, err := compact.PlanTable(ctx, tb, compact.Options{Overrides: overrides, Buckets: buckets, PlanOnly: true}, now)
	if err != nil {
		return Backlog{}, false, err
	}
	bl := planner.Backlog(v.View, popts, now)
	b := Backlog{Observed: now, Trigger: popts.NumSortedRunCompactionTrigger, StopTrigger: popts.NumSortedRunStopTrigger, RunsOverTrigger: bl.RunsOverTrigger,
		PendingBytes: bl.RewriteBytes, Buckets: len(v.View.Buckets)}
	if v.Snapshot != nil {
		b.Snapshot = v.Snapshot.ID
	}
	pp := compact.PostponedOf(v.FileSet, "")
	b.PostponedRows, b.PostponedFiles = pp.Rows, pp.Files
	for _, bk := range v.View.Buckets {
		l0 := 0
		levels := map[int]bool{}
		for _, f := range bk.Files {
			if f.Level == 0 {
				l0++
			} else {
				levels[f.Level] = true
			}
		}
		runs := l0 + len(levels)
		b.SortedRunsMax, b.SortedRunsSum = max(b.SortedRunsMax, runs), b.SortedRunsSum+runs
		b.Level0Max, b.Level0Sum = max(b.Level0Max, l0), b.Level0Sum+l0
	}
	ids, err := tb.SnapshotIDs(ctx)
	if err != nil {
		return Backlog{}, false, err
	}
	b.Snapshots = len(ids)
	return b, len(plan.Jobs) > 0 || pp.Files > 0, nil
}

func (s *Scheduler) setBacklog(t *tableState, b Backlog) {
	s.mu.Lock()
	t.backlog = b
	s.mu.Unlock()
	l := []string{t.wh.path, t.name}
	s.m.sortedRunsMax.WithLabelValues(l...).Set(float64(b.SortedRunsMax))
	s.m.sortedRunsSum.WithLabelValues(l...).Set(float64(b.SortedRunsSum))
	s.m.level0Max.WithLabelValues(l...).Set(float64(b.Level0Max))
	s.m.level0Sum.WithLabelValues(l...).Set(float64(b.Level0Sum))
	s.m.pendingBytes.WithLabelValues(l...).Set(float64(b.PendingBytes))
	s.m.runsOverTrigger.WithLabelValues(l...).Set(float64(b.RunsOverTrigger))
	s.m.postponedRows.WithLabelValues(l...).Set(float64(b.PostponedRows))
	s.m.postponedFiles.WithLabelValues(l...).Set(float64(b.PostponedFiles))
	s.m.snapshots.WithLabelValues(l...).Set(float64(b.Snapshots))
	s.m.stopTrigger.WithLabelValues(l...).Set(float64(b.StopTrigger))
	if b.StopTrigger > 0 {
		s.m.stopRatio.WithLabelValues(l...).Set(float64(b.SortedRunsMax) / float64(b.StopTrigger))
	}
}

// finish gives a job's worker back, records its outcome and decides when
// the kind runs next.
func (s *Scheduler) finish(ctx context.Context, t *tableState, k policy.Kind, j policy.Job, rec JobRecord, err error, log *slog.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy--
	s.m.busy.Set(float64(s.busy))
	if isCompaction(k) {
		s.unreserve(t.reserved)
		t.reserved = 0
	}
	s.settle(ctx, t, k, j, rec, err, log)
}

// settle records the outcome of a job of kind k on t (a whole split
// round's, for ranges) and decides when the kind runs next. s.mu is held.
func (s *Scheduler) settle(ctx context.Context, t *tableState, k policy.Kind, j policy.Job, rec JobRecord, err error, log *slog.Logger) {
	end := s.opts.Now()
	rec.Seconds = end.Sub(rec.Start).Seconds()
	lv := []string{t.wh.path, t.name, string(k)}
	t.running = ""
	retry := s.cfg.Retry
	switch {
	case err == nil:
		rec.Outcome = "success"
		t.last[k] = end
		t.failures[k] = 0
		if j.Schedule != nil {
			t.next[k] = j.Schedule.Next(end)
		}
		s.m.lastSuccess.WithLabelValues(lv...).Set(float64(end.UnixNano()) / 1e9)
		log.Debug("job finished", "seconds", rec.Seconds, "note", rec.Note)
	case ctx.Err() != nil:
		rec.Outcome, rec.Error = "cancelled", err.Error()
		t.next[k] = end
		log.Warn("job cancelled by shutdown (its uncommitted files are unreferenced)", "err", err)
	default:
		class := Classify(err)
		t.failures[k]++
		rec.Class, rec.Error = class.String(), err.Error()
		s.m.failures.WithLabelValues(t.wh.path, t.name, string(k), class.String()).Inc()
		if class == Permanent || (class == Unknown && t.failures[k] >= retry.Attempts) {
			rec.Outcome = "halted"
			reason := fmt.Sprintf("%s: %v", k, err)
			if class == Unknown {
				reason = fmt.Sprintf("%s failed %d times in a row: %v", k, t.failures[k], err)
			}
			s.halt(t, k, reason, end)
			log.Error("table halted: it is left alone until `compactd resume`", "class", class.String(), "err", err)
		} else {
			rec.Outcome = "failed"
			// retry.Initial doubled per consecutive failure up to
			// retry.Max, without jitter: jobs of different tables fail at
			// different times anyway, and /status shows the exact next try.
			wait := backoff.Policy{Base: retry.Initial.D(), Max: retry.Max.D()}.Delay(t.failures[k] - 1)
			t.next[k] = end.Add(wait)
			s.m.retries.WithLabelValues(t.wh.path, t.name, string(k), class.String()).Inc()
			log.Warn("job failed: retrying", "class", class.String(), "attempt", t.failures[k], "backoff", wait.String(), "err", err)
		}
	}
	s.record(t, rec)
	if t.gone {
		delete(s.tables, t.key)
		s.deleteTableMetrics(t)
	}
}

// record counts a finished job in the metrics and the recent jobs. Called
// with s.mu held.
func (s *Scheduler) record(t *tableState, rec JobRecord) {
	k := rec.Kind
	lv := []string{t.wh.path, t.name, string(k)}
	s.m.jobs.WithLabelValues(t.wh.path, t.name, string(k), rec.Outcome).Inc()
	s.m.duration.WithLabelValues(lv...).Observe(rec.Seconds)
	if rec.RowsIn+rec.RowsOut > 0 {
		s.m.rows.WithLabelValues(t.wh.path, t.name, string(k), "in").Add(float64(rec.RowsIn))
		s.m.rows.WithLabelValues(t.wh.path, t.name, string(k), "out").Add(float64(rec.RowsOut))
		s.m.bytes.WithLabelValues(t.wh.path, t.name, string(k), "in").Add(float64(rec.BytesIn))
		s.m.bytes.WithLabelValues(t.wh.path, t.name, string(k), "out").Add(float64(rec.BytesOut))
	}
	if rec.FilesDeleted > 0 {
		s.m.filesDeleted.WithLabelValues(lv...).Add(float64(rec.FilesDeleted))
	}
	t.lastJobs = append(t.lastJobs, rec)
	if len(t.lastJobs) > perTableJobs {
		t.lastJobs = t.lastJobs[len(t.lastJobs)-perTableJobs:]
	}
	s.recent = append(s.recent, rec)
	if len(s.recent) > recentJobs {
		s.recent = s.recent[len(s.recent)-recentJobs:]
	}
}

// halt marks t halted, in memory and in the state directory. Called with
// s.mu held.
func (s *Scheduler) halt(t *tableState, k policy.Kind, reason string, at time.Time) {
	t.halted, t.haltedAt = reason, at
	s.m.halted.WithLabelValues(t.wh.path, t.name).Set(1)
	rec := HaltedRecord{Warehouse: t.wh.path, Table: t.name, Job: k, Reason: reason, Time: at.UTC()}
	t.haltUnrecorded = false
	if err := writeHalted(s.cfg.StatePath(), rec); err != nil {
		// Halted in memory only: a restart resumes it; resume cannot.
		t.haltUnrecorded = true
		s.log.Error("record halted table: it resumes on restart", "table", t.name, "err", err)
	}
}

// syncHalted applies the state directory (a fleet's: the coordinator's
// halted tables): a record written by an earlier run (by any replica)
// halts its table; a record `compactd resume` removed resumes it.
func (s *Scheduler) syncHalted(ctx context.Context) {
	var recs []HaltedRecord
	if c := s.opts.Coordinator; c != nil {
		// A fleet's units halt tables on the replica that ran them, not
		// under this lock: a record listed late is applied next tick.
		var err error
		if recs, err = c.Halted(ctx); err != nil {
			s.log.Warn("read the fleet's halted tables", "err", err)
			return
		}
		s.mu.Lock()
	} else {
		// Listed under the lock: halt writes its record under it too, so
		// a record is never missed between listing and applying.
		s.mu.Lock()
		dir := s.cfg.StatePath()
		var err error
		if recs, err = ListHalted(dir); err != nil {
			s.mu.Unlock()
			s.log.Warn("read halted tables", "dir", dir, "err", err)
			return
		}
	}
	defer s.mu.Unlock()
	byKey := map[string]HaltedRecord{}
	for _, r := range recs {
		byKey[r.Warehouse+"|"+r.Table] = r
	}
	now := s.opts.Now()
	for key, t := range s.tables {
		r, halted := byKey[key]
		switch {
		case halted && t.halted == "":
			t.halted, t.haltedAt = r.Reason, r.Time
			s.m.halted.WithLabelValues(t.wh.path, t.name).Set(1)
		case !halted && t.halted != "" && t.running == "" && !t.haltUnrecorded:
			s.log.Info("table resumed", "table", t.name, "warehouse", t.wh.path)
			t.halted = ""
			for k, j := range t.jobs {
				t.failures[k] = 0
				if j.Enabled {
					t.next[k] = now
				}
			}
			s.m.halted.WithLabelValues(t.wh.path, t.name).Set(0)
		case !halted:
			s.m.halted.WithLabelValues(t.wh.path, t.name).Set(0)
		}
	}
}
