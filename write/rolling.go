package write

import (
	"context"
	"fmt"
	"time"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// fileWriter is what rolling needs of a data file writer.
type fileWriter interface {
	RowCount() int64
	EstimatedSize() int64
	WriteBatch(b *datafile.Batch, from, to int) error
	Close() (*datafile.FileStats, error)
	Abort() error
}

// rollCheck is how often (in rows) the current file's size is checked
// against the target: the same rows whether written one by one or in
// batches, so both paths cut files at the same rows.
const rollCheck = 1000

// rolling is the part both rollers share: a file of one bucket is opened
// by the first row written, cut once it reaches the target size, and
// closed into its DataFileMeta.
type rolling[W fileWriter] struct {
	ctx       context.Context
	t         *table.Table
	partition []byte
	bucket    int32
	target    int64
	now       func() time.Time
	name      func() string // a fresh file name (nil: a data file name)
	create    func(path string) (W, error)
	meta      func(st *datafile.FileStats) (manifest.DataFileMeta, error)

	cur     W
	isOpen  bool
	curPath string
	metas   []manifest.DataFileMeta
	written []string
}

func (r *rolling[W]) open() error {
	if r.isOpen {
		return nil
	}
	dir, err := r.t.Paths().BucketPath(r.partition, r.bucket)
	if err != nil {
		return err
	}
	name := r.t.Paths().NewDataFileName
	if r.name != nil {
		name = r.name
	}
	r.curPath = dir + "/" + name()
	w, err := r.create(r.curPath)
	if err != nil {
		return err
	}
	r.cur, r.isOpen = w, true
	r.written = append(r.written, r.curPath)
	return nil
}

// rollIfDue cuts the file after a write that ended on a check row.
func (r *rolling[W]) rollIfDue() error {
	if r.cur.RowCount()%rollCheck == 0 && r.cur.EstimatedSize() >= r.target {
		return r.roll()
	}
	return nil
}

// writeBatch writes b in pieces that end on check rows; wrote is told the
// size of each piece.
func (r *rolling[W]) writeBatch(b *datafile.Batch, opened func(), wrote func(n int)) error {
	for from := 0; from < b.N; {
		if !r.isOpen {
			opened()
		}
		if err := r.open(); err != nil {
			return err
		}
		n := min(b.N-from, rollCheck-int(r.cur.RowCount()%rollCheck))
		if err := r.cur.WriteBatch(b, from, from+n); err != nil {
			return err
		}
		from += n
		wrote(n)
		if err := r.rollIfDue(); err != nil {
			return err
		}
	}
	return nil
}

func (r *rolling[W]) roll() error {
	st, err := r.cur.Close()
	var zero W
	r.cur, r.isOpen = zero, false
	if err != nil {
		return fmt.Errorf("data file %s: %w", r.curPath, err)
	}
	meta, err := r.meta(st)
	if err != nil {
		return err
	}
	r.metas = append(r.metas, meta)
	return nil
}

// Close finishes the last file and returns the metadata of every file.
func (r *rolling[W]) Close() ([]manifest.DataFileMeta, error) {
	if r.isOpen {
		if err := r.roll(); err != nil {
			return nil, err
		}
	}
	return r.metas, nil
}

// Abort stops writing and deletes every file written so far: none of them
// is referenced by a snapshot yet.
func (r *rolling[W]) Abort() {
	if r.isOpen {
		_ = r.cur.Abort()
		var zero W
		r.cur, r.isOpen = zero, false
	}
	r.t.DeleteUnreferenced(r.written)
	r.written = nil
}

// Written lists the paths of the files written so far.
func (r *rolling[W]) Written() []string { return r.written }

// SetTargetSize overrides target-file-size (tests and benchmarks).
func (r *rolling[W]) SetTargetSize(n int64) { r.target = n }
