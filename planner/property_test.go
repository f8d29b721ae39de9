package planner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// genBucket makes a random but valid bucket: level-0 files with arbitrary
// key ranges, levels >= 1 with sorted, non-overlapping files.
func genBucket(r *rand.Rand, id int, maxLevel int, seq *int64) Bucket {
	b := Bucket{Partition: fmt.Sprintf("p%d", id%3), Bucket: id}
	key := func(k int) []byte { return fmt.Appendf(nil, "%04d", k) }
	size := func() int64 {
		switch r.IntN(4) {
		case 0:
			return int64(1 + r.IntN(20))
		case 1:
			return int64(50 + r.IntN(100))
		default:
			return int64(1 + r.IntN(2000))
		}
	}
	n := 0
	for lvl := maxLevel; lvl >= 1; lvl-- {
		if r.IntN(2) == 0 {
			continue
		}
		k := r.IntN(50)
		for f := r.IntN(6); f >= 0; f-- {
			lo := k + 1 + r.IntN(20)
			hi := lo + r.IntN(30)
			k = hi
			*seq++
			var dels int64
			if r.IntN(4) == 0 {
				dels = 1
			}
			b.Files = append(b.Files, File{Name: fmt.Sprintf("b%d-f%d", id, n), Level: lvl, Size: size(),
				MinKey: key(lo), MaxKey: key(hi), MinSeq: *seq, MaxSeq: *seq, RowCount: 1, DeleteRowCount: &dels,
				HasDeletionVector: r.IntN(8) == 0})
			n++
		}
	}
	for f := r.IntN(9); f > 0; f-- {
		lo := r.IntN(300)
		*seq++
		zero := int64(0)
		b.Files = append(b.Files, File{Name: fmt.Sprintf("b%d-f%d", id, n), Level: 0, Size: size(),
			MinKey: key(lo), MaxKey: key(lo + r.IntN(100)), MinSeq: *seq, MaxSeq: *seq, RowCount: 1, DeleteRowCount: &zero})
		n++
	}
	return b
}

var propertyOptionSets = []map[string]string{
	{},
	{"num-sorted-run.compaction-trigger": "2", "target-file-size": "100"},
	{"num-sorted-run.compaction-trigger": "3", "deletion-vectors.enabled": "true", "target-file-size": "500"},
	{"changelog-producer": "lookup", "lookup-compact": "gentle", "target-file-size": "300"},
	{"compaction.force-up-level-0": "true", "compaction.size-ratio": "20", "target-file-size": "200"},
	{"compaction.optimization-interval": "1 min", "target-file-size": "100"},
	{"compaction.total-size-threshold": "2kb", "compaction.force-rewrite-all-files": "true"},
	{"compaction.incremental-size-threshold": "500", "num-levels": "3"},
}

func checkPlan(t *testing.T, v View, p PlanResult, inflight []Inflight, opts Options) {
	t.Helper()
	busy := map[BucketID]bool{}
	busyFile := map[string]bool{}
	for _, in := range inflight {
		busy[BucketID{in.Partition, in.Bucket}] = true
		for _, f := range in.Files {
			busyFile[BucketID{in.Partition, in.Bucket}.String()+"/"+f] = true
		}
	}
	unaware := !opts.PrimaryKey && opts.Bucket == -1
	live := map[BucketID]map[string]File{}
	for _, b := range v.Buckets {
		m := map[string]File{}
		for _, f := range b.Files {
			m[f.Name] = f
		}
		live[b.ID()] = m
	}
	used := map[string]bool{}
	for _, j := range p.Jobs {
		if busy[j.ID()] && !unaware {
			t.Fatalf("job on busy bucket %s", j.ID())
		}
		inputs := map[string]bool{}
		maxIn := 0
		for _, f := range j.Inputs {
			if _, ok := live[j.ID()][f.Name]; !ok {
				t.Fatalf("%s: input %s is not live", j.ID(), f.Name)
			}
			k := j.ID().String() + "/" + f.Name
			if busyFile[k] {
				t.Fatalf("file %s of a running job planned again", k)
			}
			if used[k] {
				t.Fatalf("file %s in two jobs", k)
			}
			used[k] = true
			inputs[f.Name] = true
			maxIn = max(maxIn, f.Level)
		}
		touched := map[string]bool{}
		for _, f := range append(j.Upgrades(), j.Rewritten()...) {
			if !inputs[f.Name] || touched[f.Name] {
				t.Fatalf("%s: step file %s not an input or used twice", j.ID(), f.Name)
			}
			touched[f.Name] = true
		}
		if !opts.PrimaryKey {
			continue
		}
		if j.OutputLevel < 1 || j.OutputLevel < maxIn {
			t.Fatalf("%s: output level %d with inputs up to level %d", j.ID(), j.OutputLevel, maxIn)
		}
		for _, f := range j.Inputs {
			if !touched[f.Name] && f.Level != j.OutputLevel {
				t.Fatalf("%s: input %s at L%d neither moved nor rewritten (output L%d)", j.ID(), f.Name, f.Level, j.OutputLevel)
			}
		}
		// A unit is a prefix of the run list.
		lv, err := BuildLevels(v.Buckets[slices.IndexFunc(v.Buckets, func(b Bucket) bool { return b.ID() == j.ID() })].Files, opts.NumLevels, v.cmp())
		if err != nil {
			t.Fatal(err)
		}
		if !j.FileRewrite {
			prefix := runFiles(lv.Runs)[:len(j.Inputs)]
			for i := range prefix {
				if prefix[i].Name != j.Inputs[i].Name {
					t.Fatalf("%s: inputs are not a prefix of the runs", j.ID())
				}
			}
		}
	}
}

