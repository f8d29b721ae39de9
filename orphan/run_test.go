package orphan_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/table"
)

const root = "/wh/db.db/t"

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type env struct {
	fs    *expiretest.MemFS
	sim   *expiretest.Table
	clock time.Time
	now   time.Time
	// old orphans that must go, files that must stay
	orphans, keep []string
}

func (e *env) write(t *testing.T, path string, mod time.Time) {
	t.Helper()
	if err := fileio.WriteFile(context.Background(), e.fs, path, []byte("orphan")); err != nil {
		t.Fatal(err)
	}
	e.fs.SetModTime(path, mod)
}

// build makes a random history written two days before now, expires part of
// it, and plants orphans (old), young unreferenced files and foreign files.
func build(t *testing.T, seed uint64) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{fs: expiretest.NewMemFS(), clock: t0}
	e.fs.Clock = func() time.Time { return e.clock }
	e.now = t0.Add(48 * time.Hour)
	if err := fileio.WriteFile(ctx, e.fs, root+"/schema/schema-0", []byte(`{"id":0,"partitionKeys":["p"],"options":{"bucket":"2"}}`)); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 3))
	e.sim = expiretest.New(e.fs, root, seed)
	n := 8 + r.IntN(20)
	for i := 0; i < n; i++ {
		if _, err := e.sim.Commit(ctx, 60_000); err != nil {
			t.Fatal(err)
		}
		if r.IntN(5) == 0 {
			if err := e.sim.Tag(ctx, fmt.Sprint("t", i), e.sim.Latest()); err != nil {
				t.Fatal(err)
			}
		}
	}
	o := expire.DefaultOptions()
	o.RetainMin, o.TimeRetained = 1+r.IntN(5), 0
	if _, err := expire.Run(ctx, e.sim.Source(), expire.RunOptions{Options: o, Now: time.UnixMilli(e.sim.TimeMillis() + 1)}); err != nil {
		t.Fatal(err)
	}
	old, young := e.now.Add(-30*time.Hour), e.now.Add(-10*time.Minute)
	for i, p := range []string{
		root + "/p=0/bucket-0/data-orphan-0.parquet", root + "/p=1/bucket-1/changelog-orphan-0.parquet",
		root + "/p=2/bucket-0/data-orphan-1.parquet.index", root + "/manifest/manifest-orphan-0",
		root + "/manifest/manifest-list-orphan-0", root + "/manifest/index-manifest-orphan-0",
		root + "/index/index-orphan-0", root + "/statistics/stat-orphan-0",
		root + "/manifest/.manifest-x-1.0c7a.tmp", root + "/snapshot/.snapshot-99.0c7a.tmp",
	} {
		e.write(t, p, old)
		e.orphans = append(e.orphans, p)
		yp := strings.Replace(p, "orphan", "young", 1)
		if yp == p {
			yp = strings.Replace(p, ".0c7a", ".young", 1)
		}
		e.write(t, yp, young)
		e.keep = append(e.keep, yp)
		if i < 3 {
			e.write(t, root+fmt.Sprintf("/p=%d/bucket-0/README", i), old)
			e.keep = append(e.keep, root+fmt.Sprintf("/p=%d/bucket-0/README", i))
		}
	}
	e.write(t, root+"/manifest/notes.txt", old)
	e.keep = append(e.keep, root+"/manifest/notes.txt")
	return e
}

// intact checks that every existing snapshot (all of them, not only from
// EARLIEST) and every tag still has all its files.
func intact(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	ids, err := table.ListIDs(ctx, e.fs, root+"/snapshot", "snapshot-")
	if err != nil {
		t.Fatal(err)
	}
	var check []table.Snapshot
	for _, id := range ids {
		s, err := table.ReadSnapshotFile(ctx, e.fs, table.SnapshotPath(root, id))
		if err != nil {
			t.Fatal(err)
		}
		check = append(check, *s)
	}
	nsnap := len(check)
	tags, _ := table.ReadTags(ctx, e.fs, root)
	for _, tg := range tags {
		check = append(check, tg.Snapshot)
	}
	for i, s := range check {
		for _, p := range e.sim.Files(s, i < nsnap) { // a tag keeps no changelog
			if ok, _ := fileio.Exists(ctx, e.fs, p); !ok {
				t.Fatalf("snapshot %d lost %s", s.ID, p)
			}
		}
	}
}

