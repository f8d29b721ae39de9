package compact

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/compactd/compactd/planner"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// bucketFiles maps planner file names back to manifest entries.
type bucketFiles map[string]*manifest.Entry

// TableView is a table's live files as the planner sees them, with the
// manifest entries behind each planner file.
type TableView struct {
	Snapshot *table.Snapshot
	FileSet  *table.FileSet
	View     planner.View
	// PartitionPath names each planner partition identity (the partition
	// bytes) for humans.
	PartitionPath map[string]string
	buckets       map[planner.BucketID]*table.BucketFiles
	planOnly      bool // entries dropped (dropEntries); nothing may execute

	mu      sync.Mutex                       // guards entries
	entries map[planner.BucketID]bucketFiles // built per bucket on first use
}

// Entry returns the manifest entry of a planned file. Safe for concurrent
// use; a bucket's name index is built when first asked for (a plan reads
// none, a compaction only its jobs' buckets).
func (v *TableView) Entry(b planner.BucketID, name string) (*manifest.Entry, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	files, ok := v.entries[b]
	if !ok {
		bf := v.buckets[b]
		if bf == nil {
			return nil, false
		}
		files = make(bucketFiles, len(bf.Files))
		for i := range bf.Files {
			files[bf.Files[i].File.FileName] = &bf.Files[i]
		}
		if v.entries == nil {
			v.entries = map[planner.BucketID]bucketFiles{}
		}
		v.entries[b] = files
	}
	e, ok := files[name]
	return e, ok
}

// dropEntries lets the manifest entries behind the view go, for a caller
// that never executes a plan (Options.PlanOnly): the entry lookups are
// dropped, the file set keeps only bucket-postpone's files (copied, so
// that the entries' shared array is let go), and the planner files' keys,
// which point into the entries' decoded bytes, are copied into one
// array of their own.
func (v *TableView) dropEntries() {
	v.mu.Lock()
	v.entries, v.buckets, v.planOnly = nil, nil, true
	v.mu.Unlock()
	if v.FileSet != nil {
		for _, p := range v.FileSet.Partitions {
			for _, b := range p.Buckets {
				b.Runs = nil
				if b.Bucket == table.BucketPostpone {
					b.Files = slices.Clone(b.Files)
				} else {
					b.Files = nil
				}
			}
		}
	}
	n := 0
	for i := range v.View.Buckets {
		for _, f := range v.View.Buckets[i].Files {
			n += len(f.MinKey) + len(f.MaxKey)
		}
	}
	keys := make([]byte, 0, n)
	clip := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		off := len(keys)
		keys = append(keys, b...)
		return keys[off:len(keys):len(keys)]
	}
	for i := range v.View.Buckets {
		files := v.View.Buckets[i].Files
		for j := range files {
			files[j].MinKey, files[j].MaxKey = clip(files[j].MinKey), clip(files[j].MaxKey)
		}
	}
}

