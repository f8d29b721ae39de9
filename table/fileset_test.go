package table

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table/manifest"
)

// runShape renders a bucket's runs as "L<level>:<rows>" per file, in run
// order, e.g. "L0:3 L0:1 L5:5".
func runShape(b *BucketFiles) string {
	var parts []string
	for _, r := range b.Runs {
		for _, f := range r.Files {
			parts = append(parts, "L"+itoa(int64(r.Level))+":"+itoa(f.File.RowCount))
		}
	}
	return strings.Join(parts, " ")
}

// The expected shapes follow from the fixture READMEs: the commits, which
// rows went to which bucket, and the compactions applied.
func TestFileSetMatchesFixtureHistories(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		table string
		want  map[string]string // "<partition>/<bucket>" → run shape
		index map[string]int    // index files per bucket
	}{
		{
			// 5 rows, full compaction upgraded to level 5, then two
			// 2-row commits (newest first in level 0).
			table: "pk_compact_lookup",
			want:  map[string]string{"/0": "L0:2 L0:2 L5:5"},
		},
		{
			// Commit 1 and 2 then a compaction of bucket 0 of f1=10 and
			// of f1=20; bucket 1 of f1=10 keeps its level-0 files and
			// receives commits 4 and 5.
			table: "pk_table_scan_and_read_mor",
			want: map[string]string{
				"f1=10/0": "L5:2",
				"f1=10/1": "L0:3 L0:3 L0:1 L0:5",
				"f1=20/0": "L5:2",
			},
		},
		{
			// Deletion-vector table compacted to level 5; DV index files
			// only where deletions happened.
			table: "pk_09",
			want:  map[string]string{"f1=10/0": "L5:3", "f1=10/1": "L5:5", "f1=20/0": "L5:2"},
			index: map[string]int{"f1=10/0": 1, "f1=10/1": 1, "f1=20/0": 0},
		},
	}
	for _, c := range cases {
		t.Run(c.table, func(t *testing.T) {
			dir := filepath.Join(metaFixturesRoot, "parquet", c.table+".db", c.table)
			tb, err := OpenPath(ctx, fileio.NewLocal(), dir)
			metaMust(t, err)
			s, err := tb.LatestSnapshot(ctx)
			metaMust(t, err)
			fs, err := tb.FileSet(ctx, s)
			metaMust(t, err)
			got := map[string]string{}
			for _, b := range fs.Buckets() {
				p, err := tb.Paths().PartitionPath(b.Partition)
				metaMust(t, err)
				key := p + "/" + itoa(int64(b.Bucket))
				got[key] = runShape(b)
				if want, ok := c.index[key]; ok && len(b.IndexFiles) != want {
					t.Errorf("%s: %d index files, want %d", key, len(b.IndexFiles), want)
				}
				if fs.Bucket(b.Partition, b.Bucket) != b {
					t.Errorf("%s: Bucket lookup failed", key)
				}
			}
			if len(got) != len(c.want) {
				t.Errorf("buckets %v, want %v", got, c.want)
			}
			for k, w := range c.want {
				if got[k] != w {
					t.Errorf("%s: runs %q, want %q", k, got[k], w)
				}
			}
		})
	}
}

func entry(kind manifest.FileKind, name string, level int32) manifest.Entry {
	return manifest.Entry{Kind: kind, Partition: EmptyBinaryRow(), Bucket: 0, TotalBuckets: 1,
		File: manifest.DataFileMeta{FileName: name, Level: level, ExtraFiles: []string{}}}
}