func exists(t *testing.T, e *env, p string) bool {
	ok, err := fileio.Exists(context.Background(), e.fs, p)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestRunDeletesOrphansAndKeepsEverythingReferenced(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 30; seed++ {
		e := build(t, seed)
		rep, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now})
		if err != nil {
			t.Fatal(err)
		}
		intact(t, e)
		for _, p := range e.orphans {
			if exists(t, e, p) {
				t.Errorf("seed %d: orphan %s survived", seed, p)
			}
		}
		for _, p := range e.keep {
			if !exists(t, e, p) {
				t.Errorf("seed %d: %s was deleted", seed, p)
			}
		}
		var bytes int64
		for _, f := range rep.Files {
			bytes += f.Size
		}
		if bytes != rep.Bytes || len(rep.Files) < len(e.orphans) {
			t.Fatalf("seed %d: report %d files %d bytes (sum %d)", seed, len(rep.Files), rep.Bytes, bytes)
		}
		// A second run finds nothing.
		again, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now})
		if err != nil || len(again.Files) != 0 {
			t.Fatalf("seed %d: second run deleted %v (%v)", seed, again.Files, err)
		}
	}
}

func TestRunDryRunReportsTheSameAndDeletesNothing(t *testing.T) {
	ctx := context.Background()
	e := build(t, 4)
	before, _ := expiretest.AllFiles(ctx, e.fs, root)
	dry, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := expiretest.AllFiles(ctx, e.fs, root)
	if !slices.Equal(before, after) {
		t.Fatal("dry run deleted files")
	}
	real, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now})
	if err != nil {
		t.Fatal(err)
	}
	paths := func(fs []orphan.File) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(paths(dry.Files), paths(real.Files)) || dry.Bytes != real.Bytes || dry.Bytes == 0 {
		t.Fatalf("dry run %d files/%d bytes, real %d files/%d bytes", len(dry.Files), dry.Bytes, len(real.Files), real.Bytes)
	}
}

// hookFS calls hook before the n-th listing of dir.
type hookFS struct {
	fileio.FileIO
	dir  string
	n    int
	hook func()
	mu   sync.Mutex
	seen int
}

func (h *hookFS) List(ctx context.Context, dir string) ([]fileio.FileInfo, error) {
	if dir == h.dir {
		h.mu.Lock()
		h.seen++
		fire := h.seen == h.n
		h.mu.Unlock()
		if fire {
			h.hook()
		}
	}
	return h.FileIO.List(ctx, dir)
}

// A writer that wrote its files long ago and commits while the cleanup runs
// (after the file listing, before references are collected) must not lose
// them: listing first makes its files either unlisted or referenced.
func TestRunListsBeforeCollectingReferences(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 10; seed++ {
		e := build(t, seed)
		if err := e.sim.Stage(ctx, 60_000); err != nil { // files written at t0: old
			t.Fatal(err)
		}
		src := e.sim.Source()
		src.FS = &hookFS{FileIO: e.fs, dir: root + "/snapshot", n: 2, hook: func() {
			if _, err := e.sim.Publish(ctx); err != nil {
				t.Error(err)
			}
		}}
		if _, err := orphan.Run(ctx, src, orphan.RunOptions{Now: e.now}); err != nil {
			t.Fatal(err)
		}
		intact(t, e)
		if _, ok := e.sim.Snapshots[e.sim.Latest()]; !ok || e.sim.Latest() == 0 {
			t.Fatal("staged commit was not published during the run")
		}
	}
}

// Files referenced only by another branch are kept; the same table without
// the branch loses them (so the check is not vacuous).
func TestRunProtectsBranches(t *testing.T) {
	ctx := context.Background()
	for _, withBranch := range []bool{true, false} {
		e := build(t, 11)
		ids, _ := table.ListIDs(ctx, e.fs, root+"/snapshot", "snapshot-")
		first := ids[0]
		data, _ := fileio.ReadFile(ctx, e.fs, table.SnapshotPath(root, first))
		s, _ := table.ParseSnapshot(data)
		if withBranch {
			if err := fileio.WriteFile(ctx, e.fs, root+"/branch/branch-b/schema/schema-0", []byte(`{"id":0,"partitionKeys":["p"],"options":{}}`)); err != nil {
				t.Fatal(err)
			}
			if err := fileio.WriteFile(ctx, e.fs, table.SnapshotPath(root+"/branch/branch-b", first), data); err != nil {
				t.Fatal(err)
			}
		}
		// Main moves on without running expiry: its old snapshots vanish
		// (as after a rollback) and their files are now the branch's alone.
		for i := 0; i < 6; i++ {
			if _, err := e.sim.Commit(ctx, 60_000); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range ids {
			_ = e.fs.Delete(ctx, table.SnapshotPath(root, id))
		}
		_ = e.fs.Delete(ctx, root+"/snapshot/EARLIEST")
		for _, tg := range mustTags(t, e) {
			_ = e.fs.Delete(ctx, root+"/tag/tag-"+tg.Name)
		}
		e.clock = e.now.Add(-30 * time.Hour) // the new commits are old too
		if _, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now}); err != nil {
			t.Fatal(err)
		}
		lost := 0
		for _, p := range e.sim.Files(*s, false) {
			if !exists(t, e, p) {
				lost++
			}
		}
		if withBranch && lost > 0 {
			t.Fatalf("branch snapshot lost %d files", lost)
		}
		if !withBranch && lost == 0 {
			t.Fatal("without the branch its files should have been orphans")
		}
	}
}

