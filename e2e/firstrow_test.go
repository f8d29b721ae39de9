package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
)

// TestFirstRowMinorCompactionKeepsEachKeyOnce is issue 12 item 1 end to
// end. Java Paimon reads a first-row table without merging: its batch scan
// skips level 0 and reads the files of levels >= 1 raw, one row per stored
// record (MergeTreeSplitGenerator marks such splits raw-convertible). So no
// key may be stored at two levels >= 1. Java's own compaction keeps that:
// merging level-0 files into a level below the top, it drops every key a
// higher level already holds (FirstRowMergeFunctionWrapper).
//
// The scenario: 2000 ids written by Java in one commit, compactd's full
// compaction (level 5), five more Java commits of a few known ids with new
// values, then compactd's minor compaction (level 0 into level 4). Java,
// pypaimon and compactd's scan must read each id once with its first
// value, and the files must sit where Java's own minor compaction of a copy
// puts them.
func TestFirstRowMinorCompactionKeepsEachKeyOnce(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	py := interop.Python(t)
	cases := []struct {
		name       string
		partitions []string // nil: unpartitioned
		buckets    int
		rewritten  []int // ids the five later commits write again
		javaTop    bool  // Java's full compaction writes the top level (the lookup reads Java's files)
	}{
		{"issue12_unpartitioned_bucket1", nil, 1, []int{0, 1, 2}, false},
		{"partitioned_2_buckets", []string{"a", "b"}, 2, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, false},
		{"top_level_written_by_java", nil, 1, []int{0, 1, 2, 500, 1999}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := fixtures.Spec{
				Columns:     []fixtures.Column{{Name: "id", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
				PrimaryKeys: []string{"id"},
				Bucket:      c.buckets,
				Options: map[string]string{
					"merge-engine": "first-row",
					"write-only":   "true",
					"compaction.max-size-amplification-percent": "100000",
				},
			}
			parts := c.partitions
			if parts == nil {
				parts = []string{""}
			} else {
				spec.Columns = append([]fixtures.Column{{Name: "dt", Type: "STRING NOT NULL"}}, spec.Columns...)
				spec.PrimaryKeys = []string{"dt", "id"}
				spec.PartitionKeys = []string{"dt"}
			}
			const ids = 2000
			row := func(dt string, id int, v, user string, commit int) map[string]any {
				m := map[string]any{"id": id, "v": v, "_user": user, "_commit": commit}
				if dt != "" {
					m["dt"] = dt
				}
				return m
			}
			var first []map[string]any
			var want []interop.Row
			for _, dt := range parts {
				for id := range ids / len(parts) {
					// Incompressible values keep the top level much larger
					// than the level-0 files, so the universal pick leaves it out.
					v := fmt.Sprintf("first-%s-%d-%016x", dt, id, rand.Uint64())
					first = append(first, row(dt, id, v, "first", 0))
					w := interop.Row{"id": int64(id), "v": v}
					if dt != "" {
						w["dt"] = dt
					}
					want = append(want, w)
				}
			}
			var later []map[string]any
			for commit := range 5 {
				for _, dt := range parts {
					for _, id := range c.rewritten {
						later = append(later, row(dt, id, fmt.Sprintf("later-%d-%s-%d", commit, dt, id), "later", commit))
					}
				}
			}

			wh := filepath.Join(t.TempDir(), "warehouse")
			j.Create(wh, "db.t", spec, jsonl(t, first))
			if c.javaTop {
				j.Compact(wh, "db.t", interop.CompactOptions{})
			} else if _, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{Full: true}); err != nil {
				t.Fatalf("compactd compact --full: %v", err)
			}
			if n := j.Write(wh, "db.t", jsonl(t, later)); n != 5 {
				t.Fatalf("Java made %d commits, want 5", n)
			}
			ref := filepath.Join(t.TempDir(), "ref")
			copyDir(t, wh, ref)

			sum, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{})
			if err != nil {
				t.Fatalf("compactd compact (minor): %v", err)
			}
			if sum.Snapshot == 0 {
				t.Fatal("compactd's minor compaction found nothing to do")
			}
			for _, jr := range sum.Jobs {
				if jr.Job.Full || jr.Job.OutputLevel == 5 {
					t.Fatalf("bucket %d went to level %d (%s); the scenario needs a minor compaction below the top level", jr.Job.Bucket, jr.Job.OutputLevel, jr.Job.Reason)
				}
			}
			if got := j.Compact(ref, "db.t", interop.CompactOptions{Minor: true}); got == 0 {
				t.Fatal("Java's minor compaction of the copy committed nothing")
			}

			wantCanon := canon(t, want)
			res := batch(t, j, []interop.BatchRequest{
				{Verb: "read", Flags: flags(wh, "db.t")},
				{Verb: "files", Flags: flags(wh, "db.t")},
				{Verb: "read", Flags: flags(ref, "db.t")},
				{Verb: "files", Flags: flags(ref, "db.t")},
			})
			diffRows(t, "Java read after compactd's minor compaction", wantCanon, canon(t, rowsOf(t, res[0])))
			diffRows(t, "Java read after Java's minor compaction (reference)", wantCanon, canon(t, rowsOf(t, res[2])))
			if got, ref := fileLevels(rowsOf(t, res[1])), fileLevels(rowsOf(t, res[3])); !equalStrings(got, ref) {
				t.Errorf("files (partition, bucket, level, rows) after compactd's minor compaction:\n  %v\nafter Java's:\n  %v", got, ref)
			}
			diffRows(t, "pypaimon read after compactd's minor compaction", wantCanon, canon(t, py.Read(wh, "db.t")))
			diffRows(t, "compactd scan after compactd's minor compaction", wantCanon, canon(t, compactdRows(t, wh, "db.t")))
		})
	}
}

