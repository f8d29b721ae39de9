package merge

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/compactd/compactd/table"
)

// The heap keeps its invariant through push, fix (after a cursor advanced)
// and remove at any position, so that its top is always a least cursor in
// the merge order (key, then sequence number, kind and run).
func TestHeapTopIsAlwaysTheLeastCursor(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := range 2000 {
		h := heap{ord: heapOrder{keyTypes: []table.DataType{tIntNN}}}
		var live []*cursor
		for run := range 1 + rng.Intn(32) {
			c := &cursor{run: run, kv: table.KeyValue{Key: table.Row{int32(rng.Intn(50))}, Seq: int64(rng.Intn(3))}}
			live = append(live, c)
			h.push(c)
		}
		for h.len() > 0 {
			least := slices.MinFunc(live, h.ord.compare)
			if got := h.top(); got != least {
				t.Fatalf("round %d: top is run %d (key %v seq %d), least is run %d (key %v seq %d)",
					round, got.run, got.kv.Key, got.kv.Seq, least.run, least.kv.Key, least.kv.Seq)
			}
			i := rng.Intn(h.len())
			c := h.items[i]
			if i == 0 && rng.Intn(3) > 0 {
				// advance the top: its record only grows
				c.kv.Key = table.Row{c.kv.Key[0].(int32) + int32(rng.Intn(3))}
				c.kv.Seq += int64(1 + rng.Intn(2))
				h.fix(0)
				continue
			}
			h.remove(i)
			live = slices.DeleteFunc(live, func(x *cursor) bool { return x == c })
		}
	}
}

// compare's magnitude tells a different key (2) from a tie-break (1), which
// collectEqual relies on to find the runs holding the smallest key.
func TestHeapOrderSameKeyIgnoresTheTieBreak(t *testing.T) {
	o := heapOrder{keyTypes: []table.DataType{tIntNN}}
	a := &cursor{run: 0, kv: table.KeyValue{Key: table.Row{int32(1)}, Seq: 9}}
	b := &cursor{run: 1, kv: table.KeyValue{Key: table.Row{int32(1)}, Seq: 2}}
	c := &cursor{run: 2, kv: table.KeyValue{Key: table.Row{int32(2)}, Seq: 1}}
	if !o.sameKey(a, b) || !o.less(b, a) {
		t.Errorf("records of one key: sameKey %v, less(seq 2, seq 9) %v; want true, true", o.sameKey(a, b), o.less(b, a))
	}
	if o.sameKey(a, c) || !o.less(a, c) {
		t.Errorf("keys 1 and 2: sameKey %v, less %v; want false, true", o.sameKey(a, c), o.less(a, c))
	}
}
