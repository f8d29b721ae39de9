package planner

import (
	"bytes"
	"fmt"
	"github.com/compactd/compactd/table"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// summary renders a plan as one line per job: "<bucket> L<out> <inputs>
// [upgrade:<names>] [rewrite:<names>]", or "none".
func summary(p PlanResult) string {
	if len(p.Errors) > 0 {
		return "error: " + p.Errors[0].Error()
	}
	if len(p.Jobs) == 0 {
		return "none"
	}
	var lines []string
	for _, j := range p.Jobs {
		s := j.ID().String() + " L" + strconv.Itoa(j.OutputLevel) + " " + runNames(j.Inputs)
		if up := j.Upgrades(); len(up) > 0 {
			s += " upgrade:" + runNames(up)
		}
		if rw := j.Rewritten(); len(rw) > 0 {
			// Runs inside a section come in heap order, which means nothing.
			names := strings.Split(runNames(rw), ",")
			slices.Sort(names)
			s += " rewrite:" + strings.Join(names, ",")
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

func TestRules(t *testing.T) {
	type tc struct {
		name     string
		pk       bool
		options  map[string]string
		define   string
		inflight []Inflight
		want     string
	}
	pk := func(name string, opts map[string]string, define, want string) tc {
		return tc{name: name, pk: true, options: opts, define: define, want: want}
	}
	cases := []tc{
		pk("A bucket with fewer runs than the trigger is left alone",
			nil, `L0: a:a-b@2 size=10
			      L5: z:a-z@1 size=1000`, "none"),
		pk("Newer runs adding up to more than twice the oldest run are fully compacted to the max level",
			map[string]string{"num-sorted-run.compaction-trigger": "3"},
			`L0: c:a-b@3 size=11 b:a-b@2 size=10
			 L3: z:a-z@1 size=10`, "bucket-0 L3 c,b,z rewrite:b,c,z"),
		pk("Runs of similar size are merged and land just above the next larger run",
			map[string]string{"num-sorted-run.compaction-trigger": "3"},
			`L0: c:a-b@3 size=10 b:a-b@2 size=10
			 L3: y:a-z@1 size=1000
			 L5: z:a-z@0 size=100000`, "bucket-0 L2 c,b rewrite:b,c"),
		pk("A unit never outputs to level 0 and extends to the next run above level 0",
			map[string]string{"num-sorted-run.compaction-trigger": "3"},
			`L0: d:a-b@4 size=10 c:a-b@3 size=10 b:a-b@2 size=100
			 L2: y:a-z@1 size=1000
			 L5: z:a-z@0 size=100000`, "bucket-0 L2 d,c,b,y rewrite:b,c,d,y"),
		pk("More runs than the trigger compact at least runs minus trigger plus one runs",
			map[string]string{"num-sorted-run.compaction-trigger": "2"},
			`L0: d:a-b@4 size=1 c:a-b@3 size=10 b:a-b@2 size=100
			 L5: z:a-z@0 size=100000`, "bucket-0 L4 d,c,b rewrite:b,c,d"),
		pk("A lone file that a pick leaves at its own level is not a job",
			map[string]string{"compaction.force-up-level-0": "true"},
			`L3: y:a-b@1 size=10`, "none"),
		pk("Large files that overlap nothing keep their names and are only moved up",
			map[string]string{"num-sorted-run.compaction-trigger": "2", "target-file-size": "100"},
			`L0: n:m-n@9 size=180
			 L1: a:a-b@1 size=90 b:c-d@2 size=90`, "bucket-0 L2 n,a,b upgrade:a,b,n"),
		pk("A first-row table rewrites a large level-0 file it moves below the top level, so keys higher levels hold are dropped",
			map[string]string{"num-sorted-run.compaction-trigger": "2", "num-levels": "6", "target-file-size": "100", "merge-engine": "first-row"},
			`L0: n:m-n@9 size=180
			 L1: a:a-b@1 size=90 b:c-d@2 size=90
			 L5: z:a-z@0 size=100000`, "bucket-0 L4 n,a,b upgrade:a,b rewrite:n"),
		pk("A first-row table moves a large level-0 file to the top level without rewriting it",
			map[string]string{"strategy": "full", "target-file-size": "100", "merge-engine": "first-row"},
			`L0: n:x-y@9 size=90
			 L1: a:a-b@1 size=90 b:c-d@2 size=10 c:e-f@3 size=90`, "bucket-0 L5 n,a,b,c upgrade:a,b,c,n"),
		pk("force-lookup with a sequence field rewrites a level-0 file it moves below the top level",
			map[string]string{"num-sorted-run.compaction-trigger": "2", "num-levels": "6", "target-file-size": "100", "force-lookup": "true", "sequence.field": "s"},
			`L0: n:m-n@9 size=180
			 L1: a:a-b@1 size=90 b:c-d@2 size=90
			 L5: z:a-z@0 size=100000`, "bucket-0 L4 n,a,b upgrade:a,b rewrite:n"),
		pk("force-lookup deduplicate without a sequence field only moves large level-0 files up",
			map[string]string{"num-sorted-run.compaction-trigger": "2", "num-levels": "6", "target-file-size": "100", "force-lookup": "true"},
			`L0: n:m-n@9 size=180
			 L1: a:a-b@1 size=90 b:c-d@2 size=90
			 L5: z:a-z@0 size=100000`, "bucket-0 L4 n,a,b upgrade:a,b,n"),
		pk("Two adjacent small files are merged together",
			map[string]string{"num-sorted-run.compaction-trigger": "2", "target-file-size": "100"},
			`L0: n:m-n@9 size=110
			 L1: a:a-b@1 size=90 b:c-d@2 size=10 c:e-f@3 size=10`, "bucket-0 L2 n,a,b,c upgrade:a,n rewrite:b,c"),
		pk("A small file between two large ones is upgraded, not rewritten",
			map[string]string{"strategy": "full", "target-file-size": "100"},
			`L0: n:x-y@9 size=90
			 L1: a:a-b@1 size=90 b:c-d@2 size=10 c:e-f@3 size=90`, "bucket-0 L5 n,a,b,c upgrade:a,b,c,n"),
		pk("Asking for a full compaction of an already compacted bucket does nothing",
			map[string]string{"strategy": "full"},
			`L5: a:a-b@1 size=10 b:c-d@2 size=10`, "none"),
		pk("Overlapping files inside one level are reported and not compacted",
			map[string]string{"strategy": "full"},
			`L2: a:a-c@1 size=10 b:b-d@2 size=10`, "error: bucket-0: level 2: key ranges of a and b overlap"),
		{name: "A bucket with a running job is skipped", pk: true,
			options:  map[string]string{"num-sorted-run.compaction-trigger": "2"},
			define:   `L0: b:a-b@2 size=10 a:a-b@1 size=10`,
			inflight: []Inflight{{Bucket: 0, Files: []string{"x"}}}, want: "none"},
		{name: "Five small append files are compacted oldest first",
			options: map[string]string{"bucket": "1"},
			define:  `L0: e:a-a@5 size=1 d:a-a@4 size=1 c:a-a@3 size=1 b:a-a@2 size=1 a:a-a@1 size=1 f:a-a@6 size=1`,
			want:    "bucket-0 L0 a,b,c,d,e rewrite:a,b,c,d,e"},
		{name: "Four small append files wait for a fifth",
			options: map[string]string{"bucket": "1"},
			define:  `L0: d:a-a@4 size=1 c:a-a@3 size=1 b:a-a@2 size=1 a:a-a@1 size=1`,
			want:    "none"},
		{name: "Bucket-unaware small files are packed smallest first and large files are left out",
			options: map[string]string{"bucket": "-1", "target-file-size": "100", "source.split.open-file-cost": "0", "compaction.min.file-num": "2"},
			define:  `L0: a:a-a@1 size=60 b:a-a@2 size=50 c:a-a@3 size=95 d:a-a@4 size=69`,
			want:    "bucket-0 L0 b,a,d rewrite:a,b,d"},
		{name: "Bucket-unaware planning leaves out files of running jobs",
			options:  map[string]string{"bucket": "-1", "target-file-size": "100", "source.split.open-file-cost": "0", "compaction.min.file-num": "2"},
			define:   `L0: a:a-a@1 size=60 b:a-a@2 size=50 c:a-a@3 size=95 d:a-a@4 size=69`,
			inflight: []Inflight{{Bucket: 0, Files: []string{"a"}}},
			want:     "bucket-0 L0 b,d rewrite:b,d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := map[string]string{}
			strategy := StrategyMinor
			for k, v := range c.options {
				if k == "strategy" {
					strategy = StrategyFull
					continue
				}
				m[k] = v
			}
			opts, err := ParseOptions(m, c.pk)
			if err != nil {
				t.Fatal(err)
			}
			opts.Strategy = strategy
			view, err := parseView(c.define)
			if err != nil {
				t.Fatal(err)
			}
			got := summary(Plan(view, c.inflight, opts, time.Unix(0, 0)))
			if got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestParseOptions(t *testing.T) {
	t.Run("Defaults follow Paimon: trigger 5, six levels, 128 MiB primary-key target", func(t *testing.T) {
		o, err := ParseOptions(nil, true)
		if err != nil {
			t.Fatal(err)
		}
		if o.NumSortedRunCompactionTrigger != 5 || o.NumLevels != 6 || o.TargetFileSize != 128<<20 ||
			o.MaxSizeAmplificationPercent != 200 || o.SizeRatio != 1 || o.MinFileNum != 5 ||
			o.CompactionFileSize() != 93952409 || o.LookupCompactMaxInterval != 10 || o.Bucket != -1 {
			t.Errorf("unexpected defaults %+v", o)
		}
	})
	t.Run("Append tables default to a 256 MiB target", func(t *testing.T) {
		o, _ := ParseOptions(nil, false)
		if o.TargetFileSize != 256<<20 {
			t.Errorf("target %d", o.TargetFileSize)
		}
	})
	t.Run("num-levels follows the trigger unless set", func(t *testing.T) {
		o, _ := ParseOptions(map[string]string{"num-sorted-run.compaction-trigger": "8"}, true)
		if o.NumLevels != 9 || o.LookupCompactMaxInterval != 16 {
			t.Errorf("levels %d max interval %d", o.NumLevels, o.LookupCompactMaxInterval)
		}
		o, _ = ParseOptions(map[string]string{"num-sorted-run.compaction-trigger": "8", "num-levels": "3", "lookup-compact.max-interval": "2"}, true)
		if o.NumLevels != 3 || o.LookupCompactMaxInterval != 8 {
			t.Errorf("levels %d max interval %d", o.NumLevels, o.LookupCompactMaxInterval)
		}
	})
	t.Run("Memory sizes and durations use Paimon's units", func(t *testing.T) {
		o, err := ParseOptions(map[string]string{
			"target-file-size":                      "64 mb",
			"compaction.total-size-threshold":       "2g",
			"compaction.optimization-interval":      "30 min",
			"compaction.incremental-size-threshold": "100",
		}, true)
		if err != nil {
			t.Fatal(err)
		}
		if o.TargetFileSize != 64<<20 || *o.TotalSizeThreshold != 2<<30 || *o.OptimizationInterval != 30*time.Minute || *o.IncrementalSizeThreshold != 100 {
			t.Errorf("%+v", o)
		}
		if d, err := table.ParseDuration("1500"); err != nil || d != 1500*time.Millisecond {
			t.Errorf("bare duration: %v %v", d, err)
		}
		if d, err := table.ParseDuration("2 days"); err != nil || d != 48*time.Hour {
			t.Errorf("days: %v %v", d, err)
		}
	})
	t.Run("Every malformed option is reported at once", func(t *testing.T) {
		_, err := ParseOptions(map[string]string{
			"num-sorted-run.compaction-trigger": "x",
			"target-file-size":                  "12 parsecs",
			"lookup-compact":                    "lazy",
			"compaction.force-up-level-0":       "yes",
		}, true)
		if err == nil {
			t.Fatal("no error")
		}
		for _, key := range []string{"num-sorted-run.compaction-trigger", "target-file-size", "lookup-compact", "compaction.force-up-level-0"} {
			if !strings.Contains(err.Error(), key) {
				t.Errorf("error does not name %s: %v", key, err)
			}
		}
	})
	t.Run("changelog-producer=full-compaction implies one delta commit", func(t *testing.T) {
		o, _ := ParseOptions(map[string]string{"changelog-producer": "full-compaction"}, true)
		if o.FullCompactionDeltaCommits != 1 {
			t.Errorf("delta commits %d", o.FullCompactionDeltaCommits)
		}
		o, _ = ParseOptions(map[string]string{"changelog-producer": "full-compaction", "full-compaction.delta-commits": "4"}, true)
		if o.FullCompactionDeltaCommits != 4 {
			t.Errorf("delta commits %d", o.FullCompactionDeltaCommits)
		}
	})
	t.Run("Lookup-style tables are recognised from any of their four options", func(t *testing.T) {
		for _, kv := range [][2]string{{"changelog-producer", "lookup"}, {"deletion-vectors.enabled", "true"}, {"merge-engine", "first-row"}, {"force-lookup", "true"}} {
			o, _ := ParseOptions(map[string]string{kv[0]: kv[1]}, true)
			if !o.NeedLookup() {
				t.Errorf("%s=%s: not lookup", kv[0], kv[1])
			}
		}
		o, _ := ParseOptions(map[string]string{"changelog-producer": "input"}, true)
		if o.NeedLookup() {
			t.Error("input changelog counted as lookup")
		}
	})
}

func TestApplyRefusesInconsistentPlans(t *testing.T) {
	opts := DefaultOptions(true)
	view, err := parseView(`L0: b:a-b@2 size=10 a:a-b@1 size=10`)
	if err != nil {
		t.Fatal(err)
	}
	ghost := File{Name: "ghost", Level: 0, MinKey: []byte("a"), MaxKey: []byte("b")}
	bad := PlanResult{Jobs: []Job{{OutputLevel: 5, Inputs: []File{ghost}, Steps: []Step{{Kind: StepUpgrade, File: ghost}}}}}
	if _, err := Apply(view, bad, opts); err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Errorf("Apply of a job on a missing file: err = %v", err)
	}
	a := view.Buckets[0].Files[1]
	twice := PlanResult{Jobs: []Job{
		{OutputLevel: 5, Steps: []Step{{Kind: StepUpgrade, File: a}}},
		{OutputLevel: 4, Steps: []Step{{Kind: StepUpgrade, File: a}}},
	}}
	if _, err := Apply(view, twice, opts); err == nil {
		t.Error("Apply accepted one file in two jobs")
	}
	other := PlanResult{Jobs: []Job{{Bucket: 7}}}
	if _, err := Apply(view, other, opts); err == nil {
		t.Error("Apply accepted a job on an unknown bucket")
	}
	if len(view.Buckets[0].Files) != 2 || view.Buckets[0].Files[0].Name != "b" {
		t.Error("Apply modified its input view")
	}
}

func TestPlanDoesNotDependOnBucketOrder(t *testing.T) {
	opts, _ := ParseOptions(map[string]string{"num-sorted-run.compaction-trigger": "2"}, true)
	view, err := parseView(`
		bucket q/1
		L0: d:a-b@4 size=10 c:a-b@3 size=10
		bucket p/3
		L0: b:a-b@2 size=10 a:a-b@1 size=10
		bucket p/0
		L0: f:a-b@2 size=10 e:a-b@1 size=10`)
	if err != nil {
		t.Fatal(err)
	}
	want := summary(Plan(view, nil, opts, time.Unix(0, 0)))
	slices.Reverse(view.Buckets)
	if got := summary(Plan(view, nil, opts, time.Unix(0, 0))); got != want {
		t.Errorf("reversed buckets:\n%s\nwant:\n%s", got, want)
	}
	if !strings.HasPrefix(want, "p/bucket-0") {
		t.Errorf("jobs not ordered by partition and bucket:\n%s", want)
	}
}

// A postponed table's real buckets are planned as fixed buckets; its
// bucket-postpone (unsorted rows, moved by compact first) never is, and
// counts no sorted runs in the backlog.
func TestPostponedTablesPlanRealBucketsOnly(t *testing.T) {
	var files []File
	for i := range 6 {
		files = append(files, File{Name: fmt.Sprintf("l0-%d", i), Level: 0, Size: 100, MinSeq: int64(i), MaxSeq: int64(i), MinKey: []byte{0}, MaxKey: []byte{9}})
	}
	view := View{Buckets: []Bucket{{Bucket: -2, Files: files}, {Bucket: 0, Files: files}},
		CompareKeys: func(a, b []byte) int { return bytes.Compare(a, b) }}
	opts := DefaultOptions(true)
	opts.Bucket = -2
	p := Plan(view, nil, opts, time.Unix(0, 0))
	if len(p.Jobs) != 1 || p.Jobs[0].Bucket != 0 {
		t.Fatalf("jobs %+v, want one job for bucket 0", p.Jobs)
	}
	if got := Backlog(view, opts, time.Unix(0, 0)).RunsOverTrigger; got != 6-opts.NumSortedRunCompactionTrigger {
		t.Fatalf("runs over trigger %d, want bucket 0's only", got)
	}
}
