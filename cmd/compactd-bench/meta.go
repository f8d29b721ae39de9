package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// metaTable creates an empty metadata-only table (BIGINT key, one value
// column) with the given bucket count and extra options.
func metaTable(ctx context.Context, warehouse, db, name string, buckets int, extra map[string]string) (*table.Table, error) {
	fio, err := fileio.For(ctx, warehouse)
	if err != nil {
		return nil, err
	}
	fields := table.RowType{
		{ID: 0, Name: "id", Type: bigint(false)},
		{ID: 1, Name: "v", Type: bigint(true)},
	}
	opts := map[string]string{"bucket": fmt.Sprint(buckets), "file.format": "parquet", "write-only": "true"}
	for k, v := range extra {
		opts[k] = v
	}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"id"}, opts, nil, 0)
	if err != nil {
		return nil, err
	}
	return write.CreateTable(ctx, fio, warehouse, db, name, s)
}

var keyTypes = []table.DataType{bigint(false)}

// fakeFile is the DataFileMeta of a data file that does not exist: metadata
// benchmarks need manifests, not Parquet.
func fakeFile(t *table.Table, level int32, minKey, maxKey, minSeq, maxSeq, rows, size int64, created int64) (manifest.DataFileMeta, error) {
	lo, err := table.EncodeBinaryRow(keyTypes, table.Row{minKey})
	if err != nil {
		return manifest.DataFileMeta{}, err
	}
	hi, err := table.EncodeBinaryRow(keyTypes, table.Row{maxKey})
	if err != nil {
		return manifest.DataFileMeta{}, err
	}
	zero := int64(0)
	keyStats, err := table.NewSimpleStats(keyTypes, table.Row{minKey}, table.Row{maxKey}, []*int64{&zero})
	if err != nil {
		return manifest.DataFileMeta{}, err
	}
	src := manifest.FileSourceAppend
	if level > 0 {
		src = manifest.FileSourceCompact
	}
	return manifest.DataFileMeta{
		FileName: t.Paths().NewDataFileName(), FileSize: size, RowCount: rows,
		MinKey: lo, MaxKey: hi, KeyStats: keyStats, ValueStats: manifest.EmptySimpleStats(),
		MinSequenceNumber: minSeq, MaxSequenceNumber: maxSeq, SchemaID: 0, Level: level,
		ExtraFiles: []string{}, CreationTime: &created, DeleteRowCount: &zero, FileSource: &src,
		ValueStatsCols: []string{},
	}, nil
}

// writeManifests writes one manifest holding entries and a manifest list
// naming it (an empty list when entries is empty); it returns the list's
// name and size.
func writeManifests(ctx context.Context, t *table.Table, entries []manifest.Entry) (string, int64, error) {
	p := t.Paths()
	codec, err := t.MetadataFormat()
	if err != nil {
		return "", 0, err
	}
	var metas []manifest.ListEntry
	if len(entries) > 0 {
		name := p.NewManifestFileName()
		size, err := manifest.Write(ctx, t.FileIO(), p.ManifestPath(name), entries, codec)
		if err != nil {
			return "", 0, err
		}
		m, err := table.NewManifestListEntry(name, size, entries, nil, 0)
		if err != nil {
			return "", 0, err
		}
		metas = append(metas, m)
	}
	list := p.NewManifestListName()
	size, err := manifest.WriteList(ctx, t.FileIO(), p.ManifestPath(list), metas, codec)
	if err != nil {
		return "", 0, err
	}
	return list, size, nil
}

func writeSnapshot(ctx context.Context, t *table.Table, id int64, kind table.CommitKind, base, delta string, baseSize, deltaSize, total, deltaRows, millis int64) error {
	s := &table.Snapshot{
		Version: 3, ID: id, SchemaID: 0,
		BaseManifestList: base, BaseManifestListSize: &baseSize,
		DeltaManifestList: delta, DeltaManifestListSize: &deltaSize,
		CommitUser: "bench-meta", CommitIdentifier: id, CommitKind: kind, TimeMillis: millis,
		TotalRecordCount: total, DeltaRecordCount: deltaRows,
	}
	return t.WriteSnapshot(ctx, s)
}