// LoadView reads the latest snapshot's live files. A table without
// snapshots gives an empty view.
func LoadView(ctx context.Context, t *table.Table, history int) (*TableView, error) {
	latest, err := t.LatestSnapshot(ctx)
	if err != nil {
		if isNoSnapshot(err) {
			return &TableView{buckets: map[planner.BucketID]*table.BucketFiles{}, PartitionPath: map[string]string{}}, nil
		}
		return nil, err
	}
	fs, err := t.FileSet(ctx, latest)
	if err != nil {
		return nil, err
	}
	v, err := ViewOf(t, fs)
	if err != nil {
		return nil, err
	}
	if history > 0 {
		if v.View.History, err = loadHistory(ctx, t, latest.ID, history); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// ViewOf builds the planner's view of a file set.
func ViewOf(t *table.Table, fs *table.FileSet) (*TableView, error) {
	v := &TableView{Snapshot: fs.Snapshot, FileSet: fs,
		buckets: map[planner.BucketID]*table.BucketFiles{}, PartitionPath: map[string]string{}}
	keyTypes := rowTypes(t.Schema().TrimmedPrimaryKeyType())
	cache := map[string]table.Row{}
	var decodeErr error
	decode := func(b []byte) table.Row {
		if r, ok := cache[string(b)]; ok {
			return r
		}
		r, err := table.DecodeBinaryRow(keyTypes, b)
		if err != nil && decodeErr == nil {
			decodeErr = err
		}
		cache[string(b)] = r
		return r
	}
	v.View.CompareKeys = func(a, b []byte) int { return table.CompareRows(keyTypes, decode(a), decode(b)) }
	for _, p := range fs.Partitions {
		v.PartitionPath[string(p.Partition)] = p.Path
		for _, b := range p.Buckets {
			id := planner.BucketID{Partition: string(b.Partition), Bucket: int(b.Bucket)}
			dv := map[string]*int64{}
			dvFile := map[string]string{}
			for _, idx := range b.IndexFiles {
				for _, m := range idx.DeletionVectors {
					dv[m.DataFileName] = m.Cardinality
					dvFile[m.DataFileName] = idx.FileName
				}
			}
			pb := planner.Bucket{Partition: id.Partition, Bucket: id.Bucket, Files: make([]planner.File, 0, len(b.Files))}
			for i := range b.Files {
				e := &b.Files[i]
				f := planner.File{
					Name: e.File.FileName, Level: int(e.File.Level), Size: e.File.FileSize, RowCount: e.File.RowCount,
					MinSeq: e.File.MinSequenceNumber, MaxSeq: e.File.MaxSequenceNumber,
					MinKey: e.File.MinKey, MaxKey: e.File.MaxKey, DeleteRowCount: e.File.DeleteRowCount,
				}
				if e.File.CreationTime != nil {
					f.CreationTime = fromLocalMillis(*e.File.CreationTime)
				}
				if card, ok := dv[e.File.FileName]; ok {
					f.HasDeletionVector, f.DeletedRows, f.DVIndexFile = true, card, dvFile[e.File.FileName]
				}
				pb.Files = append(pb.Files, f)
			}
			v.View.Buckets = append(v.View.Buckets, pb)
			v.buckets[id] = b
		}
	}
	// Validate every key once up front so that a corrupt key is reported
	// instead of silently comparing as an empty row inside the planner.
	for _, b := range v.View.Buckets {
		for _, f := range b.Files {
			if len(keyTypes) > 0 {
				decode(f.MinKey)
				decode(f.MaxKey)
			}
		}
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("table %s: decode file key: %w", t.FullName(), decodeErr)
	}
	return v, nil
}

// fromLocalMillis undoes Java's _CREATION_TIME encoding (local wall time
// stored as if it were UTC), as DataFileMeta.creationTimeEpochMillis does.
func fromLocalMillis(ms int64) time.Time {
	u := time.UnixMilli(ms).UTC()
	return time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), u.Nanosecond(), time.Local)
}

// loadHistory reads the last n snapshots and the buckets each one's delta
// touched, for full-compaction.delta-commits.
func loadHistory(ctx context.Context, t *table.Table, latest int64, n int) (planner.History, error) {
	ids, err := t.SnapshotIDs(ctx)
	if err != nil {
		return planner.History{}, err
	}
	if len(ids) > n {
		ids = ids[len(ids)-n:]
	}
	for len(ids) > 0 && ids[len(ids)-1] > latest {
		ids = ids[:len(ids)-1]
	}
	// Each snapshot costs three reads in a row (snapshot, delta manifest
	// list, manifests); the snapshots are read side by side so that on an
	// object store the history costs a few round trips, not 3n.
	infos := make([]*planner.SnapshotInfo, len(ids))
	p := pool.New().WithContext(ctx).WithCancelOnError().WithFirstError().WithMaxGoroutines(historyParallelism)
	for i, id := range ids {
		p.Go(func(ctx context.Context) error {
			info, err := snapshotInfo(ctx, t, id)
			infos[i] = info
			return err
		})
	}
	if err := p.Wait(); err != nil {
		return planner.History{}, err
	}
	var h planner.History
	for _, info := range infos {
		if info != nil {
			h.Snapshots = append(h.Snapshots, *info)
		}
	}
	return h, nil
}

// historyParallelism bounds the snapshots loadHistory reads at once.
const historyParallelism = 8

// snapshotInfo reads what the planner's history needs of one snapshot: nil
// when it was expired meanwhile.
func snapshotInfo(ctx context.Context, t *table.Table, id int64) (*planner.SnapshotInfo, error) {
	s, err := t.Snapshot(ctx, id)
	if err != nil {
		if isNotExist(err) {
			return nil, nil // expired meanwhile
		}
		return nil, err
	}
	metas, err := manifest.ReadList(ctx, t.FileIO(), t.Paths().ManifestPath(s.DeltaManifestList))
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	entries, err := t.ReadManifests(ctx, metas)
	if err != nil {
		return nil, err
	}
	seen := map[planner.BucketID]bool{}
	info := &planner.SnapshotInfo{ID: s.ID, Kind: planner.CommitKind(s.CommitKind), CommitTime: time.UnixMilli(s.TimeMillis)}
	for _, e := range entries {
		b := planner.BucketID{Partition: string(e.Partition), Bucket: int(e.Bucket)}
		if !seen[b] {
			seen[b] = true
			info.Buckets = append(info.Buckets, b)
		}
	}
	return info, nil
}

func rowTypes(rt table.RowType) []table.DataType {
	out := make([]table.DataType, len(rt))
	for i, f := range rt {
		out[i] = f.Type
	}
	return out
}
