package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// ErrNoBatchPath marks a file the batch path cannot read exactly as written
// (another format, an older schema that needs casts, nested columns, a
// physical layout other than the one compactd writes). Callers fall back to
// the row path (OpenKeyValue), which handles every case.
var ErrNoBatchPath = errors.New("not readable as batches")

// BatchReader reads a flat KeyValue Parquet file as Batches in the layout of
// a KVCodec, page by page: memory is one decoded page per column.
type BatchReader struct {
	ctx  context.Context
	path string
	f    fileio.Reader
	pf   *parquet.File
	rg   int
	left int64 // rows left in the current row group
	cols []*pageCursor
	// leaf is the file's leaf column of each batch column.
	leaf    []int
	codec   *Codec
	kindCol int   // the _VALUE_KIND column, -1 for append files
	row     int64 // rows returned so far
	// orc reads an ORC file instead (f, pf and cols unset).
	orc *orcBatches
}

// OpenKeyValueBatches opens a KeyValue data file written with fileSchema for
// reading as batches of codec's layout (the layout of readSchema). It fails
// with an error wrapping ErrNoBatchPath, without reading data, when the file
// is not an exact physical match.
func OpenKeyValueBatches(ctx context.Context, fio fileio.FileIO, path string, fileSchema, readSchema Schema, codec *KVCodec) (*BatchReader, error) {
	if !sameSchema(fileSchema, readSchema) {
		return nil, fmt.Errorf("data file %s: %w: written with another schema", path, ErrNoBatchPath)
	}
	fields, err := readSchema.KeyValueFields()
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	return openBatches(ctx, fio, path, fields, codec.Codec, codec.KindCol(), false)
}

// NewKeyCodec is the codec of schema's _KEY_ columns alone, the layout
// OpenKeyBatches reads.
func NewKeyCodec(schema Schema) (*Codec, error) {
	fields, err := schema.KeyValueFields()
	if err != nil {
		return nil, err
	}
	return NewCodec(fields[:len(schema.KeyNames)])
}

// OpenKeyBatches opens a KeyValue data file for reading its key columns
// only, as batches of codec's layout (NewKeyCodec(readSchema)): the other
// columns' pages are never fetched. It fails with an error wrapping
// ErrNoBatchPath when the file's key columns are not exactly the ones
// compactd writes for readSchema (another key schema, a file without _KEY_
// columns, Avro); callers then read the file with OpenKeyValue.
func OpenKeyBatches(ctx context.Context, fio fileio.FileIO, path string, fileSchema, readSchema Schema, codec *Codec) (*BatchReader, error) {
	fileKV, err := fileSchema.KeyValueFields()
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	readKV, err := readSchema.KeyValueFields()
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	n := len(readSchema.KeyNames)
	if len(fileSchema.KeyNames) != n || !sameFields(fileKV[:n], readKV[:n]) {
		return nil, fmt.Errorf("data file %s: %w: written with another key", path, ErrNoBatchPath)
	}
	return openBatches(ctx, fio, path, readKV[:n], codec, -1, true)
}

// OpenRowBatches opens an append-table data file written with fileFields
// for reading as batches of codec's layout (readFields); like
// OpenKeyValueBatches it fails with ErrNoBatchPath unless the file is an
// exact physical match.
func OpenRowBatches(ctx context.Context, fio fileio.FileIO, path string, fileFields, readFields table.RowType, codec *Codec) (*BatchReader, error) {
	if !sameFields(fileFields, readFields) {
		return nil, fmt.Errorf("data file %s: %w: written with another schema", path, ErrNoBatchPath)
	}
	return openBatches(ctx, fio, path, readFields, codec, -1, false)
}