// genExpire builds a table of `snapshots` snapshots whose delta manifests
// name `files` data files in all: snapshot i adds files/snapshots new files
// and (like a compaction) deletes the previous snapshot's, so expiring the
// range reads every one of them and condemns all but the last snapshot's.
// Snapshot times lie an hour and more in the past. No data file exists.
func genExpire(ctx context.Context, warehouse, db, name string, snapshots, files int) (*table.Table, error) {
	t, err := metaTable(ctx, warehouse, db, name, 1, nil)
	if err != nil {
		return nil, err
	}
	per := max(1, files/snapshots)
	start := time.Now().Add(-2 * time.Hour).UnixMilli()
	var prev []manifest.Entry
	var seq, key int64
	for i := int64(1); i <= int64(snapshots); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		adds := make([]manifest.Entry, 0, per)
		for j := 0; j < per; j++ {
			f, err := fakeFile(t, 0, key, key+99, seq, seq+99, 100, 4096, start)
			if err != nil {
				return nil, err
			}
			key += 100
			seq += 100
			adds = append(adds, manifest.Entry{Kind: manifest.FileKindAdd, Partition: table.EmptyBinaryRow(), Bucket: 0, TotalBuckets: 1, File: f})
		}
		delta := make([]manifest.Entry, 0, len(prev)+len(adds))
		for _, e := range prev {
			e.Kind = manifest.FileKindDelete
			delta = append(delta, e)
		}
		delta = append(delta, adds...)
		baseList, baseSize, err := writeManifests(ctx, t, prev)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d base: %w", i, err)
		}
		deltaList, deltaSize, err := writeManifests(ctx, t, delta)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d delta: %w", i, err)
		}
		kind := table.CommitCompact
		if i == 1 {
			kind = table.CommitAppend
		}
		if err := writeSnapshot(ctx, t, i, kind, baseList, deltaList, baseSize, deltaSize, int64(per*100), int64(per*100), start+i); err != nil {
			return nil, err
		}
		prev = adds
	}
	if err := t.WriteEarliestHint(ctx, 1); err != nil {
		return nil, err
	}
	if err := t.WriteLatestHint(ctx, int64(snapshots)); err != nil {
		return nil, err
	}
	return t, nil
}

