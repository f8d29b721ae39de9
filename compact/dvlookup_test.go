package compact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/planner"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// The lookup compaction of deletion-vector tables, tested through the
// executor (compact.Supported still refuses these tables until the
// deletion-vector maintainer writes index files).

func newLookupTable(t *testing.T, options map[string]string) *table.Table {
	t.Helper()
	fields := table.RowType{
		{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true}},
		{ID: 2, Name: "n", Type: table.DataType{Root: table.TypeInt, Nullable: true}},
	}
	opts := map[string]string{"bucket": "1", "deletion-vectors.enabled": "true"}
	for k, v := range options {
		opts[k] = v
	}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, opts, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(context.Background(), fileio.NewLocal(), t.TempDir(), "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// lkv is a record of key k with value v and n.
func lkv(kind string, seq, k int64, v any, n any) table.KeyValue {
	rk, err := table.ParseRowKind(kind)
	if err != nil {
		panic(err)
	}
	return table.KeyValue{Key: table.Row{k}, Seq: seq, Kind: rk, Value: table.Row{k, v, n}}
}

// addFile writes recs (key order) as one data file at level and commits it.
func addFile(t *testing.T, tb *table.Table, level int32, recs []table.KeyValue) string {
	t.Helper()
	ctx := context.Background()
	part := table.EmptyBinaryRow()
	r := write.NewRoller(ctx, tb, part, 0, level, manifest.FileSourceCompact)
	for _, kv := range recs {
		if err := r.Write(kv); err != nil {
			t.Fatal(err)
		}
	}
	metas, err := r.Close()
	if err != nil || len(metas) != 1 {
		t.Fatalf("write file: %d files, %v", len(metas), err)
	}
	if _, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "test", CommitIdentifier: table.BatchCommitIdentifier,
		Entries: []manifest.Entry{{Kind: manifest.FileKindAdd, Partition: part, Bucket: 0, TotalBuckets: 1, File: metas[0]}}}); err != nil {
		t.Fatal(err)
	}
	return metas[0].FileName
}

