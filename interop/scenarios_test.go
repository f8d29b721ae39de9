package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/fixtures"
)

// scenarioSize is tiny unless COMPACTD_INTEROP_SIZE says small, medium or large.
func scenarioSize(t *testing.T) fixtures.Size {
	switch os.Getenv("COMPACTD_INTEROP_SIZE") {
	case "", "tiny":
		return fixtures.Tiny
	case "small":
		return fixtures.Small
	case "medium":
		return fixtures.Medium
	case "large":
		return fixtures.Large
	default:
		t.Fatalf("COMPACTD_INTEROP_SIZE=%q: want tiny, small, medium or large", os.Getenv("COMPACTD_INTEROP_SIZE"))
		return 0
	}
}

func TestScenariosJavaPythonAndModelAgree(t *testing.T) {
	size := scenarioSize(t)
	built := BuildScenarios(t, t.TempDir(), fixtures.All(size, 1), BuildOptions{CompactFirstRow: true})
	py := Python(t)

	pyRows := make([][]Row, len(built))
	pyErrs := make([]error, len(built))
	pyStart := time.Now()
	var pyReqs []BatchRequest
	for _, b := range built {
		pyReqs = append(pyReqs, BatchRequest{Verb: "read", Flags: map[string]string{"warehouse": b.Warehouse, "table": b.Table}})
	}
	pyRes, err := py.Batch(context.Background(), pyReqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range pyRes {
		pyErrs[i] = r.Err
		if r.Err == nil {
			pyRows[i], pyErrs[i] = ParseRows(joinLines(r.Lines))
		}
	}
	t.Logf("pypaimon: %d reads: %v", len(built), time.Since(pyStart).Round(time.Millisecond))

	for i, b := range built {
		t.Run(b.Scenario.Name, func(t *testing.T) {
			if len(b.FinalRows) == 0 {
				t.Fatalf("Java read no rows from %d written records", b.Scenario.NumRecords())
			}
			if IsFirstRow(b.Scenario) {
				t.Run("a first-row table reads empty while all its files are level 0", func(t *testing.T) {
					if len(b.JavaRows) != 0 {
						t.Errorf("Java read %d rows before compaction, want 0 (level 0 is skipped)", len(b.JavaRows))
					}
				})
			}
			if strings.HasPrefix(b.Scenario.Name, "wide_") {
				// pypaimon 2.1 implements partial-update only without sequence groups and
				// without delete handling; it says so instead of reading wrong rows.
				t.Run("pypaimon refuses partial-update with sequence groups", func(t *testing.T) {
					if !errors.Is(pyErrs[i], ErrUnsupported) {
						t.Errorf("pypaimon: got rows=%d err=%v, want ErrUnsupported (if pypaimon now supports sequence groups, compare its rows instead)", len(pyRows[i]), pyErrs[i])
					}
				})
			} else {
				t.Run("pypaimon reads what Java reads", func(t *testing.T) {
					if pyErrs[i] != nil {
						t.Fatal(pyErrs[i])
					}
					diffRows(t, "java", b.FinalRows, "pypaimon", pyRows[i])
				})
			}
			t.Run("Java reads what the naive engine model predicts", func(t *testing.T) {
				want, ok := b.Scenario.Expected()
				if !ok {
					t.Fatalf("scenario %s has no model", b.Scenario.Name)
				}
				diffRows(t, "model", NormalizeRows(want), "java", b.FinalRows)
			})
			t.Run("write-only writers leave at least five level-0 files per bucket", func(t *testing.T) {
				perBucket := map[string]int{}
				for _, f := range b.Files {
					if f["level"] != int64(0) {
						t.Errorf("file %v at level %v in a write-only table", f["file_path"], f["level"])
					}
					perBucket[fmt.Sprintf("%v/%v", f["partition"], f["bucket"])]++
				}
				if len(perBucket) == 0 {
					t.Fatal("no files")
				}
				for bucket, n := range perBucket {
					if n < 5 {
						t.Errorf("bucket %s has %d level-0 files, want >= 5", bucket, n)
					}
				}
				wantBuckets := b.Scenario.Spec.Bucket
				if len(b.Scenario.Spec.PartitionKeys) > 0 {
					wantBuckets *= len(fixtures.Partitions)
				}
				if len(perBucket) != wantBuckets {
					t.Errorf("%d (partition, bucket) pairs have files, want %d", len(perBucket), wantBuckets)
				}
			})
		})
	}
}

// TestJavaFullCompactionKeepsRows compacts a few scenarios with Paimon's own full compaction and
// checks that the rows do not change, that every bucket ends as one file at the top level, and
// that the snapshot before the compaction still reads the same rows.
func TestJavaFullCompactionKeepsRows(t *testing.T) {
	var picked []*fixtures.Scenario
	for _, s := range fixtures.All(fixtures.Tiny, 2) {
		if strings.Contains(s.Name, "_b4_") && (strings.HasPrefix(s.Name, "deduplicate_partitioned") || strings.HasPrefix(s.Name, "wide_")) {
			picked = append(picked, s)
		}
	}
	if len(picked) < 2 {
		t.Fatalf("expected at least two 4-bucket scenarios, got %d", len(picked))
	}
	built := BuildScenarios(t, t.TempDir(), picked, BuildOptions{})
	j := Java(t)
	var reqs []BatchRequest
	before := make([]int64, len(built))
	for i, b := range built {
		if len(b.Snapshots) == 0 {
			t.Fatalf("%s: no snapshots after writing", b.Scenario.Name)
		}
		before[i] = b.Snapshots[len(b.Snapshots)-1]["snapshot_id"].(int64)
		common := map[string]string{"warehouse": b.Warehouse, "table": b.Table}
		reqs = append(reqs,
			BatchRequest{Verb: "compact", Flags: common},
			BatchRequest{Verb: "read", Flags: common},
			BatchRequest{Verb: "files", Flags: common},
			BatchRequest{Verb: "snapshots", Flags: common},
			BatchRequest{Verb: "read", Flags: with(common, "snapshot", strconv.FormatInt(before[i], 10))})
	}
	res, err := j.Batch(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range built {
		t.Run(b.Scenario.Name, func(t *testing.T) {
			out := make([][]Row, 5)
			for k := range out {
				r := res[5*i+k]
				if r.Err != nil {
					t.Fatalf("%s: %v", reqs[5*i+k].Verb, r.Err)
				}
				if out[k], err = ParseRows(joinLines(r.Lines)); err != nil {
					t.Fatal(err)
				}
			}
			compactRes, after, files, snaps, travel := out[0], out[1], out[2], out[3], out[4]
			if got := compactRes[0]["snapshot"]; got != before[i]+1 {
				t.Errorf("compaction committed snapshot %v, want exactly one new snapshot %d", got, before[i]+1)
			}
			diffRows(t, "before compaction", b.JavaRows, "after", after)
			// num-levels defaults to num-sorted-run.compaction-trigger + 1 = 6, so a full
			// compaction writes level 5.
			top := int64(5)
			perBucket := map[string]int{}
			for _, f := range files {
				perBucket[fmt.Sprintf("%v/%v", f["partition"], f["bucket"])]++
				if f["level"] != top {
					t.Errorf("file %v at level %v after full compaction, want %d", f["file_path"], f["level"], top)
				}
			}
			for bucket, n := range perBucket {
				if n != 1 {
					t.Errorf("bucket %s has %d files after full compaction, want 1", bucket, n)
				}
			}
			if last := snaps[len(snaps)-1]; last["commit_kind"] != "COMPACT" {
				t.Errorf("last snapshot kind %v, want COMPACT", last["commit_kind"])
			}
			diffRows(t, "latest before compaction", b.JavaRows, "time travel to it", travel)
		})
	}
}

func diffRows(t *testing.T, aName string, a []Row, bName string, b []Row) {
	t.Helper()
	if reflect.DeepEqual(a, b) {
		return
	}
	t.Errorf("%s has %d rows, %s has %d", aName, len(a), bName, len(b))
	shown := 0
	for i := 0; i < max(len(a), len(b)) && shown < 5; i++ {
		var ra, rb Row
		if i < len(a) {
			ra = a[i]
		}
		if i < len(b) {
			rb = b[i]
		}
		if !reflect.DeepEqual(ra, rb) {
			ja, _ := json.Marshal(ra)
			jb, _ := json.Marshal(rb)
			t.Errorf("row %d:\n  %s: %s\n  %s: %s", i, aName, ja, bName, jb)
			shown++
		}
	}
}
