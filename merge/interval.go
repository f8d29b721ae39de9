package merge

import (
	"sort"

	"github.com/compactd/compactd/table"
)

// IntervalPartition groups files into sections and each section into the
// minimum number of sorted runs, as Paimon's IntervalPartition does:
//
//  1. files are sorted (stably) by min key, then max key;
//  2. a sweep starts a new section whenever a file's min key is greater than
//     the largest max key of the section so far, so sections never overlap
//     and come out in key order;
//  3. inside a section each file, in sorted order, is appended to the run whose
//     last max key is smallest if its min key is greater than that, otherwise it
//     starts a new run.
//
// bounds returns a file's min and max key. The order of the runs inside a
// section is that of Java's PriorityQueue backing array (Paimon says it carries
// no meaning); the files of a run are in key order.
func IntervalPartition[F any](files []F, keyTypes []table.DataType, bounds func(F) (minKey, maxKey table.Row)) [][][]F {
	type item struct {
		f        F
		min, max table.Row
	}
	items := make([]item, len(files))
	for i, f := range files {
		items[i].f = f
		items[i].min, items[i].max = bounds(f)
	}
	cmp := func(a, b table.Row) int { return table.CompareRows(keyTypes, a, b) }
	sort.SliceStable(items, func(i, j int) bool {
		if c := cmp(items[i].min, items[j].min); c != 0 {
			return c < 0
		}
		return cmp(items[i].max, items[j].max) < 0
	})

	var sections [][][]F
	var section []item
	var bound table.Row
	hasBound := false
	flush := func() {
		if len(section) == 0 {
			return
		}
		// Runs are heap entries ordered by the max key of their last file.
		pq := &javaPQ[[]item]{less: func(a, b []item) int { return cmp(a[len(a)-1].max, b[len(b)-1].max) }}
		pq.offer([]item{section[0]})
		for _, it := range section[1:] {
			top := pq.poll()
			if cmp(it.min, top[len(top)-1].max) > 0 {
				top = append(top, it)
			} else {
				pq.offer([]item{it})
			}
			pq.offer(top)
		}
		runs := make([][]F, len(pq.q))
		for i, run := range pq.q {
			for _, it := range run {
				runs[i] = append(runs[i], it.f)
			}
		}
		sections = append(sections, runs)
		section = nil
	}
	for _, it := range items {
		if len(section) > 0 && cmp(it.min, bound) > 0 {
			flush()
			hasBound = false
		}
		section = append(section, it)
		if !hasBound || cmp(it.max, bound) > 0 {
			bound, hasBound = it.max, true
		}
	}
	flush()
	return sections
}

// javaPQ reproduces java.util.PriorityQueue's sift rules so the backing array
// (and with it the run order Paimon hands to the merge) matches Java's.
type javaPQ[T any] struct {
	q    []T
	less func(a, b T) int
}

func (p *javaPQ[T]) offer(x T) {
	p.q = append(p.q, x)
	k := len(p.q) - 1
	for k > 0 {
		parent := (k - 1) >> 1
		if p.less(x, p.q[parent]) >= 0 {
			break
		}
		p.q[k] = p.q[parent]
		k = parent
	}
	p.q[k] = x
}

func (p *javaPQ[T]) poll() T {
	res := p.q[0]
	n := len(p.q) - 1
	x := p.q[n]
	var zero T
	p.q[n] = zero
	p.q = p.q[:n]
	if n > 0 {
		k, half := 0, n>>1
		for k < half {
			child := 2*k + 1
			c := p.q[child]
			if right := child + 1; right < n && p.less(c, p.q[right]) > 0 {
				child = right
				c = p.q[child]
			}
			if p.less(x, c) <= 0 {
				break
			}
			p.q[k] = c
			k = child
		}
		p.q[k] = x
	}
	return res
}
