package planner

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// postponeBucket is bucket-postpone's number (table.BucketPostpone).
const postponeBucket = -2

// Plan decides the compactions for every bucket of view at time now. It
// never plans a job that overlaps a job in inflight. The result is
// deterministic: jobs are ordered by (partition, bucket), then by their
// position in the bucket.
func Plan(view View, inflight []Inflight, opts Options, now time.Time) PlanResult {
	p := PlanResult{Now: now}
	busyBuckets := make(map[BucketID]bool, len(inflight))
	busyFiles := make(map[string]bool)
	for _, in := range inflight {
		busyBuckets[BucketID{in.Partition, in.Bucket}] = true
		for _, f := range in.Files {
			busyFiles[BucketID{in.Partition, in.Bucket}.String()+"\x00"+f] = true
		}
	}
	unaware := !opts.PrimaryKey && opts.Bucket == -1
	var commits map[BucketID]int
	if opts.PrimaryKey && opts.FullCompactionDeltaCommits > 0 {
		commits = deltaCommits(view.History)
	}
	for i := range view.Buckets {
		b := &view.Buckets[i]
		if b.Bucket == postponeBucket {
			// Unsorted postponed rows: compact moves them into real
			// buckets first; they are no sorted runs to pick from.
			continue
		}
		id := b.ID()
		if unaware {
			p.Jobs = append(p.Jobs, planUnaware(b, opts, func(name string) bool {
				return busyFiles[id.String()+"\x00"+name]
			})...)
			continue
		}
		if busyBuckets[id] {
			continue
		}
		var (
			job   *Job
			st    BucketState
			err   error
			moved bool
		)
		if opts.PrimaryKey {
			full := ""
			if opts.Strategy == StrategyFull {
				full = "full compaction requested"
			} else if n := opts.FullCompactionDeltaCommits; n > 0 && commits[id] >= n {
				full = fmt.Sprintf("full-compaction.delta-commits=%d: %d commits since the bucket was last compacted", n, commits[id])
			}
			job, st, err = PlanBucket(b, opts, view.cmp(), now, full)
			moved = st != b.State
		} else {
			job = planBucketedAppend(b, opts)
		}
		if err != nil {
			p.Errors = append(p.Errors, BucketError{Bucket: id, Err: err})
			continue
		}
		if moved {
			if p.States == nil {
				p.States = make(map[BucketID]BucketState)
			}
			p.States[id] = st
		}
		if job != nil {
			p.Jobs = append(p.Jobs, *job)
		}
	}
	slices.SortStableFunc(p.Jobs, func(a, b Job) int {
		if c := cmp.Compare(a.Partition, b.Partition); c != 0 {
			return c
		}
		return cmp.Compare(a.Bucket, b.Bucket)
	})
	return p
}

// deltaCommits counts, per bucket, the data commits (APPEND, OVERWRITE)
// since the bucket last appeared in a COMPACT snapshot, provided at least
// one of them wrote the bucket. This is the daemon's reading of Flink's
// full-compaction.delta-commits: a bucket written by a commit gets a full
// compaction once that many commits have passed without one.
func deltaCommits(h History) map[BucketID]int {
	type acc struct {
		lastCompact int // index of the last COMPACT snapshot touching the bucket
		written     bool
	}
	per := make(map[BucketID]*acc)
	dataIdx := make([]int, 0, len(h.Snapshots)) // indexes of data commits
	for i, s := range h.Snapshots {
		switch s.Kind {
		case CommitCompact:
			for _, b := range s.Buckets {
				if a := per[b]; a != nil {
					a.lastCompact, a.written = i, false
				} else {
					per[b] = &acc{lastCompact: i}
				}
			}
		case CommitAppend, CommitOverwrite:
			dataIdx = append(dataIdx, i)
			for _, b := range s.Buckets {
				if a := per[b]; a != nil {
					a.written = true
				} else {
					per[b] = &acc{lastCompact: -1, written: true}
				}
			}
		}
	}
	out := make(map[BucketID]int, len(per))
	for b, a := range per {
		if !a.written {
			continue
		}
		// Data commits after the bucket's last compaction.
		k, _ := slices.BinarySearch(dataIdx, a.lastCompact+1)
		out[b] = len(dataIdx) - k
	}
	return out
}

