package planner

import (
	"fmt"
	"time"
)

// Unit is a picked compaction unit: a prefix of the run list (the newest
// runs) and the level its output goes to (Paimon's CompactUnit).
type Unit struct {
	// RunCount is how many leading runs the unit takes.
	RunCount    int
	Files       []File
	OutputLevel int
	// Full reports that the unit takes every run (output at the max level).
	Full bool
	// Reason names the trigger and its numbers.
	Reason string

	keepLastFull bool // 1.3 total-size trigger: the interval is not restarted
}

// PickAt is Paimon's universal compaction pick (UniversalCompaction.pick,
// wrapped by ForceUpLevel0Compaction when opts.NeedLookup() or
// opts.ForceUpLevel0) at time now with the bucket's remembered state.
// With early full compaction configured (2.0 and head behaviours), a state
// without a last full compaction takes its time from the max-level files,
// as Java estimates it.
//
// runs must be in Levels order (see BuildLevels). It returns the unit (nil
// if none) and the bucket's new state: picking may record a full compaction
// or advance the gentle lookup counter, exactly where Java mutates
// EarlyFullCompaction and ForceUpLevel0Compaction.
func PickAt(numLevels int, runs []LevelRun, opts Options, now time.Time, st BucketState) (*Unit, BucketState) {
	p := picker{opts: &opts, numLevels: numLevels, runs: runs, now: now, st: st}
	if p.st.LastFullCompaction.IsZero() && opts.earlyFullConfigured() &&
		(opts.Behavior == Behavior20 || opts.Behavior == BehaviorHead) {
		p.st.LastFullCompaction = estimateLastFull(runs, opts.NumLevels)
	}
	u := p.universal()
	if u == nil && (opts.NeedLookup() || opts.ForceUpLevel0) {
		// compaction.force-up-level-0 alone always uses the radical mode.
		if opts.NeedLookup() && opts.LookupCompactGentle {
			p.st.GentleTriggers++
			// Java tests equality; >= also recovers a persisted counter
			// that an option change left above the interval.
			if p.st.GentleTriggers >= opts.LookupCompactMaxInterval {
				p.st.GentleTriggers = 0
				u = p.forcePickL0(fmt.Sprintf("lookup-compact=gentle: forced level-0 pick every %d triggers", opts.LookupCompactMaxInterval))
			}
		} else {
			u = p.forcePickL0("force level 0 up (lookup-style table or compaction.force-up-level-0)")
		}
	}
	if u != nil && u.Full && !u.keepLastFull && opts.earlyFullConfigured() {
		// Java records the time only inside EarlyFullCompaction, which
		// exists only when one of its options is set.
		p.st.LastFullCompaction = now
	}
	return u, p.st
}

// estimateLastFull mirrors MergeTreeCompactManagerFactory.
// estimateLastFullCompactionTime (2.0.0): the newest creation time among the
// files at the configured max level, or unknown (zero).
func estimateLastFull(runs []LevelRun, numLevels int) time.Time {
	var t time.Time
	for _, r := range runs {
		if r.Level != numLevels-1 {
			continue
		}
		for _, f := range r.Files {
			if f.CreationTime.After(t) {
				t = f.CreationTime
			}
		}
	}
	return t
}

func (o *Options) earlyFullConfigured() bool {
	return o.OptimizationInterval != nil || o.TotalSizeThreshold != nil || o.IncrementalSizeThreshold != nil
}

type picker struct {
	opts      *Options
	numLevels int
	runs      []LevelRun
	now       time.Time
	st        BucketState
}

func (p *picker) maxLevel() int { return p.numLevels - 1 }

func (p *picker) universal() *Unit {
	if u := p.earlyFull(); u != nil {
		return u
	}
	if u := p.sizeAmp(); u != nil {
		return u
	}
	t := p.opts.NumSortedRunCompactionTrigger
	n := len(p.runs)
	if n >= t {
		if u := p.sizeRatio(1, false); u != nil {
			u.Reason = fmt.Sprintf("size ratio: %d runs >= trigger %d; %s", n, t, u.Reason)
			return u
		}
	}
	if n > t {
		if u := p.sizeRatio(n-t+1, false); u != nil {
			u.Reason = fmt.Sprintf("run count: %d runs > trigger %d, at least %d candidates; %s", n, t, n-t+1, u.Reason)
			return u
		}
	}
	return nil
}

