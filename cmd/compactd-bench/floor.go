package main

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// floorResult is what the floor pass did.
type floorResult struct {
	Files   int   `json:"files"`
	Rows    int64 `json:"rows"`
	BytesIn int64 `json:"bytesIn"`
	// BytesOut is the size of the rewritten files.
	BytesOut int64 `json:"bytesOut"`
}

// floor decodes every live data file of the latest snapshot and encodes its
// records unchanged into a new file next to it: the Parquet work a
// compaction cannot avoid, with no merge, no planning and no commit. The new
// files are deleted again (no snapshot references them).
func floor(ctx context.Context, t *table.Table) (floorResult, error) {
	var res floorResult
	snap, err := t.LatestSnapshot(ctx)
	if err != nil {
		return res, err
	}
	fs, err := t.FileSet(ctx, snap)
	if err != nil {
		return res, err
	}
	s := t.Schema()
	schema := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
	opts := s.EffectiveOptions()
	fio := t.FileIO()
	for _, b := range fs.Buckets() {
		dir, err := t.Paths().BucketPath(b.Partition, b.Bucket)
		if err != nil {
			return res, err
		}
		for i := range b.Files {
			e := &b.Files[i]
			if e.File.SchemaID != s.ID {
				return res, fmt.Errorf("data file %s: schema %d, floor needs the latest (%d)", e.File.FileName, e.File.SchemaID, s.ID)
			}
			in, err := t.DataFilePath(e)
			if err != nil {
				return res, err
			}
			out := dir + "/" + t.Paths().NewDataFileName()
			n, st, err := copyRecords(ctx, fio, in, out, schema, opts)
			if err != nil {
				return res, err
			}
			res.Files++
			res.Rows += n
			res.BytesIn += e.File.FileSize
			res.BytesOut += st
			if err := fio.Delete(ctx, out); err != nil {
				return res, fmt.Errorf("delete floor output %s: %w", out, err)
			}
		}
	}
	return res, nil
}

// copyRecords streams the records of one KeyValue file into a new one, on
// the batch path compaction uses (page decode, column batches, batch
// encode), and returns the record count and the new file's size.
func copyRecords(ctx context.Context, fio fileio.FileIO, in, out string, schema datafile.Schema, opts map[string]string) (int64, int64, error) {
	codec, err := datafile.NewKVCodec(schema)
	if err != nil {
		return 0, 0, err
	}
	r, err := datafile.OpenKeyValueBatches(ctx, fio, in, schema, schema, codec)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	w, err := datafile.NewKeyValueWriter(ctx, fio, out, schema, opts)
	if err != nil {
		return 0, 0, err
	}
	// Decoding runs one batch ahead of encoding, on two goroutines, as
	// compaction does.
	var n int64
	next := func(b *datafile.Batch) error { return r.Next(b, scan.BatchSize) }
	err = compact.PipeBatches(ctx, codec.Codec, next, func(b *datafile.Batch) error {
		n += int64(b.N)
		return w.WriteBatch(b, 0, b.N)
	})
	if err != nil {
		_ = w.Abort()
		return 0, 0, fmt.Errorf("floor %s -> %s: %w", in, out, err)
	}
	if _, err := w.Close(); err != nil {
		return 0, 0, fmt.Errorf("floor %s -> %s: %w", in, out, err)
	}
	info, err := fio.Stat(ctx, out)
	if err != nil {
		return 0, 0, fmt.Errorf("floor %s: %w", out, err)
	}
	return n, info.Size, nil
}
