package fileio

import (
	"context"
	"errors"
	"io"
)

// Operations reported by Observe, one per request a FileIO makes of its
// store (a read of an open file is one range request on object stores).
const (
	OpOpen           = "open"
	OpRead           = "read"
	OpCreate         = "create"
	OpWrite          = "write" // a Writer's Close: the upload that makes the file visible
	OpWriteExclusive = "write_exclusive"
	OpList           = "list"
	OpStat           = "stat"
	OpDelete         = "delete"
	OpDeleteMany     = "delete_many"
	OpDeleteDir      = "delete_dir"
	OpRealPath       = "real_path"
)

// Outcomes reported by Observe. A missing file (Stat, Open) and an
// existing one (WriteExclusive) are answers, not failures of the store.
const (
	OutcomeOK        = "ok"
	OutcomeNotFound  = "not_found"
	OutcomeExists    = "exists"
	OutcomeCancelled = "cancelled"
	OutcomeError     = "error"
)

// OutcomeOf classifies an operation's error as one of the Outcome values.
func OutcomeOf(err error) string {
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return OutcomeOK
	case errors.Is(err, ErrNotExist):
		return OutcomeNotFound
	case errors.Is(err, ErrExist):
		return OutcomeExists
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OutcomeCancelled
	default:
		return OutcomeError
	}
}

// Observe wraps fio so that every operation is reported to report once
// it returns, with its Op name and error (nil on success). It changes
// nothing else: the store's own batch delete stays available through
// DeleteAll, and Unwrap returns fio.
func Observe(fio FileIO, report func(op string, err error)) FileIO {
	o := &observed{fio: fio, report: report}
	if bd, ok := fio.(BatchDeleter); ok {
		return &observedBatch{observed: o, bd: bd}
	}
	return o
}

// Unwrap returns the FileIO a wrapper (Observe) was made from, fio itself
// if it is no wrapper.
func Unwrap(fio FileIO) FileIO {
	for {
		u, ok := fio.(interface{ Unwrap() FileIO })
		if !ok {
			return fio
		}
		fio = u.Unwrap()
	}
}

type observed struct {
	fio    FileIO
	report func(op string, err error)
}

func (o *observed) Unwrap() FileIO { return o.fio }

func (o *observed) Open(ctx context.Context, path string) (Reader, error) {
	r, err := o.fio.Open(ctx, path)
	o.report(OpOpen, err)
	if err != nil {
		return nil, err
	}
	return &observedReader{Reader: r, report: o.report}, nil
}

func (o *observed) Create(ctx context.Context, path string) (Writer, error) {
	w, err := o.fio.Create(ctx, path)
	o.report(OpCreate, err)
	if err != nil {
		return nil, err
	}
	return &observedWriter{Writer: w, report: o.report}, nil
}

func (o *observed) WriteExclusive(ctx context.Context, path string, data []byte) error {
	err := o.fio.WriteExclusive(ctx, path, data)
	o.report(OpWriteExclusive, err)
	return err
}

func (o *observed) List(ctx context.Context, dir string) ([]FileInfo, error) {
	fi, err := o.fio.List(ctx, dir)
	o.report(OpList, err)
	return fi, err
}

// ListEach reports one list operation, failed only when the store failed:
// an error of fn (a caller stopping early) is not the store's.
func (o *observed) ListEach(ctx context.Context, dir string, fn func(FileInfo) error) error {
	stopped := false
	err := ListEach(ctx, o.fio, dir, func(fi FileInfo) error {
		if err := fn(fi); err != nil {
			stopped = true
			return err
		}
		return nil
	})
	if stopped {
		o.report(OpList, nil)
	} else {
		o.report(OpList, err)
	}
	return err
}

func (o *observed) Stat(ctx context.Context, path string) (FileInfo, error) {
	fi, err := o.fio.Stat(ctx, path)
	o.report(OpStat, err)
	return fi, err
}

func (o *observed) Delete(ctx context.Context, path string) error {
	err := o.fio.Delete(ctx, path)
	o.report(OpDelete, err)
	return err
}

func (o *observed) DeleteDir(ctx context.Context, path string) error {
	err := o.fio.DeleteDir(ctx, path)
	o.report(OpDeleteDir, err)
	return err
}

func (o *observed) RealPath(ctx context.Context, path string) (string, error) {
	p, err := o.fio.RealPath(ctx, path)
	o.report(OpRealPath, err)
	return p, err
}

// observedBatch is an observed store with a batch delete.
type observedBatch struct {
	*observed
	bd BatchDeleter
}

func (o *observedBatch) DeleteMany(ctx context.Context, paths []string) error {
	err := o.bd.DeleteMany(ctx, paths)
	o.report(OpDeleteMany, err)
	return err
}

type observedReader struct {
	Reader
	report func(op string, err error)
}

func (r *observedReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.Reader.ReadAt(p, off)
	r.report(OpRead, err)
	return n, err
}

func (r *observedReader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	r.report(OpRead, err)
	return n, err
}

type observedWriter struct {
	Writer
	report func(op string, err error)
}

func (w *observedWriter) Close() error {
	err := w.Writer.Close()
	w.report(OpWrite, err)
	return err
}
