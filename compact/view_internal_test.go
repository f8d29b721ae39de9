package compact

import (
	"testing"

	"github.com/compactd/compactd/planner"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// dropEntries keeps what a plan-only caller still reads: bucket-postpone's
// files (copied out of the shared entry array, so PostponedOf counts the
// same), the planner files with equal keys in an array of their own; the
// other buckets' files and every entry lookup are gone.
func TestDropEntriesKeepsPostponedFilesAndKeys(t *testing.T) {
	entry := func(name string, bucket int32, rows int64) manifest.Entry {
		return manifest.Entry{Kind: manifest.FileKindAdd, Partition: table.EmptyBinaryRow(), Bucket: bucket,
			File: manifest.DataFileMeta{FileName: name, FileSize: 10 * rows, RowCount: rows, MinKey: []byte{1, byte(rows)}, MaxKey: []byte{2, byte(rows)}}}
	}
	shared := []manifest.Entry{entry("a", 0, 1), entry("b", 0, 2), entry("p1", table.BucketPostpone, 3), entry("p2", table.BucketPostpone, 4)}
	b0 := &table.BucketFiles{Bucket: 0, Files: shared[0:2:2]}
	bp := &table.BucketFiles{Bucket: table.BucketPostpone, Files: shared[2:4:4]}
	fs := &table.FileSet{Partitions: []*table.PartitionFiles{{Partition: table.EmptyBinaryRow(), Buckets: []*table.BucketFiles{b0, bp}}}}
	v := &TableView{FileSet: fs, buckets: map[planner.BucketID]*table.BucketFiles{{Bucket: 0}: b0, {Bucket: table.BucketPostpone}: bp}}
	for _, b := range []*table.BucketFiles{b0, bp} {
		pb := planner.Bucket{Bucket: int(b.Bucket)}
		for _, e := range b.Files {
			pb.Files = append(pb.Files, planner.File{Name: e.File.FileName, MinKey: e.File.MinKey, MaxKey: e.File.MaxKey})
		}
		v.View.Buckets = append(v.View.Buckets, pb)
	}
	if _, ok := v.Entry(planner.BucketID{Bucket: 0}, "a"); !ok {
		t.Fatal("entry a not found before the drop")
	}
	before := PostponedOf(fs, "")
	v.dropEntries()
	if got := PostponedOf(fs, ""); got != before || got.Files != 2 || got.Rows != 7 {
		t.Fatalf("postponed after the drop = %+v, want %+v", got, before)
	}
	if b0.Files != nil || &bp.Files[0] == &shared[2] {
		t.Fatal("a bucket's files still point into the shared entry array")
	}
	if _, ok := v.Entry(planner.BucketID{Bucket: 0}, "a"); ok || !v.planOnly {
		t.Fatal("entries still found after the drop")
	}
	for _, b := range v.View.Buckets {
		for _, f := range b.Files {
			for _, e := range shared {
				if e.File.FileName != f.Name {
					continue
				}
				if string(f.MinKey) != string(e.File.MinKey) || string(f.MaxKey) != string(e.File.MaxKey) {
					t.Fatalf("%s: keys changed", f.Name)
				}
				if &f.MinKey[0] == &e.File.MinKey[0] || cap(f.MinKey) != len(f.MinKey) || cap(f.MaxKey) != len(f.MaxKey) {
					t.Fatalf("%s: key not copied, or with spare capacity", f.Name)
				}
			}
		}
	}
}
