package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
)

// TestForceLookupMinorCompactionMatchesJava checks compactd's lookup
// compaction of lookup-style tables without deletion vectors against
// Java's: a minor compaction of level-0 files into a level below the top
// must merge the record the top level holds into its output (Java's
// LookupChangelogMergeFunctionWrapper inserts the looked-up record among a
// key's records), since Java's read then takes only the lowest level above
// 0. The scenario: 2000 ids in one Java commit, Java's full compaction (level
// 5), five Java commits of a few ids (one with an out-of-order
// sequence.field), then compactd's minor compaction and Java's minor
// compaction of a copy; Java reads both the same, and the files sit at the
// same levels.
func TestForceLookupMinorCompactionMatchesJava(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	cases := []struct {
		name    string
		options map[string]string
		columns []fixtures.Column
		row     func(id, commit int) map[string]any // a later commit's row
	}{
		{
			name:    "aggregation sum",
			options: map[string]string{"merge-engine": "aggregation", "fields.n.aggregate-function": "sum"},
			row:     func(id, commit int) map[string]any { return map[string]any{"id": id, "n": 1000 + commit} },
		},
		{
			name:    "partial-update",
			options: map[string]string{"merge-engine": "partial-update"},
			// The later commits never set n: the output must take it from
			// the top level's record.
			row: func(id, commit int) map[string]any {
				return map[string]any{"id": id, "n": nil, "v": fmt.Sprintf("later-%d", commit)}
			},
		},
		{
			name:    "deduplicate with sequence.field, an older ts arriving later",
			options: map[string]string{"sequence.field": "n"},
			row: func(id, commit int) map[string]any {
				// ids < 3 get ts 1..5 (below the first commit's id*10+100
				// for most ids); the top level's record must keep winning
				// for those whose first ts is higher.
				return map[string]any{"id": id, "n": commit + 1, "v": fmt.Sprintf("later-%d", commit)}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			options := map[string]string{
				"force-lookup": "true",
				"write-only":   "true",
				"compaction.max-size-amplification-percent": "100000",
			}
			for k, v := range c.options {
				options[k] = v
			}
			spec := fixtures.Spec{
				Columns:     []fixtures.Column{{Name: "id", Type: "BIGINT NOT NULL"}, {Name: "n", Type: "BIGINT"}, {Name: "v", Type: "STRING"}},
				PrimaryKeys: []string{"id"},
				Bucket:      1,
				Options:     options,
			}
			var first, later []map[string]any
			for id := range 2000 {
				// Incompressible values keep the top level much larger than
				// the level-0 files, so the universal pick leaves it out.
				n := id * 10
				if id < 3 {
					n = 3 - id // ids 0..2: 3, 2, 1 (ts below or equal the later ones)
				}
				first = append(first, map[string]any{"id": id, "n": n, "v": fmt.Sprintf("first-%d-%016x", id, rand.Uint64()), "_user": "first", "_commit": 0})
			}
			for commit := range 5 {
				for _, id := range []int{0, 1, 2, 700, 1999} {
					r := c.row(id, commit)
					r["_user"], r["_commit"] = "later", commit
					later = append(later, r)
				}
			}
			wh := filepath.Join(t.TempDir(), "warehouse")
			j.Create(wh, "db.t", spec, jsonl(t, first))
			j.Compact(wh, "db.t", interop.CompactOptions{})
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
				if jr.Job.OutputLevel == 5 {
					t.Fatalf("the job went to level 5 (%s); the scenario needs a minor compaction below the top level", jr.Job.Reason)
				}
			}
			if got := j.Compact(ref, "db.t", interop.CompactOptions{Minor: true}); got == 0 {
				t.Fatal("Java's minor compaction of the copy committed nothing")
			}
			res := batch(t, j, []interop.BatchRequest{
				{Verb: "read", Flags: flags(wh, "db.t")},
				{Verb: "files", Flags: flags(wh, "db.t")},
				{Verb: "read", Flags: flags(ref, "db.t")},
				{Verb: "files", Flags: flags(ref, "db.t")},
			})
			javaRef := canon(t, rowsOf(t, res[2]))
			diffRows(t, "Java read after compactd's minor compaction", javaRef, canon(t, rowsOf(t, res[0])))
			if got, ref := fileLevels(rowsOf(t, res[1])), fileLevels(rowsOf(t, res[3])); !equalStrings(got, ref) {
				t.Errorf("files (partition, bucket, level, rows) after compactd's minor compaction:\n  %v\nafter Java's:\n  %v", got, ref)
			}
			diffRows(t, "compactd scan after compactd's minor compaction", javaRef, canon(t, compactdRows(t, wh, "db.t")))
		})
	}
}
