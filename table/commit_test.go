package table_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// lostPublish publishes snapshots but reports an interrupted request (as an
// S3 PUT whose response is lost when the context is cancelled), and fails
// the read that would tell the outcome.
type lostPublish struct {
	fileio.FileIO
	cancel context.CancelFunc
	hide   atomic.Bool
}

func (f *lostPublish) WriteExclusive(ctx context.Context, path string, data []byte) error {
	if !strings.Contains(path, "/snapshot/snapshot-") {
		return f.FileIO.WriteExclusive(ctx, path, data)
	}
	if err := f.FileIO.WriteExclusive(ctx, path, data); err != nil {
		return err
	}
	f.hide.Store(true)
	f.cancel()
	return errors.New("write: connection reset by peer")
}

func (f *lostPublish) Open(ctx context.Context, path string) (fileio.Reader, error) {
	if f.hide.Load() && strings.Contains(path, "/snapshot/snapshot-") {
		return nil, errors.New("read: connection reset by peer")
	}
	return f.FileIO.Open(ctx, path)
}

func newCommitTable(t *testing.T) *table.Table {
	t.Helper()
	tb := newTableWithOptions(t, map[string]string{})
	w, err := write.NewWriter(context.Background(), tb, "writer")
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 3; i++ {
		if err := w.Write(table.RowKindInsert, table.Row{i, i}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

func TestACommitWhosePublishMayHaveLandedKeepsItsFilesAndSaysTheOutcomeIsUnknown(t *testing.T) {
	tb := newCommitTable(t)
	ctx := context.Background()
	latest, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adds, _, _, err := tb.LiveEntries(ctx, latest)
	if err != nil {
		t.Fatal(err)
	}
	// A metadata-only upgrade of one file, as compaction commits it.
	del, up := adds[0], adds[0]
	del.Kind = manifest.FileKindDelete
	up.File.Level = 5

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	faulty, err := table.OpenPath(ctx, &lostPublish{FileIO: tb.FileIO(), cancel: cancel}, tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	_, err = faulty.Commit(cctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd-test",
		CommitIdentifier: table.BatchCommitIdentifier, Entries: []manifest.Entry{del, up}})
	if !errors.Is(err, table.ErrCommitOutcomeUnknown) {
		t.Fatalf("want an unknown outcome, got %v", err)
	}
	tb2, err := table.OpenPath(ctx, tb.FileIO(), tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	s, err := tb2.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != latest.ID+1 || s.CommitUser != "compactd-test" {
		t.Fatalf("latest snapshot %d by %s, want the published %d", s.ID, s.CommitUser, latest.ID+1)
	}
	if _, err := tb2.FileSet(ctx, s); err != nil {
		t.Fatalf("the published snapshot lost its metadata: %v", err)
	}
}

// latePublish loses the response of the first snapshot publish, and that
// request lands only when the next publish of the same id is sent (as an S3
// PUT held up in the network past the client's timeout).
type latePublish struct {
	fileio.FileIO
	mu      sync.Mutex
	delayed map[string][]byte
}

func (f *latePublish) WriteExclusive(ctx context.Context, path string, data []byte) error {
	if !strings.Contains(path, "/snapshot/snapshot-") {
		return f.FileIO.WriteExclusive(ctx, path, data)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.delayed == nil {
		f.delayed = map[string][]byte{path: data}
		return errors.New("write: request timed out")
	}
	if d, ok := f.delayed[path]; ok {
		delete(f.delayed, path)
		if err := f.FileIO.WriteExclusive(ctx, path, d); err != nil {
			return err
		}
	}
	return f.FileIO.WriteExclusive(ctx, path, data)
}

func TestACommitWhoseLostPublishLandsLateFindsItInsteadOfConflictingWithItself(t *testing.T) {
	tb := newCommitTable(t)
	ctx := context.Background()
	latest, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adds, _, _, err := tb.LiveEntries(ctx, latest)
	if err != nil {
		t.Fatal(err)
	}
	del, up := adds[0], adds[0]
	del.Kind = manifest.FileKindDelete
	up.File.Level = 5
	faulty, err := table.OpenPath(ctx, &latePublish{FileIO: tb.FileIO()}, tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	res, err := faulty.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd-test",
		CommitIdentifier: table.BatchCommitIdentifier, Entries: []manifest.Entry{del, up}})
	if err != nil {
		t.Fatalf("the commit landed as snapshot %d but Commit failed: %v", latest.ID+1, err)
	}
	if res.Snapshot.ID != latest.ID+1 {
		t.Fatalf("committed snapshot %d, want %d (committed twice?)", res.Snapshot.ID, latest.ID+1)
	}
	tb2, err := table.OpenPath(ctx, tb.FileIO(), tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := tb2.LatestSnapshotID(ctx); id != latest.ID+1 {
		t.Fatalf("latest snapshot %d, want %d", id, latest.ID+1)
	}
	s, _ := tb2.LatestSnapshot(ctx)
	if _, err := tb2.FileSet(ctx, s); err != nil {
		t.Fatalf("the published snapshot lost its metadata: %v", err)
	}
}

func TestACommitAfterAnAlterNamesTheNewestSchema(t *testing.T) {
	ctx := context.Background()
	tb := newCommitTable(t)
	// Another process alters the table: schema-1 appears after Open.
	s1 := *tb.Schema()
	s1.ID = 1
	data, err := s1.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.FileIO().WriteExclusive(ctx, tb.Paths().SchemaPath(1), data); err != nil {
		t.Fatal(err)
	}
	res, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitAppend, CommitUser: "u", CommitIdentifier: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot.SchemaID != 1 {
		t.Fatalf("snapshot names schema %d, want the newest, 1", res.Snapshot.SchemaID)
	}
}

// TestCommitsCarryTheMaxSequenceNumberForward: with Paimon 2.0's
// write.sequence-number-init-mode=snapshot a write-only writer starts
// its sequence numbers from the latest snapshot's property; a commit that
// dropped it would make the next writer's rows lose merges they must win.
func TestCommitsCarryTheMaxSequenceNumberForward(t *testing.T) {
	ctx := context.Background()
	tb := newCommitTable(t)
	latest, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Properties != nil {
		t.Fatalf("without the option the writer's snapshot has properties %v", latest.Properties)
	}
	entries, err := tb.ReadManifests(ctx, mustDataManifests(t, tb, latest))
	if err != nil {
		t.Fatal(err)
	}
	var want int64 = -1
	for _, e := range entries {
		want = max(want, e.File.MaxSequenceNumber)
	}
	// The table is altered to the snapshot mode; its snapshots have no
	// property yet, so the commit takes the files' maximum.
	s1 := *tb.Schema()
	s1.ID = 1
	s1.Options = map[string]string{"bucket": "1", table.OptWriteSequenceNumberInitMode: "Snapshot"}
	data, err := s1.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.FileIO().WriteExclusive(ctx, tb.Paths().SchemaPath(1), data); err != nil {
		t.Fatal(err)
	}
	tb, err = table.OpenPath(ctx, tb.FileIO(), tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	res, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd", CommitIdentifier: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Snapshot.Properties[table.MaxSequenceProperty]; got != strconv.FormatInt(want, 10) {
		t.Fatalf("COMPACT snapshot property %s=%q, want the files' maximum %d", table.MaxSequenceProperty, got, want)
	}
	// The next commit takes the property, not the files: a larger value
	// recorded there (rows since deleted) must not go backwards.
	bumped := *res.Snapshot
	bumped.ID++
	bumped.Properties = map[string]string{table.MaxSequenceProperty: "1000"}
	if err := tb.WriteSnapshot(ctx, &bumped); err != nil {
		t.Fatal(err)
	}
	res, err = tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd", CommitIdentifier: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Snapshot.Properties[table.MaxSequenceProperty]; got != "1000" {
		t.Fatalf("property %q after a snapshot recording 1000, want 1000", got)
	}
	// A property compactd cannot read fails the commit: it cannot know
	// what to carry forward.
	bad := *res.Snapshot
	bad.ID++
	bad.Properties = map[string]string{table.MaxSequenceProperty: "12x"}
	if err := tb.WriteSnapshot(ctx, &bad); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd", CommitIdentifier: 3}); !errors.Is(err, table.ErrCorrupt) {
		t.Fatalf("commit over a malformed property: %v, want ErrCorrupt", err)
	}
}

func mustDataManifests(t *testing.T, tb *table.Table, s *table.Snapshot) []manifest.ListEntry {
	t.Helper()
	m, err := tb.DataManifests(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A commit given the latest snapshot's file set (Planned) checks its delta
// against it exactly as against files it reads: deleting a file that is
// not live, or adding one that is, is still a conflict.
func TestACommitOnThePlannedFileSetStillDetectsConflicts(t *testing.T) {
	ctx := context.Background()
	tb := newCommitTable(t)
	latest, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	planned, err := tb.FileSet(ctx, latest)
	if err != nil {
		t.Fatal(err)
	}
	live := planned.Buckets()[0].Files[0]
	gone := live
	gone.Kind = manifest.FileKindDelete
	gone.File.FileName = "data-not-live.parquet"
	again := live
	again.Kind = manifest.FileKindAdd
	for name, e := range map[string]manifest.Entry{"delete of a file not live": gone, "add of a live file": again} {
		_, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd", CommitIdentifier: 1,
			Entries: []manifest.Entry{e}, Planned: planned})
		var conflict *table.ConflictError
		if !errors.As(err, &conflict) {
			t.Fatalf("%s: err = %v, want a ConflictError", name, err)
		}
	}
	if s, err := tb.LatestSnapshot(ctx); err != nil || s.ID != latest.ID {
		t.Fatalf("latest after refused commits: %v, %v; want snapshot %d", s, err, latest.ID)
	}
}

func TestSameFilesTellsAReplacedSnapshotApart(t *testing.T) {
	idx, other := "index-manifest-a", "index-manifest-b"
	u1, u2 := "u1", "u2"
	s := table.Snapshot{ID: 7, BaseManifestList: "manifest-list-a-0", DeltaManifestList: "manifest-list-a-1", TimeMillis: 100, IndexManifest: &idx, UUID: &u1}
	if !s.SameFiles(&s) {
		t.Fatal("a snapshot is not SameFiles with itself")
	}
	for name, mod := range map[string]func(*table.Snapshot){
		"id":         func(o *table.Snapshot) { o.ID++ },
		"base list":  func(o *table.Snapshot) { o.BaseManifestList = "manifest-list-b-0" },
		"delta list": func(o *table.Snapshot) { o.DeltaManifestList = "manifest-list-b-1" },
		"time":       func(o *table.Snapshot) { o.TimeMillis++ },
		"index":      func(o *table.Snapshot) { o.IndexManifest = &other },
		"no index":   func(o *table.Snapshot) { o.IndexManifest = nil },
		"uuid":       func(o *table.Snapshot) { o.UUID = &u2 },
	} {
		o := s
		mod(&o)
		if s.SameFiles(&o) || o.SameFiles(&s) {
			t.Errorf("snapshots differing in %s are SameFiles", name)
		}
	}
	var none *table.Snapshot
	if none.SameFiles(&s) || s.SameFiles(nil) {
		t.Error("nil snapshot is SameFiles")
	}
}
