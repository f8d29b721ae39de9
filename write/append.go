package write

import (
	"context"
	"time"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// AppendRoller writes rows of one append-table bucket into level-0 files
// cut at the target size. Rows get consecutive sequence numbers starting
// at the first one given, as Java's append compaction assigns them.
type AppendRoller struct {
	rolling[*datafile.RowWriter]
	seq    int64 // of the next row
	curSeq int64 // of the current file's first row
}

// NewAppendRoller prepares a writer whose first row gets sequence number firstSeq.
func NewAppendRoller(ctx context.Context, t *table.Table, partition []byte, bucket int32, firstSeq int64, source manifest.FileSource) *AppendRoller {
	s := t.Schema()
	r := &AppendRoller{seq: firstSeq}
	r.rolling = rolling[*datafile.RowWriter]{
		ctx: ctx, t: t, partition: partition, bucket: bucket,
		target: t.Options().TargetFileSizeFor(false),
		now:    time.Now,
		create: func(path string) (*datafile.RowWriter, error) {
			return datafile.NewRowWriter(ctx, t.FileIO(), path, s.Fields, s.EffectiveOptions())
		},
		meta: func(st *datafile.FileStats) (manifest.DataFileMeta, error) {
			return AppendFileMeta(st, s, r.curSeq, source, r.now())
		},
	}
	return r
}

// Write appends one row.
func (r *AppendRoller) Write(row table.Row) error {
	if !r.isOpen {
		r.curSeq = r.seq
	}
	if err := r.open(); err != nil {
		return err
	}
	if err := r.cur.Write(row); err != nil {
		return err
	}
	r.seq++
	return r.rollIfDue()
}

// WriteBatch appends the rows of b (a batch of the table schema's columns).
// Files roll at the same rows as with Write.
func (r *AppendRoller) WriteBatch(b *datafile.Batch) error {
	return r.writeBatch(b, func() { r.curSeq = r.seq }, func(n int) { r.seq += int64(n) })
}
