package table

import (
	"fmt"
	"slices"

	"github.com/compactd/compactd/table/manifest"
)

// IndexChange replaces the index files of one type of a partition and
// bucket in the index manifest, as Java's IndexManifestFileHandler combines
// a fixed-bucket table's index files (BucketedCombiner): every entry of
// (Partition, Bucket, IndexType) goes, the ADD entries of Files come. Base
// are the entries the change was computed from (the bucket's files of that
// type in the snapshot a job read); a commit whose latest snapshot holds
// other files for the key conflicts instead of overwriting what a
// concurrent writer recorded there.
type IndexChange struct {
	Partition []byte // serialized BinaryRow
	Bucket    int32
	IndexType string
	Base      []manifest.IndexFileMeta
	Files     []manifest.IndexFileMeta
}

// Entries are the index-manifest ADD entries of the change's files.
func (c *IndexChange) Entries() []manifest.IndexEntry {
	out := make([]manifest.IndexEntry, len(c.Files))
	for i, f := range c.Files {
		out[i] = manifest.IndexEntry{Kind: manifest.FileKindAdd, Partition: c.Partition, Bucket: c.Bucket, IndexFile: f}
	}
	return out
}

// sameKey reports whether e is an entry of the change's partition, bucket
// and index type.
func (c *IndexChange) sameKey(e *manifest.IndexEntry) bool {
	return e.Bucket == c.Bucket && e.IndexFile.IndexType == c.IndexType && string(e.Partition) == string(c.Partition)
}

// CheckIndexBase reports whether the change still applies on top of an
// index manifest's entries: their files of the change's partition, bucket
// and type must be exactly the change's Base. Otherwise another writer
// changed them since the change was computed, and applying it would drop
// what that writer recorded (a deletion vector lost is a deleted row back).
// Java's ConflictDetection does not check this for fixed-bucket tables; it
// relies on one writer per bucket.
func CheckIndexBase(entries []manifest.IndexEntry, c *IndexChange) error {
	var have []string
	for i := range entries {
		if c.sameKey(&entries[i]) {
			have = append(have, entries[i].IndexFile.FileName)
		}
	}
	want := make([]string, len(c.Base))
	for i, f := range c.Base {
		want[i] = f.FileName
	}
	slices.Sort(have)
	slices.Sort(want)
	if !slices.Equal(have, want) {
		return fmt.Errorf("bucket %d: the %s index files changed concurrently (now %v, the change was computed on %v)", c.Bucket, c.IndexType, have, want)
	}
	return nil
}

// CombineIndexEntries is the index manifest after changes: Java's
// IndexManifestFileHandler for fixed-bucket tables (BucketedCombiner) drops
// every entry of a changed (partition, bucket, type) and adds the change's
// files; other entries (HASH indexes, other buckets) stay as they are, in
// their order.
func CombineIndexEntries(entries []manifest.IndexEntry, changes []IndexChange) []manifest.IndexEntry {
	out := make([]manifest.IndexEntry, 0, len(entries)+len(changes))
	for i := range entries {
		replaced := false
		for j := range changes {
			if changes[j].sameKey(&entries[i]) {
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, entries[i])
		}
	}
	for i := range changes {
		out = append(out, changes[i].Entries()...)
	}
	return out
}

// validateIndexChanges refuses index changes compactd does not know how to
// combine as Java does: other types than DELETION_VECTORS, buckets of
// tables whose deletion vectors Java does not combine per bucket
// (unaware-bucket append tables: per file with DELETE entries;
// cross-partition-update tables, which compactd does not compact), two
// changes of one key. Fixed-bucket and dynamic-bucket (HASH_DYNAMIC)
// primary-key tables both take Java's BucketedCombiner for
// DELETION_VECTORS; the HASH entries of a dynamic-bucket table are another
// index type and stay as they are (CombineIndexEntries).
func (t *Table) validateIndexChanges(changes []IndexChange) error {
	if len(changes) == 0 {
		return nil
	}
	b := t.Options().Bucket
	hashDynamic := b == BucketDynamic && t.HasPrimaryKey() && !t.Schema().CrossPartitionUpdate()
	// The real buckets of a postponed table are fixed buckets, and Java
	// combines their deletion vectors per bucket too (only unaware-bucket
	// tables combine per file); changes of bucket-postpone are refused below.
	postponed := b == BucketPostpone && t.HasPrimaryKey()
	if b <= 0 && !hashDynamic && !postponed {
		return fmt.Errorf("commit to %s: index changes of a table with bucket=%d: only fixed-bucket, dynamic-bucket (HASH index) and postponed-bucket primary-key tables are supported", t.FullName(), b)
	}
	type key struct {
		part   string
		bucket int32
		typ    string
	}
	seen := map[key]bool{}
	for i := range changes {
		c := &changes[i]
		if c.IndexType != manifest.IndexTypeDeletionVectors {
			return fmt.Errorf("commit to %s: index change of type %s: only %s is supported", t.FullName(), c.IndexType, manifest.IndexTypeDeletionVectors)
		}
		if c.Bucket < 0 {
			return fmt.Errorf("commit to %s: index change of bucket %d", t.FullName(), c.Bucket)
		}
		k := key{string(c.Partition), c.Bucket, c.IndexType}
		if seen[k] {
			return fmt.Errorf("commit to %s: two index changes of bucket %d", t.FullName(), c.Bucket)
		}
		seen[k] = true
		for _, f := range c.Files {
			if f.IndexType != c.IndexType {
				return fmt.Errorf("commit to %s: index file %s of type %s in a %s change", t.FullName(), f.FileName, f.IndexType, c.IndexType)
			}
		}
	}
	return nil
}
