package table

// The live file set: reading a snapshot's manifest lists and manifests
// (DataManifests, ChangelogManifests, ReadManifests, IndexEntries), folding
// ADDs and DELETEs into the live entries (MergeEntries, LiveEntries), and
// grouping them as a compactor sees them (Table.FileSet: partitions,
// buckets, sorted runs).

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/sourcegraph/conc/pool"

	"github.com/compactd/compactd/table/manifest"
)

// manifestReadParallelism bounds concurrent manifest reads (each is one
// GET on object stores).
const manifestReadParallelism = 8

// FileSet is the live data-file set of a snapshot grouped as a compactor
// sees it: partitions → buckets → sorted runs.
type FileSet struct {
	Snapshot *Snapshot
	// Manifests are the data manifests of the snapshot: base list, then
	// delta list, in list order.
	Manifests []manifest.ListEntry
	// Partitions are ordered by partition value (CompareRows), ties by bytes.
	Partitions []*PartitionFiles
	// Index is the snapshot's index manifest (all live index files); nil
	// when the snapshot has none.
	Index []manifest.IndexEntry
	// OrphanDeletes are DELETE entries whose ADD is not in the snapshot's
	// manifests. Java's reader ignores them; a consistent table has none.
	OrphanDeletes []manifest.Entry
}

// PartitionFiles is one partition's live files.
type PartitionFiles struct {
	Partition []byte // serialized BinaryRow as found in the manifests
	Row       Row    // decoded with the latest schema's partition types
	Path      string // relative partition directory, "" if unpartitioned
	Buckets   []*BucketFiles
}

// BucketFiles is one bucket's live files.
type BucketFiles struct {
	Partition    []byte
	Bucket       int32
	TotalBuckets int32 // _TOTAL_BUCKETS of the first live entry
	// Files are the live ADD entries in manifest order; DELETE entries a
	// compactor writes must copy them exactly.
	Files []manifest.Entry
	// Runs are Paimon's levelSortedRuns: each level-0 file is its own run,
	// newest first (max sequence number descending, then min sequence
	// number, creation time, file name ascending); then one run per level
	// ≥ 1, ascending level, files ordered by min key.
	Runs []SortedRun
	// IndexFiles are this bucket's entries of the index manifest.
	IndexFiles []manifest.IndexFileMeta
}

// SortedRun is a set of files of one level whose key ranges do not overlap
// (a single file for level 0).
type SortedRun struct {
	Level int32
	Files []*manifest.Entry // pointers into BucketFiles.Files
}

// TotalSize is the sum of the run's file sizes.
func (r SortedRun) TotalSize() int64 {
	var n int64
	for _, f := range r.Files {
		n += f.File.FileSize
	}
	return n
}

// NumFiles counts live data files.
func (fs *FileSet) NumFiles() int {
	n := 0
	for _, p := range fs.Partitions {
		for _, b := range p.Buckets {
			n += len(b.Files)
		}
	}
	return n
}

// Buckets returns every bucket of every partition in order.
func (fs *FileSet) Buckets() []*BucketFiles {
	var out []*BucketFiles
	for _, p := range fs.Partitions {
		out = append(out, p.Buckets...)
	}
	return out
}

// Bucket finds one bucket, nil if it has no live file.
func (fs *FileSet) Bucket(partition []byte, bucket int32) *BucketFiles {
	for _, p := range fs.Partitions {
		if !bytes.Equal(p.Partition, partition) {
			continue
		}
		for _, b := range p.Buckets {
			if b.Bucket == bucket {
				return b
			}
		}
	}
	return nil
}

// Level returns the bucket's files of one level, in run order.
func (b *BucketFiles) Level(level int32) []*manifest.Entry {
	var out []*manifest.Entry
	for _, r := range b.Runs {
		if r.Level == level {
			out = append(out, r.Files...)
		}
	}
	return out
}

// MaxLevel is the highest level holding a file (0 for an empty bucket).
func (b *BucketFiles) MaxLevel() int32 {
	var m int32
	for _, f := range b.Files {
		m = max(m, f.File.Level)
	}
	return m
}

