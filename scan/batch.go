package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// BatchIterator yields merged records as batches.
type BatchIterator interface {
	// NextInto fills out (reset first) with the next records; io.EOF at
	// the end. out is the caller's again when it returns.
	NextInto(out *datafile.Batch) error
	Close() error
}

// BatchSize is the number of rows per batch of the batch path.
const BatchSize = 1024

// BatchCodec returns the codec OpenMergedBatches needs for a table with
// this read schema and engine, or why the table must be merged record by
// record (nested columns, keys the batch merge cannot order).
func BatchCodec(eng *merge.Engine, read datafile.Schema) (*datafile.KVCodec, error) {
	if !merge.BatchKeysSupported(eng.KeyTypes()) {
		return nil, errors.New("primary key of floating-point, wide decimal or nanosecond timestamp type")
	}
	codec, err := datafile.NewKVCodec(read)
	if err != nil {
		return nil, err
	}
	return codec, nil
}

// OpenMergedBatches is OpenMerged on the batch path: the same sections and
// merge, records copied as columns, rows that dvs (by data file name; nil:
// none) delete skipped. Files that match the read schema's Parquet layout
// are read page by page; others (older schemas, Avro, files without key
// columns) go through the row reader and are converted.
func OpenMergedBatches(ctx context.Context, t *table.Table, files []*manifest.Entry, eng *merge.Engine, read datafile.Schema, codec *datafile.KVCodec, schemaOf SchemaFunc, dvs map[string]DeletionVector, m Merge) (BatchIterator, error) {
	opts, err := m.options(eng)
	if err != nil {
		return nil, err
	}
	sections, err := sectionsOf(files, eng.KeyTypes())
	if err != nil {
		return nil, err
	}
	it := &batchSections{ctx: ctx, t: t, eng: eng, opts: opts, read: read, codec: codec, schemaOf: schemaOf, dvs: dvs, sections: sections}
	it.pre.open = it.open
	return it, nil
}

// batchSections reads the sections one after the other, opening a
// section's files when it is reached.
type batchSections struct {
	ctx      context.Context
	t        *table.Table
	eng      *merge.Engine
	opts     merge.Options
	read     datafile.Schema
	codec    *datafile.KVCodec
	schemaOf SchemaFunc
	dvs      map[string]DeletionVector
	sections [][][]*manifest.Entry
	cur      *merge.BatchReader
	pre      prefetcher
}

