package write

import (
	"context"
	"time"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// Roller writes KeyValue records of one bucket into data files, cutting a
// new file when the current one reaches the target size.
type Roller struct {
	rolling[*datafile.KeyValueWriter]
}

// NewRoller prepares a writer of files at the given level of one bucket,
// written with the table's latest schema.
func NewRoller(ctx context.Context, t *table.Table, partition []byte, bucket int32, level int32, source manifest.FileSource) *Roller {
	s := t.Schema()
	schema := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
	r := &Roller{}
	r.rolling = rolling[*datafile.KeyValueWriter]{
		ctx: ctx, t: t, partition: partition, bucket: bucket,
		target: t.Options().TargetFileSizeFor(true),
		now:    time.Now,
		create: func(path string) (*datafile.KeyValueWriter, error) {
			return datafile.NewKeyValueWriter(ctx, t.FileIO(), path, schema, s.EffectiveOptions())
		},
		meta: func(st *datafile.FileStats) (manifest.DataFileMeta, error) {
			return FileMeta(st, s, level, source, r.now())
		},
	}
	return r
}

// Write appends one record; records come in key order.
func (r *Roller) Write(kv table.KeyValue) error {
	if err := r.open(); err != nil {
		return err
	}
	if err := r.cur.Write(kv); err != nil {
		return err
	}
	return r.rollIfDue()
}

// WriteBatch appends the rows of b (a batch of the table schema's KeyValue
// layout, in key order). Files roll at the same rows as with Write.
func (r *Roller) WriteBatch(b *datafile.Batch) error {
	return r.writeBatch(b, func() {}, func(int) {})
}