// openBatches opens a Parquet file whose leaf columns must be exactly
// fields' layout (with project, the file may have other columns too, which
// are not read); kindCol >= 0 is a _VALUE_KIND column to check.
func openBatches(ctx context.Context, fio fileio.FileIO, path string, fields table.RowType, codec *Codec, kindCol int, project bool) (*BatchReader, error) {
	format, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	if format != FormatParquet && format != FormatORC {
		return nil, fmt.Errorf("data file %s: %w: format %s", path, ErrNoBatchPath, format)
	}
	if !sameFields(fields, codec.fields) {
		return nil, fmt.Errorf("data file %s: the batch codec is for another layout", path)
	}
	if format == FormatORC {
		o, err := openORCBatches(ctx, fio, path, fields, project)
		if err != nil {
			return nil, err
		}
		return &BatchReader{ctx: ctx, path: path, codec: codec, kindCol: kindCol, orc: o}, nil
	}
	f, pf, err := openParquet(ctx, fio, path, len(fields))
	if err != nil {
		return nil, err
	}
	r := &BatchReader{ctx: ctx, path: path, f: f, pf: pf, codec: codec, kindCol: kindCol}
	root := pf.Schema()
	if !project && len(root.Columns()) != len(fields) {
		f.Close()
		return nil, fmt.Errorf("data file %s: %w: %d leaf columns, want %d", path, ErrNoBatchPath, len(root.Columns()), len(fields))
	}
	for i, fl := range fields {
		got, ok := root.Lookup(fl.Name)
		exp, _ := codec.layout.schema.Lookup(fl.Name)
		if !ok || !got.Node.Leaf() || !samePhysical(got.Node, exp.Node) {
			f.Close()
			return nil, fmt.Errorf("data file %s: %w: column %s differs from the layout compactd writes", path, ErrNoBatchPath, fl.Name)
		}
		r.leaf = append(r.leaf, got.ColumnIndex)
		maxDef := 0
		if got.Node.Optional() {
			maxDef = 1
		}
		r.cols = append(r.cols, &pageCursor{kind: codec.kinds[i], maxDef: byte(maxDef), name: fl.Name})
	}
	return r, nil
}

func sameSchema(a, b Schema) bool {
	if len(a.KeyNames) != len(b.KeyNames) || !sameFields(a.Fields, b.Fields) {
		return false
	}
	for i := range a.KeyNames {
		if a.KeyNames[i] != b.KeyNames[i] {
			return false
		}
	}
	return true
}

func sameFields(a, b table.RowType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.Name != y.Name || x.Type.String() != y.Type.String() || x.Type.Nullable != y.Type.Nullable {
			return false
		}
	}
	return true
}

func samePhysical(got, exp parquet.Node) bool {
	gt, et := got.Type(), exp.Type()
	return gt.Kind() == et.Kind() && gt.Length() == et.Length() &&
		got.Optional() == exp.Optional() && !got.Repeated() &&
		timeUnitOf(gt) == timeUnitOf(et)
}

// Next fills b (reset first) with up to limit rows, fewer when their values
// pass batchByteBudget; io.EOF when none are left.
func (r *BatchReader) Next(b *Batch, limit int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("read data file %s: corrupt Parquet data: %v", r.path, p)
		}
	}()
	b.Reset()
	if r.orc != nil {
		if err := r.orc.next(b, limit); err != nil {
			return err
		}
		if err := r.check(b); err != nil {
			return err
		}
		r.row += int64(b.N)
		return nil
	}
	for r.left == 0 {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		groups := r.pf.RowGroups()
		if r.rg >= len(groups) {
			return io.EOF
		}
		g := groups[r.rg]
		r.rg++
		r.left = g.NumRows()
		chunks := g.ColumnChunks()
		for i, c := range r.cols {
			c.open(chunks[r.leaf[i]].Pages())
		}
	}
	// Rows are read in steps so that a batch of large values stops at
	// batchByteBudget (at least one step) instead of at max rows.
	want := int(min(int64(limit), r.left))
	step := batchStep
	for b.N < want {
		n := min(step, want-b.N)
		for i, c := range r.cols {
			if err := c.read(&b.Cols[i], n); err != nil {
				return fmt.Errorf("read data file %s column %s: %w", r.path, c.name, err)
			}
		}
		b.N += n
		r.left -= int64(n)
		size := b.ByteSize()
		if size >= batchByteBudget {
			break
		}
		// The next step is as many rows as the rest of the budget holds
		// at the bytes per row seen so far.
		perRow := max(size/b.N, 1)
		step = min(max((batchByteBudget-size)/perRow, 1), batchStep)
	}
	if err := r.check(b); err != nil {
		return err
	}
	r.row += int64(b.N)
	return nil
}

// batchByteBudget bounds the value bytes of a batch the reader fills (one
// batch per sorted run is held by a merge), read batchStep rows at a time.
const (
	batchByteBudget = 16 << 20
	batchStep       = 128
)

