package planner

import "slices"

// PartitionSections is Paimon's IntervalPartition: it sorts files by (min
// key, max key), cuts them into sections whose key ranges do not overlap
// (in key order), and splits each section into the minimum number of sorted
// runs.
func PartitionSections(files []File, compareKeys func(a, b []byte) int) []Section {
	if len(files) == 0 {
		return nil
	}
	// Sort indexes, not the (large) File values.
	order := make([]int32, len(files))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(x, y int32) int {
		a, b := &files[x], &files[y]
		if c := compareKeys(a.MinKey, b.MinKey); c != 0 {
			return c
		}
		return compareKeys(a.MaxKey, b.MaxKey)
	})
	var out []Section
	start := 0
	var bound []byte
	for i, idx := range order {
		f := &files[idx]
		if i > start && compareKeys(f.MinKey, bound) > 0 {
			out = append(out, splitRuns(files, order[start:i], compareKeys))
			start = i
			bound = nil
		}
		if bound == nil || compareKeys(f.MaxKey, bound) > 0 {
			bound = f.MaxKey
		}
	}
	return append(out, splitRuns(files, order[start:], compareKeys))
}

// splitRuns is IntervalPartition.partition(section): each file, in key
// order, joins the run whose last max key is smallest if it starts after
// that key, else it starts a new run. The runs sit in a binary min-heap keyed
// by their last max key that follows java.util.PriorityQueue step by step
// (poll, then offer), so that ties between equal keys resolve exactly as in
// Paimon and the runs come out in the same (heap array) order.
func splitRuns(files []File, order []int32, compareKeys func(a, b []byte) int) Section {
	if len(order) == 1 {
		return Section{{files[order[0]]}}
	}
	runs := [][]int32{{order[0]}}
	q := []int{0} // run indexes in PriorityQueue array order
	c := func(a, b int) int {
		ra, rb := runs[a], runs[b]
		return compareKeys(files[ra[len(ra)-1]].MaxKey, files[rb[len(rb)-1]].MaxKey)
	}
	siftUp := func(k, x int) {
		for k > 0 {
			parent := (k - 1) / 2
			if c(x, q[parent]) >= 0 {
				break
			}
			q[k] = q[parent]
			k = parent
		}
		q[k] = x
	}
	siftDown := func(k, x int) {
		half := len(q) / 2
		for k < half {
			child := 2*k + 1
			if right := child + 1; right < len(q) && c(q[child], q[right]) > 0 {
				child = right
			}
			if c(x, q[child]) <= 0 {
				break
			}
			q[k] = q[child]
			k = child
		}
		q[k] = x
	}
	poll := func() int {
		top := q[0]
		x := q[len(q)-1]
		q = q[:len(q)-1]
		if len(q) > 0 {
			siftDown(0, x)
		}
		return top
	}
	offer := func(x int) {
		q = append(q, x)
		siftUp(len(q)-1, x)
	}
	for _, idx := range order[1:] {
		top := poll()
		t := runs[top]
		if compareKeys(files[idx].MinKey, files[t[len(t)-1]].MaxKey) > 0 {
			runs[top] = append(t, idx)
		} else {
			runs = append(runs, []int32{idx})
			offer(len(runs) - 1)
		}
		offer(top)
	}
	sec := make(Section, len(q))
	for i, r := range q {
		run := make([]File, len(runs[r]))
		for k, idx := range runs[r] {
			run[k] = files[idx]
		}
		sec[i] = run
	}
	return sec
}

// taskParams are the inputs of MergeTreeCompactTask that decide steps.
type taskParams struct {
	outputLevel          int
	maxLevel             int
	minFileSize          int64 // compactionFileSize
	forceRewriteAllFiles bool
	// upgradeRewrites is the rewriter's upgradeStrategy: true when moving f
	// to the output level must rewrite it (nil: never, the plain rewriter).
	upgradeRewrites func(f File) bool
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
			if p.upgradeRewrites != nil && p.upgradeRewrites(f) {
				steps = append(steps, Step{Kind: StepRewrite, Sections: []Section{{{f}}}})
				return
			}
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
