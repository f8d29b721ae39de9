package compact_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/deletionvector"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/planner"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

const dvFixtures = "../../shared/fixtures/paimon-cpp/parquet"

// copyDVFixture copies Java's partitioned two-bucket deletion-vector table
// pk_09 (three buckets with vectors) into a fresh warehouse.
func copyDVFixture(t *testing.T) *table.Table {
	t.Helper()
	wh := t.TempDir()
	expiretest.CopyDir(t, filepath.Join(dvFixtures, "pk_09.db", "pk_09"), filepath.Join(wh, "pk_09.db", "pk_09"))
	tb, err := table.Open(context.Background(), fileio.NewLocal(), wh, "pk_09", "pk_09")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// dvBuckets are the buckets of tb's latest snapshot that have a vector.
func dvBuckets(t *testing.T, tb *table.Table) []*table.BucketFiles {
	t.Helper()
	var out []*table.BucketFiles
	for _, b := range latestFileSet(t, tb).Buckets() {
		if len(b.IndexFiles) > 0 {
			out = append(out, b)
		}
	}
	if len(out) < 2 {
		t.Fatalf("%d buckets with deletion vectors", len(out))
	}
	return out
}

// deleteOne is a job of bucket b that deletes the first row of its first
// file not yet deleted; it returns the job's result and the row position.
func deleteOne(t *testing.T, tb *table.Table, b *table.BucketFiles) (*compact.JobResult, int64) {
	t.Helper()
	ctx := context.Background()
	m, err := deletionvector.Load(ctx, tb, b)
	if err != nil {
		t.Fatal(err)
	}
	file := b.Files[0].File.FileName
	dv := m.DeletionVectorOf(file)
	pos := int64(0)
	for dv.IsDeleted(pos) {
		pos++
	}
	if err := m.NotifyNewDeletion(file, pos); err != nil {
		t.Fatal(err)
	}
	ch, path, err := m.Write(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &compact.JobResult{Job: planner.Job{Partition: string(b.Partition), Bucket: int(b.Bucket)}}
	r.AddIndexChange(ch, path)
	return r, pos
}

func bucketIndex(t *testing.T, tb *table.Table, b *table.BucketFiles) []string {
	t.Helper()
	ctx := context.Background()
	tb = reopen(t, tb)
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := tb.IndexEntries(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Bucket == b.Bucket && string(e.Partition) == string(b.Partition) {
			out = append(out, e.IndexFile.FileName)
		}
	}
	return out
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestARebaseDropsTheJobWhoseBucketsVectorsAConcurrentCommitChanged: two
// bucket jobs change deletion vectors; before they commit, another writer
// changes the first bucket's vectors. The commit conflicts, the first job
// is dropped (its index file deleted, the other writer's vectors kept) and
// the second one is committed.
func TestARebaseDropsTheJobWhoseBucketsVectorsAConcurrentCommitChanged(t *testing.T) {
	ctx := context.Background()
	tb := copyDVFixture(t)
	bs := dvBuckets(t, tb)
	jobA, _ := deleteOne(t, tb, bs[0])
	jobB, _ := deleteOne(t, tb, bs[1])
	other, _ := deleteOne(t, tb, bs[0])
	if _, _, err := compact.CommitResults(ctx, tb, []*compact.JobResult{other}, compact.Options{CommitUser: "other-writer"}); err != nil {
		t.Fatal(err)
	}
	otherFile := other.IndexChanges[0].Files[0].FileName
	snap, kept, err := compact.CommitResults(ctx, tb, []*compact.JobResult{jobA, jobB}, compact.Options{CommitUser: "compactd"})
	if err != nil {
		t.Fatal(err)
	}
	if snap == nil || len(kept) != 1 || kept[0] != jobB {
		t.Fatalf("committed %v, kept %d jobs", snap, len(kept))
	}
	if got := bucketIndex(t, tb, bs[0]); !slices.Equal(got, []string{otherFile}) {
		t.Fatalf("bucket %d index files %v, the other writer's is %s", bs[0].Bucket, got, otherFile)
	}
	if got := bucketIndex(t, tb, bs[1]); !slices.Equal(got, []string{jobB.IndexChanges[0].Files[0].FileName}) {
		t.Fatalf("bucket %d index files %v", bs[1].Bucket, got)
	}
	if exists(jobA.Written[0]) || !exists(jobB.Written[0]) {
		t.Fatalf("dropped job's file exists %v, committed job's file exists %v", exists(jobA.Written[0]), exists(jobB.Written[0]))
	}
}

// failOnce fails the n-th mutating operation only (a transient store
// error); cleanup afterwards works.
type failOnce struct {
	fileio.FileIO
	n      int
	mu     sync.Mutex
	ops    int
	failed string // the path of the failed operation
}

func (f *failOnce) step(op, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops++
	if f.ops == f.n {
		f.failed = path
		return fmt.Errorf("%s %s: %w", op, path, expiretest.ErrInjected)
	}
	return nil
}

func (f *failOnce) Create(ctx context.Context, p string) (fileio.Writer, error) {
	if err := f.step("create", p); err != nil {
		return nil, err
	}
	return f.FileIO.Create(ctx, p)
}

func (f *failOnce) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if err := f.step("write", p); err != nil {
		return err
	}
	return f.FileIO.WriteExclusive(ctx, p, data)
}

// referencedIndexFiles are the index files (and index manifests) any
// snapshot of the table references.
func referencedIndexFiles(t *testing.T, tb *table.Table) map[string]bool {
	t.Helper()
	ctx := context.Background()
	tb = reopen(t, tb)
	ids, err := tb.SnapshotIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, id := range ids {
		s, err := tb.Snapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.IndexManifest == nil {
			continue
		}
		out[*s.IndexManifest] = true
		entries, err := tb.IndexEntries(ctx, s)
		if err != nil {
			t.Fatalf("snapshot %d: %v", id, err)
		}
		for _, e := range entries {
			out[e.IndexFile.FileName] = true
		}
	}
	return out
}

func onDisk(t *testing.T, tb *table.Table) []string {
	t.Helper()
	a, _ := filepath.Glob(filepath.Join(tb.Path(), "index", "index-*"))
	b, _ := filepath.Glob(filepath.Join(tb.Path(), "manifest", "index-manifest-*"))
	var out []string
	for _, p := range append(a, b...) {
		out = append(out, filepath.Base(p))
	}
	return out
}

// TestAFailureOrCancelAtEachStepOfADVCommitLeavesTheTableReadable fails
// each store operation of a deletion-vector job (the index file, the
// manifests, the index manifest, the snapshot) in turn, once as a
// transient error and once as a crash (every later operation fails too),
// and cancels the context at each step. The table stays readable and reads
// either as before or with exactly the deleted row gone; every index file
// or index manifest left on disk is referenced by a snapshot or, only after
// a crash or a publish of unknown outcome, by none (orphan cleanup's
// part: Commit keeps the files of an attempt that may have been published);
// after any other transient failure or cancellation nothing unreferenced is
// left.
func TestAFailureOrCancelAtEachStepOfADVCommitLeavesTheTableReadable(t *testing.T) {
	ctx := context.Background()
	probe := copyDVFixture(t)
	before := scanRows(t, probe)
	// How many mutating operations does a successful run take?
	counter := &expiretest.FailingFS{FileIO: probe.FileIO()}
	ctb, err := table.OpenPath(ctx, counter, probe.Path())
	if err != nil {
		t.Fatal(err)
	}
	job, _ := deleteOne(t, ctb, dvBuckets(t, ctb)[0])
	if _, _, err := compact.CommitResults(ctx, ctb, []*compact.JobResult{job}, compact.Options{CommitUser: "compactd"}); err != nil {
		t.Fatal(err)
	}
	after := scanRows(t, probe)
	if len(after) != len(before)-1 {
		t.Fatalf("the job deleted %d rows", len(before)-len(after))
	}
	steps := counter.Ops
	if steps < 5 {
		t.Fatalf("%d mutating operations", steps)
	}
	check := func(t *testing.T, tb *table.Table, leftovers bool) {
		t.Helper()
		rows := scanRows(t, tb)
		if !slices.Equal(rows, before) && !slices.Equal(rows, after) {
			t.Fatalf("the table reads %d rows, neither as before (%d) nor as after (%d)", len(rows), len(before), len(after))
		}
		ref := referencedIndexFiles(t, tb)
		for _, f := range onDisk(t, tb) {
			if !ref[f] && !leftovers {
				t.Errorf("%s is left unreferenced", f)
			}
		}
		for f := range ref {
			if !exists(filepath.Join(tb.Path(), "index", f)) && !exists(filepath.Join(tb.Path(), "manifest", f)) {
				t.Errorf("%s is referenced and missing", f)
			}
		}
	}
	run := func(tb *table.Table, jctx context.Context) error {
		b := dvBuckets(t, tb)[0]
		m, err := deletionvector.Load(jctx, tb, b)
		if err != nil {
			return err
		}
		file := b.Files[0].File.FileName
		dv := m.DeletionVectorOf(file)
		pos := int64(0)
		for dv.IsDeleted(pos) {
			pos++
		}
		if err := m.NotifyNewDeletion(file, pos); err != nil {
			return err
		}
		ch, path, err := m.Write(jctx)
		if err != nil {
			return err
		}
		r := &compact.JobResult{}
		r.AddIndexChange(ch, path)
		_, _, err = compact.CommitResults(jctx, tb, []*compact.JobResult{r}, compact.Options{CommitUser: "compactd"})
		return err
	}
	for k := 1; k <= steps; k++ {
		t.Run(fmt.Sprintf("transient failure of operation %d", k), func(t *testing.T) {
			base := copyDVFixture(t)
			fio := &failOnce{FileIO: base.FileIO(), n: k}
			tb, err := table.OpenPath(ctx, fio, base.Path())
			if err != nil {
				t.Fatal(err)
			}
			err = run(tb, ctx)
			if err != nil && !errors.Is(err, expiretest.ErrInjected) {
				t.Fatalf("error without the injected failure: %v", err)
			}
			check(t, base, strings.Contains(fio.failed, "/snapshot/snapshot-"))
		})
		t.Run(fmt.Sprintf("crash at operation %d", k), func(t *testing.T) {
			base := copyDVFixture(t)
			tb, err := table.OpenPath(ctx, &expiretest.FailingFS{FileIO: base.FileIO(), FailAt: k}, base.Path())
			if err != nil {
				t.Fatal(err)
			}
			_ = run(tb, ctx)
			check(t, base, true)
		})
		t.Run(fmt.Sprintf("cancel at operation %d", k), func(t *testing.T) {
			base := copyDVFixture(t)
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			tb, err := table.OpenPath(ctx, &cancelAt{FileIO: base.FileIO(), n: k, cancel: cancel}, base.Path())
			if err != nil {
				t.Fatal(err)
			}
			err = run(tb, cctx)
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled run: %v", err)
			}
			check(t, base, errors.Is(err, table.ErrCommitOutcomeUnknown))
		})
	}
}

// cancelAt cancels the context right before the n-th mutating operation,
// which then runs with the cancelled context.
type cancelAt struct {
	fileio.FileIO
	n      int
	cancel context.CancelFunc
	mu     sync.Mutex
	ops    int
}

func (c *cancelAt) step() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ops++
	if c.ops == c.n {
		c.cancel()
	}
}

