package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/cast"
	"github.com/parquet-go/parquet-go"
	"github.com/sourcegraph/conc/pool"
)

// readBatch is how many rows are decoded from the column pages at a time.
const readBatch = 512

// column is one output column of a read: nil asm means always null.
type column struct {
	asm  assembler
	cast cast.Func
	// fromValue >= 0 takes the value of another output column instead (a key
	// column of a thin-mode file, taken from the value columns).
	fromValue int
}

// source yields rows of output columns from one data file.
type source interface {
	next(out []any) error // io.EOF at the end
	close() error
}

// pqSource reads a Parquet file row group by row group; memory is bounded by
// the pages of one row group.
type pqSource struct {
	ctx     context.Context
	path    string
	f       fileio.Reader
	pf      *parquet.File
	rg      int
	rows    parquet.Rows
	buf     []parquet.Row
	n, i    int
	nLeaves int
	cur     cursor
	cols    []column
}

// readBudget is the read-buffer memory per open Parquet file, split over
// its columns. Every column chunk is read through its own buffer; on object
// stores each buffer refill is a range request, so buffers are as large as
// the budget allows (parquet-go's default is 4 KiB).
const readBudget = 8 << 20

// localReadBudget is readBudget for local files, where a refill is a
// read(2), not a round trip: small buffers cost nothing and save ~6 MiB per
// open file of a compaction.
const localReadBudget = 1 << 20

func readBufferSize(fio fileio.FileIO, leaves int) int {
	budget := readBudget
	// Unwrapped: the daemon observes its stores through fileio.Observe.
	if _, ok := fileio.Unwrap(fio).(*fileio.Local); ok {
		budget = localReadBudget
	}
	return min(max(budget/max(leaves, 1), 64<<10), 1<<20)
}

// leafCount counts the Parquet leaf columns of Paimon fields.
func leafCount(fields table.RowType) int {
	n := 0
	var count func(t table.DataType)
	count = func(t table.DataType) {
		switch t.Root {
		case table.TypeArray:
			count(*t.Element)
		case table.TypeMap:
			count(*t.Key)
			count(*t.Value)
		case table.TypeMultiset:
			count(*t.Element)
			n++
		case table.TypeRow:
			for _, f := range t.Fields {
				count(f.Type)
			}
		default:
			n++
		}
	}
	for _, f := range fields {
		count(f.Type)
	}
	return n
}

func openParquet(ctx context.Context, fio fileio.FileIO, path string, leaves int) (fileio.Reader, *parquet.File, error) {
	f, err := fio.Open(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("open data file %s: %w", path, err)
	}
	bufSize := readBufferSize(fio, leaves)
	_, local := fileio.Unwrap(fio).(*fileio.Local)
	if !local && f.Size() > wholeReadMax && f.Size() <= remoteWholeReadMax && remoteWholeBudget.TryAcquire(f.Size()) {
		// A larger file on an object store: read column chunk by column
		// chunk it costs a round trip per buffer refill (a 17 MB file of 60
		// columns about 80, one after the other). Within a process-wide
		// memory budget it is fetched whole instead, in parallel parts.
		mf, err := readWholeParallel(ctx, f)
		f.Close()
		if err != nil {
			remoteWholeBudget.Release(f.Size())
			return nil, nil, fmt.Errorf("read data file %s: %w", path, err)
		}
		size := f.Size()
		mf.release = func() { remoteWholeBudget.Release(size) }
		f = mf
		bufSize = 16 << 10
	} else if f.Size() <= wholeReadMax {
		// Small files (every level-0 file of a streaming writer) are read
		// with one request: the footer, column chunks and pages would
		// otherwise each cost an object-store round trip.
		mf, err := readWhole(f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read data file %s: %w", path, err)
		}
		f = mf
		// Buffers over bytes in memory only add copies.
		bufSize = 16 << 10
	}
	pf, err := safeOpen(f, bufSize)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("open data file %s: %w", path, err)
	}
	return f, pf, nil
}

// wholeReadMax is the size up to which a data file is read in one piece.
const wholeReadMax = 4 << 20

// remoteWholeReadMax is the size up to which a data file on an object
// store may be read whole (in parallel parts), and remoteWholeBudget the
// bytes all such files of a process may hold at once; a file that does not
// fit is read column chunk by column chunk as before.
const remoteWholeReadMax = 64 << 20