func checkView(t *testing.T, v View, opts Options, sizes map[BucketID]int64) {
	t.Helper()
	for _, b := range v.Buckets {
		names := map[string]bool{}
		var total int64
		for _, f := range b.Files {
			if names[f.Name] {
				t.Fatalf("%s: duplicate file %s", b.ID(), f.Name)
			}
			names[f.Name] = true
			total += f.Size
		}
		if total != sizes[b.ID()] {
			t.Fatalf("%s: size %d, want %d", b.ID(), total, sizes[b.ID()])
		}
		if opts.PrimaryKey {
			if _, err := BuildLevels(b.Files, opts.NumLevels, v.cmp()); err != nil {
				t.Fatalf("%s: %v", b.ID(), err)
			}
		}
	}
}

// TestPropertyPlanApply runs random sequences of plan -> (partly run) ->
// apply and checks that no file is in two jobs, running jobs are never
// overlapped, units are run-list prefixes, and levels >= 1 stay sorted and
// non-overlapping.
func TestPropertyPlanApply(t *testing.T) {
	var jobs, upgrades, fileRewrites int
	defer func() {
		t.Logf("%d jobs, %d upgrades, %d file-rewrite jobs", jobs, upgrades, fileRewrites)
		if jobs < 500 || upgrades < 50 || fileRewrites < 5 {
			t.Errorf("random runs exercised too little: %d jobs, %d upgrades, %d file rewrites", jobs, upgrades, fileRewrites)
		}
	}()
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 99))
		m := propertyOptionSets[int(seed)%len(propertyOptionSets)]
		pk := seed%5 != 4
		if !pk {
			m = map[string]string{"bucket": []string{"2", "-1"}[r.IntN(2)], "target-file-size": "300", "compaction.min.file-num": "3"}
		}
		opts, err := ParseOptions(m, pk)
		if err != nil {
			t.Fatal(err)
		}
		opts.Behavior = []Behavior{Behavior20, BehaviorHead, Behavior14, Behavior13}[r.IntN(4)]
		var seq int64
		var v View
		sizes := map[BucketID]int64{}
		for id := range 1 + r.IntN(4) {
			b := genBucket(r, id, opts.NumLevels-1, &seq)
			v.Buckets = append(v.Buckets, b)
			for _, f := range b.Files {
				sizes[b.ID()] += f.Size
			}
		}
		now := time.Unix(1_000_000, 0)
		var running []Job
		for step := range 25 {
			now = now.Add(time.Duration(r.IntN(120)) * time.Second)
			if r.IntN(6) == 0 {
				opts.Strategy = StrategyFull
			} else {
				opts.Strategy = StrategyMinor
			}
			inflight := make([]Inflight, len(running))
			for i, j := range running {
				inflight[i] = Inflight{Partition: j.Partition, Bucket: j.Bucket}
				for _, f := range j.Inputs {
					inflight[i].Files = append(inflight[i].Files, f.Name)
				}
			}
			p := Plan(v, inflight, opts, now)
			if len(p.Errors) > 0 {
				t.Fatalf("seed %d step %d: %v", seed, step, p.Errors[0])
			}
			checkPlan(t, v, p, inflight, opts)
			jobs += len(p.Jobs)
			for _, j := range p.Jobs {
				upgrades += len(j.Upgrades())
				if j.FileRewrite {
					fileRewrites++
				}
			}
			// Finish the running jobs, then start some of the new ones and
			// apply the rest at once.
			done := PlanResult{Now: now, Jobs: running}
			running = nil
			for _, j := range p.Jobs {
				if r.IntN(3) == 0 {
					running = append(running, j)
				} else {
					done.Jobs = append(done.Jobs, j)
				}
			}
			done.States = p.States
			v, err = Apply(v, done, opts)
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			checkView(t, v, opts, sizes)
		}
		if pk {
			opts.Strategy = StrategyMinor
			if s := Backlog(v, opts, now); !s.Converged {
				t.Fatalf("seed %d: backlog did not converge: %+v", seed, s)
			}
		}
	}
}
