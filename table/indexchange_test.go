package table

import (
	"slices"
	"testing"

	"github.com/compactd/compactd/table/manifest"
)

// TestCombineIndexEntriesReplacesOnlyTheChangedBucketsVectors is Java's
// BucketedCombiner: a change drops every DELETION_VECTORS entry of its
// (partition, bucket) and adds its file; HASH entries of that bucket and
// entries of other buckets and partitions stay, in order.
func TestCombineIndexEntriesReplacesOnlyTheChangedBucketsVectors(t *testing.T) {
	e := func(part string, bucket int32, typ, name string) manifest.IndexEntry {
		return manifest.IndexEntry{Kind: manifest.FileKindAdd, Partition: []byte(part), Bucket: bucket, IndexFile: manifest.IndexFileMeta{IndexType: typ, FileName: name}}
	}
	entries := []manifest.IndexEntry{
		e("p1", 0, manifest.IndexTypeHash, "hash-p1-0"),
		e("p1", 0, manifest.IndexTypeDeletionVectors, "dv-p1-0"),
		e("p1", 1, manifest.IndexTypeDeletionVectors, "dv-p1-1"),
		e("p2", 0, manifest.IndexTypeDeletionVectors, "dv-p2-0"),
		e("p1", 0, manifest.IndexTypeDeletionVectors, "dv-p1-0-second"),
	}
	c := IndexChange{Partition: []byte("p1"), Bucket: 0, IndexType: manifest.IndexTypeDeletionVectors,
		Base:  []manifest.IndexFileMeta{{FileName: "dv-p1-0-second"}, {FileName: "dv-p1-0"}},
		Files: []manifest.IndexFileMeta{{IndexType: manifest.IndexTypeDeletionVectors, FileName: "dv-new"}}}
	if err := CheckIndexBase(entries, &c); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range CombineIndexEntries(entries, []IndexChange{c}) {
		if x.Kind != manifest.FileKindAdd {
			t.Fatalf("%s: kind %d", x.IndexFile.FileName, x.Kind)
		}
		got = append(got, x.IndexFile.FileName)
	}
	if want := []string{"hash-p1-0", "dv-p1-1", "dv-p2-0", "dv-new"}; !slices.Equal(got, want) {
		t.Fatalf("combined %v, want %v", got, want)
	}
	// A base that is not what the entries hold is a concurrent change.
	for _, base := range [][]manifest.IndexFileMeta{nil, {{FileName: "dv-p1-0"}}, {{FileName: "dv-p1-0"}, {FileName: "dv-p1-0-second"}, {FileName: "x"}}} {
		c.Base = base
		if err := CheckIndexBase(entries, &c); err == nil {
			t.Fatalf("base %v accepted", base)
		}
	}
}
