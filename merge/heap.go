package merge

import (
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// heap is the binary min-heap in which both k-way merges (Reader,
// BatchReader) keep the cursors of their runs, one per run that has a
// current record, ordered by heapOrder.
//
// It is written for *cursor and heapOrder rather than as a generic heap: Go
// compiles a method call on a type parameter to an indirect call through
// the instantiation's dictionary (shape stenciling), which cost the batch
// merge 3-5% more instructions per record than direct calls (callgrind on
// BenchmarkBatchMerge); container/heap would box every
// element. For the same reason one function, heapOrder.compare, holds the
// whole order, so that a comparison in the sift loops is one call.
//
// Invariant: no item is before its parent (items[(i-1)/2] is never after
// items[i]), so items[0] is a least item. Only push, fix and remove change
// items; a caller may read items (walk the tree from the top) but not
// reorder them.
type heap struct {
	items []*cursor
	ord   heapOrder
}

// cursor is the read position in one sorted run: of a Reader (it, kv) or of
// a BatchReader (src, b, i). One type serves both so that one heap does.
type cursor struct {
	run   int // index of the run in the merge's input (the last tie-break)
	level int // LSM level of the current record (0 unless the run is Leveled)

	// Reader: the run and its current record.
	it Iterator
	kv table.KeyValue

	// BatchReader: the run, its current batch (of the codec's layout) and
	// the current row of it.
	src BatchRun
	b   *datafile.Batch
	i   int
}

func (h *heap) len() int { return len(h.items) }

// top is a least item; the heap must not be empty.
func (h *heap) top() *cursor { return h.items[0] }

func (h *heap) push(x *cursor) {
	h.items = append(h.items, x)
	h.up(len(h.items) - 1)
}

// fix restores the invariant after the item at i moved later in the order
// (its cursor advanced to a greater record).
func (h *heap) fix(i int) { h.down(i) }

// remove drops the item at i.
func (h *heap) remove(i int) {
	n := len(h.items) - 1
	h.items[i] = h.items[n]
	h.items[n] = nil // no stale reference past the end
	h.items = h.items[:n]
	if i < n {
		h.down(i)
		h.up(i)
	}
}

func (h *heap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.ord.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *heap) down(i int) {
	s := h.items
	for {
		l := 2*i + 1
		if l >= len(s) {
			return
		}
		m := l
		if r := l + 1; r < len(s) && h.ord.less(s[r], s[l]) {
			m = r
		}
		if !h.ord.less(s[m], s[i]) {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// heapOrder is the order of the heap: Reader's or, with batch set,
// BatchReader's (see compare).
type heapOrder struct {
	batch    bool
	keys     []datafile.Kind  // batch: physical kind of each key column
	keyTypes []table.DataType // rows: the key types
	seqCmp   func(a, b table.Row) int
}

// less is compare's order; it inlines, so a sift step makes one call.
func (o *heapOrder) less(a, b *cursor) bool { return o.compare(a, b) < 0 }

// sameKey reports whether two cursors are at records of one key.
func (o *heapOrder) sameKey(a, b *cursor) bool {
	c := o.compare(a, b)
	return -2 < c && c < 2
}
