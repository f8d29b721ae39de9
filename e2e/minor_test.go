package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
)

// TestMinorCompactionUntilNothingIsLeft compacts Java-written tables with
// compactd's planner (no --full) until it finds nothing to do: Java then
// reads the same rows, and no bucket has more sorted runs than
// num-sorted-run.compaction-trigger.
func TestMinorCompactionUntilNothingIsLeft(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	var picked []*fixtures.Scenario
	for _, s := range fixtures.All(fixtures.Small, 5) {
		// First-row tables are lookup-style (always up from level 0); their
		// rows before compaction are not visible to compare.
		if strings.Contains(s.Name, "_b4_") && !interop.IsFirstRow(s) {
			picked = append(picked, s)
		}
	}
	built := interop.BuildScenarios(t, t.TempDir(), picked, interop.BuildOptions{})
	var reqs []interop.BatchRequest
	for _, b := range built {
		rounds := 0
		for ; ; rounds++ {
			tb, err := table.Open(ctx, tableFIO(), b.Warehouse, "db", "t")
			if err != nil {
				t.Fatal(err)
			}
			sum, err := compact.Run(ctx, tb, compact.Options{})
			if err != nil {
				t.Fatalf("%s: %v", b.Scenario.Name, err)
			}
			if sum.Snapshot == 0 {
				break
			}
			if rounds > 30 {
				t.Fatalf("%s: the planner keeps finding work", b.Scenario.Name)
			}
		}
		if rounds == 0 {
			t.Fatalf("%s: nothing was compacted", b.Scenario.Name)
		}
		tb, err := table.Open(ctx, tableFIO(), b.Warehouse, "db", "t")
		if err != nil {
			t.Fatal(err)
		}
		trigger := tb.Options().NumSortedRunCompactionTrigger
		s, err := tb.LatestSnapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := tb.FileSet(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, bk := range fs.Buckets() {
			if len(bk.Runs) > trigger {
				t.Errorf("%s bucket %d: %d sorted runs after compaction, trigger %d", b.Scenario.Name, bk.Bucket, len(bk.Runs), trigger)
			}
		}
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: flags(b.Warehouse, b.Table)})
	}
	res := batch(t, j, reqs)
	for i, b := range built {
		diffRows(t, b.Scenario.Name+": Java read after minor compactions", canon(t, b.JavaRows), canon(t, rowsOf(t, res[i])))
	}
}