func (s *batchSections) NextInto(out *datafile.Batch) error {
	for {
		if s.cur == nil {
			if len(s.sections) == 0 {
				return io.EOF
			}
			sec := s.sections[0]
			s.sections = s.sections[1:]
			runs := make([]merge.BatchRun, 0, len(sec))
			heads := make([]*manifest.Entry, 0, len(sec))
			for _, run := range sec {
				runs = append(runs, &fileSeq{files: run, open: s.pre.get})
				if len(run) > 0 {
					heads = append(heads, run[0])
				}
			}
			s.pre.start(heads)
			r, err := s.eng.NewBatchReaderWith(s.ctx, s.codec, runs, s.opts, BatchSize)
			if err != nil {
				return err
			}
			s.cur = r
		}
		err := s.cur.NextInto(out)
		if err == nil {
			return nil
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		cur := s.cur
		s.cur = nil
		if err := cur.Close(); err != nil {
			return err
		}
	}
}

func (s *batchSections) Close() error {
	s.sections = nil
	var err error
	if s.cur != nil {
		err = s.cur.Close()
		s.cur = nil
	}
	if perr := s.pre.close(); err == nil {
		err = perr
	}
	return err
}

// fileSeq reads files one after the other as batches (a sorted run, or an
// append bucket's files in sequence order). It is merge.Leveled: a batch
// holds rows of one file, whose level Level reports.
type fileSeq struct {
	files []*manifest.Entry
	open  func(*manifest.Entry) (batchFile, error)
	cur   batchFile
	level int
}

// Level is the level of the file the last batch came from.
func (r *fileSeq) Level() int { return r.level }

type batchFile interface {
	Next(b *datafile.Batch, max int) error
	Close() error
}

func (r *fileSeq) Next(b *datafile.Batch, max int) error {
	for {
		if r.cur == nil {
			if len(r.files) == 0 {
				b.Reset()
				return io.EOF
			}
			e := r.files[0]
			r.files = r.files[1:]
			f, err := r.open(e)
			if err != nil {
				return err
			}
			r.cur = f
			r.level = int(e.File.Level)
		}
		err := r.cur.Next(b, max)
		if err == nil {
			return nil
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		cur := r.cur
		r.cur = nil
		if err := cur.Close(); err != nil {
			return err
		}
	}
}

func (r *fileSeq) Close() error {
	r.files = nil
	if r.cur == nil {
		return nil
	}
	err := r.cur.Close()
	r.cur = nil
	return err
}

func (s *batchSections) open(e *manifest.Entry) (batchFile, error) {
	f, err := s.openFile(e)
	if err != nil {
		return nil, err
	}
	if dv := s.dvs[e.File.FileName]; dv != nil {
		return &dvFiltered{f: f, dv: dv, scratch: s.codec.NewBatch()}, nil
	}
	return f, nil
}

// dvFiltered skips the rows of a file that its deletion vector deletes.
// Both readers return every row of the file in order, so a row's position
// is the number of rows read before it.
type dvFiltered struct {
	f       batchFile
	dv      DeletionVector
	scratch *datafile.Batch
	pos     int64 // position of scratch's first row
	take    []datafile.Take
}

func (d *dvFiltered) Next(b *datafile.Batch, max int) error {
	for {
		if err := d.f.Next(d.scratch, max); err != nil {
			b.Reset()
			return err
		}
		d.take = d.take[:0]
		for i := range d.scratch.N {
			if !d.dv.IsDeleted(d.pos + int64(i)) {
				d.take = append(d.take, datafile.Take{Src: d.scratch, Row: int32(i)})
			}
		}
		d.pos += int64(d.scratch.N)
		b.Reset()
		if err := b.AppendTake(d.take); err != nil {
			return err
		}
		if b.N > 0 {
			return nil
		}
	}
}

func (d *dvFiltered) Close() error { return d.f.Close() }

func (s *batchSections) openFile(e *manifest.Entry) (batchFile, error) {
	path, err := s.t.DataFilePath(e)
	if err != nil {
		return nil, err
	}
	fileSchema, err := s.schemaOf(s.ctx, e.File.SchemaID)
	if err != nil {
		return nil, fmt.Errorf("data file %s: schema %d: %w", path, e.File.SchemaID, err)
	}
	br, err := datafile.OpenKeyValueBatches(s.ctx, s.t.FileIO(), path, fileSchema, s.read, s.codec)
	if err == nil {
		return br, nil
	}
	if !errors.Is(err, datafile.ErrNoBatchPath) {
		return nil, err
	}
	slog.Debug("data file read record by record", "table", s.t.FullName(), "reason", err)
	rr, err := datafile.OpenKeyValue(s.ctx, s.t.FileIO(), path, fileSchema, s.read)
	if err != nil {
		return nil, err
	}
	return &converted{path: path, next: func(b *datafile.Batch) error {
		kv, err := rr.Next()
		if err == nil {
			err = s.codec.Append(b, kv)
		}
		return err
	}, close: rr.Close}, nil
}

// converted fills batches one record at a time from a record reader (next
// appends one record, io.EOF at the end).
type converted struct {
	path  string
	next  func(b *datafile.Batch) error
	close func() error
}

func (f *converted) Next(b *datafile.Batch, max int) error {
	b.Reset()
	for b.N < max {
		err := f.next(b)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read data file %s: %w", f.path, err)
		}
	}
	if b.N == 0 {
		return io.EOF
	}
	return nil
}

func (f *converted) Close() error { return f.close() }

// AppendBatches reads the files of an append-table bucket one after the
// other (in the order given) as batches of codec's layout (read): page by
// page when a file has that exact layout, else through the row reader.
func AppendBatches(ctx context.Context, t *table.Table, files []*manifest.Entry, read table.RowType, codec *datafile.Codec, schemaOf SchemaFunc) BatchIterator {
	open := func(e *manifest.Entry) (batchFile, error) {
		path, err := t.DataFilePath(e)
		if err != nil {
			return nil, err
		}
		fileSchema, err := schemaOf(ctx, e.File.SchemaID)
		if err != nil {
			return nil, fmt.Errorf("data file %s: schema %d: %w", path, e.File.SchemaID, err)
		}
		br, err := datafile.OpenRowBatches(ctx, t.FileIO(), path, fileSchema.Fields, read, codec)
		if err == nil {
			return br, nil
		}
		if !errors.Is(err, datafile.ErrNoBatchPath) {
			return nil, err
		}
		slog.Debug("data file read record by record", "table", t.FullName(), "reason", err)
		rr, err := datafile.OpenRows(ctx, t.FileIO(), path, fileSchema.Fields, read)
		if err != nil {
			return nil, err
		}
		return &converted{path: path, next: func(b *datafile.Batch) error {
			row, err := rr.Next()
			if err == nil {
				err = codec.AppendRow(b, row)
			}
			return err
		}, close: rr.Close}, nil
	}
	return seqIterator{&fileSeq{files: files, open: open}}
}

// seqIterator is a fileSeq as a BatchIterator.
type seqIterator struct{ *fileSeq }

func (s seqIterator) NextInto(out *datafile.Batch) error { return s.Next(out, BatchSize) }
