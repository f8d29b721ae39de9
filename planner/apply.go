package planner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Apply returns the View that results from executing every job of plan
// against view, without I/O. Upgraded files keep their name and change
// level. Each rewrite step of a merge-tree job becomes one synthetic output
// file at the output level whose key and sequence ranges span its inputs and
// whose size is the inputs' total (an upper bound: merging only removes
// rows); retract counts are zero when the job drops deletes. Append jobs
// produce level-0 files of at most target-file-size with sequence numbers
// reassigned from the first input's, as Paimon's append rewrite does.
// Synthetic files are named "~<bucket>-<n>". Plan.States are carried into
// the buckets. view is not modified.
//
// Apply fails if a job refers to a bucket or file that view does not hold,
// or if two jobs share a file.
func Apply(view View, plan PlanResult, opts Options) (View, error) {
	out := view
	out.Buckets = slices.Clone(view.Buckets)
	index := make(map[BucketID]int, len(out.Buckets))
	for i := range out.Buckets {
		index[out.Buckets[i].ID()] = i
	}
	touched := make(map[int]bool)
	consumed := make(map[string]bool) // bucket + file name, across jobs
	for ji := range plan.Jobs {
		j := &plan.Jobs[ji]
		bi, ok := index[j.ID()]
		if !ok {
			return View{}, fmt.Errorf("apply job %d: bucket %s not in view", ji, j.ID())
		}
		b := &out.Buckets[bi]
		if !touched[bi] {
			b.Files = slices.Clone(b.Files)
			touched[bi] = true
		}
		pos := make(map[string]int, len(b.Files))
		prefix := "~" + j.ID().String() + "-"
		seq := 0
		for i, f := range b.Files {
			pos[f.Name] = i
			if rest, ok := strings.CutPrefix(f.Name, prefix); ok {
				if n, err := strconv.Atoi(rest); err == nil {
					seq = max(seq, n)
				}
			}
		}
		removed := make(map[string]bool)
		take := func(f File) error {
			k := j.ID().String() + "\x00" + f.Name
			if _, ok := pos[f.Name]; !ok || removed[f.Name] || consumed[k] {
				return fmt.Errorf("apply job %d on %s: file %s not live (or in two jobs)", ji, j.ID(), f.Name)
			}
			removed[f.Name] = true
			consumed[k] = true
			return nil
		}
		var added []File
		isAppend := !opts.PrimaryKey
		for _, s := range j.Steps {
			switch s.Kind {
			case StepUpgrade:
				if err := take(s.File); err != nil {
					return View{}, err
				}
				up := b.Files[pos[s.File.Name]]
				up.Level = j.OutputLevel
				added = append(added, up)
			case StepRewrite:
				var ins []File
				for _, sec := range s.Sections {
					for _, run := range sec {
						for _, f := range run {
							if err := take(f); err != nil {
								return View{}, err
							}
							ins = append(ins, b.Files[pos[f.Name]])
						}
					}
				}
				name := func() string {
					seq++
					return prefix + strconv.Itoa(seq)
				}
				if isAppend {
					added = append(added, appendOutputs(ins, opts.TargetFileSize, plan.Now, name)...)
				} else {
					added = append(added, mergeOutput(ins, j.OutputLevel, j.DropDelete, plan.Now, name(), view.cmp()))
				}
			}
		}
		kept := b.Files[:0]
		for _, f := range b.Files {
			if !removed[f.Name] {
				kept = append(kept, f)
			}
		}
		b.Files = append(kept, added...)
	}
	for id, st := range plan.States {
		if bi, ok := index[id]; ok {
			out.Buckets[bi].State = st
		}
	}
	return out, nil
}