// check holds the batch to what the row reader accepts or produces: a
// record kind the row path would refuse is refused, and TINYINT/SMALLINT
// values are wrapped to their width as the row path's conversion does.
func (r *BatchReader) check(b *Batch) error {
	if r.kindCol >= 0 {
		for i, k := range b.Cols[r.kindCol].I32 {
			if k < 0 || k > 3 {
				return fmt.Errorf("read data file %s: row %d has invalid %s %d", r.path, r.row+int64(i), ValueKindName, k)
			}
		}
	}
	for c, w := range r.codec.narrow {
		if w == 0 {
			continue
		}
		col := b.Cols[c].I32
		for i, x := range col {
			if w == 8 {
				col[i] = int32(int8(x))
			} else {
				col[i] = int32(int16(x))
			}
		}
	}
	return nil
}

// Close releases the file.
func (r *BatchReader) Close() error {
	if r.orc != nil {
		return r.orc.close()
	}
	for _, c := range r.cols {
		c.close()
	}
	return r.f.Close()
}

// pageCursor walks the pages of one column chunk.
type pageCursor struct {
	name   string
	kind   parquet.Kind
	maxDef byte
	pages  parquet.Pages
	page   parquet.Page
	n      int    // rows in the page
	pos    int    // next row of the page
	vpos   int    // next non-null value of the page
	def    []byte // nil when the column is required
	idx    []int32
	// Values of the page, or of its dictionary when idx != nil.
	i32   []int32
	i64   []int64
	f32   []float32
	f64   []float64
	bits  []byte
	i96   []deprecated.Int96
	bytes []byte
	offs  []uint32
	flba  int
	dict  parquet.Dictionary
	// The dictionary's values, copied (they outlive the page).
	dI32  []int32
	dI64  []int64
	dF32  []float32
	dF64  []float64
	dI96  []deprecated.Int96
	dByte []byte
	dOffs []uint32
	dFLBA int
	// dSlots holds a ByteArray dictionary whose values are all shorter
	// than a slot as fixed slots (value bytes, length in the last byte):
	// expanding an index then touches one cache line instead of an offset
	// and a value far apart. nil when some value does not fit.
	dSlots [][slotSize]byte
}

func (c *pageCursor) open(p parquet.Pages) {
	c.close()
	c.pages = p
	c.dict = nil
}

func (c *pageCursor) close() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
	c.n, c.pos, c.vpos = 0, 0, 0
}

func (c *pageCursor) nextPage() error {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages == nil {
		return io.ErrUnexpectedEOF
	}
	p, err := c.pages.ReadPage()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("column chunk ends before its row group: %w", io.ErrUnexpectedEOF)
		}
		return err
	}
	if p.RepetitionLevels() != nil && len(p.RepetitionLevels()) > 0 {
		return errors.New("repeated values in a flat column")
	}
	c.page = p
	c.n = int(p.NumValues())
	c.pos, c.vpos = 0, 0
	c.def = nil
	if c.maxDef > 0 {
		c.def = p.DefinitionLevels()
		if len(c.def) != c.n {
			return fmt.Errorf("page has %d definition levels for %d values", len(c.def), c.n)
		}
	}
	data := p.Data()
	c.idx = nil
	if d := p.Dictionary(); d != nil {
		if d != c.dict {
			c.loadDict(d)
		}
		c.idx = data.Int32()
		size := c.dictLen()
		for _, x := range c.idx {
			if x < 0 || int(x) >= size {
				return fmt.Errorf("dictionary index %d out of range [0,%d)", x, size)
			}
		}
		return nil
	}
	switch c.kind {
	case parquet.Boolean:
		c.bits = data.Boolean()
	case parquet.Int32:
		c.i32 = data.Int32()
	case parquet.Int64:
		c.i64 = data.Int64()
	case parquet.Int96:
		c.i96 = data.Int96()
	case parquet.Float:
		c.f32 = data.Float()
	case parquet.Double:
		c.f64 = data.Double()
	case parquet.ByteArray:
		c.bytes, c.offs = data.ByteArray()
	case parquet.FixedLenByteArray:
		c.bytes, c.flba = data.FixedLenByteArray()
	}
	return nil
}

func (c *pageCursor) dictLen() int {
	switch c.kind {
	case parquet.Int32:
		return len(c.dI32)
	case parquet.Int64:
		return len(c.dI64)
	case parquet.Int96:
		return len(c.dI96)
	case parquet.Float:
		return len(c.dF32)
	case parquet.Double:
		return len(c.dF64)
	case parquet.ByteArray:
		if c.dSlots != nil {
			return len(c.dSlots)
		}
		return len(c.dOffs) - 1
	case parquet.FixedLenByteArray:
		if c.dFLBA == 0 {
			return 0
		}
		return len(c.dByte) / c.dFLBA
	}
	return 0
}

