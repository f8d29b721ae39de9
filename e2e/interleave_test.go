package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
)

// TestInterleavedCompactionMatchesJavaCompaction feeds the three-writer wide
// table in rounds and compacts between rounds, once with Paimon's own full
// compaction and once with compactd's: both tables must read the same rows.
//
// Partial-update with sequence-group retractions is not transparent to
// compaction (a retraction merged away at the top level forgets the group's
// sequence value), so the reference is Java's compaction under the same
// interleaving, not a table nobody compacted.
func TestInterleavedCompactionMatchesJavaCompaction(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	s := fixtures.WideTable(fixtures.Params{Partitioned: true, Buckets: 2, Size: fixtures.Small, Seed: 11})
	dir := t.TempDir()
	B, C := filepath.Join(dir, "B"), filepath.Join(dir, "C")
	for _, w := range []string{B, C} {
		j.Create(w, "db.t", s.Spec, nil)
	}
	n := len(s.Commits)
	for i := 0; i < n; i += 6 {
		sub := *s
		sub.Commits = s.Commits[i:min(i+6, n)]
		rows := sub.RowsJSONL()
		var reqs []interop.BatchRequest
		for _, w := range []string{B, C} {
			f := flags(w, "db.t")
			f["rows"] = filepath.Join(dir, fmt.Sprintf("rows%d.jsonl", i))
			writeFile(f["rows"], rows)
			reqs = append(reqs, interop.BatchRequest{Verb: "write", Flags: f})
		}
		reqs = append(reqs, interop.BatchRequest{Verb: "compact", Flags: flags(B, "db.t")})
		for _, r := range batch(t, j, reqs) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		tb, _ := table.Open(ctx, tableFIO(), C, "db", "t")
		if _, err := compact.Run(ctx, tb, compact.Options{Full: true}); err != nil {
			t.Fatal(err)
		}
	}
	b, c := canon(t, j.Read(B, "db.t")), canon(t, j.Read(C, "db.t"))
	if len(b) == 0 {
		t.Fatal("no rows")
	}
	diffRows(t, "Java-compacted vs compactd-compacted", b, c)
}