func (c *cancelAt) Create(ctx context.Context, p string) (fileio.Writer, error) {
	c.step()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.FileIO.Create(ctx, p)
}

func (c *cancelAt) WriteExclusive(ctx context.Context, p string, data []byte) error {
	c.step()
	return c.FileIO.WriteExclusive(ctx, p, data)
}

// TestFinishDeletionVectorsKeepsUpgradedFilesVectorsAndDropsRewrittenOnes:
// an upgraded file (DELETE and ADD of the same file at a new level) keeps
// its vector, grown by the lookup's new deletions, and the commit accepts
// it; a rewritten file (DELETE only) loses its vector; a job that changed
// nothing records no index change.
func TestFinishDeletionVectorsKeepsUpgradedFilesVectorsAndDropsRewrittenOnes(t *testing.T) {
	ctx := context.Background()
	job := func(tb *table.Table, upgrade, lookup bool) (*compact.JobResult, *table.BucketFiles, *deletionvector.Maintainer) {
		t.Helper()
		var b *table.BucketFiles
		for _, x := range dvBuckets(t, tb) {
			if len(x.IndexFiles[0].DeletionVectors) > 0 {
				b = x
			}
		}
		if b == nil {
			t.Fatal("no bucket with a vector")
		}
		m, err := deletionvector.Load(ctx, tb, b)
		if err != nil {
			t.Fatal(err)
		}
		e := b.Files[0]
		del := e
		del.Kind = manifest.FileKindDelete
		r := &compact.JobResult{Job: planner.Job{Partition: string(b.Partition), Bucket: int(b.Bucket)}, Entries: []manifest.Entry{del}}
		if upgrade {
			up := e
			up.File.Level--
			r.Entries = append(r.Entries, up)
		}
		if lookup {
			f := e.File.FileName
			pos := int64(0)
			for m.DeletionVectorOf(f).IsDeleted(pos) {
				pos++
			}
			if err := m.NotifyNewDeletion(f, pos); err != nil {
				t.Fatal(err)
			}
		}
		return r, b, m
	}

	tb := copyDVFixture(t)
	r, b, m := job(tb, true, true)
	file := b.Files[0].File.FileName
	before := m.DeletionVectorOf(file).Cardinality()
	if err := r.FinishDeletionVectors(ctx, m); err != nil {
		t.Fatal(err)
	}
	if len(r.IndexChanges) != 1 || len(r.Written) != 1 {
		t.Fatalf("%d index changes, written %v", len(r.IndexChanges), r.Written)
	}
	dvs := r.IndexChanges[0].Files[0].DeletionVectors
	if len(dvs) != 1 || dvs[0].DataFileName != file || *dvs[0].Cardinality != before {
		t.Fatalf("upgraded file's vectors %+v, want %s with %d rows", dvs, file, before)
	}
	if _, _, err := compact.CommitResults(ctx, tb, []*compact.JobResult{r}, compact.Options{CommitUser: "compactd"}); err != nil {
		t.Fatalf("committing an upgrade with its vector: %v", err)
	}
	if got := bucketIndex(t, tb, b); !slices.Equal(got, []string{r.IndexChanges[0].Files[0].FileName}) {
		t.Fatalf("index files %v", got)
	}

	tb = copyDVFixture(t)
	r, _, m = job(tb, false, false)
	if err := r.FinishDeletionVectors(ctx, m); err != nil {
		t.Fatal(err)
	}
	if len(r.IndexChanges) != 1 || r.IndexChanges[0].Files[0].RowCount != 0 {
		t.Fatalf("rewritten file's vector kept: %+v", r.IndexChanges)
	}

	tb = copyDVFixture(t)
	r, _, m = job(tb, true, false)
	if err := r.FinishDeletionVectors(ctx, m); err != nil {
		t.Fatal(err)
	}
	if len(r.IndexChanges) != 0 || len(r.Written) != 0 {
		t.Fatalf("an unchanged bucket recorded %+v, wrote %v", r.IndexChanges, r.Written)
	}
}