func mergeOutput(ins []File, level int, dropDelete bool, now time.Time, name string, compareKeys func(a, b []byte) int) File {
	o := File{Name: name, Level: level, CreationTime: now, MinKey: ins[0].MinKey, MaxKey: ins[0].MaxKey,
		MinSeq: ins[0].MinSeq, MaxSeq: ins[0].MaxSeq}
	var dels int64
	known := true
	for _, f := range ins {
		o.Size += f.Size
		o.RowCount += f.RowCount
		o.MinSeq = min(o.MinSeq, f.MinSeq)
		o.MaxSeq = max(o.MaxSeq, f.MaxSeq)
		if compareKeys(f.MinKey, o.MinKey) < 0 {
			o.MinKey = f.MinKey
		}
		if compareKeys(f.MaxKey, o.MaxKey) > 0 {
			o.MaxKey = f.MaxKey
		}
		if f.DeleteRowCount == nil {
			known = false
		} else {
			dels += *f.DeleteRowCount
		}
	}
	switch {
	case dropDelete:
		zero := int64(0)
		o.DeleteRowCount = &zero
	case known:
		o.DeleteRowCount = &dels
	}
	return o
}

func appendOutputs(ins []File, target int64, now time.Time, name func() string) []File {
	var size, rows int64
	for _, f := range ins {
		size += f.Size
		rows += f.RowCount
		if f.DeletedRows != nil {
			rows -= *f.DeletedRows
		}
	}
	rows = max(rows, 0)
	next := ins[0].MinSeq
	var out []File
	for size > 0 || len(out) == 0 {
		sz := min(size, target)
		r := rows
		if size > 0 && sz < size {
			r = rows * sz / size
		}
		zero := int64(0)
		out = append(out, File{Name: name(), Size: sz, RowCount: r, MinSeq: next, MaxSeq: next + max(r, 1) - 1,
			CreationTime: now, DeleteRowCount: &zero})
		next += max(r, 1)
		size -= sz
		rows -= r
		if sz == 0 {
			break
		}
	}
	return out
}

// BacklogStats summarises the work a view still needs under the table's
// normal triggers.
type BacklogStats struct {
	// RunsOverTrigger sums, over the merge-tree buckets of the starting view,
	// how far each bucket's sorted-run count exceeds the compaction trigger.
	RunsOverTrigger int `json:"runsOverTrigger"`
	// Jobs, RewriteBytes, RewriteFiles and UpgradeFiles total the jobs of
	// every round.
	Jobs         int   `json:"jobs"`
	RewriteBytes int64 `json:"rewriteBytes"`
	RewriteFiles int   `json:"rewriteFiles"`
	UpgradeFiles int   `json:"upgradeFiles"`
	// Rounds is the number of plan→apply rounds run; Converged reports that
	// the last round planned nothing (false when MaxBacklogRounds stopped it
	// or a round failed).
	Rounds    int  `json:"rounds"`
	Converged bool `json:"converged"`
}

// MaxBacklogRounds bounds Backlog's plan→apply iterations.
const MaxBacklogRounds = 256

// Backlog estimates the outstanding compaction work by repeating
// Plan → Apply (normal triggers, nothing in flight) until nothing is picked,
// at most MaxBacklogRounds times.
func Backlog(view View, opts Options, now time.Time) BacklogStats {
	var s BacklogStats
	if opts.PrimaryKey {
		for i := range view.Buckets {
			if view.Buckets[i].Bucket == postponeBucket {
				continue
			}
			lv, err := BuildLevels(view.Buckets[i].Files, opts.NumLevels, view.cmp())
			if err == nil {
				s.RunsOverTrigger += max(0, len(lv.Runs)-opts.NumSortedRunCompactionTrigger)
			}
		}
	}
	opts.Strategy = StrategyMinor
	for s.Rounds < MaxBacklogRounds {
		p := Plan(view, nil, opts, now)
		s.Rounds++
		if len(p.Jobs) == 0 {
			s.Converged = true
			return s
		}
		for i := range p.Jobs {
			j := &p.Jobs[i]
			s.Jobs++
			rw := j.Rewritten()
			s.RewriteFiles += len(rw)
			for _, f := range rw {
				s.RewriteBytes += f.Size
			}
			s.UpgradeFiles += len(j.Upgrades())
		}
		next, err := Apply(view, p, opts)
		if err != nil {
			return s
		}
		view = next
	}
	return s
}