func (c *pageCursor) loadDict(d parquet.Dictionary) {
	c.dict = d
	data := d.Page().Data()
	switch c.kind {
	case parquet.Int32:
		c.dI32 = append(c.dI32[:0], data.Int32()...)
	case parquet.Int64:
		c.dI64 = append(c.dI64[:0], data.Int64()...)
	case parquet.Int96:
		c.dI96 = append(c.dI96[:0], data.Int96()...)
	case parquet.Float:
		c.dF32 = append(c.dF32[:0], data.Float()...)
	case parquet.Double:
		c.dF64 = append(c.dF64[:0], data.Double()...)
	case parquet.ByteArray:
		b, o := data.ByteArray()
		// Short values go to slots only; otherwise bytes and offsets.
		c.dSlots = c.dSlots[:0]
		c.dByte, c.dOffs = c.dByte[:0], c.dOffs[:0]
		for j := 0; j+1 < len(o); j++ {
			v := b[o[j]:o[j+1]]
			if len(v) >= slotSize {
				c.dSlots = nil
				break
			}
			var slot [slotSize]byte
			copy(slot[:], v)
			slot[slotSize-1] = byte(len(v))
			c.dSlots = append(c.dSlots, slot)
		}
		if c.dSlots == nil {
			c.dByte = append(c.dByte, b...)
			c.dOffs = append(c.dOffs, o...)
		}
		if len(c.dOffs) == 0 {
			c.dOffs = append(c.dOffs, 0)
		}
	case parquet.FixedLenByteArray:
		b, size := data.FixedLenByteArray()
		c.dByte = append(c.dByte[:0], b...)
		c.dFLBA = size
	}
}