// PlanBucket plans one merge-tree bucket. full, when not empty, requests a
// full compaction (CompactStrategy.pickFullCompaction) and says why;
// otherwise the table's strategy picks (PickAt). It returns the job (nil if
// there is nothing to do) and the bucket's new state.
func PlanBucket(b *Bucket, opts Options, compareKeys func(a, b []byte) int, now time.Time, full string) (*Job, BucketState, error) {
	if compareKeys == nil {
		compareKeys = (&View{}).cmp()
	}
	lv, err := BuildLevels(b.Files, opts.NumLevels, compareKeys)
	if err != nil {
		return nil, b.State, err
	}
	if full != "" {
		return fullJob(b, lv, opts, compareKeys, full), b.State, nil
	}
	u, st := PickAt(lv.NumLevels, lv.Runs, opts, now, b.State)
	// MergeTreeCompactManager.triggerCompaction drops empty units and a
	// lone file that is already at the output level.
	if u == nil || len(u.Files) == 0 || (len(u.Files) == 1 && u.Files[0].Level == u.OutputLevel) {
		return nil, st, nil
	}
	return mergeTreeJob(b, lv, u, opts, compareKeys), st, nil
}

func dropDelete(lv Levels, outputLevel int, opts Options) bool {
	return !opts.ChainTable && outputLevel != 0 &&
		(outputLevel >= lv.NonEmptyHighestLevel() || opts.DeletionVectors)
}

func mergeTreeJob(b *Bucket, lv Levels, u *Unit, opts Options, compareKeys func(a, b []byte) int) *Job {
	j := &Job{
		Partition:   b.Partition,
		Bucket:      b.Bucket,
		Inputs:      u.Files,
		OutputLevel: u.OutputLevel,
		DropDelete:  dropDelete(lv, u.OutputLevel, opts),
		Full:        u.Full,
		Reason:      u.Reason,
	}
	j.Sections = PartitionSections(u.Files, compareKeys)
	j.Steps = mergeTreeSteps(j.Sections, taskParams{
		outputLevel:          u.OutputLevel,
		maxLevel:             lv.MaxLevel(),
		minFileSize:          opts.CompactionFileSize(),
		forceRewriteAllFiles: opts.ForceRewriteAllFiles,
		upgradeRewrites: func(f File) bool {
			return opts.rewritesLevel0Upgrade(f, u.OutputLevel, lv.MaxLevel())
		},
	})
	if len(j.Steps) == 0 {
		// Every input already sits at the output level and needs no rewrite:
		// the Java task would finish with an empty result.
		return nil
	}
	return j
}

// fullJob is CompactStrategy.pickFullCompaction.
func fullJob(b *Bucket, lv Levels, opts Options, compareKeys func(a, b []byte) int, reason string) *Job {
	if len(lv.Runs) == 0 {
		return nil
	}
	maxLevel := lv.MaxLevel()
	if len(lv.Runs) == 1 && lv.Runs[0].Level == maxLevel {
		// Already one sorted run at the top: only files that must change are
		// rewritten, each on its own (FileRewriteCompactTask).
		var picked []File
		why := ""
		for _, f := range lv.Runs[0].Files {
			switch {
			case opts.ForceRewriteAllFiles:
				why = "compaction.force-rewrite-all-files"
			case f.HasExpiredRecords:
				why = "record-level expire"
			case f.HasDeletionVector:
				why = "deletion vector"
			default:
				continue
			}
			picked = append(picked, f)
		}
		if len(picked) == 0 {
			return nil
		}
		j := &Job{
			Partition:   b.Partition,
			Bucket:      b.Bucket,
			Inputs:      picked,
			OutputLevel: maxLevel,
			DropDelete:  dropDelete(lv, maxLevel, opts),
			Full:        true,
			FileRewrite: true,
			Reason:      fmt.Sprintf("%s: single max-level run, rewrite %d files (e.g. %s)", reason, len(picked), why),
		}
		for _, f := range picked {
			j.Steps = append(j.Steps, Step{Kind: StepRewrite, Sections: []Section{{{f}}}})
		}
		return j
	}
	u := &Unit{RunCount: len(lv.Runs), Files: runFiles(lv.Runs), OutputLevel: maxLevel, Full: true,
		Reason: fmt.Sprintf("%s: %d runs to level %d", reason, len(lv.Runs), maxLevel)}
	return mergeTreeJob(b, lv, u, opts, compareKeys)
}