func TestMergeEntriesFoldsAsJava(t *testing.T) {
	t.Run("delete cancels its add and upgrades re-add at a new level", func(t *testing.T) {
		adds, orphans, err := MergeEntries([]manifest.Entry{
			entry(manifest.FileKindAdd, "a", 0), entry(manifest.FileKindAdd, "b", 0),
			entry(manifest.FileKindDelete, "a", 0), entry(manifest.FileKindAdd, "a", 5), // upgrade
			entry(manifest.FileKindDelete, "b", 0), entry(manifest.FileKindAdd, "c", 5),
		})
		metaMust(t, err)
		if len(orphans) != 0 || len(adds) != 2 || adds[0].File.FileName != "a" || adds[0].File.Level != 5 || adds[1].File.FileName != "c" {
			t.Fatalf("adds %+v orphans %+v", adds, orphans)
		}
	})
	t.Run("an add of a live file is an error", func(t *testing.T) {
		if _, _, err := MergeEntries([]manifest.Entry{entry(manifest.FileKindAdd, "a", 0), entry(manifest.FileKindAdd, "a", 0)}); err == nil {
			t.Fatal("duplicate add accepted")
		}
	})
	t.Run("a delete without its add is kept as orphan and blocks a later add", func(t *testing.T) {
		adds, orphans, err := MergeEntries([]manifest.Entry{entry(manifest.FileKindDelete, "x", 1), entry(manifest.FileKindAdd, "y", 0)})
		metaMust(t, err)
		if len(adds) != 1 || len(orphans) != 1 || orphans[0].File.FileName != "x" {
			t.Fatalf("adds %+v orphans %+v", adds, orphans)
		}
		if _, _, err := MergeEntries([]manifest.Entry{entry(manifest.FileKindDelete, "x", 1), entry(manifest.FileKindAdd, "x", 1)}); err == nil {
			t.Fatal("add after an unmatched delete accepted (Java's checkState fails)")
		}
	})
	t.Run("identifiers include extra files and external path", func(t *testing.T) {
		withExtra := entry(manifest.FileKindDelete, "a", 0)
		withExtra.File.ExtraFiles = []string{"a.index"}
		adds, orphans, err := MergeEntries([]manifest.Entry{entry(manifest.FileKindAdd, "a", 0), withExtra})
		metaMust(t, err)
		if len(adds) != 1 || len(orphans) != 1 {
			t.Fatalf("a delete with different extra files must not cancel the add: %d %d", len(adds), len(orphans))
		}
	})
}

func TestRunsOrderLevelFilesByMinKeyAndLevel0ByNewest(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	fields := RowType{
		{ID: 0, Name: "k", Type: DataType{Root: TypeVarChar, Length: MaxLength}},
		{ID: 1, Name: "v", Type: DataType{Root: TypeInt, Nullable: true}},
	}
	s := metaSchema(t, fields, nil, []string{"k"}, map[string]string{"bucket": "1"})
	data, err := s.MarshalJSON()
	metaMust(t, err)
	fio := fileio.NewLocal()
	metaMust(t, fileio.WriteFile(ctx, fio, filepath.Join(dir, "schema", "schema-0"), data))
	tb, err := OpenPath(ctx, fio, dir)
	metaMust(t, err)

	keyTypes := typesOf(s.TrimmedPrimaryKeyType())
	file := func(name string, level int32, minKey string, minSeq, maxSeq int64) manifest.Entry {
		e := entry(manifest.FileKindAdd, name, level)
		k, err := EncodeBinaryRow(keyTypes, Row{minKey})
		metaMust(t, err)
		e.File.MinKey, e.File.MaxKey = k, k
		e.File.MinSequenceNumber, e.File.MaxSequenceNumber = minSeq, maxSeq
		return e
	}
	b := &BucketFiles{Files: []manifest.Entry{
		file("l1-m", 1, "m", 0, 1),
		file("l0-old", 0, "a", 2, 3),
		file("l2-b", 2, "b", 0, 1),
		file("l1-c", 1, "c", 0, 1),
		file("l0-new", 0, "a", 4, 9),
		file("l0-same-max-lower-min", 0, "a", 1, 9),
		file("l1-aa", 1, "aa", 0, 1),
	}}
	metaMust(t, tb.buildRuns(ctx, b))
	var got []string
	for _, r := range b.Runs {
		var names []string
		for _, f := range r.Files {
			names = append(names, f.File.FileName)
		}
		got = append(got, "L"+itoa(int64(r.Level))+"["+strings.Join(names, ",")+"]")
	}
	want := "L0[l0-same-max-lower-min] L0[l0-new] L0[l0-old] L1[l1-aa,l1-c,l1-m] L2[l2-b]"
	if strings.Join(got, " ") != want {
		t.Fatalf("runs %s\nwant %s", strings.Join(got, " "), want)
	}
	if b.MaxLevel() != 2 || len(b.Level(1)) != 3 || b.Runs[3].TotalSize() != 0 {
		t.Fatalf("max level %d, level 1 has %d", b.MaxLevel(), len(b.Level(1)))
	}
}

func TestGroupInPlaceKeepsEachGroupsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		n, ng := r.IntN(300), 1+r.IntN(12)
		entries := make([]manifest.Entry, n)
		group := make([]int32, n)
		sizes := make([]int, ng)
		var want [][]string
		for range ng {
			want = append(want, nil)
		}
		for i := range entries {
			g := r.IntN(ng)
			entries[i].File.FileName = fmt.Sprintf("f%d", i)
			group[i] = int32(g)
			sizes[g]++
			want[g] = append(want[g], entries[i].File.FileName)
		}
		groupInPlace(entries, group, sizes)
		at := 0
		for g := range ng {
			for _, name := range want[g] {
				if entries[at].File.FileName != name {
					t.Fatalf("group %d: position %d holds %s, want %s", g, at, entries[at].File.FileName, name)
				}
				at++
			}
		}
	}
}