func mustTags(t *testing.T, e *env) []*table.Tag {
	tags, err := table.ReadTags(context.Background(), e.fs, root)
	if err != nil {
		t.Fatal(err)
	}
	return tags
}

func TestRunRefusesBranchWithoutSchema(t *testing.T) {
	ctx := context.Background()
	e := build(t, 2)
	e.write(t, root+"/branch/branch-x/snapshot/snapshot-1", e.now.Add(-30*time.Hour))
	before, _ := expiretest.AllFiles(ctx, e.fs, root)
	if _, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now}); err == nil {
		t.Fatal("want refusal")
	}
	after, _ := expiretest.AllFiles(ctx, e.fs, root)
	if !slices.Equal(before, after) {
		t.Fatal("refused run deleted files")
	}
}

type failListFS struct {
	fileio.FileIO
	dir string
}

func (f failListFS) List(ctx context.Context, dir string) ([]fileio.FileInfo, error) {
	if dir == f.dir {
		return nil, errors.New("listing throttled")
	}
	return f.FileIO.List(ctx, dir)
}

func TestRunAbortsOnListingError(t *testing.T) {
	ctx := context.Background()
	e := build(t, 3)
	before, _ := expiretest.AllFiles(ctx, e.fs, root)
	src := e.sim.Source()
	src.FS = failListFS{FileIO: e.fs, dir: root + "/p=1/bucket-1"}
	if _, err := orphan.Run(ctx, src, orphan.RunOptions{Now: e.now}); err == nil {
		t.Fatal("want error")
	}
	after, _ := expiretest.AllFiles(ctx, e.fs, root)
	if !slices.Equal(before, after) {
		t.Fatal("aborted run deleted files")
	}
}

func TestRunRemovesEmptyPartitionDirectories(t *testing.T) {
	ctx := context.Background()
	e := build(t, 5)
	e.fs.MkdirAll(root + "/p=9/bucket-0")
	e.fs.SetModTime(root+"/p=9/bucket-0", e.now.Add(-30*time.Hour))
	e.fs.SetModTime(root+"/p=9", e.now.Add(-30*time.Hour))
	rep, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now})
	if err != nil {
		t.Fatal(err)
	}
	if exists(t, e, root+"/p=9/bucket-0") || exists(t, e, root+"/p=9") {
		t.Fatalf("empty partition directory kept; removed %v", rep.Dirs)
	}
	if !exists(t, e, root+"/manifest") || !exists(t, e, root) {
		t.Fatal("removed a non-data directory")
	}
}

func TestRunRefusesYoungCutoff(t *testing.T) {
	e := build(t, 6)
	if _, err := orphan.Run(context.Background(), e.sim.Source(), orphan.RunOptions{Now: e.now, OlderThan: 5 * time.Minute}); err == nil {
		t.Fatal("want refusal")
	}
}

// For every crash point k of a cleanup, all snapshots and tags stay intact
// and a rerun ends in the state of an uninterrupted run.
func TestRunCrashAtEveryStepConverges(t *testing.T) {
	ctx := context.Background()
	ref := build(t, 9)
	if _, err := orphan.Run(ctx, ref.sim.Source(), orphan.RunOptions{Now: ref.now}); err != nil {
		t.Fatal(err)
	}
	want, _ := expiretest.AllFiles(ctx, ref.fs, root)
	for k := 1; ; k++ {
		e := build(t, 9)
		src := e.sim.Source()
		src.FS = &expiretest.FailingFS{FileIO: e.fs, FailAt: k}
		_, err := orphan.Run(ctx, src, orphan.RunOptions{Now: e.now, Parallelism: 1})
		if err == nil {
			if k < 5 {
				t.Fatalf("finished after %d operations", k)
			}
			break
		}
		if !errors.Is(err, expiretest.ErrInjected) {
			t.Fatal(err)
		}
		intact(t, e)
		if _, err := orphan.Run(ctx, e.sim.Source(), orphan.RunOptions{Now: e.now}); err != nil {
			t.Fatal(err)
		}
		got, _ := expiretest.AllFiles(ctx, e.fs, root)
		if !slices.Equal(got, want) {
			t.Fatalf("crash at op %d then rerun differs from an uninterrupted run", k)
		}
	}
}
