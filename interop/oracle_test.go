package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/fixtures"
)

func TestPickAnswersKnownCases(t *testing.T) {
	j := Java(t)
	l0 := func(n int, size int64) []PickRun {
		runs := make([]PickRun, n)
		for i := range runs {
			runs[i] = PickRun{Level: 0, Size: size}
		}
		return runs
	}
	cases := []struct {
		name string
		req  PickRequest
		want PickResult
	}{
		{
			name: "five equal level-0 runs reach the default trigger and amplify size: full compaction dropping deletes",
			req:  PickRequest{NumLevels: 6, Options: map[string]string{}, Runs: l0(5, 10)},
			want: PickResult{Pick: true, OutputLevel: 5, Runs: []int{0, 1, 2, 3, 4}, DropDelete: true},
		},
		{
			name: "one small level-0 run over a large top level picks nothing",
			req:  PickRequest{NumLevels: 6, Options: map[string]string{}, Runs: []PickRun{{0, 10}, {5, 1000}}},
			want: PickResult{Pick: false},
		},
		{
			name: "a trigger of two merges the level-0 run into the next level without dropping deletes",
			req: PickRequest{NumLevels: 5, Options: map[string]string{"num-sorted-run.compaction-trigger": "2"},
				Runs: []PickRun{{0, 10}, {3, 20}, {4, 1000}}},
			want: PickResult{Pick: true, OutputLevel: 3, Runs: []int{0, 1}, DropDelete: false},
		},
	}
	reqs := make([]PickRequest, len(cases))
	for i, c := range cases {
		reqs[i] = c.req
	}
	got := j.Pick(reqs...)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !reflect.DeepEqual(got[i], c.want) {
				t.Errorf("got %+v, want %+v", got[i], c.want)
			}
		})
	}
}

