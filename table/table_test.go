package table

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table/manifest"
)

// fixtureTables returns the table directories of the fixtures: directories
// holding schema/schema-N that are not branch metadata.
func fixtureTables(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range fixtureFiles(t, "schema", "schema-0") {
		dir := filepath.Dir(filepath.Dir(f))
		if strings.Contains(dir, string(filepath.Separator)+"branch"+string(filepath.Separator)) {
			continue
		}
		if !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	if len(out) < 40 {
		t.Fatalf("expected ~50 fixture tables, found %d", len(out))
	}
	return out
}

// isORCFixture reports whether the table's manifests are ORC files, judged
// from the bytes (ORC files start with "ORC", Avro containers with "Obj").
func isORCFixture(dir string) bool {
	entries, _ := os.ReadDir(filepath.Join(dir, "manifest"))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, "manifest", e.Name()))
		if err == nil && strings.HasPrefix(string(data), "ORC") {
			return true
		}
	}
	return false
}

func TestEveryFixtureTableOpensAndReadsAllSnapshots(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	opened, orcTables := 0, 0
	for _, dir := range fixtureTables(t) {
		tb, err := OpenPath(ctx, fio, dir)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		opened++
		// Every fixture is writable; compactd writes the metadata of
		// ORC-manifest tables in ORC, as Java does.
		f, werr := tb.MetadataFormat()
		if werr != nil || tb.Writable() != nil {
			t.Errorf("%s: Writable() = %v, MetadataFormat() = %v", dir, tb.Writable(), werr)
		}
		if isORCFixture(dir) {
			if !f.ORC {
				t.Errorf("%s: ORC-manifest table written as %s", dir, f)
			}
			orcTables++
		} else if f.ORC {
			t.Errorf("%s: Avro-manifest table written as %s", dir, f)
		}
		ids, err := tb.SnapshotIDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if i > 0 && id != ids[i-1]+1 {
				t.Errorf("%s: snapshot ids not contiguous: %v", dir, ids)
			}
			s, err := tb.Snapshot(ctx, id)
			if err != nil {
				t.Errorf("%s: %v", dir, err)
				continue
			}
			if _, err := tb.SchemaByID(ctx, s.SchemaID); err != nil {
				t.Errorf("%s: snapshot %d names schema %d: %v", dir, id, s.SchemaID, err)
			}
		}
		if len(ids) > 0 {
			latest, err := tb.LatestSnapshot(ctx)
			if err != nil || latest.ID != ids[len(ids)-1] {
				t.Errorf("%s: latest snapshot %v, %v", dir, latest, err)
			}
			if hint, ok, err := tb.ReadLatestHint(ctx); err != nil || (ok && hint > latest.ID) {
				t.Errorf("%s: LATEST hint %d ok=%v err=%v beyond listing %d", dir, hint, ok, err, latest.ID)
			}
		}
		if got, want := tb.SchemaIDs(), schemaIDsOnDisk(t, dir); !slices.Equal(got, want) {
			t.Errorf("%s: schema ids %v, on disk %v", dir, got, want)
		}
	}
	t.Logf("%d tables opened, %d of them with ORC manifests", opened, orcTables)
	if opened < 45 || orcTables < 9 {
		t.Fatalf("only %d tables opened, %d with ORC manifests", opened, orcTables)
	}
}

