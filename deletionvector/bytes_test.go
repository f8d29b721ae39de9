package deletionvector_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// TestFixtureIndexFilesEncodeToJavasBytesAndEntries extends the per-vector
// check of table/datafile to whole files and their index-manifest entries:
// every DELETION_VECTORS file of the fixtures, decoded and encoded again in
// the order Java wrote its vectors, gives the file's bytes, and the ranges,
// row count and size of the encoding are those of Java's entry. What the
// maintainer writes is this encoding (in name order).
func TestFixtureIndexFilesEncodeToJavasBytesAndEntries(t *testing.T) {
	ctx := context.Background()
	files := 0
	for _, ft := range fixtureDVTables(t) {
		tb, err := table.Open(ctx, fileio.NewLocal(), ft[0], ft[1], ft[2])
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range latestFiles(t, tb).Buckets() {
			for _, idx := range b.IndexFiles {
				if idx.IndexType != manifest.IndexTypeDeletionVectors {
					continue
				}
				path, err := tb.Paths().IndexFileOf(b.Partition, b.Bucket, &idx)
				if err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					continue // external index path outside the fixture
				}
				ranges := slices.Clone(idx.DeletionVectors)
				slices.SortFunc(ranges, func(a, b manifest.DeletionVectorMeta) int { return int(a.Offset - b.Offset) })
				vectors := map[string]*datafile.DeletionVector{}
				var names []string
				for _, r := range ranges {
					dv, _, err := datafile.DecodeDeletionVector(data[r.Offset:])
					if err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					vectors[r.DataFileName] = dv
					names = append(names, r.DataFileName)
				}
				got, gotRanges, err := datafile.EncodeDeletionVectorsIndex(names, vectors)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data) {
					t.Errorf("%s: re-encoded file (%d bytes) differs from Java's (%d bytes)", path, len(got), len(data))
				}
				if int64(len(got)) != idx.FileSize || idx.RowCount != int64(len(gotRanges)) {
					t.Errorf("%s: size %d / %d vectors, Java's entry says %d / %d", path, len(got), len(gotRanges), idx.FileSize, idx.RowCount)
				}
				for i, r := range ranges {
					g := gotRanges[i]
					if g.DataFile != r.DataFileName || g.Offset != r.Offset || g.Length != r.Length || (r.Cardinality != nil && *r.Cardinality != g.Cardinality) {
						t.Errorf("%s: range %+v, Java's entry has %+v", path, g, r)
					}
				}
				files++
			}
		}
	}
	if files == 0 {
		t.Fatal("no deletion-vector file checked")
	}
	t.Logf("%d index files re-encoded byte for byte", files)
}
