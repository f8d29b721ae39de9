package planner

import (
	"container/heap"
	"slices"
)

// PartitionSections is Paimon's IntervalPartition: it sorts files by (min
// key, max key), cuts them into sections whose key ranges do not overlap
// (in key order), and splits each section into the minimum number of sorted
// runs.
func PartitionSections(files []File, compareKeys func(a, b []byte) int) []Section {
	if len(files) == 0 {
		return nil
	}
	sorted := slices.Clone(files)
	slices.SortStableFunc(sorted, func(a, b File) int {
		if c := compareKeys(a.MinKey, b.MinKey); c != 0 {
			return c
		}
		return compareKeys(a.MaxKey, b.MaxKey)
	})
	var out []Section
	start := 0
	var bound []byte
	for i, f := range sorted {
		if i > start && compareKeys(f.MinKey, bound) > 0 {
			out = append(out, splitRuns(sorted[start:i], compareKeys))
			start = i
			bound = nil
		}
		if bound == nil || compareKeys(f.MaxKey, bound) > 0 {
			bound = f.MaxKey
		}
	}
	return append(out, splitRuns(sorted[start:], compareKeys))
}

// runHeap orders partial runs by the max key of their last file.
type runHeap struct {
	runs [][]File
	cmp  func(a, b []byte) int
}

func (h *runHeap) Len() int { return len(h.runs) }
func (h *runHeap) Less(i, j int) bool {
	a, b := h.runs[i], h.runs[j]
	return h.cmp(a[len(a)-1].MaxKey, b[len(b)-1].MaxKey) < 0
}
func (h *runHeap) Swap(i, j int) { h.runs[i], h.runs[j] = h.runs[j], h.runs[i] }
func (h *runHeap) Push(x any)    { h.runs = append(h.runs, x.([]File)) }
func (h *runHeap) Pop() any {
	n := len(h.runs) - 1
	r := h.runs[n]
	h.runs = h.runs[:n]
	return r
}

// splitRuns is IntervalPartition.partition(section): greedy assignment to
// the run whose last max key is smallest.
func splitRuns(files []File, compareKeys func(a, b []byte) int) Section {
	if len(files) == 1 {
		return Section{{files[0]}}
	}
	h := &runHeap{cmp: compareKeys}
	h.runs = append(h.runs, []File{files[0]})
	for _, f := range files[1:] {
		top := heap.Pop(h).([]File)
		if compareKeys(f.MinKey, top[len(top)-1].MaxKey) > 0 {
			top = append(top, f)
		} else {
			heap.Push(h, []File{f})
		}
		heap.Push(h, top)
	}
	return Section(h.runs)
}

// taskParams are the inputs of MergeTreeCompactTask that decide steps.
type taskParams struct {
	outputLevel          int
	maxLevel             int
	minFileSize          int64 // compactionFileSize
	forceRewriteAllFiles bool
}

// mergeTreeSteps is MergeTreeCompactTask.doCompact without the I/O: walk
// the sections in key order, gather overlapping sections and small files as
// rewrite candidates, and upgrade large non-overlapping files in place
// (flushing the candidates before them so that key order is preserved).
func mergeTreeSteps(sections []Section, p taskParams) []Step {
	var steps []Step
	var candidate []Section

	upgrade := func(f File) {
		if (p.outputLevel == p.maxLevel && f.mayContainDeletes()) ||
			p.forceRewriteAllFiles || f.HasExpiredRecords {
			// Retracts must not reach the max level, so such files are
			// rewritten alone (with dropDelete) instead of upgraded.
			steps = append(steps, Step{Kind: StepRewrite, Sections: []Section{{{f}}}})
			return
		}
		if f.Level != p.outputLevel {
			steps = append(steps, Step{Kind: StepUpgrade, File: f})
		}
	}
	flush := func() {
		if len(candidate) == 0 {
			return
		}
		if len(candidate) == 1 && len(candidate[0]) == 1 {
			// A single run with nothing to merge it with: upgrade file by file.
			for _, f := range candidate[0][0] {
				upgrade(f)
			}
			candidate = nil
			return
		}
		steps = append(steps, Step{Kind: StepRewrite, Sections: candidate})
		candidate = nil
	}

	for _, sec := range sections {
		if len(sec) > 1 {
			candidate = append(candidate, sec)
			continue
		}
		for _, f := range sec[0] {
			if f.Size < p.minFileSize {
				candidate = append(candidate, Section{{f}})
			} else {
				flush()
				upgrade(f)
			}
		}
	}
	flush()
	return steps
}
