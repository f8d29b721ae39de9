package write

import (
	"context"
	"fmt"
	"time"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// AppendRoller writes rows of one append-table bucket into level-0 files
// cut at the target size. Rows get consecutive sequence numbers starting
// at the first one given, as Java's append compaction assigns them.
type AppendRoller struct {
	ctx       context.Context
	t         *table.Table
	partition []byte
	bucket    int32
	source    table.FileSource
	target    int64
	now       func() time.Time

	seq     int64
	cur     *datafile.RowWriter
	curSeq  int64
	curPath string
	metas   []table.DataFileMeta
	written []string
}

// NewAppendRoller prepares a writer whose first row gets sequence number firstSeq.
func NewAppendRoller(ctx context.Context, t *table.Table, partition []byte, bucket int32, firstSeq int64, source table.FileSource) *AppendRoller {
	return &AppendRoller{ctx: ctx, t: t, partition: partition, bucket: bucket, source: source,
		target: t.Options().TargetFileSizeFor(false), now: time.Now, seq: firstSeq}
}

// SetTargetSize overrides target-file-size (tests and benchmarks).
func (r *AppendRoller) SetTargetSize(n int64) { r.target = n }

func (r *AppendRoller) open() error {
	if r.cur != nil {
		return nil
	}
	dir, err := r.t.Paths().BucketPath(r.partition, r.bucket)
	if err != nil {
		return err
	}
	r.curPath = dir + "/" + r.t.Paths().NewDataFileName()
	w, err := datafile.NewRowWriter(r.ctx, r.t.FileIO(), r.curPath, r.t.Schema().Fields, r.t.Schema().EffectiveOptions())
	if err != nil {
		return err
	}
	r.cur, r.curSeq = w, r.seq
	r.written = append(r.written, r.curPath)
	return nil
}

// WriteBatch appends the rows of b (a batch of the table schema's columns).
// Files roll at the same row counts as with Write.
func (r *AppendRoller) WriteBatch(b *datafile.Batch) error {
	for from := 0; from < b.N; {
		if err := r.open(); err != nil {
			return err
		}
		n := min(b.N-from, 1000-int(r.cur.RowCount()%1000))
		if err := r.cur.WriteBatch(b, from, from+n); err != nil {
			return err
		}
		from += n
		r.seq += int64(n)
		if r.cur.RowCount()%1000 == 0 && r.cur.EstimatedSize() >= r.target {
			if err := r.roll(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Write appends one row.
func (r *AppendRoller) Write(row table.Row) error {
	if err := r.open(); err != nil {
		return err
	}
	if err := r.cur.Write(row); err != nil {
		return err
	}
	r.seq++
	if r.cur.RowCount()%1000 == 0 && r.cur.EstimatedSize() >= r.target {
		return r.roll()
	}
	return nil
}

func (r *AppendRoller) roll() error {
	st, err := r.cur.Close()
	r.cur = nil
	if err != nil {
		return fmt.Errorf("data file %s: %w", r.curPath, err)
	}
	meta, err := AppendFileMeta(st, r.t.Schema(), r.curSeq, r.source, r.now())
	if err != nil {
		return err
	}
	r.metas = append(r.metas, meta)
	return nil
}

// Close finishes the last file and returns the metadata of every file.
func (r *AppendRoller) Close() ([]table.DataFileMeta, error) {
	if r.cur != nil {
		if err := r.roll(); err != nil {
			return nil, err
		}
	}
	return r.metas, nil
}

// Abort stops writing and deletes every file written so far.
func (r *AppendRoller) Abort() {
	if r.cur != nil {
		_ = r.cur.Abort()
		r.cur = nil
	}
	r.t.DeleteUnreferenced(r.written)
	r.written = nil
}

// Written lists the paths of the files written so far.
func (r *AppendRoller) Written() []string { return r.written }
