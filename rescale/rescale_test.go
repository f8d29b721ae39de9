package rescale_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/rescale"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

var fields = table.RowType{
	{ID: 0, Name: "dt", Type: table.DataType{Root: table.TypeVarChar, Length: table.MaxLength}},
	{ID: 1, Name: "id", Type: table.DataType{Root: table.TypeBigInt}},
	{ID: 2, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
}

// newTable creates db.t partitioned by dt with the given bucket option and
// writes, through compactd's write-only writer, three commits into the
// partitions a and b: inserts, updates of some keys and a delete.
func newTable(t *testing.T, bucket string, extra map[string]string) (*table.Table, string) {
	t.Helper()
	ctx := context.Background()
	opts := map[string]string{"bucket": bucket}
	for k, v := range extra {
		opts[k] = v
	}
	s, err := table.NewTableSchema(0, fields, 2, []string{"dt"}, []string{"dt", "id"}, opts, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	wh := t.TempDir()
	tb, err := write.CreateTable(ctx, fileio.NewLocal(), wh, "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Options().Bucket > 0 {
		w, err := write.NewWriter(ctx, tb, "writer")
		if err != nil {
			t.Fatal(err)
		}
		for c := int64(0); c < 3; c++ {
			for id := int64(0); id < 40; id++ {
				if c > 0 && id%3 != 0 {
					continue
				}
				for _, dt := range []string{"a", "b"} {
					if err := w.Write(table.RowKindInsert, table.Row{dt, id, id*10 + c}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if c == 2 {
				if err := w.Write(table.RowKindDelete, table.Row{"a", int64(7), nil}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	return tb, wh
}

// alter writes the next schema with options changed, as Java's ALTER TABLE
// SET does, and reopens the table.
func alter(t *testing.T, tb *table.Table, wh string, set map[string]string) *table.Table {
	t.Helper()
	ctx := context.Background()
	s := tb.Schema()
	opts := map[string]string{}
	for k, v := range s.Options {
		opts[k] = v
	}
	for k, v := range set {
		opts[k] = v
	}
	next, err := table.NewTableSchema(s.ID+1, s.Fields, s.HighestFieldID, s.PartitionKeys, s.PrimaryKeys, opts, s.Comment, s.TimeMillis+1)
	if err != nil {
		t.Fatal(err)
	}
	data, err := next.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.FileIO().WriteExclusive(ctx, tb.Paths().SchemaPath(next.ID), data); err != nil {
		t.Fatal(err)
	}
	return reopen(t, wh)
}

func reopen(t *testing.T, wh string) *table.Table {
	t.Helper()
	tb, err := table.Open(context.Background(), fileio.NewLocal(), wh, "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func rows(t *testing.T, tb *table.Table) []string {
	t.Helper()
	sc, err := scan.New(context.Background(), tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if err := sc.Each(context.Background(), func(r table.Row) error {
		out = append(out, fmt.Sprint([]any(r)))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func latestID(t *testing.T, tb *table.Table) int64 {
	t.Helper()
	s, err := tb.LatestSnapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// dataFiles lists every data file on disk under the table directory.
func dataFiles(t *testing.T, tb *table.Table) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(tb.Path(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "data-") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func partitionOf(t *testing.T, tb *table.Table, path string) *table.PartitionFiles {
	t.Helper()
	s, err := tb.LatestSnapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fset, err := tb.FileSet(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range fset.Partitions {
		if p.Path == path {
			return p
		}
	}
	t.Fatalf("partition %s not found", path)
	return nil
}

// checkLayout checks that every real bucket of the partition holds only
// files of total buckets n at the top level, one sorted run, and that
// every key in it is in the bucket Java's hash gives it among n.
func checkLayout(t *testing.T, tb *table.Table, path string, n int32) {
	t.Helper()
	ctx := context.Background()
	s := tb.Schema()
	read := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
	top := int32(tb.Options().NumLevels - 1)
	keys := 0
	for _, b := range partitionOf(t, tb, path).Buckets {
		if b.Bucket < 0 {
			continue
		}
		if b.Bucket >= n {
			t.Errorf("%s: bucket %d of %d", path, b.Bucket, n)
		}
		for i := range b.Files {
			e := &b.Files[i]
			if e.TotalBuckets != n || e.File.Level != top || *e.File.FileSource != manifest.FileSourceAppend {
				t.Errorf("%s bucket %d: file %s has total buckets %d, level %d, source %v; want %d, %d, APPEND", path, b.Bucket, e.File.FileName, e.TotalBuckets, e.File.Level, *e.File.FileSource, n, top)
			}
			p, err := tb.DataFilePath(e)
			if err != nil {
				t.Fatal(err)
			}
			r, err := datafile.OpenKeyValue(ctx, tb.FileIO(), p, read, read)
			if err != nil {
				t.Fatal(err)
			}
			kvs, err := merge.Collect(r)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(kvs)) != e.File.RowCount {
				t.Errorf("%s: %d rows, meta says %d", e.File.FileName, len(kvs), e.File.RowCount)
			}
			for _, kv := range kvs {
				keys++
				bk, err := table.EncodeBinaryRow([]table.DataType{fields[1].Type}, table.Row{kv.Value[1]})
				if err != nil {
					t.Fatal(err)
				}
				h, err := table.HashBinaryRow(bk)
				if err != nil {
					t.Fatal(err)
				}
				if got := table.BucketOf(h, n); got != b.Bucket {
					t.Errorf("%s: key %v is in bucket %d, Java's hash puts it in %d", path, kv.Key, b.Bucket, got)
				}
				if !kv.Kind.IsAdd() {
					t.Errorf("%s: key %v stored as %s", path, kv.Key, kv.Kind.ShortString())
				}
			}
		}
	}
	if keys == 0 {
		t.Fatalf("%s: no rows checked", path)
	}
}

func TestRescaleRewritesOnePartitionIntoTheNewBucketCountAsOneOverwrite(t *testing.T) {
	ctx := context.Background()
	tb, wh := newTable(t, "2", nil)
	before := rows(t, tb)
	tb = alter(t, tb, wh, map[string]string{"bucket": "4"})
	bBefore := partitionOf(t, tb, "dt=b")
	read := latestID(t, tb)

	res, err := rescale.Run(ctx, tb, rescale.Options{BucketNum: 4, Partition: map[string]string{"dt": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ReadSnapshot != read || res.Snapshot != read+1 || len(res.Partitions) != 1 || res.Partitions[0].FromBuckets != 2 {
		t.Fatalf("result %+v", res)
	}
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.CommitKind != table.CommitOverwrite || s.ChangelogManifestList != nil {
		t.Fatalf("snapshot %d is %s with changelog %v, want OVERWRITE without", s.ID, s.CommitKind, s.ChangelogManifestList)
	}
	if got := rows(t, tb); !slices.Equal(got, before) {
		t.Fatalf("rows changed:\n got %v\nwant %v", got, before)
	}
	checkLayout(t, tb, "dt=a", 4)
	// Partition b keeps its two buckets, file for file.
	bAfter := partitionOf(t, tb, "dt=b")
	if len(bAfter.Buckets) != len(bBefore.Buckets) {
		t.Fatalf("partition b changed")
	}
	for i := range bAfter.Buckets {
		if len(bAfter.Buckets[i].Files) != len(bBefore.Buckets[i].Files) || bAfter.Buckets[i].TotalBuckets != 2 {
			t.Fatalf("partition b bucket %d changed", bAfter.Buckets[i].Bucket)
		}
	}
}

func TestRescaleRefusesWhatItCannotDoAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	tb, wh := newTable(t, "2", nil)
	tb = alter(t, tb, wh, map[string]string{"bucket": "4"})
	id := latestID(t, tb)
	files := dataFiles(t, tb)
	for _, c := range []struct {
		n    int
		part map[string]string
		want string
	}{
		{3, nil, "differs from the table's bucket=4"},
		{2, nil, "differs from the table's bucket=4"},
		{4, map[string]string{"dt": "zz"}, "nothing to rescale"},
		{4, map[string]string{"nope": "a"}, "not a partition key"},
	} {
		_, err := rescale.Run(ctx, tb, rescale.Options{BucketNum: c.n, Partition: c.part})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rescale to %d of %v: %v, want an error saying %q", c.n, c.part, err, c.want)
		}
	}
	if latestID(t, tb) != id || !slices.Equal(dataFiles(t, tb), files) {
		t.Fatal("a refused rescale changed the table")
	}
	// A bucket function compactd does not implement places rows elsewhere.
	mod := alter(t, tb, wh, map[string]string{"bucket-function.type": "mod"})
	if _, err := rescale.Run(ctx, mod, rescale.Options{BucketNum: 4}); err == nil || !strings.Contains(err.Error(), "bucket-function.type=mod") {
		t.Errorf("rescale of a bucket-function.type=mod table: %v", err)
	}
	if !slices.Equal(dataFiles(t, mod), files) {
		t.Fatal("the refused rescale of the mod table changed it")
	}
	dyn, _ := newTable(t, "-1", nil)
	if err := rescale.Supported(dyn, 4); err == nil || !strings.Contains(err.Error(), "dynamic-bucket") {
		t.Errorf("bucket=-1: %v", err)
	}
	if err := rescale.Supported(dyn, 0); err == nil {
		t.Errorf("bucket=-1 with N=0 accepted")
	}
	post, _ := newTable(t, "-2", nil)
	if err := rescale.Supported(post, 0); err == nil || !strings.Contains(err.Error(), "needs the bucket number") {
		t.Errorf("bucket=-2 without N: %v", err)
	}
	if err := rescale.Supported(post, 3); err != nil {
		t.Errorf("bucket=-2 with N=3: %v", err)
	}
	s, err := table.NewTableSchema(0, fields, 2, nil, nil, map[string]string{"bucket": "2", "bucket-key": "id"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	app, err := write.CreateTable(ctx, fileio.NewLocal(), t.TempDir(), "db", "app", s)
	if err != nil {
		t.Fatal(err)
	}
	if err := rescale.Supported(app, 2); err == nil || !strings.Contains(err.Error(), "append tables") {
		t.Errorf("append table: %v", err)
	}
}

// TestAConcurrentCommitIntoTheRescaledPartitionFailsTheRescale: a writer
// commits into the partition between the rescale's read and its commit.
// With the old bucket count the commit's total-bucket check would catch
// it; with the new one (writers that write the partition after an earlier
// rescale) only the strict-mode check does: without it the OVERWRITE
// would publish rows computed without the writer's beside its file, and
// a rescaled row, which keeps its sequence number from another old bucket,
// could win over the writer's newer update of the key.
func TestAConcurrentCommitIntoTheRescaledPartitionFailsTheRescale(t *testing.T) {
	for _, again := range []bool{false, true} {
		t.Run(fmt.Sprintf("rescaled before=%v", again), func(t *testing.T) {
			ctx := context.Background()
			tb0, wh := newTable(t, "2", nil)
			tb := alter(t, tb0, wh, map[string]string{"bucket": "4"})
			// A writer that opened the table before the ALTER writes with
			// its two buckets.
			wt := tb0
			if again {
				if _, err := rescale.Run(ctx, tb, rescale.Options{BucketNum: 4, Partition: map[string]string{"dt": "b"}}); err != nil {
					t.Fatal(err)
				}
				wt = tb
			}
			w, err := write.NewWriter(ctx, wt, "late-writer")
			if err != nil {
				t.Fatal(err)
			}
			var concurrent int64
			var filesAfterWrite []string
			_, err = rescale.Run(ctx, tb, rescale.Options{BucketNum: 4, Partition: map[string]string{"dt": "b"}, BeforeCommit: func() {
				if err := w.Write(table.RowKindInsert, table.Row{"a", int64(1000), int64(1)}); err != nil {
					t.Fatal(err)
				}
				if err := w.Write(table.RowKindInsert, table.Row{"b", int64(3), int64(-3)}); err != nil {
					t.Fatal(err)
				}
				s, err := w.Commit(ctx)
				if err != nil {
					t.Fatal(err)
				}
				concurrent = s.ID
				filesAfterWrite = dataFiles(t, tb)
			}})
			var conflict *table.ConflictError
			if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "committed after snapshot") {
				t.Fatalf("rescale with a concurrent commit into its partition: %v, want a strict-mode conflict", err)
			}
			if latestID(t, tb) != concurrent {
				t.Fatalf("latest snapshot %d, want the writer's %d", latestID(t, tb), concurrent)
			}
			// The rescale's files are gone; the writer's stay.
			var extra []string
			for _, f := range dataFiles(t, tb) {
				if !slices.Contains(filesAfterWrite, f) {
					extra = append(extra, f)
				}
			}
			if len(extra) > 0 {
				t.Fatalf("the failed rescale left files: %v", extra)
			}
			if !slices.Contains(rows(t, tb), "[b 3 -3]") {
				t.Fatal("the writer's row is not read")
			}
		})
	}
}

// TestACommitIntoAnotherPartitionDoesNotFailTheRescale: the strict check
// is scoped to the partitions the rescale overwrites.
func TestACommitIntoAnotherPartitionDoesNotFailTheRescale(t *testing.T) {
	ctx := context.Background()
	tb0, wh := newTable(t, "2", nil)
	tb := alter(t, tb0, wh, map[string]string{"bucket": "4"})
	want := append(rows(t, tb), "[a 1000 1]")
	slices.Sort(want)
	res, err := rescale.Run(ctx, tb, rescale.Options{BucketNum: 4, Partition: map[string]string{"dt": "b"}, BeforeCommit: func() {
		// Partition a still has two buckets: a writer that opened the
		// table before the ALTER writes it.
		w, err := write.NewWriter(ctx, tb0, "w")
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(table.RowKindInsert, table.Row{"a", int64(1000), int64(1)}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot != res.ReadSnapshot+2 {
		t.Fatalf("result %+v", res)
	}
	if got := rows(t, tb); !slices.Equal(got, want) {
		t.Fatalf("rows:\n got %v\nwant %v", got, want)
	}
	checkLayout(t, tb, "dt=b", 4)
}

// TestACancelledRescaleLeavesTheTableAsItWas: cancelled after writing its
// files and before its commit, a rescale deletes them and publishes
// nothing (a killed one leaves them unreferenced, as any file written
// before the publish).
func TestACancelledRescaleLeavesTheTableAsItWas(t *testing.T) {
	tb0, wh := newTable(t, "2", nil)
	tb := alter(t, tb0, wh, map[string]string{"bucket": "4"})
	id := latestID(t, tb)
	files := dataFiles(t, tb)
	ctx, cancel := context.WithCancel(context.Background())
	var written []string
	_, err := rescale.Run(ctx, tb, rescale.Options{BucketNum: 4, BeforeCommit: func() {
		written = dataFiles(t, tb)
		cancel()
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled rescale: %v", err)
	}
	if len(written) <= len(files) {
		t.Fatal("the rescale wrote no files before its commit; the test would prove nothing")
	}
	if latestID(t, tb) != id || !slices.Equal(dataFiles(t, tb), files) {
		t.Fatal("a cancelled rescale changed the table")
	}
}

// TestRescaleWithoutAPartitionRescalesEveryPartition, as Paimon's rescale
// without a partition overwrites the whole table.
func TestRescaleWithoutAPartitionRescalesEveryPartition(t *testing.T) {
	tb0, wh := newTable(t, "2", nil)
	before := rows(t, tb0)
	tb := alter(t, tb0, wh, map[string]string{"bucket": "3"})
	res, err := rescale.Run(context.Background(), tb, rescale.Options{BucketNum: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Partitions) != 2 {
		t.Fatalf("rescaled %d partitions, want 2", len(res.Partitions))
	}
	if got := rows(t, tb); !slices.Equal(got, before) {
		t.Fatalf("rows changed:\n got %v\nwant %v", got, before)
	}
	checkLayout(t, tb, "dt=a", 3)
	checkLayout(t, tb, "dt=b", 3)
}

// TestAnAlterOfTheBucketDuringTheRescaleFailsIt: files written for 4
// buckets must not be committed once the table says 8.
func TestAnAlterOfTheBucketDuringTheRescaleFailsIt(t *testing.T) {
	tb0, wh := newTable(t, "2", nil)
	tb := alter(t, tb0, wh, map[string]string{"bucket": "4"})
	id := latestID(t, tb)
	files := dataFiles(t, tb)
	_, err := rescale.Run(context.Background(), tb, rescale.Options{BucketNum: 4, BeforeCommit: func() {
		alter(t, tb, wh, map[string]string{"bucket": "8"})
	}})
	if err == nil || !strings.Contains(err.Error(), "altered to bucket=8") {
		t.Fatalf("rescale with a concurrent ALTER: %v", err)
	}
	if latestID(t, tb) != id || !slices.Equal(dataFiles(t, tb), files) {
		t.Fatal("the failed rescale changed the table")
	}
	// A handle opened before the ALTER is refused up front.
	if _, err := rescale.Run(context.Background(), tb, rescale.Options{BucketNum: 4}); err == nil || !strings.Contains(err.Error(), "altered") {
		t.Fatalf("rescale through a stale handle: %v", err)
	}
}

// TestAFirstRowTableKeepsItsLevel0Rows: Java's batch read of a first-row
// table skips level 0, so Java's rescale (which reads through it and then
// overwrites every file) drops rows not yet compacted. compactd's reads
// every level as a full compaction does: the rows move to the top level,
// each key's first row, and become visible as after a full compaction.
func TestAFirstRowTableKeepsItsLevel0Rows(t *testing.T) {
	tb0, wh := newTable(t, "2", map[string]string{"merge-engine": "first-row", "ignore-delete": "true"})
	if got := rows(t, tb0); len(got) != 0 {
		t.Fatalf("the level-0 rows of a first-row table are visible before compaction: %v", got)
	}
	tb := alter(t, tb0, wh, map[string]string{"bucket": "4"})
	if _, err := rescale.Run(context.Background(), tb, rescale.Options{BucketNum: 4}); err != nil {
		t.Fatal(err)
	}
	got := rows(t, tb)
	var want []string
	for _, dt := range []string{"a", "b"} {
		for id := int64(0); id < 40; id++ {
			want = append(want, fmt.Sprint([]any{dt, id, id * 10}))
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("rows after the rescale:\n got %v\nwant %v", got, want)
	}
	checkLayout(t, tb, "dt=a", 4)
}