// countingOpens counts the opens of each path.
type countingOpens struct {
	fileio.FileIO
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingOpens) Open(ctx context.Context, p string) (fileio.Reader, error) {
	c.mu.Lock()
	c.opens[p]++
	c.mu.Unlock()
	return c.FileIO.Open(ctx, p)
}

// A deletion-vector job reads its bucket's index file once: the readers
// apply the vectors the maintainer loaded, instead of reading every vector
// again with a request of its own (one per data file on an object store).
func TestADeletionVectorJobReadsItsIndexFileOnce(t *testing.T) {
	ctx := context.Background()
	src := copyDVFixture(t)
	fio := &countingOpens{FileIO: fileio.NewLocal(), opens: map[string]int{}}
	tb, err := table.Open(ctx, fio, filepath.Dir(filepath.Dir(src.Path())), "pk_09", "pk_09")
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	for _, b := range dvBuckets(t, tb) {
		for _, f := range bucketIndex(t, tb, b) {
			before[f] = true
		}
	}
	if len(before) == 0 {
		t.Fatal("fixture has no deletion-vector index files")
	}
	clear(fio.opens)
	if _, err := compact.Run(ctx, tb, compact.Options{Full: true}); err != nil {
		t.Fatal(err)
	}
	for p, n := range fio.opens {
		if before[filepath.Base(p)] && n != 1 {
			t.Errorf("index file %s opened %d times by one compaction, want 1", filepath.Base(p), n)
		}
	}
}