// genPlan builds a one-snapshot table of `buckets` buckets with
// filesPerBucket files each: a stack of levels 1..5 with disjoint key
// ranges plus 5 overlapping level-0 files, so every bucket has a pick.
func genPlan(ctx context.Context, warehouse, db, name string, buckets, filesPerBucket int) (*table.Table, error) {
	t, err := metaTable(ctx, warehouse, db, name, buckets, nil)
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixMilli()
	var entries []manifest.Entry
	const nL0 = 5
	for b := 0; b < buckets; b++ {
		seq := int64(0)
		perLevel := max(1, (filesPerBucket-nL0)/5)
		add := func(level int32, lo, hi int64, size int64) error {
			f, err := fakeFile(t, level, lo, hi, seq, seq+999, 1000, size, now)
			if err != nil {
				return err
			}
			seq += 1000
			entries = append(entries, manifest.Entry{Kind: manifest.FileKindAdd, Partition: table.EmptyBinaryRow(),
				Bucket: int32(b), TotalBuckets: int32(buckets), File: f})
			return nil
		}
		for lvl := int32(1); lvl <= 5; lvl++ {
			for k := 0; k < perLevel; k++ {
				if err := add(lvl, int64(k)*1000, int64(k)*1000+999, int64(8+lvl*16)<<20); err != nil {
					return nil, err
				}
			}
		}
		for k := 0; k < nL0; k++ {
			lo := int64(k * 7919 % (perLevel * 1000))
			if err := add(0, lo, lo+50_000, 4<<20); err != nil {
				return nil, err
			}
		}
	}
	base, baseSize, err := writeManifests(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	delta, deltaSize, err := writeManifests(ctx, t, entries)
	if err != nil {
		return nil, err
	}
	if err := writeSnapshot(ctx, t, 1, table.CommitAppend, base, delta, baseSize, deltaSize, int64(len(entries))*1000, int64(len(entries))*1000, now); err != nil {
		return nil, err
	}
	if err := t.WriteEarliestHint(ctx, 1); err != nil {
		return nil, err
	}
	return t, t.WriteLatestHint(ctx, 1)
}

// genOrphan builds a one-snapshot table of `buckets` buckets holding
// filesPerBucket referenced data files and orphansPerBucket unreferenced
// ones each, all empty files on the local disk modified two days ago, so
// that `compactd orphan` with its default --older-than lists every file as
// old and must check each against the references. The entries are split
// into manifests of 10,000 (Paimon's manifest.target-file-size keeps
// manifests small too): the run's memory is the listing's, not one giant
// manifest's.
func genOrphan(ctx context.Context, warehouse, db, name string, buckets, filesPerBucket, orphansPerBucket int) (*table.Table, error) {
	t, err := metaTable(ctx, warehouse, db, name, buckets, nil)
	if err != nil {
		return nil, err
	}
	p := t.Paths()
	codec, err := t.MetadataFormat()
	if err != nil {
		return nil, err
	}
	old := time.Now().Add(-48 * time.Hour)
	created := old.UnixMilli()
	touch := func(path string) error {
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
		return os.Chtimes(path, old, old)
	}
	var metas []manifest.ListEntry
	var entries []manifest.Entry
	flush := func() error {
		if len(entries) == 0 {
			return nil
		}
		name := p.NewManifestFileName()
		size, err := manifest.Write(ctx, t.FileIO(), p.ManifestPath(name), entries, codec)
		if err != nil {
			return err
		}
		m, err := table.NewManifestListEntry(name, size, entries, nil, 0)
		if err != nil {
			return err
		}
		metas = append(metas, m)
		entries = entries[:0]
		return nil
	}
	var seq int64
	for b := 0; b < buckets; b++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir := ""
		for k := 0; k < filesPerBucket+orphansPerBucket; k++ {
			f, err := fakeFile(t, 1, seq, seq+99, seq, seq+99, 100, 0, created)
			if err != nil {
				return nil, err
			}
			seq += 100
			path, err := p.DataFilePath(table.EmptyBinaryRow(), int32(b), &f)
			if err != nil {
				return nil, err
			}
			if dir == "" {
				dir = filepath.Dir(path)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return nil, err
				}
			}
			if err := touch(path); err != nil {
				return nil, err
			}
			if k >= filesPerBucket {
				continue // an orphan: on disk, in no manifest
			}
			entries = append(entries, manifest.Entry{Kind: manifest.FileKindAdd, Partition: table.EmptyBinaryRow(),
				Bucket: int32(b), TotalBuckets: int32(buckets), File: f})
			if len(entries) == 10_000 {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	delta := p.NewManifestListName()
	deltaSize, err := manifest.WriteList(ctx, t.FileIO(), p.ManifestPath(delta), metas, codec)
	if err != nil {
		return nil, err
	}
	base, baseSize, err := writeManifests(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	rows := int64(buckets*filesPerBucket) * 100
	if err := writeSnapshot(ctx, t, 1, table.CommitAppend, base, delta, baseSize, deltaSize, rows, rows, created); err != nil {
		return nil, err
	}
	if err := t.WriteEarliestHint(ctx, 1); err != nil {
		return nil, err
	}
	return t, t.WriteLatestHint(ctx, 1)
}