// withDVs writes a deletion-vector index file for the bucket holding the
// given deleted positions per data file and puts it into the view's
// bucket (as a snapshot's index manifest would).
func withDVs(t *testing.T, tb *table.Table, v *TableView, deleted map[string][]int64) {
	t.Helper()
	vectors := map[string]*datafile.DeletionVector{}
	for f, ps := range deleted {
		dv := &datafile.DeletionVector{}
		for _, p := range ps {
			dv.Delete(p)
		}
		vectors[f] = dv
	}
	data, ranges := datafile.EncodeDeletionVectorsIndexFile(vectors)
	idx := manifest.IndexFileMeta{IndexType: manifest.IndexTypeDeletionVectors, FileName: "index-test-0", FileSize: int64(len(data)), RowCount: int64(len(ranges))}
	for _, r := range ranges {
		c := r.Cardinality
		idx.DeletionVectors = append(idx.DeletionVectors, manifest.DeletionVectorMeta{DataFileName: r.DataFile, Offset: r.Offset, Length: r.Length, Cardinality: &c})
	}
	b := v.buckets[planner.BucketID{Partition: string(table.EmptyBinaryRow()), Bucket: 0}]
	path, err := tb.Paths().IndexFileOf(b.Partition, b.Bucket, &idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(context.Background(), tb.FileIO(), path, data); err != nil {
		t.Fatal(err)
	}
	b.IndexFiles = append(b.IndexFiles, idx)
}

// sink records NotifyNewDeletion calls.
type sink struct{ got []string }

func (s *sink) NotifyNewDeletion(file string, pos int64) error {
	s.got = append(s.got, fmt.Sprintf("%s@%d", file, pos))
	return nil
}

func loadView(t *testing.T, tb *table.Table) *TableView {
	t.Helper()
	tb, err := table.OpenPath(context.Background(), fileio.NewLocal(), tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadView(context.Background(), tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func jobFile(name string, level int) planner.File { return planner.File{Name: name, Level: level} }

// readOutputs reads the records of the files a job added.
func readOutputs(t *testing.T, tb *table.Table, res *JobResult) []string {
	t.Helper()
	ctx := context.Background()
	s := tb.Schema()
	read := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
	var out []string
	for i := range res.Entries {
		e := &res.Entries[i]
		if e.Kind != manifest.FileKindAdd || !slices.Contains(res.Written, mustPath(t, tb, e)) {
			continue
		}
		r, err := datafile.OpenKeyValue(ctx, tb.FileIO(), mustPath(t, tb, e), read, read)
		if err != nil {
			t.Fatal(err)
		}
		kvs, err := merge.Collect(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range kvs {
			out = append(out, fmt.Sprintf("%s%d%v", kv.Kind.ShortString(), kv.Seq, []any(kv.Value)))
		}
	}
	return out
}

func mustPath(t *testing.T, tb *table.Table, e *manifest.Entry) string {
	t.Helper()
	p, err := tb.DataFilePath(e)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func runJob(t *testing.T, tb *table.Table, v *TableView, job planner.Job, rowPath bool, dvs *sink) (*JobResult, error) {
	t.Helper()
	x, err := newExecutor(context.Background(), tb, v, Options{RowPath: rowPath}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if dvs == nil {
		return x.runBucket(context.Background(), job, nil, nil)
	}
	return x.runBucket(context.Background(), job, dvs, nil)
}

func TestDeletionVectorLookupCompaction(t *testing.T) {
	type fixture struct {
		f3, f5, l0a, l0b, f1 string
	}
	// level 5: keys 5..14 (seq 1..10); level 3: keys 0..9 (seq 20..29);
	// level 1 (an input): keys 30, 31; level 0: two files.
	setup := func(t *testing.T, options map[string]string) (*table.Table, fixture) {
		tb := newLookupTable(t, options)
		var fx fixture
		var l5, l3 []table.KeyValue
		for k := int64(5); k < 15; k++ {
			l5 = append(l5, lkv("+I", k-4, k, fmt.Sprintf("l5-%d", k), nil))
		}
		for k := int64(0); k < 10; k++ {
			l3 = append(l3, lkv("+I", 20+k, k, fmt.Sprintf("l3-%d", k), int32(k)))
		}
		fx.f5 = addFile(t, tb, 5, l5)
		fx.f3 = addFile(t, tb, 3, l3)
		fx.f1 = addFile(t, tb, 1, []table.KeyValue{lkv("+I", 40, 30, "l1-30", nil), lkv("+I", 41, 31, "l1-31", nil)})
		fx.l0a = addFile(t, tb, 0, []table.KeyValue{lkv("+I", 100, 2, "a2", nil), lkv("+I", 101, 5, "a5", nil), lkv("+I", 102, 12, "a12", nil), lkv("+I", 103, 20, "a20", nil), lkv("+I", 104, 32, "a32", nil)})
		fx.l0b = addFile(t, tb, 0, []table.KeyValue{lkv("+I", 200, 5, nil, int32(55)), lkv("-D", 201, 7, nil, nil)})
		return tb, fx
	}
	cases := []struct {
		name    string
		options map[string]string
		job     func(fx fixture) planner.Job
		want    string
		wantDel func(fx fixture) []string
		rewrote func(fx fixture) []string
	}{
		{
			name: "deduplicate: level-0 keys mark the rows above they supersede; rows existing DVs delete are invisible",
			job: func(fx fixture) planner.Job {
				return planner.Job{OutputLevel: 1, DropDelete: true, Steps: []planner.Step{{Kind: planner.StepRewrite,
					Sections: []planner.Section{{{jobFile(fx.l0a, 0)}, {jobFile(fx.l0b, 0)}}}}}}
			},
			// key 2: its level-3 row is deleted by an existing DV and level 5
			// does not hold it; key 7's -D is dropped but still marks its row.
			want: "+I100[2 a2 <nil>] +I200[5 <nil> 55] +I102[12 a12 <nil>] +I103[20 a20 <nil>] +I104[32 a32 <nil>]",
			wantDel: func(fx fixture) []string {
				return []string{fx.f3 + "@5", fx.f3 + "@7", fx.f5 + "@7"}
			},
			rewrote: func(fx fixture) []string { return []string{fx.l0a, fx.l0b} },
		},
		{
			name: "an input above level 0 is high: its keys are not looked up, and its existing DV is applied",
			job: func(fx fixture) planner.Job {
				return planner.Job{OutputLevel: 1, DropDelete: true, Steps: []planner.Step{{Kind: planner.StepRewrite,
					Sections: []planner.Section{{{jobFile(fx.l0a, 0)}, {jobFile(fx.f1, 1)}}}}}}
			},
			want: "+I100[2 a2 <nil>] +I101[5 a5 <nil>] +I102[12 a12 <nil>] +I103[20 a20 <nil>] +I41[31 l1-31 <nil>] +I104[32 a32 <nil>]",
			wantDel: func(fx fixture) []string {
				return []string{fx.f3 + "@5", fx.f5 + "@7"}
			},
			rewrote: func(fx fixture) []string { return []string{fx.l0a, fx.f1} },
		},
		{
			name:    "partial-update merges the looked-up values into the output",
			options: map[string]string{"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
			job: func(fx fixture) planner.Job {
				return planner.Job{OutputLevel: 1, DropDelete: true, Steps: []planner.Step{{Kind: planner.StepRewrite,
					Sections: []planner.Section{{{jobFile(fx.l0a, 0)}, {jobFile(fx.l0b, 0)}}}}}}
			},
			// key 5: l3 (l3-5, 5) < a5 < (null, 55); key 7: l3 row then -D;
			// key 12: l5-12 < a12.
			want: "+I100[2 a2 <nil>] +I200[5 a5 55] +I102[12 a12 <nil>] +I103[20 a20 <nil>] +I104[32 a32 <nil>]",
			wantDel: func(fx fixture) []string {
				return []string{fx.f3 + "@5", fx.f3 + "@7", fx.f5 + "@7"}
			},
			rewrote: func(fx fixture) []string { return []string{fx.l0a, fx.l0b} },
		},
		{
			name: "an upgraded level-0 file is read through the lookup (Java's CHANGELOG_NO_REWRITE) and only relabelled",
			job: func(fx fixture) planner.Job {
				return planner.Job{OutputLevel: 2, DropDelete: true, Steps: []planner.Step{{Kind: planner.StepUpgrade, File: jobFile(fx.l0a, 0)}}}
			},
			want: "",
			wantDel: func(fx fixture) []string {
				return []string{fx.f3 + "@5", fx.f5 + "@7"}
			},
		},
	}
	for _, c := range cases {
		for _, rowPath := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/row path %v", c.name, rowPath), func(t *testing.T) {
				tb, fx := setup(t, c.options)
				v := loadView(t, tb)
				withDVs(t, tb, v, map[string][]int64{fx.f3: {2}, fx.f1: {0}})
				job := c.job(fx)
				job.Partition, job.Bucket = string(table.EmptyBinaryRow()), 0
				dvs := &sink{}
				res, err := runJob(t, tb, v, job, rowPath, dvs)
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(readOutputs(t, tb, res), " "); got != c.want {
					t.Errorf("output\n %s\nwant\n %s", got, c.want)
				}
				if want := c.wantDel(fx); !slices.Equal(dvs.got, want) {
					t.Errorf("deletions %v, want %v", dvs.got, want)
				}
				var rewrote []string
				if c.rewrote != nil {
					rewrote = c.rewrote(fx)
				}
				if !slices.Equal(res.Rewritten(), rewrote) {
					t.Errorf("rewritten %v, want %v", res.Rewritten(), rewrote)
				}
				if job.Steps[0].Kind == planner.StepUpgrade {
					if len(res.Written) != 0 || len(res.Entries) != 2 || res.Entries[1].File.FileName != fx.l0a || res.Entries[1].File.Level != 2 {
						t.Errorf("upgrade wrote %v, entries %+v", res.Written, res.Entries)
					}
				}
			})
		}
	}
}

func TestDeletionVectorJobsNeedTheirMaintainer(t *testing.T) {
	job := planner.Job{Partition: string(table.EmptyBinaryRow()), OutputLevel: 1}
	dv := newLookupTable(t, nil)
	addFile(t, dv, 0, []table.KeyValue{lkv("+I", 1, 1, "a", nil)})
	if _, err := runJob(t, dv, loadView(t, dv), job, false, nil); err == nil || !strings.Contains(err.Error(), "deletion-vector maintainer") {
		t.Errorf("a deletion-vector job without a maintainer: %v", err)
	}
	plain := newLookupTable(t, map[string]string{"deletion-vectors.enabled": "false"})
	addFile(t, plain, 0, []table.KeyValue{lkv("+I", 1, 1, "a", nil)})
	if _, err := runJob(t, plain, loadView(t, plain), job, false, &sink{}); err == nil || !strings.Contains(err.Error(), "no deletion vectors") {
		t.Errorf("a maintainer for a table without deletion vectors: %v", err)
	}
}

// TestDeletionVectorCompactionLeavesOneLiveRowPerKey plans random
// deletion-vector buckets (levels above 0 with existing deletion vectors,
// level-0 files on top, sequence numbers newer at lower levels) as the
// planner does, runs the jobs, applies the reported deletions and checks
// what Java's batch read of a deletion-vector table relies on: above level
// 0 every key has at most one live row, it is the newest record of the key,
// and no key is lost.
func TestDeletionVectorCompactionLeavesOneLiveRowPerKey(t *testing.T) {
	upgrades, deletions := 0, 0
	defer func() {
		if !t.Failed() && (upgrades == 0 || deletions == 0) {
			t.Errorf("%d upgrades of level-0 files, %d deletions: the rounds test too little", upgrades, deletions)
		}
	}()
	for round := range 12 {
		for _, rowPath := range []bool{false, true} {
			t.Run(fmt.Sprintf("round %d/row path %v", round, rowPath), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(2026, uint64(round)))
				ctx := context.Background()
				options := map[string]string{"num-sorted-run.compaction-trigger": "3",
					"compaction.max-size-amplification-percent": "100000"}
				// Odd rounds: level-0 files of disjoint keys, all large, so
				// that the planner upgrades those that overlap nothing.
				disjoint := round%2 == 1
				if disjoint {
					options["target-file-size"] = "1kb"
				}
				tb := newLookupTable(t, options)
				// A valid deletion-vector bucket: above level 0 a key has at most
				// one live row (a newer row at a lower level deleted the older
				// one's), and a live row may itself be deleted (the key was).
				newest := map[int64]string{} // key -> v of its newest record not deleted
				deleted := map[string][]int64{}
				type at struct {
					file string
					pos  int64
				}
				liveAbove := map[int64]at{}
				seq := int64(0)
				// Levels 5 down to 1, then level-0 files: newer below.
				for level := int32(5); level >= 0; level-- {
					files := 1
					if level == 0 {
						files = 2 + rng.IntN(4)
					} else if rng.IntN(3) == 0 {
						continue
					}
					for f := 0; f < files; f++ {
						var recs []table.KeyValue
						for k := int64(0); k < 60; k++ {
							if rng.IntN(3) != 0 || (disjoint && level == 0 && k/12 != int64(f)) {
								continue
							}
							seq++
							// Higher levels are much larger, so that the size-ratio
							// pick stops below the top and lookups happen.
							pad := make([]byte, 10<<(2*level))
							for i := range pad {
								pad[i] = "0123456789abcdef"[rng.IntN(16)]
							}
							recs = append(recs, lkv("+I", seq, k, fmt.Sprintf("L%d-%d-s%d|%s", level, f, seq, pad), nil))
						}
						if len(recs) == 0 {
							continue
						}
						name := addFile(t, tb, level, recs)
						for p, r := range recs {
							k := r.Key[0].(int64)
							newest[k], _, _ = strings.Cut(r.Value[1].(string), "|")
							if level == 0 {
								continue
							}
							if prev, ok := liveAbove[k]; ok {
								deleted[prev.file] = append(deleted[prev.file], prev.pos)
								delete(liveAbove, k)
							}
							if rng.IntN(5) == 0 {
								deleted[name] = append(deleted[name], int64(p))
								delete(newest, k)
								continue
							}
							liveAbove[k] = at{name, int64(p)}
						}
					}
				}
				v := loadView(t, tb)
				withDVs(t, tb, v, deleted)
				popts, err := PlannerOptions(tb, Options{})
				if err != nil {
					t.Fatal(err)
				}
				plan := planner.Plan(v.View, nil, popts, time.Now())
				if len(plan.Jobs) != 1 {
					t.Fatalf("%d jobs planned", len(plan.Jobs))
				}
				dvs := &sink{}
				t.Logf("job %s: output level %d, %d steps, %d upgrades", plan.Jobs[0].Reason, plan.Jobs[0].OutputLevel, len(plan.Jobs[0].Steps), len(plan.Jobs[0].Upgrades()))
				res, err := runJob(t, tb, v, plan.Jobs[0], rowPath, dvs)
				if err != nil {
					t.Fatal(err)
				}
				if disjoint {
					upgrades += len(plan.Jobs[0].Upgrades())
				}
				deletions += len(dvs.got)
				// The bucket after the job: untouched files, upgraded files and
				// outputs; deletion vectors: existing (but of rewritten files)
				// plus the reported ones.
				marked := map[string]map[int64]bool{}
				for f, ps := range deleted {
					if slices.Contains(res.Rewritten(), f) {
						continue
					}
					for _, p := range ps {
						if marked[f] == nil {
							marked[f] = map[int64]bool{}
						}
						marked[f][p] = true
					}
				}
				for _, d := range dvs.got {
					f, p, _ := strings.Cut(d, "@")
					var pos int64
					fmt.Sscan(p, &pos)
					if marked[f] == nil {
						marked[f] = map[int64]bool{}
					}
					if marked[f][pos] {
						t.Fatalf("row %s reported twice or already deleted", d)
					}
					marked[f][pos] = true
				}
				live := map[string]*manifest.Entry{}
				b := v.buckets[plan.Jobs[0].ID()]
				for i := range b.Files {
					live[b.Files[i].File.FileName] = &b.Files[i]
				}
				for i := range res.Entries {
					e := &res.Entries[i]
					if e.Kind == manifest.FileKindDelete {
						delete(live, e.File.FileName)
					}
				}
				for i := range res.Entries {
					if e := &res.Entries[i]; e.Kind == manifest.FileKindAdd {
						live[e.File.FileName] = e
					}
				}
				s := tb.Schema()
				read := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
				got := map[int64][]string{}
				var names []string
				for n := range live {
					names = append(names, n)
				}
				sort.Strings(names)
				level0 := 0
				for _, n := range names {
					e := live[n]
					if e.File.Level == 0 {
						level0++
						continue
					}
					r, err := datafile.OpenKeyValue(ctx, tb.FileIO(), mustPath(t, tb, e), read, read)
					if err != nil {
						t.Fatal(err)
					}
					for {
						kv, err := r.Next()
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							t.Fatal(err)
						}
						if !marked[n][r.Pos()] {
							k := kv.Key[0].(int64)
							tag, _, _ := strings.Cut(kv.Value[1].(string), "|")
							got[k] = append(got[k], fmt.Sprintf("%s@L%d", tag, e.File.Level))
						}
					}
					r.Close()
				}
				if level0 > 0 {
					t.Fatalf("%d level-0 files left: the job must push level 0 up", level0)
				}
				for k, want := range newest {
					if len(got[k]) != 1 || !strings.HasPrefix(got[k][0], want+"@") {
						t.Errorf("key %d: live rows above level 0 %v, want exactly its newest %s", k, got[k], want)
					}
				}
				for k, rows := range got {
					if _, ok := newest[k]; !ok {
						t.Errorf("key %d: live rows %v, but every record of it was deleted", k, rows)
					}
				}
			})
		}
	}
}