// read appends n rows of the column to v.
func (c *pageCursor) read(v *Vec, n int) error {
	for n > 0 {
		if c.pos >= c.n {
			if err := c.nextPage(); err != nil {
				return err
			}
			continue
		}
		k := min(n, c.n-c.pos)
		if err := c.copyRows(v, k); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// copyRows appends rows pos..pos+k of the current page.
func (c *pageCursor) copyRows(v *Vec, k int) error {
	// With definition levels a row is null when its level is below the
	// maximum; v.Null records it and only non-null rows consume a value.
	var null []bool
	nonNull := k
	if c.def != nil {
		base := len(v.Null)
		for _, d := range c.def[c.pos : c.pos+k] {
			v.Null = append(v.Null, d < c.maxDef)
		}
		null = v.Null[base:]
		for _, n := range null {
			if n {
				nonNull--
			}
		}
	} else if v.Null != nil {
		v.Null = append(v.Null, make([]bool, k)...)
	}
	if avail := c.valuesLeft(); nonNull > avail {
		return fmt.Errorf("page has %d values for %d non-null rows", avail, nonNull)
	}
	vp := c.vpos
	switch c.kind {
	case parquet.Boolean:
		for _, n := range nullsOrNone(null, k) {
			x := false
			if !n {
				x = c.bits[vp/8]>>(vp%8)&1 != 0
				vp++
			}
			v.Bool = append(v.Bool, x)
		}
	case parquet.Int32:
		v.I32, vp = copyFixed(v.I32, c.i32, c.dI32, c.idx, null, k, vp)
	case parquet.Int64:
		v.I64, vp = copyFixed(v.I64, c.i64, c.dI64, c.idx, null, k, vp)
	case parquet.Int96:
		v.I96, vp = copyFixed(v.I96, c.i96, c.dI96, c.idx, null, k, vp)
	case parquet.Float:
		v.F32, vp = copyFixed(v.F32, c.f32, c.dF32, c.idx, null, k, vp)
	case parquet.Double:
		v.F64, vp = copyFixed(v.F64, c.f64, c.dF64, c.idx, null, k, vp)
	case parquet.ByteArray:
		if c.idx == nil && null == nil {
			// A run of plain values: one copy, offsets rebased (uint32
			// arithmetic wraps consistently).
			start, end := c.offs[vp], c.offs[vp+k]
			base := uint32(len(v.Bytes)) - start
			v.Bytes = append(v.Bytes, c.bytes[start:end]...)
			for _, o := range c.offs[vp+1 : vp+k+1] {
				v.Offs = append(v.Offs, o+base)
			}
			vp += k
			break
		}
		if c.idx != nil && c.dSlots != nil {
			// Room for a whole slot per row, so each value is one
			// fixed-size copy; the bytes past its length are overwritten
			// by the next value or cut below.
			l := len(v.Bytes)
			v.Bytes = slices.Grow(v.Bytes, k*slotSize)[:l+k*slotSize]
			for _, n := range nullsOrNone(null, k) {
				if !n {
					slot := &c.dSlots[c.idx[vp]]
					*(*[slotSize]byte)(v.Bytes[l : l+slotSize]) = *slot
					l += int(slot[slotSize-1])
					vp++
				}
				v.Offs = append(v.Offs, uint32(l))
			}
			v.Bytes = v.Bytes[:l]
			break
		}
		for _, n := range nullsOrNone(null, k) {
			if !n {
				if c.idx != nil {
					j := c.idx[vp]
					v.Bytes = append(v.Bytes, c.dByte[c.dOffs[j]:c.dOffs[j+1]]...)
				} else {
					v.Bytes = append(v.Bytes, c.bytes[c.offs[vp]:c.offs[vp+1]]...)
				}
				vp++
			}
			v.Offs = append(v.Offs, uint32(len(v.Bytes)))
		}
	case parquet.FixedLenByteArray:
		for _, n := range nullsOrNone(null, k) {
			if !n {
				if c.idx != nil {
					j := int(c.idx[vp]) * c.dFLBA
					v.Bytes = append(v.Bytes, c.dByte[j:j+c.dFLBA]...)
				} else {
					j := vp * c.flba
					v.Bytes = append(v.Bytes, c.bytes[j:j+c.flba]...)
				}
				vp++
			}
			v.Offs = append(v.Offs, uint32(len(v.Bytes)))
		}
	}
	if len(v.Bytes) > MaxBatchBytes {
		return ErrBatchTooLarge
	}
	c.vpos = vp
	c.pos += k
	return nil
}

// slotSize is the size of a dictionary slot (dSlots).
const slotSize = 16

var noNulls = make([]bool, 4096)

// nullsOrNone is null, or k "not null" flags when the column has no
// definition levels.
func nullsOrNone(null []bool, k int) []bool {
	if null != nil {
		return null
	}
	if k <= len(noNulls) {
		return noNulls[:k]
	}
	return make([]bool, k)
}

// copyFixed appends k rows of a fixed-width column from plain values src or
// dictionary dict (idx != nil), starting at value vp; null (nil: none)
// marks the rows without a value, which get a zero.
func copyFixed[T any](dst, src, dict []T, idx []int32, null []bool, k, vp int) ([]T, int) {
	var zero T
	switch {
	case idx == nil && null == nil:
		return append(dst, src[vp:vp+k]...), vp + k
	case idx == nil:
		for _, n := range null {
			if n {
				dst = append(dst, zero)
			} else {
				dst = append(dst, src[vp])
				vp++
			}
		}
	case null == nil:
		for _, j := range idx[vp : vp+k] {
			dst = append(dst, dict[j])
		}
		vp += k
	default:
		for _, n := range null {
			if n {
				dst = append(dst, zero)
			} else {
				dst = append(dst, dict[idx[vp]])
				vp++
			}
		}
	}
	return dst, vp
}

// valuesLeft is the number of non-null values of the page not yet read.
func (c *pageCursor) valuesLeft() int {
	if c.idx != nil {
		return len(c.idx) - c.vpos
	}
	switch c.kind {
	case parquet.Boolean:
		return len(c.bits)*8 - c.vpos
	case parquet.Int32:
		return len(c.i32) - c.vpos
	case parquet.Int64:
		return len(c.i64) - c.vpos
	case parquet.Int96:
		return len(c.i96) - c.vpos
	case parquet.Float:
		return len(c.f32) - c.vpos
	case parquet.Double:
		return len(c.f64) - c.vpos
	case parquet.ByteArray:
		// An all-null page may have no offsets at all.
		return max(len(c.offs)-1, 0) - c.vpos
	case parquet.FixedLenByteArray:
		if c.flba == 0 {
			return 0
		}
		return len(c.bytes)/c.flba - c.vpos
	}
	return 0
}
