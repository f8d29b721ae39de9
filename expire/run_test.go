package expire_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// history builds a deterministic random table: n commits, a minute apart
// (some further), with tags and a consumer when asked.
func history(t *testing.T, fs fileio.FileIO, root string, seed uint64, n int, tags, consumer bool) *expiretest.Table {
	t.Helper()
	ctx := context.Background()
	sim := expiretest.New(fs, root, seed)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := 0; i < n; i++ {
		if _, err := sim.Commit(ctx, int64(1+r.IntN(3))*60_000); err != nil {
			t.Fatal(err)
		}
		if tags && r.IntN(6) == 0 {
			if err := sim.Tag(ctx, fmt.Sprintf("t%d", i), sim.Latest()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if consumer {
		if err := sim.Consumer(ctx, "reader", 1+int64(r.IntN(n))); err != nil {
			t.Fatal(err)
		}
	}
	return sim
}

func opts(sim *expiretest.Table, min, max, limit int, retained time.Duration) expire.RunOptions {
	o := expire.DefaultOptions()
	o.RetainMin, o.RetainMax, o.Limit, o.TimeRetained = min, max, limit, retained
	return expire.RunOptions{Options: o, Now: time.UnixMilli(sim.TimeMillis()).Add(time.Minute)}
}

// referenced is every file of every snapshot >= end and every tag.
func referenced(t *testing.T, sim *expiretest.Table, end int64) map[string]bool {
	ctx := context.Background()
	ref := map[string]bool{}
	for id, s := range sim.Snapshots {
		if id >= end {
			for _, p := range sim.Files(s, true) {
				ref[p] = true
			}
		}
	}
	tags, err := table.ReadTags(ctx, sim.FS, sim.Root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range tags {
		for _, p := range sim.Files(tg.Snapshot, false) {
			ref[p] = true
		}
	}
	return ref
}

func TestRunNeverDeletesRetainedFiles(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			root := "/wh/db.db/t"
			fs := expiretest.NewMemFS()
			sim := history(t, fs, root, seed, 10+r.IntN(30), seed%2 == 0, seed%3 == 0)
			for round := 0; round < 3; round++ {
				min := 1 + r.IntN(6)
				o := opts(sim, min, min+r.IntN(10), 1+r.IntN(20), time.Duration(r.IntN(30))*time.Minute)
				if r.IntN(4) == 0 {
					o.RetainMax = 1 << 30
				}
				rep, err := expire.Run(ctx, sim.Source(), o)
				if err != nil {
					t.Fatal(err)
				}
				if err := sim.CheckReadable(ctx); err != nil {
					t.Fatalf("round %d (%+v): %v", round, rep, err)
				}
				ref := referenced(t, sim, rep.End)
				for _, list := range [][]string{rep.DataFiles, rep.Manifests, rep.ManifestLists, rep.IndexFiles, rep.IndexManifests, rep.Statistics} {
					for _, p := range list {
						if ref[p] {
							t.Fatalf("round %d: deleted %s, still referenced by a snapshot >= %d or a tag", round, p, rep.End)
						}
					}
				}
				ids, _ := table.ListIDs(ctx, fs, fileio.Join(root, "snapshot"), "snapshot-")
				if len(ids) > 0 && ids[0] != rep.End {
					t.Fatalf("round %d: earliest snapshot %d after run, want End %d", round, ids[0], rep.End)
				}
				for range r.IntN(8) {
					if _, err := sim.Commit(ctx, 60_000); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// Without tags, an expiration that started at snapshot 1 leaves exactly the
// files of the retained snapshots.
func TestRunLeavesNoUnreferencedFiles(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 20; seed++ {
		root := "/wh/db.db/t"
		fs := expiretest.NewMemFS()
		sim := history(t, fs, root, seed, 30, false, false)
		var end int64
		for round := 0; round < 4; round++ {
			rep, err := expire.Run(ctx, sim.Source(), opts(sim, 3, 1<<30, 7, 0))
			if err != nil {
				t.Fatal(err)
			}
			end = rep.End
		}
		if end != 28 {
			t.Fatalf("seed %d: End %d, want 28", seed, end)
		}
		ref := referenced(t, sim, end)
		all, err := expiretest.AllFiles(ctx, fs, root)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range all {
			if strings.Contains(p, "/snapshot/") {
				continue
			}
			if !ref[p] {
				t.Errorf("seed %d: %s survived but no retained snapshot uses it", seed, p)
			}
		}
	}
}

func TestRunDryRunReportsTheSameAndDeletesNothing(t *testing.T) {
	ctx := context.Background()
	fs := fileio.NewLocal()
	root := t.TempDir()
	sim := history(t, fs, root, 5, 25, true, false)
	before, _ := expiretest.AllFiles(ctx, fs, root)
	o := opts(sim, 4, 1<<30, 50, 0)
	o.DryRun = true
	dry, err := expire.Run(ctx, sim.Source(), o)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := expiretest.AllFiles(ctx, fs, root)
	if !slices.Equal(before, after) {
		t.Fatal("dry run changed the table")
	}
	o.DryRun = false
	real, err := expire.Run(ctx, sim.Source(), o)
	if err != nil {
		t.Fatal(err)
	}
	dry.DryRun = false
	if fmt.Sprint(dry) != fmt.Sprint(real) {
		t.Fatalf("dry run report differs:\n%+v\n%+v", dry, real)
	}
	if real.Files() == 0 || len(real.DataFiles) == 0 {
		t.Fatalf("expected deletions, got %+v", real)
	}
}

// For every crash point k of an expiration, the table stays readable from
// its earliest snapshot and a rerun ends in the same state as a run that
// never crashed.
func TestRunCrashAtEveryStepConverges(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{3, 8} {
		build := func(t *testing.T) (*expiretest.Table, string) {
			root := "/wh/db.db/t"
			return history(t, expiretest.NewMemFS(), root, seed, 24, true, false), root
		}
		ref, refRoot := build(t)
		o := opts(ref, 3, 1<<30, 50, 0)
		o.CleanEmptyDirectories = true
		if _, err := expire.Run(ctx, ref.Source(), o); err != nil {
			t.Fatal(err)
		}
		want, _ := expiretest.AllFiles(ctx, ref.FS, refRoot)
		for k := 1; ; k++ {
			sim, root := build(t)
			ffs := &expiretest.FailingFS{FileIO: sim.FS, FailAt: k}
			src := sim.Source()
			src.FS = ffs
			_, err := expire.Run(ctx, src, o)
			if err == nil {
				if k < 5 {
					t.Fatalf("seed %d: run finished with only %d operations", seed, k)
				}
				break
			}
			if !errors.Is(err, expiretest.ErrInjected) {
				t.Fatalf("seed %d k %d: %v", seed, k, err)
			}
			if err := sim.CheckReadable(ctx); err != nil {
				t.Fatalf("seed %d: crash at op %d left the table unreadable: %v", seed, k, err)
			}
			if _, err := expire.Run(ctx, sim.Source(), o); err != nil {
				t.Fatalf("seed %d k %d: rerun: %v", seed, k, err)
			}
			got, _ := expiretest.AllFiles(ctx, sim.FS, root)
			if !slices.Equal(rel(got, root), rel(want, refRoot)) {
				t.Fatalf("seed %d: crash at op %d then rerun: files differ from an uninterrupted run:\n got %v\nwant %v", seed, k, rel(got, root), rel(want, refRoot))
			}
		}
	}
}

func rel(paths []string, root string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.TrimPrefix(p, root)
	}
	return out
}

// A rerun after a crash finishes the range the crashed run condemned
// (EARLIEST already points past it) even if retention would now keep more:
// those snapshots may have lost files already.
func TestRunFinishesARangeACrashedRunCondemned(t *testing.T) {
	ctx := context.Background()
	sim := history(t, expiretest.NewMemFS(), "/wh/db.db/t", 21, 30, false, false)
	o := opts(sim, 5, 1<<30, 50, 0)
	src := sim.Source()
	src.FS = &expiretest.FailingFS{FileIO: sim.FS, FailAt: 4}
	if _, err := expire.Run(ctx, src, o); !errors.Is(err, expiretest.ErrInjected) {
		t.Fatalf("want injected crash, got %v", err)
	}
	b, err := fileio.ReadFile(ctx, sim.FS, "/wh/db.db/t/snapshot/EARLIEST")
	if err != nil || string(b) != "26" {
		t.Fatalf("EARLIEST after crash %q %v", b, err)
	}
	if err := sim.Consumer(ctx, "late", 3); err != nil {
		t.Fatal(err)
	}
	o.RetainMin = 20
	rep, err := expire.Run(ctx, sim.Source(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.End != 26 || len(rep.Snapshots) != 25 {
		t.Fatalf("End %d, expired %v; want the condemned range 1..25", rep.End, rep.Snapshots)
	}
	if err := sim.CheckReadable(ctx); err != nil {
		t.Fatal(err)
	}
}
