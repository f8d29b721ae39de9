package deletionvector_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/deletionvector"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

const fixtureRoot = "../../shared/fixtures/paimon-cpp"

// fixtureDVTables lists the fixture tables (warehouse, db, name) whose
// index manifests name deletion-vector files.
func fixtureDVTables(t *testing.T) [][3]string {
	t.Helper()
	manifests, _ := filepath.Glob(filepath.Join(fixtureRoot, "*", "*.db", "*", "manifest", "index-manifest-*"))
	seen := map[string]bool{}
	var out [][3]string
	for _, m := range manifests {
		dir := filepath.Dir(filepath.Dir(m))
		if seen[dir] {
			continue
		}
		seen[dir] = true
		db := strings.TrimSuffix(filepath.Base(filepath.Dir(dir)), ".db")
		out = append(out, [3]string{filepath.Dir(filepath.Dir(dir)), db, filepath.Base(dir)})
	}
	if len(out) == 0 {
		t.Fatal("no fixture table with an index manifest")
	}
	return out
}

func latestFiles(t *testing.T, tb *table.Table) *table.FileSet {
	t.Helper()
	ctx := context.Background()
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tb.FileSet(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestLoadReadsEveryFixtureBucketsVectors loads every bucket of every
// fixture table with deletion vectors and checks each vector's cardinality
// against its index-manifest entry. Buckets whose index files live at an
// external path the fixture does not hold must fail, naming the file.
func TestLoadReadsEveryFixtureBucketsVectors(t *testing.T) {
	ctx := context.Background()
	vectors := 0
	for _, ft := range fixtureDVTables(t) {
		tb, err := table.Open(ctx, fileio.NewLocal(), ft[0], ft[1], ft[2])
		if err != nil {
			t.Fatalf("%v: %v", ft, err)
		}
		for _, b := range latestFiles(t, tb).Buckets() {
			missing := ""
			want := map[string]int64{}
			for _, idx := range b.IndexFiles {
				if idx.IndexType != manifest.IndexTypeDeletionVectors {
					continue
				}
				p, err := tb.Paths().IndexFileOf(b.Partition, b.Bucket, &idx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(p); err != nil {
					missing = idx.FileName
				}
				for _, r := range idx.DeletionVectors {
					if r.Cardinality != nil {
						want[r.DataFileName] = *r.Cardinality
					} else {
						want[r.DataFileName] = -1
					}
				}
			}
			m, err := deletionvector.Load(ctx, tb, b)
			if missing != "" {
				if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), tb.FullName()) {
					t.Errorf("%s bucket %d: a missing index file %s gave %v", tb.FullName(), b.Bucket, missing, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s bucket %d: %v", tb.FullName(), b.Bucket, err)
			}
			got := m.Cardinalities()
			for f, c := range want {
				if c < 0 {
					c = got[f] // 0.9 stored no cardinality
				}
				if got[f] != c || c <= 0 {
					t.Errorf("%s bucket %d: %s has %d deleted rows, the manifest says %d", tb.FullName(), b.Bucket, f, got[f], c)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s bucket %d: %d vectors, the manifest has %d", tb.FullName(), b.Bucket, len(got), len(want))
			}
			if m.Modified() {
				t.Errorf("%s: modified right after Load", tb.FullName())
			}
			vectors += len(got)
		}
	}
	if vectors == 0 {
		t.Fatal("no vector loaded")
	}
	t.Logf("%d vectors loaded", vectors)
}

// copyFixture copies a fixture table into a fresh warehouse and opens it.
func copyFixture(t *testing.T, format, db, name string) *table.Table {
	t.Helper()
	wh := t.TempDir()
	expiretest.CopyDir(t, filepath.Join(fixtureRoot, format, db+".db", name), filepath.Join(wh, db+".db", name))
	tb, err := table.Open(context.Background(), fileio.NewLocal(), wh, db, name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// firstDVBucket is the first bucket with a deletion-vector file, and that
// file's path.
func firstDVBucket(t *testing.T, tb *table.Table) (*table.BucketFiles, string) {
	t.Helper()
	for _, b := range latestFiles(t, tb).Buckets() {
		for _, idx := range b.IndexFiles {
			if idx.IndexType == manifest.IndexTypeDeletionVectors && len(idx.DeletionVectors) > 0 {
				p, err := tb.Paths().IndexFileOf(b.Partition, b.Bucket, &idx)
				if err != nil {
					t.Fatal(err)
				}
				return b, p
			}
		}
	}
	t.Fatalf("%s has no deletion vector", tb.FullName())
	return nil, ""
}

// TestLoadFailsClosedNamingTableAndFile damages a copy of a Java-written
// deletion-vector table in each way Load must refuse.
func TestLoadFailsClosedNamingTableAndFile(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		damage func(t *testing.T, b *table.BucketFiles, path string) *table.BucketFiles
		want   string // in the error besides the table's name
		corrup bool
	}{
		{"missing index file", func(t *testing.T, b *table.BucketFiles, path string) *table.BucketFiles {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			return b
		}, "index-", false},
		{"flipped byte", func(t *testing.T, b *table.BucketFiles, path string) *table.BucketFiles {
			data, _ := os.ReadFile(path)
			data[len(data)-6] ^= 0x40
			os.WriteFile(path, data, 0o644)
			return b
		}, "index-", true},
		{"truncated", func(t *testing.T, b *table.BucketFiles, path string) *table.BucketFiles {
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:len(data)-3], 0o644)
			return b
		}, "index-", true},
		{"wrong version byte", func(t *testing.T, b *table.BucketFiles, path string) *table.BucketFiles {
			data, _ := os.ReadFile(path)
			data[0] = 2
			os.WriteFile(path, data, 0o644)
			return b
		}, "version", true},
		{"vector of a file that is not live", func(t *testing.T, b *table.BucketFiles, path string) *table.BucketFiles {
			c := *b
			dvFile := b.IndexFiles[0].DeletionVectors[0].DataFileName
			c.Files = slices.DeleteFunc(slices.Clone(b.Files), func(e manifest.Entry) bool { return e.File.FileName == dvFile })
			return &c
		}, "not live", true},
		{"vector past the file's end", func(t *testing.T, b *table.BucketFiles, path string) *table.BucketFiles {
			c := *b
			c.Files = slices.Clone(b.Files)
			for i := range c.Files {
				c.Files[i].File.RowCount = 1
			}
			return &c
		}, "rows", true},
		{"cardinality differs from the manifest", func(t *testing.T, b *table.BucketFiles, path string) *table.BucketFiles {
			c := *b
			c.IndexFiles = slices.Clone(b.IndexFiles)
			c.IndexFiles[0].DeletionVectors = slices.Clone(b.IndexFiles[0].DeletionVectors)
			n := int64(99)
			c.IndexFiles[0].DeletionVectors[0].Cardinality = &n
			return &c
		}, "cardinality", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := copyFixture(t, "parquet", "pk_with_bitmap_dv", "pk_with_bitmap_dv")
			b, path := firstDVBucket(t, tb)
			if _, err := deletionvector.Load(ctx, tb, b); err != nil {
				t.Fatalf("undamaged: %v", err)
			}
			b = c.damage(t, b, path)
			_, err := deletionvector.Load(ctx, tb, b)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), tb.FullName()) || !strings.Contains(err.Error(), filepath.Base(path)) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("the error does not name the table, %s and %q: %v", filepath.Base(path), c.want, err)
			}
			if c.corrup && !errors.Is(err, deletionvector.ErrCorrupt) {
				t.Fatalf("not ErrCorrupt: %v", err)
			}
		})
	}
}