// earlyFull is EarlyFullCompaction.tryFullCompact.
func (p *picker) earlyFull() *Unit {
	o := p.opts
	if !o.earlyFullConfigured() {
		return nil
	}
	if len(p.runs) == 1 {
		return nil
	}
	if iv := o.OptimizationInterval; iv != nil {
		last := p.st.LastFullCompaction
		if last.IsZero() {
			return p.all(fmt.Sprintf("optimization interval %s: no full compaction known", *iv))
		}
		// Java compares epoch milliseconds.
		if elapsed := p.now.UnixMilli() - last.UnixMilli(); elapsed > iv.Milliseconds() {
			return p.all(fmt.Sprintf("optimization interval %s: last full compaction %s ago", *iv, time.Duration(elapsed)*time.Millisecond))
		}
	}
	if th := o.TotalSizeThreshold; th != nil {
		var total int64
		for _, r := range p.runs {
			total += r.Size()
		}
		if total < *th {
			u := p.all(fmt.Sprintf("total size %d < total-size-threshold %d", total, *th))
			u.keepLastFull = o.Behavior == Behavior13
			return u
		}
	}
	if th := o.IncrementalSizeThreshold; th != nil && o.Behavior != Behavior13 {
		var inc int64
		for _, r := range p.runs {
			if r.Level != p.maxLevel() {
				inc += r.Size()
			}
		}
		if inc > *th {
			return p.all(fmt.Sprintf("incremental size %d > incremental-size-threshold %d", inc, *th))
		}
	}
	return nil
}

// sizeAmp is UniversalCompaction.pickForSizeAmp.
func (p *picker) sizeAmp() *Unit {
	n := len(p.runs)
	if n < p.opts.NumSortedRunCompactionTrigger {
		return nil
	}
	var candidate int64
	for _, r := range p.runs[:n-1] {
		candidate += r.Size()
	}
	earliest := p.runs[n-1].Size()
	// Java multiplies in 64-bit long arithmetic; so do we.
	if candidate*100 > int64(p.opts.MaxSizeAmplificationPercent)*earliest {
		return p.all(fmt.Sprintf("size amplification: newer runs %d bytes > %d%% of oldest run %d bytes", candidate, p.opts.MaxSizeAmplificationPercent, earliest))
	}
	return nil
}

// sizeRatio is UniversalCompaction.pickForSizeRatio(maxLevel, runs,
// candidateCount, forcePick).
func (p *picker) sizeRatio(candidateCount int, forcePick bool) *Unit {
	var size int64
	for _, r := range p.runs[:candidateCount] {
		size += r.Size()
	}
	ratio := float64(p.opts.SizeRatio + p.opts.offPeakRatio(p.now))
	triggered := forcePick || candidateCount > 1
	for i := candidateCount; i < len(p.runs); i++ {
		next := p.runs[i]
		if float64(size)*(100.0+ratio)/100.0 < float64(next.Size()) {
			if p.opts.Behavior != BehaviorHead || !triggered || next.Level > 1 {
				break
			}
		}
		size += next.Size()
		candidateCount++
		triggered = true
	}
	if p.opts.Behavior != BehaviorHead {
		triggered = forcePick || candidateCount > 1
	}
	if !triggered {
		return nil
	}
	u := p.createUnit(candidateCount)
	u.Reason = fmt.Sprintf("%d candidate runs, %d bytes, size ratio %v%%", candidateCount, size, ratio)
	return u
}

// forcePickL0 is UniversalCompaction.forcePickL0.
func (p *picker) forcePickL0(reason string) *Unit {
	k := 0
	for k < len(p.runs) && p.runs[k].Level == 0 {
		k++
	}
	if k == 0 {
		return nil
	}
	if p.opts.Behavior == Behavior20 && k < len(p.runs) && p.runs[k].Level == 1 {
		// 2.0.0 (#8993) starts with the level-1 run so the size-ratio check
		// weighs level 2 against level 0 plus level 1.
		k++
	}
	u := p.sizeRatio(k, true)
	u.Reason = reason + "; " + u.Reason
	return u
}

// createUnit is UniversalCompaction.createUnit: choose the output level for
// the first runCount runs, never level 0.
func (p *picker) createUnit(runCount int) *Unit {
	n := len(p.runs)
	var out int
	if runCount == n {
		out = p.maxLevel()
	} else {
		out = max(0, p.runs[runCount].Level-1)
	}
	if out == 0 {
		for i := runCount; i < n; i++ {
			runCount++
			if p.runs[i].Level != 0 {
				out = p.runs[i].Level
				break
			}
		}
	}
	full := runCount == n
	if full {
		out = p.maxLevel()
	}
	return &Unit{RunCount: runCount, Files: runFiles(p.runs[:runCount]), OutputLevel: out, Full: full}
}

// all is CompactUnit.fromLevelRuns(maxLevel, runs).
func (p *picker) all(reason string) *Unit {
	return &Unit{RunCount: len(p.runs), Files: runFiles(p.runs), OutputLevel: p.maxLevel(), Full: true, Reason: reason}
}