// DataManifests reads the snapshot's base then delta manifest lists (side
// by side: on an object store one round trip, not two).
func (t *Table) DataManifests(ctx context.Context, s *Snapshot) ([]manifest.ListEntry, error) {
	names := [2]string{s.BaseManifestList, s.DeltaManifestList}
	var lists [2][]manifest.ListEntry
	p := pool.New().WithContext(ctx).WithCancelOnError().WithFirstError()
	for i := range names {
		p.Go(func(ctx context.Context) (err error) {
			lists[i], err = manifest.ReadList(ctx, t.fio, t.paths.ManifestPath(names[i]))
			return err
		})
	}
	if err := p.Wait(); err != nil {
		return nil, fmt.Errorf("table %s snapshot %d: %w", t.path, s.ID, err)
	}
	return append(slices.Clip(lists[0]), lists[1]...), nil
}

// ChangelogManifests reads the snapshot's changelog manifest list (nil
// when the snapshot has none).
func (t *Table) ChangelogManifests(ctx context.Context, s *Snapshot) ([]manifest.ListEntry, error) {
	if s.ChangelogManifestList == nil {
		return nil, nil
	}
	metas, err := manifest.ReadList(ctx, t.fio, t.paths.ManifestPath(*s.ChangelogManifestList))
	if err != nil {
		return nil, fmt.Errorf("table %s snapshot %d: %w", t.path, s.ID, err)
	}
	return metas, nil
}

// ReadManifests reads the entries of the given manifests concurrently and
// returns them concatenated in manifest order.
func (t *Table) ReadManifests(ctx context.Context, metas []manifest.ListEntry) ([]manifest.Entry, error) {
	results := make([][]manifest.Entry, len(metas))
	errs := make([]error, len(metas))
	sem := make(chan struct{}, manifestReadParallelism)
	var wg sync.WaitGroup
	for i := range metas {
		if err := ctx.Err(); err != nil {
			errs[i] = err
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			results[i], errs[i] = manifest.Read(ctx, t.fio, t.paths.ManifestPath(metas[i].FileName))
		}(i)
	}
	wg.Wait()
	if len(metas) == 1 && errs[0] == nil {
		return results[0], nil // no copy of the only manifest
	}
	n := 0
	for i := range results {
		n += len(results[i])
	}
	out := make([]manifest.Entry, 0, n)
	for i := range metas {
		if errs[i] != nil {
			return nil, fmt.Errorf("table %s: %w", t.path, errs[i])
		}
		out = append(out, results[i]...)
	}
	return out, nil
}

// MergeEntries folds manifest entries as Java's FileEntry.mergeEntries: an
// ADD whose identifier is already present (added or pending delete) is an
// error; a DELETE removes its ADD, or is kept when no ADD precedes it.
// It returns the live ADD entries and the unmatched DELETEs, both in
// first-seen order.
//
// MergeEntries takes entries over: the adds are compacted in place in its
// backing array (at 100k files a copy is ~50 MB at the moment the heap
// peaks), so the caller must not use entries afterwards.
func MergeEntries(entries []manifest.Entry) (adds, orphanDeletes []manifest.Entry, err error) {
	// Slots index into entries rather than copy them: an Entry is a few
	// hundred bytes, and at 100k files copying each twice (slot, result)
	// plus the slice regrowth was most of a plan's CPU (docs/perf.md).
	type slot struct {
		entry int
		live  bool
	}
	index := make(map[manifest.FileIdentifier]int, len(entries))
	slots := make([]slot, 0, len(entries))
	nAdd := 0
	for i := range entries {
		e := &entries[i]
		id := e.Identifier()
		switch e.Kind {
		case manifest.FileKindAdd:
			if j, ok := index[id]; ok {
				return nil, nil, fmt.Errorf("trying to add file %s which is already in the map (as %s)", id, entries[slots[j].entry].Kind)
			}
			index[id] = len(slots)
			slots = append(slots, slot{entry: i, live: true})
			nAdd++
		case manifest.FileKindDelete:
			if j, ok := index[id]; ok {
				slots[j].live = false
				delete(index, id)
				if entries[slots[j].entry].Kind == manifest.FileKindAdd {
					nAdd--
				}
			} else {
				index[id] = len(slots)
				slots = append(slots, slot{entry: i, live: true})
			}
		default:
			return nil, nil, fmt.Errorf("file %s: unknown entry kind %d", id, e.Kind)
		}
	}
	// Slots are in entry order, so the k-th live ADD moves to index k <=
	// its own: nothing is overwritten before it is read.
	k := 0
	for _, s := range slots {
		if !s.live {
			continue
		}
		if e := &entries[s.entry]; e.Kind == manifest.FileKindAdd {
			entries[k] = *e
			k++
		} else {
			orphanDeletes = append(orphanDeletes, *e)
		}
	}
	// Drop what the tail still references (names, stats, the decoded
	// blocks they point into); when most entries were deletes, a right-sized
	// copy lets the whole array go.
	clear(entries[k:])
	if k == 0 {
		return nil, orphanDeletes, nil
	}
	if k < len(entries)/2 {
		return slices.Clone(entries[:k]), orphanDeletes, nil
	}
	return entries[:k:k], orphanDeletes, nil
}

