package interop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactd/compactd/fixtures"
)

// TestJavaMinorCompactionOfPartialUpdateWithSequenceFieldChangesRows pins a Paimon property that
// compactd's own tests must account for: for partial-update with sequence.field, Paimon's result
// depends on how records are grouped into files (each file holds one pre-merged record per key,
// carrying the highest seq merged into it). A minor compaction that merges newer level-0 files
// without the older top-level file regroups the records and can change what is read; a full
// compaction cannot. Deduplicate is unaffected. The tables: the first commits fully compacted to
// level 5, the last three left at level 0, then Paimon's own universal pick (size ratio 0, no size
// amplification trigger) merges only the level-0 files into level 4.
func TestJavaMinorCompactionOfPartialUpdateWithSequenceFieldChangesRows(t *testing.T) {
	cases := []struct {
		engine  string
		seed    uint64
		changes bool
	}{
		{"partial-update", 2, true},
		{"partial-update", 5, true},
		{"deduplicate", 2, false},
	}
	j := Java(t)
	root := t.TempDir()
	var reqs []BatchRequest
	var names []string
	minor := `{"num-levels":"6","num-sorted-run.compaction-trigger":"3","compaction.max-size-amplification-percent":"100000","compaction.size-ratio":"0"}`
	for _, c := range cases {
		s := fixtures.Generate(fixtures.Params{Engine: c.engine, Buckets: 1, Size: fixtures.Medium, Seed: c.seed})
		dir := filepath.Join(root, s.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		split := len(s.Commits) - 3
		older, newer := *s, *s
		older.Commits, newer.Commits = s.Commits[:split], s.Commits[split:]
		spec := writeTemp(t, dir, "spec.json", s.Spec.JSON())
		r1 := writeTemp(t, dir, "older.jsonl", older.RowsJSONL())
		r2 := writeTemp(t, dir, "newer.jsonl", newer.RowsJSONL())
		common := map[string]string{"warehouse": filepath.Join(dir, "warehouse"), "table": "db.t"}
		reqs = append(reqs,
			BatchRequest{Verb: "create", Flags: with(common, "spec", spec, "rows", r1)},
			BatchRequest{Verb: "compact", Flags: common},
			BatchRequest{Verb: "write", Flags: with(common, "rows", r2)},
			BatchRequest{Verb: "read", Flags: common},
			BatchRequest{Verb: "compact", Flags: with(common, "full", "false", "options", minor)},
			BatchRequest{Verb: "files", Flags: common},
			BatchRequest{Verb: "read", Flags: common},
			BatchRequest{Verb: "compact", Flags: common},
			BatchRequest{Verb: "read", Flags: common})
		names = append(names, s.Name)
	}
	res, err := j.Batch(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	const per = 9
	for i, c := range cases {
		t.Run(names[i], func(t *testing.T) {
			out := make([][]Row, per)
			for k := range out {
				r := res[i*per+k]
				if r.Err != nil {
					t.Fatalf("%s: %v", reqs[i*per+k].Verb, r.Err)
				}
				out[k], _ = ParseRows(joinLines(r.Lines))
			}
			before, files, afterMinor, afterFull := out[3], out[5], out[6], out[8]
			levels := map[int64]int{}
			for _, f := range files {
				levels[f["level"].(int64)]++
			}
			if !reflect.DeepEqual(levels, map[int64]int{4: 1, 5: 1}) {
				t.Fatalf("after the minor compaction files per level = %v, want one at 4 (merged level 0) and one at 5", levels)
			}
			changed := !reflect.DeepEqual(before, afterMinor)
			if changed != c.changes {
				t.Errorf("rows changed by the minor compaction: %v, want %v", changed, c.changes)
			}
			if changed {
				for k := range before {
					if !reflect.DeepEqual(before[k], afterMinor[k]) {
						a, _ := json.Marshal(before[k])
						b, _ := json.Marshal(afterMinor[k])
						t.Logf("first changed row:\n  before: %s\n  after:  %s", a, b)
						break
					}
				}
			}
			// A full compaction of the regrouped files reads as the regrouped files do.
			diffRows(t, "after minor", afterMinor, "after full", afterFull)
		})
	}
}
