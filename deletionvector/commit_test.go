package deletionvector_test

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compactd/compactd/deletionvector"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

func reopen(t *testing.T, tb *table.Table) *table.Table {
	t.Helper()
	r, err := table.OpenPath(context.Background(), tb.FileIO(), tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// scanRows is compactd's batch read of the latest snapshot, rows as JSON.
func scanRows(t *testing.T, tb *table.Table) []string {
	t.Helper()
	ctx := context.Background()
	tb = reopen(t, tb)
	sc, err := scan.New(ctx, tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	err = sc.Each(ctx, func(r table.Row) error {
		b, err := scan.AppendJSON(nil, sc.ReadType(), r)
		rows = append(rows, string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(rows)
	return rows
}

// rowAt is the record at position pos of a data file, as scanRows renders it.
func rowAt(t *testing.T, tb *table.Table, b *table.BucketFiles, file string, pos int64) string {
	t.Helper()
	ctx := context.Background()
	for i := range b.Files {
		e := &b.Files[i]
		if e.File.FileName != file {
			continue
		}
		path, err := tb.Paths().DataFilePath(b.Partition, b.Bucket, &e.File)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := tb.SchemaByID(ctx, e.File.SchemaID)
		if err != nil {
			t.Fatal(err)
		}
		s := tb.Schema()
		r, err := datafile.OpenKeyValue(ctx, tb.FileIO(), path,
			datafile.Schema{Fields: fs.Fields, KeyNames: fs.TrimmedPrimaryKeys()},
			datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for p := int64(0); ; p++ {
			kv, err := r.Next()
			if errors.Is(err, io.EOF) {
				t.Fatalf("%s has no row %d", file, pos)
			}
			if err != nil {
				t.Fatal(err)
			}
			if p == pos {
				js, err := scan.AppendJSON(nil, s.Fields, kv.Value)
				if err != nil {
					t.Fatal(err)
				}
				return string(js)
			}
		}
	}
	t.Fatalf("no file %s", file)
	return ""
}

// commitChange commits a COMPACT snapshot carrying index changes (and
// data entries).
func commitChange(tb *table.Table, entries []manifest.Entry, changes ...*table.IndexChange) (*table.CommitResult, error) {
	req := table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd-test", CommitIdentifier: table.BatchCommitIdentifier, Entries: entries}
	for _, c := range changes {
		req.IndexChanges = append(req.IndexChanges, *c)
	}
	return tb.Commit(context.Background(), req)
}

func indexEntries(t *testing.T, tb *table.Table) (*table.Snapshot, []manifest.IndexEntry) {
	t.Helper()
	ctx := context.Background()
	tb = reopen(t, tb)
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e, err := tb.IndexEntries(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return s, e
}

// firstUndeleted is the first row of file the maintainer has not deleted.
func firstUndeleted(m *deletionvector.Maintainer, file string, from int64) int64 {
	dv := m.DeletionVectorOf(file)
	for p := from; ; p++ {
		if !dv.IsDeleted(p) {
			return p
		}
	}
}

// TestACommittedChangeReplacesOnlyItsBucketsVectors deletes a row in one
// bucket of a copy of Java's partitioned 2-bucket table pk_09, commits, and
// checks the new index manifest (that bucket's entry replaced, the others
// kept as they were), that compactd's read no longer returns exactly that
// row, and that a later commit without index changes reuses the index
// manifest.
func TestACommittedChangeReplacesOnlyItsBucketsVectors(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, "parquet", "pk_09", "pk_09")
	before := scanRows(t, tb)
	s0, idx0 := indexEntries(t, tb)
	b, _ := firstDVBucket(t, tb)
	m, err := deletionvector.Load(ctx, tb, b)
	if err != nil {
		t.Fatal(err)
	}
	file := b.Files[0].File.FileName
	pos := firstUndeleted(m, file, 0)
	gone := rowAt(t, tb, b, file, pos)
	if !slices.Contains(before, gone) {
		t.Fatalf("row %s at %d is not read before", gone, pos)
	}
	if err := m.NotifyNewDeletion(file, pos); err != nil {
		t.Fatal(err)
	}
	ch, path, err := m.Write(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := commitChange(tb, nil, ch)
	if err != nil {
		t.Fatal(err)
	}
	s1, idx1 := indexEntries(t, tb)
	if s1.ID != res.Snapshot.ID || s1.IndexManifest == nil || s0.IndexManifest == nil || *s1.IndexManifest == *s0.IndexManifest || s1.CommitKind != table.CommitCompact {
		t.Fatalf("snapshot %d index manifest %v (was %v)", s1.ID, s1.IndexManifest, s0.IndexManifest)
	}
	if s1.TotalRecordCount != s0.TotalRecordCount || s1.DeltaRecordCount != 0 {
		t.Fatalf("record counts %d/%d, were %d", s1.TotalRecordCount, s1.DeltaRecordCount, s0.TotalRecordCount)
	}
	var kept, replaced []string
	for _, e := range idx0 {
		if e.Bucket == b.Bucket && string(e.Partition) == string(b.Partition) && e.IndexFile.IndexType == manifest.IndexTypeDeletionVectors {
			replaced = append(replaced, e.IndexFile.FileName)
		} else {
			kept = append(kept, e.IndexFile.FileName)
		}
	}
	var now []string
	for _, e := range idx1 {
		now = append(now, e.IndexFile.FileName)
	}
	want := append(slices.Clone(kept), ch.Files[0].FileName)
	if !slices.Equal(now, want) || len(replaced) != 1 || slices.Contains(now, replaced[0]) {
		t.Fatalf("index entries %v, want %v (replacing %v)", now, want, replaced)
	}
	if !strings.HasSuffix(path, "/index/"+ch.Files[0].FileName) {
		t.Fatalf("index file at %s", path)
	}
	after := scanRows(t, tb)
	wantRows := slices.DeleteFunc(slices.Clone(before), func(r string) bool { return r == gone })
	if !slices.Equal(after, wantRows) {
		t.Fatalf("compactd reads\n%v\nwant\n%v", after, wantRows)
	}
	// A commit without index changes keeps the index manifest.
	if _, err = commitChange(tb, nil); err != nil {
		t.Fatal(err)
	}
	if s2, _ := indexEntries(t, tb); *s2.IndexManifest != *s1.IndexManifest {
		t.Fatalf("a commit without index changes wrote index manifest %s", *s2.IndexManifest)
	}
}

// TestAConcurrentChangeOfTheBucketsVectorsConflicts: two jobs compute
// changes of one bucket's vectors from the same snapshot; the second to
// commit conflicts instead of dropping the first one's deletion, and
// nothing it wrote is referenced. A concurrent commit that leaves the
// bucket's vectors alone does not conflict, and a vector of a data file a
// concurrent commit removed does.
func TestAConcurrentChangeOfTheBucketsVectorsConflicts(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, "parquet", "pk_09", "pk_09")
	b, _ := firstDVBucket(t, tb)
	file := b.Files[0].File.FileName
	m1, err := deletionvector.Load(ctx, tb, b)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := deletionvector.Load(ctx, tb, b)
	if err != nil {
		t.Fatal(err)
	}
	p1 := firstUndeleted(m1, file, 0)
	p2 := firstUndeleted(m1, file, p1+1)
	if err := m1.NotifyNewDeletion(file, p1); err != nil {
		t.Fatal(err)
	}
	if err := m2.NotifyNewDeletion(file, p2); err != nil {
		t.Fatal(err)
	}
	c1, _, err := m1.Write(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2, path2, err := m2.Write(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// An unrelated concurrent commit first: the change rebases over it.
	if _, err := commitChange(tb, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := commitChange(tb, nil, c1); err != nil {
		t.Fatalf("rebasing over a commit without index changes: %v", err)
	}
	s1, _ := indexEntries(t, tb)
	_, err = commitChange(tb, nil, c2)
	var conflict *table.ConflictError
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "changed concurrently") {
		t.Fatalf("second change of the bucket: %v", err)
	}
	s2, idx := indexEntries(t, tb)
	if s2.ID != s1.ID {
		t.Fatalf("snapshot %d published", s2.ID)
	}
	for _, e := range idx {
		if e.IndexFile.FileName == c2.Files[0].FileName {
			t.Fatal("the conflicting change's file is referenced")
		}
	}
	// The first job's deletion stands.
	b1 := *b
	for _, e := range idx {
		if e.Bucket == b.Bucket && string(e.Partition) == string(b.Partition) {
			b1.IndexFiles = []manifest.IndexFileMeta{e.IndexFile}
		}
	}
	m3, err := deletionvector.Load(ctx, reopen(t, tb), &b1)
	if err != nil {
		t.Fatal(err)
	}
	if dv := m3.DeletionVectorOf(file); !dv.IsDeleted(p1) || dv.IsDeleted(p2) {
		t.Fatalf("row %d deleted %v, row %d deleted %v", p1, dv.IsDeleted(p1), p2, dv.IsDeleted(p2))
	}
	os.Remove(path2) // the caller's part (JobResult.Written)

	// A vector of a data file that a concurrent commit removed conflicts
	// even though the bucket's index entries did not change.
	m4, err := deletionvector.Load(ctx, reopen(t, tb), &b1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m4.NotifyNewDeletion(file, firstUndeleted(m4, file, 0)); err != nil {
		t.Fatal(err)
	}
	c4, _, err := m4.Write(ctx)
	if err != nil {
		t.Fatal(err)
	}
	del := b.Files[0]
	del.Kind = manifest.FileKindDelete
	if _, err := commitChange(tb, []manifest.Entry{del}); err != nil {
		t.Fatal(err)
	}
	_, err = commitChange(tb, nil, c4)
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not live") {
		t.Fatalf("a vector of a removed file: %v", err)
	}
}

// TestIndexChangesCompactdCannotCombineAreRefused: only DELETION_VECTORS
// changes of fixed buckets, one per bucket.
func TestIndexChangesCompactdCannotCombineAreRefused(t *testing.T) {
	tb := copyFixture(t, "parquet", "pk_with_bitmap_dv", "pk_with_bitmap_dv")
	s0, _ := indexEntries(t, tb)
	dv := table.IndexChange{IndexType: manifest.IndexTypeDeletionVectors}
	hash := table.IndexChange{IndexType: manifest.IndexTypeHash}
	for _, cs := range [][]*table.IndexChange{{&hash}, {&dv, &dv}} {
		if _, err := commitChange(tb, nil, cs...); err == nil {
			t.Fatalf("%+v committed", cs)
		}
	}
	if s, _ := indexEntries(t, tb); s.ID != s0.ID {
		t.Fatal("a snapshot was published")
	}
}
