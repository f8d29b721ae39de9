package table

import (
	"slices"
	"testing"
)

// TestCombineIndexEntriesReplacesOnlyTheChangedBucketsVectors is Java's
// BucketedCombiner: a change drops every DELETION_VECTORS entry of its
// (partition, bucket) and adds its file; HASH entries of that bucket and
// entries of other buckets and partitions stay, in order.
func TestCombineIndexEntriesReplacesOnlyTheChangedBucketsVectors(t *testing.T) {
	e := func(part string, bucket int32, typ, name string) IndexManifestEntry {
		return IndexManifestEntry{Kind: FileKindAdd, Partition: []byte(part), Bucket: bucket, IndexFile: IndexFileMeta{IndexType: typ, FileName: name}}
	}
	entries := []IndexManifestEntry{
		e("p1", 0, IndexTypeHash, "hash-p1-0"),
		e("p1", 0, IndexTypeDeletionVectors, "dv-p1-0"),
		e("p1", 1, IndexTypeDeletionVectors, "dv-p1-1"),
		e("p2", 0, IndexTypeDeletionVectors, "dv-p2-0"),
		e("p1", 0, IndexTypeDeletionVectors, "dv-p1-0-second"),
	}
	c := IndexChange{Partition: []byte("p1"), Bucket: 0, IndexType: IndexTypeDeletionVectors,
		Base:  []IndexFileMeta{{FileName: "dv-p1-0-second"}, {FileName: "dv-p1-0"}},
		Files: []IndexFileMeta{{IndexType: IndexTypeDeletionVectors, FileName: "dv-new"}}}
	if err := CheckIndexBase(entries, &c); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range CombineIndexEntries(entries, []IndexChange{c}) {
		if x.Kind != FileKindAdd {
			t.Fatalf("%s: kind %d", x.IndexFile.FileName, x.Kind)
		}
		got = append(got, x.IndexFile.FileName)
	}
	if want := []string{"hash-p1-0", "dv-p1-1", "dv-p2-0", "dv-new"}; !slices.Equal(got, want) {
		t.Fatalf("combined %v, want %v", got, want)
	}
	// A base that is not what the entries hold is a concurrent change.
	for _, base := range [][]IndexFileMeta{nil, {{FileName: "dv-p1-0"}}, {{FileName: "dv-p1-0"}, {FileName: "dv-p1-0-second"}, {FileName: "x"}}} {
		c.Base = base
		if err := CheckIndexBase(entries, &c); err == nil {
			t.Fatalf("base %v accepted", base)
		}
	}
}
