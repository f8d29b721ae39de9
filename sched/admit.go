package sched

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/compactd/compactd/policy"
)

// Admission is this daemon's (or fleet replica's) cap on the compactions
// it runs at once (max-compactions) and on their estimated memory
// (memory-budget). It is per process, so it is kept in memory in both
// modes; what a table may hold of the whole fleet is kept in PostgreSQL
// (package fleet).

const (
	// rowGroupBytes is parquet.block.size's default: a bucket's output
	// is buffered up to one row group before it is written.
	rowGroupBytes = 128 << 20
	// bucketReadBytes is what merging one bucket holds besides its output:
	// a decoded page per open column of each input file and the files'
	// read buffers (8 MiB per file on object stores, 1 MiB on disk).
	bucketReadBytes = 32 << 20
)

// compactionMemory estimates a compaction's peak memory: for each bucket
// merged at once (par, at most the buckets it covers) one output row group
// — rowGroupBytes, or less when the bucket's share of inputBytes is less —
// plus bucketReadBytes for reading its inputs. docs/perf.md finds RSS to
// be mostly those two; the estimate is meant to keep a replica's jobs
// from adding up past its memory, not to be exact. buckets or inputBytes
// 0 mean not known (par buckets, full row groups).
func compactionMemory(buckets, par int, inputBytes int64) int64 {
	par = max(par, 1)
	at, group := par, int64(rowGroupBytes)
	if buckets > 0 {
		at = min(par, buckets)
		if inputBytes > 0 {
			group = min(group, inputBytes/int64(buckets))
		}
	}
	return int64(at) * (group + bucketReadBytes)
}

func isCompaction(k policy.Kind) bool { return k == policy.Compact || k == policy.FullCompaction }

// maxCompactions is the cap on compactions at once. s.mu is held.
func (s *Scheduler) maxCompactions() int {
	if n := s.cfg.MaxCompactions; n > 0 {
		return min(n, s.cfg.Workers)
	}
	return s.cfg.Workers
}

// fits says whether a compaction estimated at est may start now. One that
// alone exceeds the budget starts when no other compaction runs: it could
// otherwise never run. s.mu is held.
func (s *Scheduler) fits(est int64) bool {
	if s.compactions >= s.maxCompactions() {
		return false
	}
	b := int64(s.cfg.MemoryBudget)
	return b <= 0 || s.compactions == 0 || s.memory+est <= b
}

// reserve counts a started compaction, unreserve its end. s.mu is held.
func (s *Scheduler) reserve(est int64) {
	s.compactions++
	s.memory += est
	s.m.compactions.Set(float64(s.compactions))
	s.m.memory.Set(float64(s.memory))
}

func (s *Scheduler) unreserve(est int64) {
	s.compactions--
	s.memory -= est
	s.m.compactions.Set(float64(s.compactions))
	s.m.memory.Set(float64(s.memory))
}

// jobMemory estimates a single daemon's compaction of t from its last
// observed backlog. s.mu is held.
func (s *Scheduler) jobMemory(t *tableState, k policy.Kind, buckets int) int64 {
	n, in := t.backlog.Buckets, t.backlog.PendingBytes
	if k == policy.FullCompaction {
		in = 0 // a full compaction rewrites more than the pending bytes
	}
	if buckets > 0 && (n == 0 || buckets < n) {
		if n > 0 {
			in = in * int64(buckets) / int64(n)
		}
		n = buckets
	}
	if j := t.jobs[k]; j.MaxBuckets > 0 && (n == 0 || j.MaxBuckets < n) {
		n = j.MaxBuckets
	}
	return compactionMemory(n, s.cfg.BucketParallelism, in)
}

// unitBuckets is how many buckets a fleet unit covers (0: not known).
func unitBuckets(u Unit, tableBuckets, perUnit int) int {
	switch {
	case u.Buckets == nil:
		return tableBuckets
	case u.Buckets.To > 0:
		return u.Buckets.To - u.Buckets.From
	case tableBuckets > u.Buckets.From:
		return tableBuckets - u.Buckets.From
	}
	return perUnit
}

// Admit reserves room on this replica for a fleet unit: a compaction
// unit must fit under max-compactions and memory-budget (estimated from
// this replica's last view of the table, if any); other units always fit.
// release, called once the unit ended, gives the room back.
func (s *Scheduler) Admit(u Unit) (release func(), ok bool) {
	if !isCompaction(u.Kind) {
		return func() {}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var est int64
	if t := s.tables[u.Warehouse+"|"+u.Table]; t != nil {
		est = s.jobMemory(t, u.Kind, unitBuckets(u, t.backlog.Buckets, s.cfg.Coordinator.BucketsPerUnit))
	} else {
		est = compactionMemory(unitBuckets(u, 0, s.cfg.Coordinator.BucketsPerUnit), s.cfg.BucketParallelism, 0)
	}
	if !s.fits(est) {
		return nil, false
	}
	s.reserve(est)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.unreserve(est)
			s.mu.Unlock()
		})
	}, true
}

// UnitLimit is how many units of u's table and kind may run at once in a
// fleet of workers workers: the kind's max-share of them (policy.Job's
// MaxUnits), resolved from this replica's view of the table or, if it has
// none, from the table's options.
func (s *Scheduler) UnitLimit(ctx context.Context, u Unit, workers int) (int, error) {
	s.mu.Lock()
	w := s.warehouses[u.Warehouse]
	t := s.tables[u.Warehouse+"|"+u.Table]
	var j policy.Job
	known := false
	if t != nil && t.jobs != nil {
		j, known = t.jobs[u.Kind]
	}
	cfg, store := s.cfg, s.store
	s.mu.Unlock()
	if !known {
		if w == nil {
			return 0, permanent(fmt.Errorf("unit %s: warehouse %s: %w", u, u.Warehouse, ErrUnknownWarehouse))
		}
		db, name, ok := strings.Cut(u.Table, ".")
		if !ok {
			return 0, permanent(fmt.Errorf("unit %s: table name %q is not db.table", u, u.Table))
		}
		tb, err := w.cat.OpenTable(ctx, db, name)
		if err != nil {
			return 0, fmt.Errorf("open table %s: %w", u.Table, err)
		}
		eff := policy.Resolve(u.Table, tb.Schema().EffectiveOptions(), cfg.Defaults, store.Overrides(u.Table))
		if j, err = eff.Job(u.Kind); err != nil {
			return 0, permanent(fmt.Errorf("policy of %s: %w", u.Table, err))
		}
	}
	return j.MaxUnits(workers), nil
}