// dvTable creates a deletion-vector table with compactd's writer: one
// level-0 file per commit, keys 0..rows-1 in each.
func dvTable(t *testing.T, bitmap64 bool, commits int, rows int) *table.Table {
	t.Helper()
	ctx := context.Background()
	fields := table.RowType{
		{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt, Nullable: false}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
	}
	opts := map[string]string{"bucket": "1", "deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": fmt.Sprint(bitmap64)}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, opts, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(ctx, fileio.NewLocal(), t.TempDir(), "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	w, err := write.NewWriter(ctx, tb, "writer")
	if err != nil {
		t.Fatal(err)
	}
	for c := range commits {
		for k := range rows {
			if err := w.Write(table.RowKindInsert, table.Row{int64(k), int64(c)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

func indexFiles(t *testing.T, tb *table.Table) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(tb.Path(), "index", "index-*"))
	return names
}

// TestNewDeletionsAreWrittenAsJavaReadsThem marks rows of two files, drops
// a rewritten file's vector, writes, and reads the new index file back:
// 32-bit and 64-bit vectors per deletion-vectors.bitmap64, ranges and
// cardinalities in the change's entry, the old files named as replaced.
func TestNewDeletionsAreWrittenAsJavaReadsThem(t *testing.T) {
	ctx := context.Background()
	for _, b64 := range []bool{false, true} {
		t.Run(fmt.Sprintf("bitmap64=%v", b64), func(t *testing.T) {
			tb := dvTable(t, b64, 3, 5000)
			b := latestFiles(t, tb).Buckets()[0]
			if len(b.Files) != 3 {
				t.Fatalf("%d files", len(b.Files))
			}
			f0, f1, f2 := b.Files[0].File.FileName, b.Files[1].File.FileName, b.Files[2].File.FileName
			m, err := deletionvector.Load(ctx, tb, b)
			if err != nil {
				t.Fatal(err)
			}
			if ch, p, err := m.Write(ctx); ch != nil || p != "" || err != nil || len(indexFiles(t, tb)) != 0 {
				t.Fatalf("an unmodified bucket wrote %v %q %v", ch, p, err)
			}
			model := map[string][]int64{}
			del := func(f string, pos ...int64) {
				for _, p := range pos {
					if err := m.NotifyNewDeletion(f, p); err != nil {
						t.Fatal(err)
					}
					if !slices.Contains(model[f], p) {
						model[f] = append(model[f], p)
					}
				}
			}
			del(f0, 0, 4999, 17, 17, 1000)
			for p := int64(2000); p < 4100; p++ { // a run and a bitmap container
				del(f1, p)
			}
			// A file the job rewrites has no new deletions and loses its
			// vector; one with new deletions cannot be rewritten.
			if err := m.RemoveDeletionVectorOf(f2); err != nil {
				t.Fatal(err)
			}
			if err := m.RemoveDeletionVectorOf(f1); err == nil || !strings.Contains(err.Error(), "new deletions") {
				t.Fatalf("rewriting a file with new deletions: %v", err)
			}
			if !m.Modified() {
				t.Fatal("not modified")
			}
			for _, bad := range []struct {
				file string
				pos  int64
			}{{f0, 5000}, {f0, -1}, {"data-nope-0.parquet", 1}, {f2, 4}} {
				if err := m.NotifyNewDeletion(bad.file, bad.pos); err == nil || !strings.Contains(err.Error(), tb.FullName()) {
					t.Errorf("deleting row %d of %s: %v", bad.pos, bad.file, err)
				}
			}
			ch, path, err := m.Write(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ch.IndexType != manifest.IndexTypeDeletionVectors || ch.Bucket != 0 || len(ch.Base) != 0 || len(ch.Files) != 1 {
				t.Fatalf("change %+v", ch)
			}
			meta := ch.Files[0]
			if filepath.Base(path) != meta.FileName || filepath.Dir(path) != filepath.Join(tb.Path(), "index") || !strings.HasPrefix(meta.FileName, "index-") {
				t.Fatalf("written to %s as %s", path, meta.FileName)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if data[0] != 1 || int64(len(data)) != meta.FileSize || meta.RowCount != 2 || len(meta.DeletionVectors) != 2 {
				t.Fatalf("file of %d bytes (version %d), entry %+v", len(data), data[0], meta)
			}
			for _, r := range meta.DeletionVectors {
				dv, err := datafile.ReadDeletionVector(ctx, fileio.NewLocal(), path, int64(r.Offset), int64(r.Length))
				if err != nil {
					t.Fatal(err)
				}
				want := slices.Sorted(slices.Values(model[r.DataFileName]))
				if dv.Bitmap64 != b64 || !slices.Equal(dv.Positions(), want) || *r.Cardinality != int64(len(want)) {
					t.Fatalf("%s: bitmap64=%v, %d positions, cardinality %d; want %d", r.DataFileName, dv.Bitmap64, len(dv.Positions()), *r.Cardinality, len(want))
				}
			}
			// The next job starts from this file: Load reads it, the change
			// names it as the entry it replaces, and the kinds stay.
			next := *b
			next.IndexFiles = ch.Files
			m2, err := deletionvector.Load(ctx, tb, &next)
			if err != nil {
				t.Fatal(err)
			}
			if len(m2.Base()) != 1 || m2.Base()[0].FileName != meta.FileName {
				t.Fatalf("base %+v", m2.Base())
			}
			if got := m2.Cardinalities(); got[f0] != 4 || got[f1] != 2100 || len(got) != 2 {
				t.Fatalf("cardinalities %v", got)
			}
			// Dropping every vector writes an empty file, as Java does, so
			// that it replaces the old entry.
			for _, f := range []string{f0, f1} {
				if err := m2.RemoveDeletionVectorOf(f); err != nil {
					t.Fatal(err)
				}
			}
			ch2, path2, err := m2.Write(ctx)
			if err != nil {
				t.Fatal(err)
			}
			data, _ = os.ReadFile(path2)
			if !bytes.Equal(data, []byte{1}) || ch2.Files[0].RowCount != 0 || ch2.Files[0].DeletionVectors == nil || len(ch2.Files[0].DeletionVectors) != 0 ||
				len(ch2.Base) != 1 || ch2.Base[0].FileName != meta.FileName {
				t.Fatalf("empty rewrite: %x %+v", data, ch2)
			}
		})
	}
}

// TestA32BitVectorRefusesPositionsJavaCannotHold: Java's
// BitmapDeletionVector takes positions up to 2^31-1.
func TestA32BitVectorRefusesPositionsJavaCannotHold(t *testing.T) {
	ctx := context.Background()
	for _, b64 := range []bool{false, true} {
		tb := dvTable(t, b64, 1, 3)
		b := latestFiles(t, tb).Buckets()[0]
		c := *b
		c.Files = slices.Clone(b.Files)
		c.Files[0].File.RowCount = 1 << 40
		m, err := deletionvector.Load(ctx, tb, &c)
		if err != nil {
			t.Fatal(err)
		}
		err = m.NotifyNewDeletion(c.Files[0].File.FileName, math.MaxInt32+1)
		if b64 != (err == nil) {
			t.Fatalf("bitmap64=%v: deleting row 2^31: %v", b64, err)
		}
		if b64 {
			if err := m.NotifyNewDeletion(c.Files[0].File.FileName, 1<<33+5); err != nil {
				t.Fatal(err)
			}
			ch, _, err := m.Write(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := *ch.Files[0].DeletionVectors[0].Cardinality; got != 2 {
				t.Fatalf("cardinality %d", got)
			}
		}
	}
}

// TestACancelledOrFailedWriteLeavesNoFile: Write publishes its file whole
// or not at all.
func TestACancelledOrFailedWriteLeavesNoFile(t *testing.T) {
	tb := dvTable(t, false, 1, 10)
	b := latestFiles(t, tb).Buckets()[0]
	ctx, cancel := context.WithCancel(context.Background())
	m, err := deletionvector.Load(ctx, tb, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.NotifyNewDeletion(b.Files[0].File.FileName, 3); err != nil {
		t.Fatal(err)
	}
	cancel()
	if ch, p, err := m.Write(ctx); err == nil || ch != nil || p != "" || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: %v %q %v", ch, p, err)
	}
	if f := indexFiles(t, tb); len(f) != 0 {
		t.Fatalf("left %v", f)
	}
	failing := &expiretest.FailingFS{FileIO: tb.FileIO(), FailAt: 1}
	ftb, err := table.OpenPath(context.Background(), failing, tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	m, err = deletionvector.Load(context.Background(), ftb, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.NotifyNewDeletion(b.Files[0].File.FileName, 3); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Write(context.Background()); !errors.Is(err, expiretest.ErrInjected) {
		t.Fatalf("failing store: %v", err)
	}
	if f := indexFiles(t, tb); len(f) != 0 {
		t.Fatalf("left %v", f)
	}
}
