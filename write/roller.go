package write

import (
	"context"
	"fmt"
	"time"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// Roller writes KeyValue records of one bucket into data files, cutting a
// new file when the current one reaches the target size.
type Roller struct {
	ctx       context.Context
	t         *table.Table
	partition []byte
	bucket    int32
	level     int32
	source    table.FileSource
	schema    datafile.Schema
	target    int64
	now       func() time.Time

	cur     *datafile.KeyValueWriter
	curPath string
	metas   []table.DataFileMeta
	written []string
}

// NewRoller prepares a writer of files at the given level of one bucket,
// written with the table's latest schema.
func NewRoller(ctx context.Context, t *table.Table, partition []byte, bucket int32, level int32, source table.FileSource) *Roller {
	s := t.Schema()
	return &Roller{
		ctx: ctx, t: t, partition: partition, bucket: bucket, level: level, source: source,
		schema: datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()},
		target: t.Options().TargetFileSizeFor(true),
		now:    time.Now,
	}
}

// SetTargetSize overrides target-file-size (tests and benchmarks).
func (r *Roller) SetTargetSize(n int64) { r.target = n }

// Write appends one record; records come in key order.
func (r *Roller) Write(kv table.KeyValue) error {
	if err := r.open(); err != nil {
		return err
	}
	if err := r.cur.Write(kv); err != nil {
		return err
	}
	if r.cur.RowCount()%1000 == 0 && r.cur.EstimatedSize() >= r.target {
		return r.roll()
	}
	return nil
}

// WriteBatch appends the rows of b (a batch of the table schema's KeyValue
// layout, in key order). Files roll at the same row counts as with Write.
func (r *Roller) WriteBatch(b *datafile.Batch) error {
	for from := 0; from < b.N; {
		if err := r.open(); err != nil {
			return err
		}
		// The size check runs every 1000 rows, as Write's does.
		n := min(b.N-from, 1000-int(r.cur.RowCount()%1000))
		if err := r.cur.WriteBatch(b, from, from+n); err != nil {
			return err
		}
		from += n
		if r.cur.RowCount()%1000 == 0 && r.cur.EstimatedSize() >= r.target {
			if err := r.roll(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Roller) open() error {
	if r.cur != nil {
		return nil
	}
	dir, err := r.t.Paths().BucketPath(r.partition, r.bucket)
	if err != nil {
		return err
	}
	r.curPath = dir + "/" + r.t.Paths().NewDataFileName()
	w, err := datafile.NewKeyValueWriter(r.ctx, r.t.FileIO(), r.curPath, r.schema, r.t.Schema().EffectiveOptions())
	if err != nil {
		return err
	}
	r.cur = w
	r.written = append(r.written, r.curPath)
	return nil
}

func (r *Roller) roll() error {
	st, err := r.cur.Close()
	r.cur = nil
	if err != nil {
		return fmt.Errorf("data file %s: %w", r.curPath, err)
	}
	meta, err := FileMeta(st, r.t.Schema(), r.level, r.source, r.now())
	if err != nil {
		return err
	}
	r.metas = append(r.metas, meta)
	return nil
}

// Close finishes the last file and returns the metadata of every file.
func (r *Roller) Close() ([]table.DataFileMeta, error) {
	if r.cur != nil {
		if err := r.roll(); err != nil {
			return nil, err
		}
	}
	return r.metas, nil
}

// Abort stops writing and deletes every file written so far: none of them
// is referenced by a snapshot yet.
func (r *Roller) Abort() {
	if r.cur != nil {
		_ = r.cur.Abort()
		r.cur = nil
	}
	r.t.DeleteUnreferenced(r.written)
	r.written = nil
}

// Written lists the paths of the files written so far.
func (r *Roller) Written() []string { return r.written }