func jsonl(t *testing.T, rows []map[string]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// fileLevels summarises $files rows as sorted "partition/bucket/level/rows" texts.
func fileLevels(files []interop.Row) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		out = append(out, fmt.Sprintf("%v/%v/L%v/%v rows", f["partition"], f["bucket"], f["level"], f["record_count"]))
	}
	sort.Strings(out)
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestForceLookupAggregationReadsAsJava pins the other reader assumption of
// lookup-style tables: Java's compaction of a force-lookup table merges the
// record a higher level holds into what it writes below, and Java's read
// (LookupMergeFunction) then takes only the lowest level above 0. compactd's
// scan must read such a Java-compacted table as Java does (a plain merge
// would add level 5's sums twice), and compactd's own minor compaction of
// it must keep what Java reads (its lookup compaction merges level 5's sums
// into level 4, as Java's does).
func TestForceLookupAggregationReadsAsJava(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	spec := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "id", Type: "BIGINT NOT NULL"}, {Name: "n", Type: "BIGINT"}},
		PrimaryKeys: []string{"id"},
		Bucket:      1,
		Options: map[string]string{
			"merge-engine":                "aggregation",
			"fields.n.aggregate-function": "sum",
			"force-lookup":                "true",
			"write-only":                  "true",
			"compaction.max-size-amplification-percent": "100000",
		},
	}
	var first, later, last []map[string]any
	for id := range 2000 {
		first = append(first, map[string]any{"id": id, "n": id, "_user": "first", "_commit": 0})
	}
	for commit := range 5 {
		for id := range 3 {
			later = append(later, map[string]any{"id": id, "n": 1000, "_user": "later", "_commit": commit})
		}
	}
	for id := range 3 {
		last = append(last, map[string]any{"id": id, "n": 1, "_user": "last", "_commit": 0})
	}
	wh := filepath.Join(t.TempDir(), "warehouse")
	j.Create(wh, "db.t", spec, jsonl(t, first))
	j.Compact(wh, "db.t", interop.CompactOptions{})
	j.Write(wh, "db.t", jsonl(t, later))
	j.Compact(wh, "db.t", interop.CompactOptions{Minor: true})
	j.Write(wh, "db.t", jsonl(t, last))
	res := batch(t, j, []interop.BatchRequest{
		{Verb: "read", Flags: flags(wh, "db.t")},
		{Verb: "files", Flags: flags(wh, "db.t")},
	})
	levels := fileLevels(rowsOf(t, res[1]))
	if want := []string{"{}/0/L0/3 rows", "{}/0/L4/3 rows", "{}/0/L5/2000 rows"}; !equalStrings(levels, want) {
		t.Fatalf("Java's compactions left %v, want %v", levels, want)
	}
	javaRows := canon(t, rowsOf(t, res[0]))
	var want []interop.Row
	for id := range 2000 {
		n := int64(id)
		if id < 3 {
			n += 5*1000 + 1
		}
		want = append(want, interop.Row{"id": int64(id), "n": n})
	}
	diffRows(t, "Java read", canon(t, want), javaRows)
	diffRows(t, "compactd scan", javaRows, canon(t, compactdRows(t, wh, "db.t")))
	sum, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{})
	if err != nil {
		t.Fatalf("compactd compaction of a force-lookup aggregation table: %v", err)
	}
	if sum.Snapshot == 0 {
		t.Fatal("compactd's compaction found nothing to do")
	}
	for _, jr := range sum.Jobs {
		if jr.Job.OutputLevel == 5 {
			t.Fatalf("the job went to level 5 (%s); the scenario needs a compaction below the top level", jr.Job.Reason)
		}
	}
	after := batch(t, j, []interop.BatchRequest{{Verb: "read", Flags: flags(wh, "db.t")}})
	diffRows(t, "Java read after compactd's compaction", javaRows, canon(t, rowsOf(t, after[0])))
	diffRows(t, "compactd scan after compactd's compaction", javaRows, canon(t, compactdRows(t, wh, "db.t")))
}