// LiveEntries returns the live ADD entries of a snapshot (base + delta
// manifests folded) and the data manifests they came from.
func (t *Table) LiveEntries(ctx context.Context, s *Snapshot) (adds, orphanDeletes []manifest.Entry, manifests []manifest.ListEntry, err error) {
	manifests, err = t.DataManifests(ctx, s)
	if err != nil {
		return nil, nil, nil, err
	}
	entries, err := t.ReadManifests(ctx, manifests)
	if err != nil {
		return nil, nil, nil, err
	}
	adds, orphanDeletes, err = MergeEntries(entries)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("table %s snapshot %d: %w", t.path, s.ID, err)
	}
	return adds, orphanDeletes, manifests, nil
}

// IndexEntries reads the snapshot's index manifest (nil if none).
func (t *Table) IndexEntries(ctx context.Context, s *Snapshot) ([]manifest.IndexEntry, error) {
	if s.IndexManifest == nil {
		return nil, nil
	}
	entries, err := manifest.ReadIndex(ctx, t.fio, t.paths.ManifestPath(*s.IndexManifest))
	if err != nil {
		return nil, fmt.Errorf("table %s snapshot %d: %w", t.path, s.ID, err)
	}
	return entries, nil
}

// FileSet computes the live file set of snapshot s (§7.9 of the format
// spec): fold base + delta manifests, group by partition and bucket, and
// arrange each bucket's files into sorted runs.
func (t *Table) FileSet(ctx context.Context, s *Snapshot) (*FileSet, error) {
	adds, orphans, manifests, err := t.LiveEntries(ctx, s)
	if err != nil {
		return nil, err
	}
	index, err := t.IndexEntries(ctx, s)
	if err != nil {
		return nil, err
	}
	fs := &FileSet{Snapshot: s, Manifests: manifests, Index: index, OrphanDeletes: orphans}

	partTypes := typesOf(t.latest.PartitionType())
	type bucketKey struct {
		partition string
		bucket    int32
	}
	parts := map[string]*PartitionFiles{}
	buckets := map[bucketKey]int{} // index in groups
	// Each bucket's files are a sub-slice of adds, grouped in place below,
	// not a copy: at 100k files a copy per bucket (with append's slack)
	// was the largest allocation of a plan (docs/perf.md).
	group := make([]int32, len(adds))
	var groups []*BucketFiles
	var sizes []int
	for i := range adds {
		e := &adds[i]
		p := parts[string(e.Partition)]
		if p == nil {
			row, err := DecodeBinaryRow(partTypes, e.Partition)
			if err != nil {
				return nil, fmt.Errorf("table %s snapshot %d: partition of %s: %w", t.path, s.ID, e.File.FileName, err)
			}
			path, err := t.paths.PartitionPathOfRow(row)
			if err != nil {
				return nil, fmt.Errorf("table %s snapshot %d: partition of %s: %w", t.path, s.ID, e.File.FileName, err)
			}
			p = &PartitionFiles{Partition: e.Partition, Row: row, Path: path}
			parts[string(e.Partition)] = p
			fs.Partitions = append(fs.Partitions, p)
		}
		k := bucketKey{string(e.Partition), e.Bucket}
		g, ok := buckets[k]
		if !ok {
			g = len(groups)
			b := &BucketFiles{Partition: p.Partition, Bucket: e.Bucket, TotalBuckets: e.TotalBuckets}
			buckets[k] = g
			p.Buckets = append(p.Buckets, b)
			groups = append(groups, b)
			sizes = append(sizes, 0)
		}
		group[i] = int32(g)
		sizes[g]++
	}
	groupInPlace(adds, group, sizes)
	start := 0
	for g, b := range groups {
		b.Files = adds[start : start+sizes[g] : start+sizes[g]]
		start += sizes[g]
	}
	for _, ie := range index {
		if g, ok := buckets[bucketKey{string(ie.Partition), ie.Bucket}]; ok {
			groups[g].IndexFiles = append(groups[g].IndexFiles, ie.IndexFile)
		}
	}
	slices.SortStableFunc(fs.Partitions, func(a, b *PartitionFiles) int {
		if c := CompareRows(partTypes, a.Row, b.Row); c != 0 {
			return c
		}
		return bytes.Compare(a.Partition, b.Partition)
	})
	for _, p := range fs.Partitions {
		slices.SortFunc(p.Buckets, func(a, b *BucketFiles) int { return cmp.Compare(a.Bucket, b.Bucket) })
		for _, b := range p.Buckets {
			if err := t.buildRuns(ctx, b); err != nil {
				return nil, fmt.Errorf("table %s snapshot %d: partition %s bucket %d: %w", t.path, s.ID, p.Path, b.Bucket, err)
			}
		}
	}
	return fs, nil
}

