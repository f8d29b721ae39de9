package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// orcBatches reads a flat ORC data file as batches: columns are decoded
// once and copied into the batch vectors in their physical form, with none
// of the row path's per-value boxing (orcSource plus Codec.AppendRow),
// which cost more CPU than decoding. Stripes are decoded orcChunkRows rows
// at a time (orc.StripeRows): a whole decoded stripe per input file was
// most of a compaction's peak heap.
type orcBatches struct {
	ctx  context.Context
	path string
	f    fileio.Reader
	of   *orc.File
	// col is the ORC column id of each batch column; typ its Paimon type.
	col    []int
	typ    []table.DataType
	name   []string
	top    map[int]bool
	window int // orc.OpenStripeRows' read window
	chunk  int // rows decoded at a time: orcChunkRows (tests: fewer)
	stripe int
	rows   *orc.StripeRows // the stripe being read
	st     *orc.Stripe     // its decoded chunk
	row    int             // the chunk's next row
	vpos   []int           // per batch column: index among its values of entry row
}

// orcChunkRows is the rows decoded at a time per ORC file: a row group at
// Java's default stride; wide rows take a few MiB, and fewer rows would add
// calls for no memory that matters.
const orcChunkRows = 10000

// orcLocalWindow is the read window per stream of a local ORC file (at
// least a compression chunk is read): reads are pread(2) calls, and
// holding the stripe's stored bytes (a tenth of a file of 125k wide rows)
// costs more than the calls. Object stores read the stripe with one
// request (window 0), as before.
const orcLocalWindow = 64 << 10

// openORCBatches opens an ORC file whose top-level columns, matched by name
// as the row path does, hold fields; with project the file may have other
// columns too (not decoded). A file that does not fit fails with
// ErrNoBatchPath before any data is read, and the caller takes the row
// path.
func openORCBatches(ctx context.Context, fio fileio.FileIO, path string, fields table.RowType, project bool) (*orcBatches, error) {
	f, of, err := openORC(ctx, fio, path)
	if err != nil {
		return nil, err
	}
	root := of.Types[0]
	if root.Kind != orc.Struct || (!project && len(root.Subtypes) != len(fields)) {
		f.Close()
		return nil, fmt.Errorf("data file %s: %w: %d top-level ORC columns, want %d", path, ErrNoBatchPath, len(root.Subtypes), len(fields))
	}
	byName := make(map[string]int, len(root.FieldNames))
	for k, n := range root.FieldNames {
		byName[n] = k
	}
	r := &orcBatches{ctx: ctx, path: path, f: f, of: of, top: map[int]bool{}, chunk: orcChunkRows}
	if _, local := fileio.Unwrap(fio).(*fileio.Local); local {
		r.window = orcLocalWindow
	}
	for _, fl := range fields {
		k, ok := byName[fl.Name]
		if !ok || k >= len(root.Subtypes) {
			f.Close()
			return nil, fmt.Errorf("data file %s: %w: no ORC column %s", path, ErrNoBatchPath, fl.Name)
		}
		id := root.Subtypes[k]
		if err := orcTypeFits(of, id, fl.Type); err != nil {
			f.Close()
			return nil, fmt.Errorf("data file %s column %s: %w", path, fl.Name, err)
		}
		r.col = append(r.col, id)
		r.typ = append(r.typ, fl.Type)
		r.name = append(r.name, fl.Name)
		r.top[k] = true
	}
	return r, nil
}

// next fills b (reset by the caller) with up to limit rows of the current
// chunk, fewer when their values pass batchByteBudget.
func (r *orcBatches) next(b *Batch, limit int) error {
	for r.st == nil || r.row >= r.st.NumRows {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		r.st = nil
		for r.rows == nil || r.rows.Left() == 0 {
			r.rows = nil // the previous stripe's buffers are garbage before the next is opened
			if r.stripe >= len(r.of.Stripes) {
				return io.EOF
			}
			rows, err := r.of.OpenStripeRows(r.stripe, func(k int) bool { return r.top[k] }, r.window)
			if err != nil {
				return fmt.Errorf("read data file %s: %w", r.path, err)
			}
			r.stripe++
			r.rows = rows
		}
		st, err := r.rows.Next(r.chunk)
		if err != nil {
			return fmt.Errorf("read data file %s: %w", r.path, err)
		}
		r.st, r.row = st, 0
		if r.vpos == nil {
			r.vpos = make([]int, len(r.col))
		}
		clear(r.vpos)
	}
	want := min(limit, r.st.NumRows-r.row)
	step := batchStep
	for b.N < want {
		n := min(step, want-b.N)
		for i, id := range r.col {
			if err := appendORC(&b.Cols[i], r.st, r.st.Columns[id], r.typ[i], r.row, n, &r.vpos[i]); err != nil {
				return fmt.Errorf("read data file %s column %s: %w", r.path, r.name[i], err)
			}
		}
		b.N += n
		r.row += n
		size := b.ByteSize()
		if size >= batchByteBudget {
			break
		}
		perRow := max(size/b.N, 1)
		step = min(max((batchByteBudget-size)/perRow, 1), batchStep)
	}
	return nil
}

func (r *orcBatches) close() error { return r.f.Close() }

var errORCNull = errors.New("null in a NOT NULL column")

