package sched

import (
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/policy"
)

// The memory estimate: per bucket merged at once, a row group (or the
// bucket's share of the input, if smaller) plus the read buffers.
func TestCompactionMemoryEstimate(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	for _, c := range []struct {
		buckets, par int
		in, want     int64
	}{
		{0, 2, 0, 2 * (128 + 32) * mib},           // nothing known: par buckets, full row groups
		{1, 4, 0, 1 * (128 + 32) * mib},           // one bucket merges alone
		{8, 2, 8 * 10 * mib, 2 * (10 + 32) * mib}, // small buckets buffer less than a row group
		{4, 8, 4 << 30, 4 * (128 + 32) * mib},     // large ones a row group at most
	} {
		if got := compactionMemory(c.buckets, c.par, c.in); got != c.want {
			t.Errorf("compactionMemory(%d buckets, par %d, %d bytes) = %d MiB, want %d MiB", c.buckets, c.par, c.in, got/mib, c.want/mib)
		}
	}
}

// Admit lets a replica's compaction units in while they fit under
// max-compactions and memory-budget, always lets other kinds in, admits
// an oversized unit only when it runs alone, and gives room back once.
func TestAdmitCapsCompactionsAndTheirMemory(t *testing.T) {
	t.Parallel()
	const unitMem = 2 * (128 + 32) << 20 // a 4-bucket unit at bucket-parallelism 2
	newSched := func(maxCompactions int, budget int64) *Scheduler {
		cfg := &policy.Config{Workers: 4, MaxCompactions: maxCompactions, MemoryBudget: policy.Size(budget),
			Warehouses: []policy.Warehouse{{Path: "/wh"}}}
		s, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	unit := func(from int) Unit {
		return Unit{Warehouse: "/wh", Table: "db.t", Kind: policy.Compact, Buckets: &compact.BucketRange{From: from, To: from + 4}}
	}
	s := newSched(0, unitMem+unitMem/2)
	r1, ok := s.Admit(unit(0))
	if !ok {
		t.Fatal("the first unit was refused")
	}
	if _, ok := s.Admit(unit(4)); ok {
		t.Fatal("a second unit admitted past the memory budget")
	}
	if r, ok := s.Admit(Unit{Warehouse: "/wh", Table: "db.t", Kind: policy.Expire}); !ok {
		t.Fatal("expire refused by the compaction caps")
	} else {
		r()
	}
	r1()
	r1() // a second release gives nothing back twice
	r2, ok := s.Admit(unit(4))
	if !ok {
		t.Fatal("refused after the first unit's memory was given back")
	}
	r2()

	alone := newSched(0, unitMem/2)
	if r, ok := alone.Admit(unit(0)); !ok {
		t.Fatal("a unit over the whole budget never runs, even alone")
	} else if _, ok := alone.Admit(unit(4)); ok {
		t.Fatal("a second unit beside an oversized one")
	} else {
		r()
	}

	capped := newSched(2, 0)
	var rs []func()
	for i := range 3 {
		r, ok := capped.Admit(unit(4 * i))
		if ok != (i < 2) {
			t.Fatalf("unit %d of max-compactions 2: admitted %v", i, ok)
		}
		if ok {
			rs = append(rs, r)
		}
	}
	if capped.compactions != 2 {
		t.Fatalf("%d compactions counted", capped.compactions)
	}
	for _, r := range rs {
		r()
	}
	if capped.compactions != 0 || capped.memory != 0 {
		t.Fatalf("after release: %d compactions, %d bytes", capped.compactions, capped.memory)
	}
}