var remoteWholeBudget = newBudget(256 << 20)

func newBudget(n int64) *budget {
	b := &budget{}
	b.free.Store(n)
	return b
}

// budget is a count of bytes that can be taken without waiting.
type budget struct{ free atomic.Int64 }

// TryAcquire takes n bytes if that many are free.
func (b *budget) TryAcquire(n int64) bool {
	for {
		free := b.free.Load()
		if free < n {
			return false
		}
		if b.free.CompareAndSwap(free, free-n) {
			return true
		}
	}
}

// Release returns n bytes.
func (b *budget) Release(n int64) { b.free.Add(n) }

// remotePart is the size of each parallel ranged read of a whole read, and
// remoteParts how many run at once.
const (
	remotePart  = 4 << 20
	remoteParts = 4
)

// memFile is a whole file held in memory.
type memFile struct {
	*bytes.Reader
	once    sync.Once
	release func() // returns the memory budget it holds (nil: none)
}

func (m *memFile) Close() error {
	m.once.Do(func() {
		if m.release != nil {
			m.release()
		}
	})
	return nil
}

// readWholeParallel reads f whole with up to remoteParts ranged reads at once.
func readWholeParallel(ctx context.Context, f fileio.Reader) (*memFile, error) {
	buf := make([]byte, f.Size())
	p := pool.New().WithContext(ctx).WithCancelOnError().WithFirstError().WithMaxGoroutines(remoteParts)
	for off := int64(0); off < int64(len(buf)); off += remotePart {
		part := buf[off:min(off+remotePart, int64(len(buf)))]
		p.Go(func(context.Context) error {
			if _, err := f.ReadAt(part, off); err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			return nil
		})
	}
	if err := p.Wait(); err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(buf)}, nil
}

func readWhole(f fileio.Reader) (fileio.Reader, error) {
	buf := make([]byte, f.Size())
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(buf)}, nil
}

func safeOpen(f fileio.Reader, bufSize int) (pf *parquet.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt Parquet file: %v", r)
		}
	}()
	return parquet.OpenFile(f, f.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(bufSize))
}

// want is one requested output column: the field of the file's schema to
// read (by name) and the type to produce.
type want struct {
	fileField *table.DataField // nil: null column
	readType  table.DataType
	fromValue int
	// keyFallback >= 0 marks a _KEY_ column: when the file lacks it
	// (data-file.thin-mode) the key is the output column keyFallback.
	keyFallback int
}

func newPQSource(ctx context.Context, f fileio.Reader, pf *parquet.File, path string, wants []want) (*pqSource, error) {
	s := &pqSource{ctx: ctx, path: path, f: f, pf: pf}
	root := pf.Schema()
	top := root.Fields()
	starts := make([]int, len(top))
	next := 0
	for i, fl := range top {
		starts[i] = next
		next += countLeaves(fl)
	}
	s.nLeaves = next
	s.cur = cursor{vals: make([][]parquet.Value, next), pos: make([]int, next)}
	for _, w := range wants {
		c := column{fromValue: w.fromValue}
		if w.fileField != nil && w.fromValue < 0 {
			pn, idx := fieldByName(root, w.fileField.Name)
			if pn == nil && w.keyFallback >= 0 {
				c.fromValue = w.keyFallback
			}
			if pn != nil {
				start := starts[idx]
				a, err := buildAssembler(pn, w.fileField.Type, 0, 0, &start)
				if err != nil {
					return nil, fmt.Errorf("data file %s column %s: %w", path, w.fileField.Name, err)
				}
				c.asm = a
				cf, err := cast.For(w.fileField.Type, w.readType)
				if err != nil {
					return nil, fmt.Errorf("data file %s column %s: %w", path, w.fileField.Name, err)
				}
				c.cast = cf
			}
		}
		s.cols = append(s.cols, c)
	}
	return s, nil
}