// TestPickVectorsFileIsWhatPaimonAnswers regenerates the first vectors of the committed golden
// file and asks Paimon again: the file must be reproducible from the generator and the oracle.
func TestPickVectorsFileIsWhatPaimonAnswers(t *testing.T) {
	path := filepath.Join(filepath.Dir(Dir()), "planner", "testdata", "paimon_pick_vectors.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("golden vectors: %v (regenerate with go run ./interop/cmd/genpick)", err)
	}
	defer f.Close()
	const n = 300
	var file []PickVector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() && len(file) < n {
		var v PickVector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		file = append(file, v)
	}
	if len(file) < n {
		t.Fatalf("%s has %d vectors, want at least %d", path, len(file), n)
	}
	j := Java(t)
	reqs := GeneratePickRequests(1, n)
	res, err := j.PickAll(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := PickVectors(file[0].Paimon, reqs, res)
	if err != nil {
		t.Fatal(err)
	}
	if v := j.Version(); v != file[0].Paimon {
		t.Fatalf("file was generated with Paimon %s, oracle runs %s: regenerate it", file[0].Paimon, v)
	}
	for i := range fresh {
		if !reflect.DeepEqual(normVec(fresh[i]), normVec(file[i])) {
			a, _ := json.Marshal(fresh[i])
			b, _ := json.Marshal(file[i])
			t.Fatalf("vector %d differs:\n  now:  %s\n  file: %s", i, a, b)
		}
	}
}

func normVec(v PickVector) PickVector {
	if v.Options == nil {
		v.Options = map[string]string{}
	}
	return v
}

// TestOrphansAndExpireDryRuns checks the maintenance verbs on a real table: an unreferenced file
// is an orphan, referenced files are not, and expiring down to one snapshot lists old snapshot
// and manifest files but leaves the table itself untouched.
func TestOrphansAndExpireDryRuns(t *testing.T) {
	s := fixtures.Generate(fixtures.Params{Engine: "deduplicate", Buckets: 1, Size: fixtures.Tiny, Seed: 5})
	b := BuildScenarios(t, t.TempDir(), []*fixtures.Scenario{s}, BuildOptions{})[0]
	j := Java(t)
	tableDir := filepath.Join(b.Warehouse, "db.db", "t")

	orphan := filepath.Join(tableDir, "bucket-0", "data-orphan-0.parquet")
	if err := os.WriteFile(orphan, []byte("not referenced"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(orphan, old, old); err != nil {
		t.Fatal(err)
	}
	t.Run("an old unreferenced data file is the only orphan", func(t *testing.T) {
		got := j.Orphans(b.Warehouse, b.Table, time.Now().Add(-time.Hour))
		if !slices.Equal(got, []string{"bucket-0/data-orphan-0.parquet"}) {
			t.Errorf("orphans = %v", got)
		}
	})
	t.Run("a file newer than the threshold is not an orphan yet", func(t *testing.T) {
		if got := j.Orphans(b.Warehouse, b.Table, old.Add(-time.Hour)); len(got) != 0 {
			t.Errorf("orphans = %v, want none", got)
		}
	})

	t.Run("a tag reads the snapshot it was taken from", func(t *testing.T) {
		j.Tag(b.Warehouse, b.Table, "first", 1)
		diffRows(t, "snapshot 1", j.Read(b.Warehouse, b.Table, AtSnapshot(1)), "tag first", j.Read(b.Warehouse, b.Table, AtTag("first")))
	})

	// Compaction replaces every data file, so expiration has data files to delete, except those
	// the tag still needs.
	filesBefore := j.Files(b.Warehouse, b.Table)
	j.Compact(b.Warehouse, b.Table, CompactOptions{})
	snapsBefore := len(j.Snapshots(b.Warehouse, b.Table))
	t.Run("expiring to one snapshot deletes old snapshot files on a copy only", func(t *testing.T) {
		got := j.Expire(b.Warehouse, b.Table, ExpireOptions{RetainMin: 1, RetainMax: 1})
		var snapFiles int
		for _, p := range got {
			if strings.HasPrefix(p, "snapshot/snapshot-") {
				snapFiles++
			}
			if p == "bucket-0/data-orphan-0.parquet" {
				t.Errorf("expiration must not delete unreferenced files: %s", p)
			}
		}
		if snapFiles != snapsBefore-1 {
			t.Errorf("expire lists %d snapshot files, want %d (all but the latest); all: %v", snapFiles, snapsBefore-1, got)
		}
		// Snapshot 1 is tagged: the file it added stays; the other pre-compaction files go.
		listed := map[string]bool{}
		for _, p := range got {
			listed[filepath.Join(b.Warehouse, "db.db", "t", p)] = true
		}
		var kept, deleted int
		for _, f := range filesBefore {
			path := f["file_path"].(string)
			if f["min_sequence_number"] == int64(0) {
				kept++
				if listed[path] {
					t.Errorf("expire deletes %s, a data file of tagged snapshot 1", path)
				}
			} else if listed[path] {
				deleted++
			}
		}
		if kept != 1 || deleted != len(filesBefore)-1 {
			t.Errorf("of %d pre-compaction files, %d belong to the tag (want 1) and %d are deleted (want %d)", len(filesBefore), kept, deleted, len(filesBefore)-1)
		}
		if n := len(j.Snapshots(b.Warehouse, b.Table)); n != snapsBefore {
			t.Errorf("the real table lost snapshots: %d -> %d", snapsBefore, n)
		}
	})
}

// TestCompactOnePartitionBucket checks that compact's --partition/--bucket restrict Paimon's full
// compaction to that one bucket.
func TestCompactOnePartitionBucket(t *testing.T) {
	s := fixtures.Generate(fixtures.Params{Engine: "deduplicate", Partitioned: true, Buckets: 4, Size: fixtures.Tiny, Seed: 9})
	b := BuildScenarios(t, t.TempDir(), []*fixtures.Scenario{s}, BuildOptions{})[0]
	j := Java(t)
	bucket := 2
	j.Compact(b.Warehouse, b.Table, CompactOptions{Partition: "dt=2024-01-02", Bucket: &bucket})
	var inTarget, topLevel int
	for _, f := range j.Files(b.Warehouse, b.Table) {
		target := f["partition"] == "{2024-01-02}" && f["bucket"] == int64(2)
		if target {
			inTarget++
		}
		if f["level"] != int64(0) {
			topLevel++
			if !target {
				t.Errorf("file %v (partition %v bucket %v) left level 0", f["file_path"], f["partition"], f["bucket"])
			}
		}
	}
	if inTarget != 1 || topLevel != 1 {
		t.Errorf("target bucket has %d files and %d files left level 0; want one compacted file", inTarget, topLevel)
	}
	diffRows(t, "before", b.JavaRows, "after", j.Read(b.Warehouse, b.Table))
}
