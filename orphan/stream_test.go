package orphan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/orphan"
)

// reportJSON is the report as `compactd orphan --json` prints it, with the
// removed directories sorted (they are removed in map order).
func reportJSON(t *testing.T, rep orphan.Report) string {
	t.Helper()
	slices.Sort(rep.Dirs)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A cleanup whose candidates spill to disk and whose deletions go in
// batches of three deletes exactly what one that keeps every candidate in
// memory and deletes in one batch deletes, and reports the same, in a dry
// run and for real; seed 1 has more orphans than the report's sample holds.
func TestRunWithSpooledCandidatesMatchesInMemory(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 8; seed++ {
		extra := 20
		if seed == 1 {
			extra = orphan.SampleLimit + 50
		}
		run := func(spill, batch int) (dry, real string, count int, files []string) {
			defer orphan.SetSpillAfter(spill, batch)()
			e := build(t, seed)
			for i := range extra {
				e.write(t, fmt.Sprintf("%s/p=%d/bucket-%d/data-extra-%d.parquet", root, i%3, i%2, i), e.now.Add(-30*time.Hour))
			}
			d, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now, Parallelism: 2})
			if err != nil {
				t.Fatal(err)
			}
			intact(t, e)
			for _, p := range e.keep {
				if !exists(t, e, p) {
					t.Fatalf("seed %d (spill %d): %s was deleted", seed, spill, p)
				}
			}
			all, err := expiretest.AllFiles(ctx, e.fs, root)
			if err != nil {
				t.Fatal(err)
			}
			return reportJSON(t, d), reportJSON(t, r), r.Count(), all
		}
		memDry, memReal, n, memFiles := run(1<<16, 1<<12)
		spoolDry, spoolReal, _, spoolFiles := run(1, 3)
		if n < extra+10 || (seed == 1 && n <= orphan.SampleLimit) {
			t.Fatalf("seed %d: %d files deleted, the test proves less than it should", seed, n)
		}
		if memDry != spoolDry {
			t.Fatalf("seed %d: dry-run reports differ:\n%s\n%s", seed, memDry, spoolDry)
		}
		if memReal != spoolReal {
			t.Fatalf("seed %d: reports differ:\n%s\n%s", seed, memReal, spoolReal)
		}
		if !slices.Equal(memFiles, spoolFiles) {
			t.Fatalf("seed %d: the tables differ after the cleanup", seed)
		}
	}
}

// Run matches referenced names by 64-bit hash; a collision can only keep a
// file. With every name hashing alike, the name of any referenced file
// protects every candidate and nothing is deleted; with few distinct
// hashes, whatever is deleted, everything referenced stays.
func TestRunNameHashCollisionsOnlyKeepFiles(t *testing.T) {
	ctx := context.Background()
	for _, h := range []func(string) uint64{
		func(string) uint64 { return 42 },
		func(name string) uint64 { return uint64(len(name) % 5) },
	} {
		for _, spill := range []int{1 << 16, 1} {
			e := build(t, 7)
			before, _ := expiretest.AllFiles(ctx, e.fs, root)
			restore := orphan.SetSpillAfter(spill, 3)
			restoreHash := orphan.SetNameHash(h)
			rep, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now})
			restoreHash()
			restore()
			if err != nil {
				t.Fatal(err)
			}
			intact(t, e)
			for _, p := range e.keep {
				if !exists(t, e, p) {
					t.Fatalf("%s was deleted", p)
				}
			}
			after, _ := expiretest.AllFiles(ctx, e.fs, root)
			if h("a") == 42 && (rep.Count() != 0 || !slices.Equal(before, after)) {
				t.Fatalf("all names collide with a referenced one, yet %d files were deleted", rep.Count())
			}
		}
	}
}