func (s *pqSource) fill() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt Parquet data: %v", r)
		}
	}()
	for {
		if s.rows != nil {
			if err := s.ctx.Err(); err != nil {
				return err
			}
			if s.buf == nil {
				s.buf = make([]parquet.Row, readBatch)
			}
			n, err := s.rows.ReadRows(s.buf)
			if n > 0 {
				s.n, s.i = n, 0
				return nil
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			s.rows.Close()
			s.rows = nil
		}
		groups := s.pf.RowGroups()
		if s.rg >= len(groups) {
			return io.EOF
		}
		s.rows = groups[s.rg].Rows()
		s.rg++
	}
}

func (s *pqSource) next(out []any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("read data file %s: corrupt Parquet data: %v", s.path, r)
		}
	}()
	if s.i >= s.n {
		if err := s.fill(); err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return fmt.Errorf("read data file %s: %w", s.path, err)
		}
	}
	row := s.buf[s.i]
	s.i++
	// Split the row (ordered by column) into per-leaf slices.
	for c := range s.cur.vals {
		s.cur.vals[c] = nil
		s.cur.pos[c] = 0
	}
	start := 0
	for j := 1; j <= len(row); j++ {
		if j == len(row) || row[j].Column() != row[start].Column() {
			c := row[start].Column()
			if c < 0 || c >= s.nLeaves {
				return fmt.Errorf("read data file %s: %w", s.path, errCorrupt)
			}
			s.cur.vals[c] = row[start:j]
			start = j
		}
	}
	for i, c := range s.cols {
		out[i] = nil
		if c.asm == nil {
			continue
		}
		v, err := c.asm.read(&s.cur)
		if err != nil {
			return fmt.Errorf("read data file %s: %w", s.path, err)
		}
		if v != nil && c.cast != nil {
			if v, err = c.cast(v); err != nil {
				return fmt.Errorf("read data file %s: %w", s.path, err)
			}
		}
		out[i] = v
	}
	for i, c := range s.cols {
		if c.fromValue >= 0 {
			out[i] = out[c.fromValue]
		}
	}
	return nil
}

func (s *pqSource) close() error {
	if s.rows != nil {
		s.rows.Close()
		s.rows = nil
	}
	return s.f.Close()
}

// planAppend maps the read fields to the file's fields by id.
func planFields(fileFields, readFields table.RowType) []want {
	out := make([]want, len(readFields))
	for i, rf := range readFields {
		out[i] = want{readType: rf.Type, fromValue: -1, keyFallback: -1}
		if j := fileFields.IndexByID(rf.ID); j >= 0 {
			out[i].fileField = &fileFields[j]
		}
	}
	return out
}

func openSource(ctx context.Context, fio fileio.FileIO, path string, fileFields table.RowType, wants []want) (source, error) {
	format, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	switch format {
	case FormatParquet:
		f, pf, err := openParquet(ctx, fio, path, leafCount(fileFields))
		if err != nil {
			return nil, err
		}
		s, err := newPQSource(ctx, f, pf, path, wants)
		if err != nil {
			f.Close()
			return nil, err
		}
		return s, nil
	case FormatAvro:
		return newAvroSource(ctx, fio, path, fileFields, wants)
	case FormatORC:
		return newORCSource(ctx, fio, path, wants)
	}
	return nil, fmt.Errorf("data file %s: not supported: file.format=%s", path, format)
}

// RowReader reads the rows of an append table's data file in the read
// schema.
type RowReader struct {
	src source
	n   int
	pos int64
}

// OpenRows opens an append-table data file written with fileFields and
// returns its rows as readFields: columns are matched by field id, columns
// the file lacks read as null, changed types are cast (cast.For).
func OpenRows(ctx context.Context, fio fileio.FileIO, path string, fileFields, readFields table.RowType) (*RowReader, error) {
	src, err := openSource(ctx, fio, path, fileFields, planFields(fileFields, readFields))
	if err != nil {
		return nil, err
	}
	return &RowReader{src: src, n: len(readFields), pos: -1}, nil
}

// Next returns the next row, freshly allocated, or io.EOF.
func (r *RowReader) Next() (table.Row, error) {
	row := make(table.Row, r.n)
	if err := r.src.next(row); err != nil {
		return nil, err
	}
	r.pos++
	return row, nil
}

// Pos is the position (0-based row number in the file) of the row last
// returned by Next, the index deletion vectors use.
func (r *RowReader) Pos() int64 { return r.pos }

// Close releases the file.
func (r *RowReader) Close() error { return r.src.close() }

