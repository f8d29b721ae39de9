package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

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
//
// It runs per column for every batchStep rows, so it is written for the
// loop bodies: the destination grows once per call and is assigned by
// index, columns without nulls (c.Present nil) are bulk copies, and the
// others walk the present flags of the range directly. A closure and a
// method call per value, and an append each, were most of its cost.
func appendORC(v *Vec, st *orc.Stripe, c *orc.Column, t table.DataType, lo, n int, vp *int) error {
	// pres: the present flags of the range; nil when nothing is null.
	var pres []bool
	if c.Present != nil {
		pres = c.Present[lo : lo+n]
	}
	j := *vp
	if pres == nil {
		j = lo
	}
	if pres != nil && v.Null == nil {
		for _, ok := range pres {
			if !ok {
				return errORCNull
			}
		}
	}
	if v.Null != nil {
		nulls := grow(&v.Null, n)
		if pres == nil {
			clear(nulls)
		} else {
			for i, ok := range pres {
				nulls[i] = !ok
			}
		}
	}
	var err error
	switch v.Kind {
	case parquet.Boolean:
		j = gather(&v.Bool, c.Bools, pres, j, n)
	case parquet.Int32:
		switch {
		case t.Root == table.TypeDecimal:
			j, err = appendDec64(grow(&v.I32, n), c, pres, j, func(x int64) (int32, error) {
				if x != int64(int32(x)) {
					return 0, fmt.Errorf("decimal %d overflows %s", x, t)
				}
				return int32(x), nil
			})
		default:
			j = gather(&v.I32, c.Ints32, pres, j, n)
		}
	case parquet.Int64:
		switch t.Root {
		case table.TypeDecimal:
			if c.Dec64 != nil {
				j = gather(&v.I64, c.Dec64, pres, j, n)
				break
			}
			j, err = appendDec64(grow(&v.I64, n), c, pres, j, func(x int64) (int64, error) { return x, nil })
		case table.TypeTimestamp, table.TypeTimestampLTZ:
			if err := orcZoneOK(st, t); err != nil {
				return err
			}
			dst := grow(&v.I64, n)
			milli := t.Precision <= 3
			for i := range dst {
				if pres != nil && !pres[i] {
					dst[i] = 0
					continue
				}
				s, ns := c.Secs[j], int64(c.Nanos[j])
				j++
				if milli {
					dst[i] = s*1000 + ns/1e6
				} else {
					dst[i] = s*1e6 + ns/1e3
				}
			}
		default:
			j = gather(&v.I64, c.Ints, pres, j, n)
		}
	case parquet.Int96:
		if err := orcZoneOK(st, t); err != nil {
			return err
		}
		dst := grow(&v.I96, n)
		for i := range dst {
			if pres != nil && !pres[i] {
				dst[i] = deprecated.Int96{} // a null's slot is zero
				continue
			}
			ns := int64(c.Nanos[j])
			ts := table.Timestamp{Millis: c.Secs[j]*1000 + ns/1e6, NanoOfMilli: int32(ns % 1e6)}
			j++
			dst[i] = int96FromTimestamp(ts)
		}
	case parquet.Float:
		dst := grow(&v.F32, n)
		for i := range dst {
			if pres != nil && !pres[i] {
				dst[i] = 0
				continue
			}
			dst[i] = float32(c.Floats[j])
			j++
		}
	case parquet.Double:
		j = gather(&v.F64, c.Floats, pres, j, n)
	case parquet.ByteArray:
		offs := grow(&v.Offs, n)
		if data, src, ok := c.DirectBytes(); ok {
			j = appendDirectBytes(v, offs, data, src, pres, j)
		} else {
			j = appendDictBytes(v, offs, c, pres, j)
		}
		if len(v.Bytes) > MaxBatchBytes {
			err = ErrBatchTooLarge
		}
	case parquet.FixedLenByteArray: // DECIMAL of precision > 18
		w := decimalBytes(t.Precision)
		for i := range n {
			if pres == nil || pres[i] {
				b, err := twosComplement(c.Decimal(j), w)
				if err != nil {
					return err
				}
				j++
				v.Bytes = append(v.Bytes, b...)
			}
			v.Offs = append(v.Offs, uint32(len(v.Bytes)))
		}
	default:
		return fmt.Errorf("not supported: batch column of Parquet type %s", v.Kind)
	}
	*vp = j
	return err
}

// appendDirectBytes appends to v the values of a directly encoded string
// column (data delimited by src) from index j on, one for each entry of
// offs, which it fills (pres: nil, or which entries are not null); it
// returns the next index. The values are contiguous, so they are one copy
// and the offsets are src's shifted: a copy per value was most of the
// cost of a string column.
func appendDirectBytes(v *Vec, offs []uint32, data []byte, src []uint32, pres []bool, j int) int {
	nn := len(offs)
	if pres != nil {
		nn = 0
		for _, ok := range pres {
			if ok {
				nn++
			}
		}
	}
	if nn == 0 {
		for i := range offs {
			offs[i] = uint32(len(v.Bytes))
		}
		return j
	}
	// Offsets are uint32 as Vec.Offs (a batch past MaxBatchBytes fails
	// after this): base wraps as uint32(len(v.Bytes)) would.
	base := uint32(len(v.Bytes)) - src[j]
	v.Bytes = append(v.Bytes, data[src[j]:src[j+nn]]...)
	if pres == nil {
		for i, o := range src[j+1 : j+1+nn] {
			offs[i] = o + base
		}
		return j + nn
	}
	end := src[j] + base
	for i, ok := range pres {
		if ok {
			j++
			end = src[j] + base
		}
		offs[i] = end
	}
	return j
}

// appendDictBytes is appendDirectBytes for any string column: a copy per
// value (BytesAt).
func appendDictBytes(v *Vec, offs []uint32, c *orc.Column, pres []bool, j int) int {
	for i := range offs {
		if pres == nil || pres[i] {
			v.Bytes = append(v.Bytes, c.BytesAt(j)...)
			j++
		}
		offs[i] = uint32(len(v.Bytes))
	}
	return j
}

// grow extends *s by n elements and returns them, for the caller to
// assign (their old contents are garbage).
func grow[T any](s *[]T, n int) []T {
	l := len(*s)
	*s = slices.Grow(*s, n)[:l+n]
	return (*s)[l:]
}

// gather appends n entries to *dst whose values are src from index j on,
// zero where pres (nil: none null) says null, and returns the index of
// the next value.
func gather[T any](dst *[]T, src []T, pres []bool, j, n int) int {
	if pres == nil {
		*dst = append(*dst, src[j:j+n]...)
		return j + n
	}
	out := grow(dst, n)
	var zero T
	for i, ok := range pres {
		if ok {
			out[i] = src[j]
			j++
		} else {
			out[i] = zero
		}
	}
	return j
}

// appendDec64 fills dst with the DECIMAL values of c from index j on, zero
// where pres says null, converted by conv; it returns the next index.
func appendDec64[T int32 | int64](dst []T, c *orc.Column, pres []bool, j int, conv func(int64) (T, error)) (int, error) {
	for i := range dst {
		if pres != nil && !pres[i] {
			dst[i] = 0
			continue
		}
		x, err := orcDec64(c, j)
		j++
		if err != nil {
			return j, err
		}
		if dst[i], err = conv(x); err != nil {
			return j, err
		}
	}
	return j, nil
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