// appendORC appends entries lo..lo+n of ORC column c, of Paimon type t, to
// v in the physical form the Parquet encoder gives t (leafEncoder), so that
// a batch from an ORC file equals one from the same rows in Parquet.
//
// *vp is the index among c's values of entry lo, advanced past the entries
// taken: walking in order needs no rank table (orc.Column.Index).
func appendORC(v *Vec, st *orc.Stripe, c *orc.Column, t table.DataType, lo, n int, vp *int) error {
	j := *vp
	next := func() int { k := j; j++; return k }
	defer func() {
		if c.Present == nil {
			*vp = lo + n
		} else {
			*vp = j
		}
	}()
	if c.Present != nil && v.Null == nil {
		for i := lo; i < lo+n; i++ {
			if c.Null(i) {
				return errORCNull
			}
		}
	}
	if v.Null != nil {
		for i := lo; i < lo+n; i++ {
			v.Null = append(v.Null, c.Null(i))
		}
	}
	switch v.Kind {
	case parquet.Boolean:
		for i := lo; i < lo+n; i++ {
			v.Bool = append(v.Bool, !c.Null(i) && c.Bools[next()])
		}
	case parquet.Int32:
		switch {
		case t.Root == table.TypeDecimal:
			for i := lo; i < lo+n; i++ {
				var x int64
				if !c.Null(i) {
					var err error
					if x, err = orcDec64(c, next()); err != nil {
						return err
					}
					if x != int64(int32(x)) {
						return fmt.Errorf("decimal %d overflows %s", x, t)
					}
				}
				v.I32 = append(v.I32, int32(x))
			}
		case c.Present == nil:
			v.I32 = append(v.I32, c.Ints32[lo:lo+n]...)
		default:
			for i := lo; i < lo+n; i++ {
				var x int32
				if !c.Null(i) {
					x = c.Ints32[next()]
				}
				v.I32 = append(v.I32, x)
			}
		}
	case parquet.Int64:
		switch t.Root {
		case table.TypeDecimal:
			for i := lo; i < lo+n; i++ {
				var x int64
				if !c.Null(i) {
					var err error
					if x, err = orcDec64(c, next()); err != nil {
						return err
					}
				}
				v.I64 = append(v.I64, x)
			}
		case table.TypeTimestamp, table.TypeTimestampLTZ:
			if err := orcZoneOK(st, t); err != nil {
				return err
			}
			for i := lo; i < lo+n; i++ {
				var x int64
				if !c.Null(i) {
					k := next()
					s, ns := c.Secs[k], int64(c.Nanos[k])
					if t.Precision <= 3 {
						x = s*1000 + ns/1e6
					} else {
						x = s*1e6 + ns/1e3
					}
				}
				v.I64 = append(v.I64, x)
			}
		default:
			if c.Present == nil {
				v.I64 = append(v.I64, c.Ints[lo:lo+n]...)
				break
			}
			for i := lo; i < lo+n; i++ {
				var x int64
				if !c.Null(i) {
					x = c.Ints[next()]
				}
				v.I64 = append(v.I64, x)
			}
		}
	case parquet.Int96:
		if err := orcZoneOK(st, t); err != nil {
			return err
		}
		for i := lo; i < lo+n; i++ {
			if c.Null(i) {
				v.I96 = append(v.I96, deprecated.Int96{}) // a null's slot is zero
				continue
			}
			k := next()
			ns := int64(c.Nanos[k])
			ts := table.Timestamp{Millis: c.Secs[k]*1000 + ns/1e6, NanoOfMilli: int32(ns % 1e6)}
			v.I96 = append(v.I96, int96FromTimestamp(ts))
		}
	case parquet.Float:
		for i := lo; i < lo+n; i++ {
			var x float64
			if !c.Null(i) {
				x = c.Floats[next()]
			}
			v.F32 = append(v.F32, float32(x))
		}
	case parquet.Double:
		if c.Present == nil {
			v.F64 = append(v.F64, c.Floats[lo:lo+n]...)
			break
		}
		for i := lo; i < lo+n; i++ {
			var x float64
			if !c.Null(i) {
				x = c.Floats[next()]
			}
			v.F64 = append(v.F64, x)
		}
	case parquet.ByteArray:
		for i := lo; i < lo+n; i++ {
			if !c.Null(i) {
				v.Bytes = append(v.Bytes, c.BytesAt(next())...)
			}
			v.Offs = append(v.Offs, uint32(len(v.Bytes)))
		}
		if len(v.Bytes) > MaxBatchBytes {
			return ErrBatchTooLarge
		}
	case parquet.FixedLenByteArray: // DECIMAL of precision > 18
		w := decimalBytes(t.Precision)
		for i := lo; i < lo+n; i++ {
			if !c.Null(i) {
				b, err := twosComplement(c.Decimal(next()), w)
				if err != nil {
					return err
				}
				v.Bytes = append(v.Bytes, b...)
			}
			v.Offs = append(v.Offs, uint32(len(v.Bytes)))
		}
	default:
		return fmt.Errorf("not supported: batch column of Parquet type %s", v.Kind)
	}
	return nil
}

// orcDec64 is value j of a DECIMAL column of precision <= 18 as an int64.
func orcDec64(c *orc.Column, j int) (int64, error) {
	if c.Dec64 != nil {
		return c.Dec64[j], nil
	}
	d := c.Decimals[j] // a file that does not record the precision
	if !d.IsInt64() {
		return 0, fmt.Errorf("decimal %s overflows an int64", d)
	}
	return d.Int64(), nil
}

// orcZoneOK refuses, on the row path (fromORC) and the batch path alike,
// TIMESTAMP_LTZ in a file written outside UTC, whose value depends on
// orc.timestamp-ltz.legacy.type and the reader's zone.
func orcZoneOK(st *orc.Stripe, t table.DataType) error {
	if t.Root == table.TypeTimestampLTZ && !orc.UTCZone(st.WriterTimezone) {
		return fmt.Errorf("not supported: TIMESTAMP_LTZ in an ORC file written in time zone %s (its value depends on orc.timestamp-ltz.legacy.type and the reader's zone)", st.WriterTimezone)
	}
	return nil
}