// KeyValueReader reads the records of a primary-key table's data file.
type KeyValueReader struct {
	src  source
	nKey int
	nVal int
	buf  []any
	pos  int64
	path string
}

// OpenKeyValue opens a KeyValue data file written with fileSchema and
// returns its records in readSchema: the key is readSchema's trimmed primary
// key, the value all of readSchema's columns, matched to the file by field
// id. Files without _KEY_ columns (data-file.thin-mode) take the key from
// the value columns.
func OpenKeyValue(ctx context.Context, fio fileio.FileIO, path string, fileSchema, readSchema Schema) (*KeyValueReader, error) {
	readKeys, err := readSchema.KeyFields()
	if err != nil {
		return nil, fmt.Errorf("data file %s: read schema: %w", path, err)
	}
	nVal := len(readSchema.Fields)
	wants := make([]want, 0, len(readKeys)+2+nVal)
	values := planFields(fileSchema.Fields, readSchema.Fields)
	for _, k := range readKeys {
		j := fileSchema.Fields.IndexByID(k.ID)
		if j < 0 {
			return nil, fmt.Errorf("data file %s: primary key %s (id %d) is not in the file's schema", path, k.Name, k.ID)
		}
		ff := fileSchema.Fields[j]
		ff.Name = KeyFieldPrefix + ff.Name
		ff.ID += KeyFieldIDOffset
		ff.Type = ff.Type.WithNullable(false)
		wants = append(wants, want{
			fileField:   &ff,
			readType:    k.Type.WithNullable(false),
			fromValue:   -1,
			keyFallback: len(readKeys) + 2 + readSchema.Fields.IndexByID(k.ID),
		})
	}
	wants = append(wants,
		want{fileField: &table.DataField{ID: SequenceNumberID, Name: SequenceNumberName, Type: table.DataType{Root: table.TypeBigInt}}, readType: table.DataType{Root: table.TypeBigInt}, fromValue: -1, keyFallback: -1},
		want{fileField: &table.DataField{ID: ValueKindID, Name: ValueKindName, Type: table.DataType{Root: table.TypeTinyInt}}, readType: table.DataType{Root: table.TypeTinyInt}, fromValue: -1, keyFallback: -1},
	)
	wants = append(wants, values...)
	fileKV, err := fileSchema.KeyValueFields()
	if err != nil {
		return nil, fmt.Errorf("data file %s: file schema: %w", path, err)
	}
	src, err := openSource(ctx, fio, path, fileKV, wants)
	if err != nil {
		return nil, err
	}
	return &KeyValueReader{src: src, nKey: len(readKeys), nVal: nVal, buf: make([]any, len(wants)), pos: -1, path: path}, nil
}

// Next returns the next record, freshly allocated, or io.EOF.
func (r *KeyValueReader) Next() (table.KeyValue, error) {
	if err := r.src.next(r.buf); err != nil {
		return table.KeyValue{}, err
	}
	r.pos++
	kv := table.KeyValue{
		Key:   make(table.Row, r.nKey),
		Value: make(table.Row, r.nVal),
	}
	copy(kv.Key, r.buf[:r.nKey])
	seq, ok := r.buf[r.nKey].(int64)
	if !ok {
		return table.KeyValue{}, fmt.Errorf("read data file %s: row %d has no %s", r.path, r.pos, SequenceNumberName)
	}
	kind, ok := r.buf[r.nKey+1].(int8)
	if !ok || kind < 0 || kind > 3 {
		return table.KeyValue{}, fmt.Errorf("read data file %s: row %d has invalid %s %v", r.path, r.pos, ValueKindName, r.buf[r.nKey+1])
	}
	for i, k := range kv.Key {
		if k == nil {
			return table.KeyValue{}, fmt.Errorf("read data file %s: row %d has a null key column %d", r.path, r.pos, i)
		}
	}
	kv.Seq, kv.Kind = seq, table.RowKind(kind)
	copy(kv.Value, r.buf[r.nKey+2:])
	return kv, nil
}

// Pos is the position of the record last returned by Next.
func (r *KeyValueReader) Pos() int64 { return r.pos }

// Close releases the file.
func (r *KeyValueReader) Close() error { return r.src.close() }