// groupInPlace reorders entries so that group 0's come first, then group
// 1's, and so on, each group keeping its entries' order; group[i] is the
// group of entries[i] and sizes the size of each group. Every entry moves
// at most once into its place (a cycle walk of the permutation).
func groupInPlace(entries []manifest.Entry, group []int32, sizes []int) {
	next := make([]int, len(sizes))
	for g := 1; g < len(sizes); g++ {
		next[g] = next[g-1] + sizes[g-1]
	}
	dest := make([]int, len(entries))
	for i, g := range group {
		dest[i] = next[g]
		next[g]++
	}
	for i := range entries {
		for dest[i] != i {
			j := dest[i]
			entries[i], entries[j] = entries[j], entries[i]
			dest[i], dest[j] = dest[j], dest[i]
		}
	}
}

// buildRuns arranges a bucket's files as Paimon's Levels does.
func (t *Table) buildRuns(ctx context.Context, b *BucketFiles) error {
	byLevel := map[int32][]*manifest.Entry{}
	var levels []int32
	for i := range b.Files {
		e := &b.Files[i]
		if e.File.Level < 0 {
			return fmt.Errorf("file %s has negative level %d", e.File.FileName, e.File.Level)
		}
		if _, ok := byLevel[e.File.Level]; !ok {
			levels = append(levels, e.File.Level)
		}
		byLevel[e.File.Level] = append(byLevel[e.File.Level], e)
	}
	slices.Sort(levels)
	b.Runs = b.Runs[:0]
	if l0 := byLevel[0]; len(l0) > 0 {
		slices.SortFunc(l0, compareLevel0)
		for _, e := range l0 {
			b.Runs = append(b.Runs, SortedRun{Level: 0, Files: []*manifest.Entry{e}})
		}
	}
	for _, level := range levels {
		if level == 0 {
			continue
		}
		files := byLevel[level]
		keys := make(map[*manifest.Entry]Row, len(files))
		var keyTypes []DataType
		for _, e := range files {
			schema, err := t.SchemaByID(ctx, e.File.SchemaID)
			if err != nil {
				return fmt.Errorf("file %s: %w", e.File.FileName, err)
			}
			types := typesOf(schema.TrimmedPrimaryKeyType())
			if keyTypes == nil {
				keyTypes = types
			}
			row, err := DecodeBinaryRow(types, e.File.MinKey)
			if err != nil {
				return fmt.Errorf("min key of %s: %w", e.File.FileName, err)
			}
			keys[e] = row
		}
		slices.SortStableFunc(files, func(x, y *manifest.Entry) int {
			if c := CompareRows(keyTypes, keys[x], keys[y]); c != 0 {
				return c
			}
			return cmp.Compare(x.File.FileName, y.File.FileName)
		})
		b.Runs = append(b.Runs, SortedRun{Level: level, Files: files})
	}
	return nil
}

// compareLevel0 is the order of Paimon's level-0 TreeSet: newest (largest
// max sequence number) first.
func compareLevel0(a, b *manifest.Entry) int {
	if c := cmp.Compare(b.File.MaxSequenceNumber, a.File.MaxSequenceNumber); c != 0 {
		return c
	}
	if c := cmp.Compare(a.File.MinSequenceNumber, b.File.MinSequenceNumber); c != 0 {
		return c
	}
	ca, cb := a.File.CreationTime, b.File.CreationTime
	switch {
	case ca == nil && cb != nil:
		return -1
	case ca != nil && cb == nil:
		return 1
	case ca != nil && cb != nil && *ca != *cb:
		return cmp.Compare(*ca, *cb)
	}
	return cmp.Compare(a.File.FileName, b.File.FileName)
}

// DataFilePath is the path of a live file of the table.
func (t *Table) DataFilePath(e *manifest.Entry) (string, error) {
	return t.paths.DataFilePath(e.Partition, e.Bucket, &e.File)
}
