package e2e

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
)

// TestJavaWritersKeepCommittingWhileCompactdCompacts runs a Java writer
// (updates and deletes into a partitioned 4-bucket table) while compactd
// compacts the same table over and over. Every Java commit must be kept and
// the rows must equal those of the same writes into a table nobody
// compacted (deduplicate makes compaction transparent, so any difference is
// a lost or resurrected row).
func TestJavaWritersKeepCommittingWhileCompactdCompacts(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	s := fixtures.Generate(fixtures.Params{Engine: "deduplicate", Partitioned: true, Buckets: 4, Size: fixtures.Medium, Seed: 11})
	// Without sequence.field the arrival order decides, and compaction is
	// transparent: a delete dropped at the top level has nothing older
	// below it. (With out-of-order user sequence values, a late record older
	// than a dropped delete resurrects its key, in Paimon as in compactd.)
	opts := map[string]string{}
	for k, v := range s.Spec.Options {
		if k != "sequence.field" {
			opts[k] = v
		}
	}
	s.Spec.Options = opts
	dir := t.TempDir()
	live, ref := filepath.Join(dir, "live"), filepath.Join(dir, "ref")
	j.Create(live, "db.t", s.Spec, nil)
	j.Create(ref, "db.t", s.Spec, nil)
	rows := s.RowsJSONL()

	var wg sync.WaitGroup
	var commits int
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		commits = j.Write(live, "db.t", rows)
	}()
	compactions := 0
	for {
		select {
		case <-done:
		default:
			tb, err := table.Open(ctx, tableFIO(), live, "db", "t")
			if err == nil {
				_, err = tb.LatestSnapshot(ctx)
			}
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			sum, err := compact.Run(ctx, tb, compact.Options{Full: compactions%3 == 2})
			if err != nil {
				t.Fatalf("compaction %d: %v", compactions, err)
			}
			if sum.Snapshot != 0 {
				compactions++
			}
			continue
		}
		break
	}
	wg.Wait()
	if commits < 10 {
		t.Fatalf("the Java writers made only %d commits", commits)
	}
	if compactions < 2 {
		t.Fatalf("only %d compactions ran while the writers committed", compactions)
	}
	refCommits := j.Write(ref, "db.t", rows)
	if refCommits != commits {
		t.Fatalf("reference writes made %d commits, live %d", refCommits, commits)
	}

	// Every Java commit is a snapshot of the live table.
	tb, err := table.Open(ctx, tableFIO(), live, "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tb.SnapshotIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	appends, compacts := 0, 0
	for _, id := range ids {
		sn, err := tb.Snapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		switch sn.CommitKind {
		case table.CommitAppend:
			appends++
		case table.CommitCompact:
			compacts++
		}
	}
	if appends != commits || compacts < compactions {
		t.Fatalf("live table has %d APPEND and %d COMPACT snapshots, want %d Java commits and >= %d compactions", appends, compacts, commits, compactions)
	}
	t.Logf("%d Java commits interleaved with %d compactd compactions", commits, compactions)
	diffRows(t, "rows of the compacted table vs the untouched one",
		canon(t, j.Read(ref, "db.t")), canon(t, j.Read(live, "db.t")))
}