func schemaIDsOnDisk(t *testing.T, dir string) []int64 {
	entries, err := os.ReadDir(filepath.Join(dir, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, e := range entries {
		if n, ok := strings.CutPrefix(e.Name(), "schema-"); ok {
			id, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

var readmeBucketCount = regexp.MustCompile(`(?m)^\s*"?bucket(?: count)?"?\s*[:=]\s*"?(-?\d+)"?`)

// TestFileSetOfEveryFixtureTable computes the live file set of the latest
// snapshot of every table (Avro and ORC manifests) and checks it against the disk and
// the READMEs: every live file exists at the computed path (which checks
// partition names and bucket directories), buckets respect the README's
// bucket count, and level ≥ 1 runs are key-ordered and disjoint.
func TestFileSetOfEveryFixtureTable(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	checkedFiles, checkedBuckets, checkedIndex := 0, 0, 0
	for _, dir := range fixtureTables(t) {
		tb, err := OpenPath(ctx, fio, dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		s, err := tb.LatestSnapshot(ctx)
		if errors.Is(err, ErrNoSnapshot) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fs, err := tb.FileSet(ctx, s)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if len(fs.OrphanDeletes) > 0 {
			t.Errorf("%s: %d orphan DELETE entries", dir, len(fs.OrphanDeletes))
		}
		var readmeBuckets *int
		if data, err := os.ReadFile(filepath.Join(dir, "README")); err == nil {
			if m := readmeBucketCount.FindSubmatch(data); m != nil {
				n, _ := strconv.Atoi(string(m[1]))
				readmeBuckets = &n
				if got := tb.Options().Bucket; got != n {
					t.Errorf("%s: README says bucket count %d, options say %d", dir, n, got)
				}
			}
		}
		var sumRows int64
		for _, p := range fs.Partitions {
			for _, b := range p.Buckets {
				checkedBuckets++
				if readmeBuckets != nil && *readmeBuckets > 0 && (b.Bucket < 0 || b.Bucket >= int32(*readmeBuckets)) {
					t.Errorf("%s: bucket %d outside README bucket count %d", dir, b.Bucket, *readmeBuckets)
				}
				if readmeBuckets != nil && *readmeBuckets == -1 && !tb.HasPrimaryKey() && b.Bucket != 0 {
					t.Errorf("%s: unaware-bucket append table has bucket %d", dir, b.Bucket)
				}
				checkRuns(t, tb, dir, b)
				for i := range b.Files {
					e := &b.Files[i]
					sumRows += e.File.RowCount
					path, err := tb.DataFilePath(e)
					if err != nil {
						t.Errorf("%s: %v", dir, err)
						continue
					}
					if e.File.ExternalPath != nil {
						continue // fixture external paths point outside the tree
					}
					checkedFiles++
					if !strings.HasPrefix(path, filepath.Join(dir, p.Path)) {
						t.Errorf("%s: %s not under partition %q", dir, path, p.Path)
					}
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s: live file missing at computed path: %v", dir, err)
					}
				}
			}
		}
		for _, ie := range fs.Index {
			path, err := tb.Paths().IndexFileOf(ie.Partition, ie.Bucket, &ie.IndexFile)
			if err != nil {
				t.Errorf("%s: %v", dir, err)
				continue
			}
			if ie.IndexFile.ExternalPath != nil {
				continue
			}
			checkedIndex++
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: live index file missing at computed path: %v", dir, err)
			}
		}
		if sumRows != s.TotalRecordCount {
			t.Errorf("%s: live files hold %d rows, snapshot %d says totalRecordCount=%d", dir, sumRows, s.ID, s.TotalRecordCount)
		}
	}
	t.Logf("checked %d live files in %d buckets, %d index files", checkedFiles, checkedBuckets, checkedIndex)
	if checkedFiles < 100 {
		t.Fatalf("only %d files checked", checkedFiles)
	}
}

func checkRuns(t *testing.T, tb *Table, dir string, b *BucketFiles) {
	t.Helper()
	n := 0
	lastLevel := int32(-1)
	var prevL0 *manifest.Entry
	for _, r := range b.Runs {
		n += len(r.Files)
		if r.Level < lastLevel || (r.Level == lastLevel && r.Level != 0) {
			t.Errorf("%s: runs out of level order", dir)
		}
		lastLevel = r.Level
		if r.Level == 0 {
			if len(r.Files) != 1 {
				t.Errorf("%s: level-0 run with %d files", dir, len(r.Files))
			}
			if prevL0 != nil && prevL0.File.MaxSequenceNumber < r.Files[0].File.MaxSequenceNumber {
				t.Errorf("%s: level-0 runs not newest first", dir)
			}
			prevL0 = r.Files[0]
			continue
		}
		types := typesOf(tb.Schema().TrimmedPrimaryKeyType())
		for i := 1; i < len(r.Files); i++ {
			prevMax, err1 := DecodeBinaryRow(types, r.Files[i-1].File.MaxKey)
			nextMin, err2 := DecodeBinaryRow(types, r.Files[i].File.MinKey)
			if err1 != nil || err2 != nil {
				t.Errorf("%s: key decode: %v %v", dir, err1, err2)
				continue
			}
			if CompareRows(types, prevMax, nextMin) >= 0 {
				t.Errorf("%s: level %d files overlap: %v >= %v", dir, r.Level, prevMax, nextMin)
			}
		}
	}
	if n != len(b.Files) {
		t.Errorf("%s: runs hold %d files, bucket %d", dir, n, len(b.Files))
	}
}

func TestOpenErrorsNameTableAndFile(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	src := filepath.Join(metaFixturesRoot, "parquet/pk_09.db/pk_09")

	t.Run("missing table", func(t *testing.T) {
		_, err := OpenPath(ctx, fio, filepath.Join(t.TempDir(), "nope"))
		if !errors.Is(err, ErrNotATable) || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("corrupt schema", func(t *testing.T) {
		dir := metaCopyTable(t, src)
		metaMust(t, os.WriteFile(filepath.Join(dir, "schema", "schema-0"), []byte(`{"id":0,`), 0o644))
		_, err := OpenPath(ctx, fio, dir)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "schema", "schema-0")) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("corrupt snapshot", func(t *testing.T) {
		dir := metaCopyTable(t, src)
		metaMust(t, os.WriteFile(filepath.Join(dir, "snapshot", "snapshot-8"), []byte(`{"id":8,"commitKind":"NOPE"`), 0o644))
		tb, err := OpenPath(ctx, fio, dir)
		metaMust(t, err)
		_, err = tb.LatestSnapshot(ctx)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "snapshot", "snapshot-8")) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("missing manifest list", func(t *testing.T) {
		dir := metaCopyTable(t, src)
		tb, err := OpenPath(ctx, fio, dir)
		metaMust(t, err)
		s, err := tb.LatestSnapshot(ctx)
		metaMust(t, err)
		metaMust(t, os.Remove(filepath.Join(dir, "manifest", s.DeltaManifestList)))
		_, err = tb.FileSet(ctx, s)
		if !errors.Is(err, fileio.ErrNotExist) || !strings.Contains(err.Error(), s.DeltaManifestList) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("snapshot file holding another id", func(t *testing.T) {
		dir := metaCopyTable(t, src)
		data, err := os.ReadFile(filepath.Join(dir, "snapshot", "snapshot-7"))
		metaMust(t, err)
		metaMust(t, os.WriteFile(filepath.Join(dir, "snapshot", "snapshot-8"), data, 0o644))
		tb, err := OpenPath(ctx, fio, dir)
		metaMust(t, err)
		if _, err := tb.Snapshot(ctx, 8); err == nil {
			t.Fatal("snapshot-8 holding id 7 accepted")
		}
	})
	t.Run("latest snapshot ignores a stale LATEST hint", func(t *testing.T) {
		dir := metaCopyTable(t, src)
		tb, err := OpenPath(ctx, fio, dir)
		metaMust(t, err)
		metaMust(t, tb.WriteLatestHint(ctx, 3))
		s, err := tb.LatestSnapshot(ctx)
		metaMust(t, err)
		if s.ID != 8 {
			t.Fatalf("latest %d", s.ID)
		}
		if id, ok, err := tb.ReadLatestHint(ctx); err != nil || !ok || id != 3 {
			t.Fatalf("hint %d %v %v", id, ok, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "snapshot", "LATEST"))
		metaMust(t, err)
		if string(data) != "3" {
			t.Fatalf("hint written as %q", data)
		}
	})
}

// copyMetadata copies a table's metadata directories (not data files) to a
// temp dir.
func metaCopyTable(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	for _, sub := range []string{"schema", "snapshot", "manifest", "index"} {
		entries, err := os.ReadDir(filepath.Join(src, sub))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		metaMust(t, err)
		metaMust(t, os.MkdirAll(filepath.Join(dst, sub), 0o755))
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(src, sub, e.Name()))
			metaMust(t, err)
			metaMust(t, os.WriteFile(filepath.Join(dst, sub, e.Name()), data, 0o644))
		}
	}
	return dst
}

func metaMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestListDatabasesAndTables(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	wh := filepath.Join(metaFixturesRoot, "parquet")
	dbs, _, err := ListDatabases(ctx, fio, wh)
	metaMust(t, err)
	if !slices.Contains(dbs, "pk_09") || !slices.Contains(dbs, "append_10") || len(dbs) < 40 {
		t.Fatalf("databases %v", dbs)
	}
	tables, _, err := ListTables(ctx, fio, wh, "pk_09")
	metaMust(t, err)
	if !slices.Equal(tables, []string{"pk_09"}) {
		t.Fatalf("tables %v", tables)
	}
	tb, err := Open(ctx, fio, wh, "pk_09", "pk_09")
	metaMust(t, err)
	if tb.FullName() != "pk_09.pk_09" || !tb.HasPrimaryKey() || tb.Options().Bucket != 2 {
		t.Fatalf("table %s pk=%v bucket=%d", tb.FullName(), tb.HasPrimaryKey(), tb.Options().Bucket)
	}
	// The avro warehouse also holds loose manifests in non-.db directories.
	dbs, _, err = ListDatabases(ctx, fio, filepath.Join(metaFixturesRoot, "avro"))
	metaMust(t, err)
	if slices.Contains(dbs, "manifest") || slices.Contains(dbs, "data") {
		t.Fatalf("non-database directories listed: %v", dbs)
	}
}

func TestWriteSnapshotIsExclusive(t *testing.T) {
	ctx := context.Background()
	dir := metaCopyTable(t, filepath.Join(metaFixturesRoot, "parquet/pk_09.db/pk_09"))
	tb, err := OpenPath(ctx, fileio.NewLocal(), dir)
	metaMust(t, err)
	latest, err := tb.LatestSnapshot(ctx)
	metaMust(t, err)
	next := latest.WithoutLegacy()
	next.ID = latest.ID + 1
	next.CommitKind = CommitCompact
	metaMust(t, tb.WriteSnapshot(ctx, &next))
	if err := tb.WriteSnapshot(ctx, &next); !errors.Is(err, fileio.ErrExist) {
		t.Fatalf("second write of snapshot %d: %v", next.ID, err)
	}
	back, err := tb.LatestSnapshot(ctx)
	metaMust(t, err)
	if back.ID != next.ID || back.ChangelogManifestList != nil || back.LogOffsets != nil {
		t.Fatalf("read back %+v", back)
	}
	data, err := os.ReadFile(filepath.Join(dir, "snapshot", SnapshotFileName(next.ID)))
	metaMust(t, err)
	if strings.Contains(string(data), "null") || strings.Contains(string(data), "logOffsets") {
		t.Fatalf("new snapshot carries legacy fields:\n%s", data)
	}
}

func TestEmptyTableHasNoSnapshot(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(metaFixturesRoot, "parquet/pk_09.db/pk_09")
	dir := filepath.Join(t.TempDir(), "empty")
	data, err := os.ReadFile(filepath.Join(src, "schema", "schema-0"))
	metaMust(t, err)
	metaMust(t, os.MkdirAll(filepath.Join(dir, "schema"), 0o755))
	metaMust(t, os.WriteFile(filepath.Join(dir, "schema", "schema-0"), data, 0o644))
	tb, err := OpenPath(ctx, fileio.NewLocal(), dir)
	metaMust(t, err)
	ids, err := tb.SnapshotIDs(ctx)
	if err != nil || len(ids) != 0 {
		t.Fatalf("ids %v %v", ids, err)
	}
	if _, err := tb.LatestSnapshot(ctx); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("latest: %v", err)
	}
	if _, ok, err := tb.ReadLatestHint(ctx); ok || err != nil {
		t.Fatalf("hint ok=%v err=%v", ok, err)
	}
	if _, err := tb.SchemaByID(ctx, 1); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("missing schema: %v", err)
	}
}
