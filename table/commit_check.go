package table

// Step 2 of the commit protocol (commit.go): Java's conflict checks of a
// delta against the live files of the latest snapshot.

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/compactd/compactd/table/manifest"
)

func typesOfRow(rt RowType) []DataType {
	out := make([]DataType, len(rt))
	for i, f := range rt {
		out[i] = f.Type
	}
	return out
}

// checkConflicts runs Java's commit checks (§8.4 of the format spec) on the
// partitions the delta touches. planned, if not nil, is latest's file set
// (the caller checked SameFiles): its live files are taken instead of
// reading base's manifests.
func (t *Table) checkConflicts(ctx context.Context, latest *Snapshot, base []manifest.ListEntry, planned *FileSet, kind CommitKind, delta []manifest.Entry, index []IndexChange) error {
	latestID := int64(0)
	if latest != nil {
		latestID = latest.ID
	}
	conflict := func(format string, args ...any) error {
		return &ConflictError{Table: t.FullName(), Snapshot: latestID, Reason: fmt.Sprintf(format, args...)}
	}
	if _, _, err := MergeEntries(slices.Clone(delta)); err != nil {
		return conflict("delta is inconsistent: %v", err)
	}
	touched := map[string]bool{}
	for i := range delta {
		touched[string(delta[i].Partition)] = true
	}
	for i := range index {
		touched[string(index[i].Partition)] = true
	}
	live := map[manifest.FileIdentifier]*manifest.Entry{}
	if latest != nil && planned != nil {
		// The live files of the snapshot, as FileSet folded them from the
		// same manifests (MergeEntries, as below).
		for _, p := range planned.Partitions {
			if !touched[string(p.Partition)] {
				continue
			}
			for _, b := range p.Buckets {
				for i := range b.Files {
					live[b.Files[i].Identifier()] = &b.Files[i]
				}
			}
		}
	} else if latest != nil {
		entries, err := t.ReadManifests(ctx, base)
		if err != nil {
			return fmt.Errorf("commit to %s: %w", t.FullName(), err)
		}
		adds, _, err := MergeEntries(entries)
		if err != nil {
			return fmt.Errorf("commit to %s: snapshot %d: %w", t.FullName(), latestID, err)
		}
		for i := range adds {
			if touched[string(adds[i].Partition)] {
				live[adds[i].Identifier()] = &adds[i]
			}
		}
	}
	// Total buckets must agree within a partition. An OVERWRITE may change
	// a partition's bucket count (Java skips this check for it,
	// ConflictDetection.checkBucketKeepSame); compactd checks the files
	// live after it instead, below: its ADDs must agree with every file of
	// a real bucket it leaves.
	if kind != CommitOverwrite {
		totals := map[string]int32{}
		for _, e := range live {
			if e.TotalBuckets > 0 {
				totals[string(e.Partition)] = e.TotalBuckets
			}
		}
		for i := range delta {
			e := &delta[i]
			if e.TotalBuckets <= 0 {
				continue
			}
			if tb, ok := totals[string(e.Partition)]; ok && tb != e.TotalBuckets {
				return conflict("file %s has %d total buckets, the partition has %d", e.File.FileName, e.TotalBuckets, tb)
			}
		}
	}
	for i := range delta {
		e := &delta[i]
		id := e.Identifier()
		switch e.Kind {
		case manifest.FileKindAdd:
			if _, ok := live[id]; ok {
				return conflict("file %s is already live", e.File.FileName)
			}
			live[id] = e
		case manifest.FileKindDelete:
			if _, ok := live[id]; !ok {
				return conflict("file %s (bucket %d, level %d) to delete is no longer live", e.File.FileName, e.Bucket, e.File.Level)
			}
			delete(live, id)
		}
	}
	if kind == CommitOverwrite {
		type bucketTotal struct {
			total int32
			file  string
		}
		totals := map[string]bucketTotal{}
		for _, e := range live {
			if e.Bucket < 0 || e.TotalBuckets <= 0 {
				continue
			}
			tb, ok := totals[string(e.Partition)]
			if !ok {
				totals[string(e.Partition)] = bucketTotal{e.TotalBuckets, e.File.FileName}
				continue
			}
			if tb.total != e.TotalBuckets {
				return conflict("after the overwrite, file %s would have %d total buckets and file %s of the same partition %d", e.File.FileName, e.TotalBuckets, tb.file, tb.total)
			}
		}
	}
	// Every deletion vector the commit writes must name a data file of its
	// bucket that is live after the commit (Java checks this pairing for
	// unaware-bucket tables only; a vector of a file a concurrent writer
	// removed would be meaningless).
	type bucketFile struct {
		part   string
		bucket int32
		name   string
	}
	var liveFiles map[bucketFile]bool
	for i := range index {
		for _, f := range index[i].Files {
			for _, dv := range f.DeletionVectors {
				if liveFiles == nil {
					liveFiles = make(map[bucketFile]bool, len(live))
					for _, e := range live {
						liveFiles[bucketFile{string(e.Partition), e.Bucket, e.File.FileName}] = true
					}
				}
				if !liveFiles[bucketFile{string(index[i].Partition), index[i].Bucket, dv.DataFileName}] {
					return conflict("bucket %d: index file %s holds a deletion vector of data file %s, which is not live", index[i].Bucket, f.FileName, dv.DataFileName)
				}
			}
		}
	}
	if !t.HasPrimaryKey() {
		return nil
	}
	// Files of one level ≥ 1 of a bucket must have disjoint key ranges.
	keyTypes := typesOfRow(t.Schema().TrimmedPrimaryKeyType())
	type lvl struct {
		part   string
		bucket int32
		level  int32
	}
	groups := map[lvl][]*manifest.Entry{}
	for _, e := range live {
		if e.File.Level > 0 {
			k := lvl{string(e.Partition), e.Bucket, e.File.Level}
			groups[k] = append(groups[k], e)
		}
	}
	for k, files := range groups {
		type bounds struct {
			e        *manifest.Entry
			min, max Row
		}
		bs := make([]bounds, 0, len(files))
		for _, e := range files {
			lo, err := DecodeBinaryRow(keyTypes, e.File.MinKey)
			if err != nil {
				return fmt.Errorf("commit to %s: file %s min key: %w", t.FullName(), e.File.FileName, err)
			}
			hi, err := DecodeBinaryRow(keyTypes, e.File.MaxKey)
			if err != nil {
				return fmt.Errorf("commit to %s: file %s max key: %w", t.FullName(), e.File.FileName, err)
			}
			bs = append(bs, bounds{e, lo, hi})
		}
		slices.SortFunc(bs, func(a, b bounds) int {
			if c := CompareRows(keyTypes, a.min, b.min); c != 0 {
				return c
			}
			return bytes.Compare([]byte(a.e.File.FileName), []byte(b.e.File.FileName))
		})
		for i := 1; i < len(bs); i++ {
			if CompareRows(keyTypes, bs[i-1].max, bs[i].min) >= 0 {
				return conflict("bucket %d level %d: key ranges of %s and %s overlap", k.bucket, k.level, bs[i-1].e.File.FileName, bs[i].e.File.FileName)
			}
		}
	}
	return nil
}
