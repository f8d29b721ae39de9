package datafile

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// The batch path: rows of flat files in column form, values kept in their
// Parquet physical representation. A compaction reads and writes files of
// the same schema, so most values can go from an input page to an output
// page without being turned into Go values and back; only records that a
// merge function must combine are materialized (KVCodec).

// Vec is one leaf column of a Batch. Values are dense: row i is at index i
// of the slice of the column's kind (a null row holds a zero value there).
type Vec struct {
	Kind parquet.Kind
	// Null marks null rows; nil for a REQUIRED column.
	Null  []bool
	I32   []int32
	I64   []int64
	F32   []float32
	F64   []float64
	Bool  []bool
	I96   []deprecated.Int96
	Bytes []byte
	// Offs delimits ByteArray and FixedLenByteArray values: value i is
	// Bytes[Offs[i]:Offs[i+1]]. len(Offs) = rows+1.
	Offs []uint32
}

// Kind is the physical form of a batch column's values: which slice of a
// Vec holds them. It is all that code outside this package learns of a
// column's Parquet physical type, so Parquet stays behind this package.
type Kind uint8

const (
	KindBoolean Kind = iota + 1 // Vec.Bool
	KindInt32                   // Vec.I32 (also TINYINT, SMALLINT, DATE, TIME, DECIMAL up to 9 digits)
	KindInt64                   // Vec.I64 (also DECIMAL up to 18 digits, TIMESTAMP up to 6 digits)
	KindInt96                   // Vec.I96
	KindFloat                   // Vec.F32
	KindDouble                  // Vec.F64
	KindBytes                   // Vec.BytesAt: Parquet BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY
)

// kindOf maps a Parquet physical type to its Kind (0 for none).
func kindOf(k parquet.Kind) Kind {
	switch k {
	case parquet.Boolean:
		return KindBoolean
	case parquet.Int32:
		return KindInt32
	case parquet.Int64:
		return KindInt64
	case parquet.Int96:
		return KindInt96
	case parquet.Float:
		return KindFloat
	case parquet.Double:
		return KindDouble
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return KindBytes
	}
	return 0
}

func newVec(kind parquet.Kind, optional bool) Vec {
	v := Vec{Kind: kind}
	if optional {
		v.Null = []bool{}
	}
	v.reset()
	return v
}

func (v *Vec) reset() {
	if v.Null != nil {
		v.Null = v.Null[:0]
	}
	v.I32, v.I64, v.F32, v.F64 = v.I32[:0], v.I64[:0], v.F32[:0], v.F64[:0]
	v.Bool, v.I96, v.Bytes = v.Bool[:0], v.I96[:0], v.Bytes[:0]
	v.Offs = append(v.Offs[:0], 0)
}

// Optional reports whether the column may hold nulls.
func (v *Vec) Optional() bool { return v.Null != nil }

// IsNull reports whether row i is null.
func (v *Vec) IsNull(i int) bool { return v.Null != nil && v.Null[i] }

// BytesAt is the value of row i of a ByteArray or FixedLenByteArray column.
func (v *Vec) BytesAt(i int) []byte { return v.Bytes[v.Offs[i]:v.Offs[i+1]] }

// appendZero appends a null (or zero) row.
func (v *Vec) appendZero(null bool) {
	if v.Null != nil {
		v.Null = append(v.Null, null)
	}
	switch v.Kind {
	case parquet.Boolean:
		v.Bool = append(v.Bool, false)
	case parquet.Int32:
		v.I32 = append(v.I32, 0)
	case parquet.Int64:
		v.I64 = append(v.I64, 0)
	case parquet.Int96:
		v.I96 = append(v.I96, deprecated.Int96{})
	case parquet.Float:
		v.F32 = append(v.F32, 0)
	case parquet.Double:
		v.F64 = append(v.F64, 0)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		v.Offs = append(v.Offs, uint32(len(v.Bytes)))
	}
}

// value returns row i as a parquet.Value (byte slices alias the batch).
func (v *Vec) value(i int) parquet.Value {
	if v.IsNull(i) {
		return parquet.NullValue()
	}
	switch v.Kind {
	case parquet.Boolean:
		return parquet.BooleanValue(v.Bool[i])
	case parquet.Int32:
		return parquet.Int32Value(v.I32[i])
	case parquet.Int64:
		return parquet.Int64Value(v.I64[i])
	case parquet.Int96:
		return parquet.Int96Value(v.I96[i])
	case parquet.Float:
		return parquet.FloatValue(v.F32[i])
	case parquet.Double:
		return parquet.DoubleValue(v.F64[i])
	case parquet.ByteArray:
		return parquet.ByteArrayValue(v.BytesAt(i))
	case parquet.FixedLenByteArray:
		return parquet.FixedLenByteArrayValue(v.BytesAt(i))
	}
	return parquet.NullValue()
}

// appendValue appends a non-null physical value of the column's kind.
func (v *Vec) appendValue(pv parquet.Value) error {
	if pv.IsNull() {
		if v.Null == nil {
			return fmt.Errorf("null in a NOT NULL column")
		}
		v.appendZero(true)
		return nil
	}
	if pv.Kind() != v.Kind {
		return fmt.Errorf("value of Parquet type %s in a %s column", pv.Kind(), v.Kind)
	}
	if v.Null != nil {
		v.Null = append(v.Null, false)
	}
	switch v.Kind {
	case parquet.Boolean:
		v.Bool = append(v.Bool, pv.Boolean())
	case parquet.Int32:
		v.I32 = append(v.I32, pv.Int32())
	case parquet.Int64:
		v.I64 = append(v.I64, pv.Int64())
	case parquet.Int96:
		v.I96 = append(v.I96, pv.Int96())
	case parquet.Float:
		v.F32 = append(v.F32, pv.Float())
	case parquet.Double:
		v.F64 = append(v.F64, pv.Double())
	case parquet.ByteArray, parquet.FixedLenByteArray:
		v.Bytes = append(v.Bytes, pv.ByteArray()...)
		if len(v.Bytes) > MaxBatchBytes {
			return ErrBatchTooLarge
		}
		v.Offs = append(v.Offs, uint32(len(v.Bytes)))
	}
	return nil
}

// Batch is a run of rows of one flat file layout, column by column.
type Batch struct {
	N    int
	Cols []Vec
	// takes is AppendTake's scratch: its takes grouped by source.
	takes []takeGroup
}

// Reset empties the batch, keeping its buffers.
func (b *Batch) Reset() {
	b.N = 0
	for i := range b.Cols {
		b.Cols[i].reset()
	}
}

// Take names row Row of batch Src.
type Take struct {
	Src *Batch
	Row int32
}

// MaxBatchBytes bounds the bytes of one ByteArray column of a batch: value
// offsets are 32-bit.
const MaxBatchBytes = math.MaxUint32

// ErrBatchTooLarge is returned when the values of a batch column would pass
// MaxBatchBytes.
var ErrBatchTooLarge = errors.New("values of one batch column exceed 4 GiB")

// ByteSize is the number of value bytes of the batch's ByteArray and
// FixedLenByteArray columns.
func (b *Batch) ByteSize() int {
	n := 0
	for i := range b.Cols {
		n += len(b.Cols[i].Bytes)
	}
	return n
}

// RowBytes is the number of value bytes of row i in the given columns (of
// kind ByteArray or FixedLenByteArray: KVCodec.ByteCols).
func (b *Batch) RowBytes(cols []int, i int) int {
	n := 0
	for _, c := range cols {
		v := &b.Cols[c]
		n += int(v.Offs[i+1] - v.Offs[i])
	}
	return n
}

// AppendTake appends the named rows, column by column. Every source has the
// layout of b.
//
// Fixed-width columns are filled source by source: the takes are grouped by
// source once (a merge interleaves a handful of sources row by row), then
// each group is a tight copy of that source's column into its rows' slots.
// Reaching each take's value through its source's column headers, row by
// row, was a tenth of a wide ORC compaction's CPU.
func (b *Batch) AppendTake(take []Take) error {
	if len(take) == 0 {
		return nil
	}
	groups := b.groupTakes(take)
	n := len(take)
	for c := range b.Cols {
		d := &b.Cols[c]
		if d.Null != nil {
			dst := grow(&d.Null, n)
			for _, g := range groups {
				src := g.src.Cols[c].Null
				if src == nil {
					for _, j := range g.at {
						dst[j] = false
					}
					continue
				}
				for k, j := range g.at {
					dst[j] = src[g.rows[k]]
				}
			}
		}
		switch d.Kind {
		case parquet.Boolean:
			scatter(&d.Bool, n, groups, func(v *Vec) []bool { return v.Bool }, c)
		case parquet.Int32:
			scatter(&d.I32, n, groups, func(v *Vec) []int32 { return v.I32 }, c)
		case parquet.Int64:
			scatter(&d.I64, n, groups, func(v *Vec) []int64 { return v.I64 }, c)
		case parquet.Int96:
			scatter(&d.I96, n, groups, func(v *Vec) []deprecated.Int96 { return v.I96 }, c)
		case parquet.Float:
			scatter(&d.F32, n, groups, func(v *Vec) []float32 { return v.F32 }, c)
		case parquet.Double:
			scatter(&d.F64, n, groups, func(v *Vec) []float64 { return v.F64 }, c)
		case parquet.ByteArray, parquet.FixedLenByteArray:
			for _, t := range take {
				s := &t.Src.Cols[c]
				d.Bytes = append(d.Bytes, s.Bytes[s.Offs[t.Row]:s.Offs[t.Row+1]]...)
				d.Offs = append(d.Offs, uint32(len(d.Bytes)))
			}
			if len(d.Bytes) > MaxBatchBytes {
				return fmt.Errorf("column %d: %w", c, ErrBatchTooLarge)
			}
		}
	}
	b.N += n
	return nil
}

// takeGroup is the takes of one source: the slot of each among the
// appended rows, and its row in the source.
type takeGroup struct {
	src  *Batch
	at   []int32
	rows []int32
}

// groupTakes groups take by source, in b's reused scratch.
func (b *Batch) groupTakes(take []Take) []takeGroup {
	g := b.takes[:0]
	last := -1
	for j, t := range take {
		if last < 0 || g[last].src != t.Src {
			last = slices.IndexFunc(g, func(x takeGroup) bool { return x.src == t.Src })
			if last < 0 {
				if len(g) < cap(g) { // a group of an earlier call: its slices reused
					g = g[:len(g)+1]
					x := &g[len(g)-1]
					x.src, x.at, x.rows = t.Src, x.at[:0], x.rows[:0]
				} else {
					g = append(g, takeGroup{src: t.Src})
				}
				last = len(g) - 1
			}
		}
		g[last].at = append(g[last].at, int32(j))
		g[last].rows = append(g[last].rows, t.Row)
	}
	b.takes = g
	return g
}

// scatter appends n entries to column c's slice *dst: each
// group's source values (col of the source's column c) go to their slots.
func scatter[T any](dst *[]T, n int, groups []takeGroup, col func(*Vec) []T, c int) {
	out := grow(dst, n)
	for _, g := range groups {
		src := col(&g.src.Cols[c])
		for k, j := range g.at {
			out[j] = src[g.rows[k]]
		}
	}
}

// Codec describes the columns of a flat file layout for batches: their
// Parquet kinds and converters between physical values and Go values.
type Codec struct {
	kinds    []parquet.Kind
	optional []bool
	// narrow is 8 for TINYINT and 16 for SMALLINT columns (stored as
	// INT32), 0 otherwise.
	narrow []int
	dec    []decodeFunc
	enc    []encodeFunc
	// tsUnit is int64TimestampUnit of INT64 TIMESTAMP columns, 0 for others.
	tsUnit []int
	fields table.RowType
	layout *pqLayout // the Parquet schema compactd writes for fields
}

// NewCodec builds the codec of a flat row layout (an append table's
// columns). It fails when a column is not flat (nested types take the row
// path).
func NewCodec(fields table.RowType) (*Codec, error) {
	layout, err := parquetSchema(fields)
	if err != nil {
		return nil, err
	}
	leaves := layout.schema.Columns()
	if len(leaves) != len(fields) {
		return nil, fmt.Errorf("not flat: %d leaf columns for %d fields", len(leaves), len(fields))
	}
	c := &Codec{fields: fields, layout: layout}
	for i, f := range fields {
		leaf, ok := layout.schema.Lookup(leaves[i]...)
		if !ok {
			return nil, fmt.Errorf("column %s missing from its own layout", f.Name)
		}
		typ := leaf.Node.Type()
		dec, err := leafDecoder(f.Type, typ)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		enc, err := leafEncoder(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		c.kinds = append(c.kinds, typ.Kind())
		unit := 0
		if (f.Type.Root == table.TypeTimestamp || f.Type.Root == table.TypeTimestampLTZ) && typ.Kind() == parquet.Int64 {
			unit = int64TimestampUnit(f.Type, typ)
		}
		c.tsUnit = append(c.tsUnit, unit)
		switch f.Type.Root {
		case table.TypeTinyInt:
			c.narrow = append(c.narrow, 8)
		case table.TypeSmallInt:
			c.narrow = append(c.narrow, 16)
		default:
			c.narrow = append(c.narrow, 0)
		}
		c.optional = append(c.optional, leaf.Node.Optional())
		c.dec = append(c.dec, dec)
		c.enc = append(c.enc, enc)
	}
	return c, nil
}

// NewBatch returns an empty batch of the codec's layout.
func (c *Codec) NewBatch() *Batch {
	b := &Batch{Cols: make([]Vec, len(c.kinds))}
	for i, k := range c.kinds {
		b.Cols[i] = newVec(k, c.optional[i])
	}
	return b
}

// RowAt decodes row i of b (nil for nulls).
func (c *Codec) RowAt(b *Batch, i int) (table.Row, error) {
	row := make(table.Row, len(c.kinds))
	for j := range row {
		col := &b.Cols[j]
		if col.IsNull(i) {
			continue
		}
		v, err := c.dec[j](col.value(i))
		if err != nil {
			return nil, err
		}
		row[j] = v
	}
	return row, nil
}

// ColumnValue decodes column j of row i of b (nil for null), as RowAt does.
func (c *Codec) ColumnValue(b *Batch, i, j int) (any, error) {
	col := &b.Cols[j]
	if col.IsNull(i) {
		return nil, nil
	}
	return c.dec[j](col.value(i))
}

// TimestampUnit is how column j counts time when it holds a TIMESTAMP as
// Vec.I64: 1 milliseconds, 2 microseconds, 3 nanoseconds since the epoch
// (as RowAt decodes it); 0 for other columns. Readers that format values
// straight from the vectors need it.
func (c *Codec) TimestampUnit(j int) int { return c.tsUnit[j] }

// Kinds is the Kind of each column of the codec's batches.
func (c *Codec) Kinds() []Kind {
	out := make([]Kind, len(c.kinds))
	for i, k := range c.kinds {
		out[i] = kindOf(k)
	}
	return out
}

// ByteCols lists the columns whose values are byte strings.
func (c *Codec) ByteCols() []int {
	var out []int
	for i, k := range c.kinds {
		if k == parquet.ByteArray || k == parquet.FixedLenByteArray {
			out = append(out, i)
		}
	}
	return out
}

// AppendRow appends row (Go values of the layout's fields) to b.
func (c *Codec) AppendRow(b *Batch, row table.Row) error {
	if len(row) != len(c.kinds) {
		return fmt.Errorf("row has %d fields, want %d", len(row), len(c.kinds))
	}
	for j, v := range row {
		if err := c.appendValue(b, j, v); err != nil {
			return err
		}
	}
	b.N++
	return nil
}

func (c *Codec) appendValue(b *Batch, j int, v any) error {
	if v == nil {
		if err := b.Cols[j].appendValue(parquet.NullValue()); err != nil {
			return fmt.Errorf("column %d: %w", j, err)
		}
		return nil
	}
	pv, err := c.enc[j](v)
	if err == nil {
		err = b.Cols[j].appendValue(pv)
	}
	if err != nil {
		// The batch is left ragged: the caller abandons the file.
		return fmt.Errorf("column %d: %w", j, err)
	}
	return nil
}

// KVCodec is the Codec of a Schema's KeyValue layout (_KEY_ columns,
// _SEQUENCE_NUMBER, _VALUE_KIND, value columns), converting rows to and
// from table.KeyValue.
type KVCodec struct {
	*Codec
	nKey, nVal int
}

// NewKVCodec builds the codec of schema's KeyValue layout. It fails when a
// column is not flat (nested types take the row path).
func NewKVCodec(schema Schema) (*KVCodec, error) {
	fields, err := schema.KeyValueFields()
	if err != nil {
		return nil, err
	}
	c, err := NewCodec(fields)
	if err != nil {
		return nil, err
	}
	return &KVCodec{Codec: c, nKey: len(schema.KeyNames), nVal: len(schema.Fields)}, nil
}

// KeyCols is the number of key columns (the first columns of a batch).
func (c *KVCodec) KeyCols() int { return c.nKey }

// SeqCol and KindCol are the columns of _SEQUENCE_NUMBER and _VALUE_KIND.
func (c *KVCodec) SeqCol() int  { return c.nKey }
func (c *KVCodec) KindCol() int { return c.nKey + 1 }

// Record materializes row i of b.
func (c *KVCodec) Record(b *Batch, i int) (table.KeyValue, error) {
	kv := table.KeyValue{Key: make(table.Row, c.nKey), Value: make(table.Row, c.nVal)}
	for j := range c.kinds {
		col := &b.Cols[j]
		if col.IsNull(i) {
			continue
		}
		v, err := c.dec[j](col.value(i))
		if err != nil {
			return table.KeyValue{}, err
		}
		switch {
		case j < c.nKey:
			kv.Key[j] = v
		case j == c.nKey:
			kv.Seq = v.(int64)
		case j == c.nKey+1:
			kind := v.(int8)
			if kind < 0 || kind > 3 {
				return table.KeyValue{}, fmt.Errorf("invalid %s %d", ValueKindName, kind)
			}
			kv.Kind = table.RowKind(kind)
		default:
			kv.Value[j-c.nKey-2] = v
		}
	}
	return kv, nil
}

// Append appends kv to b.
func (c *KVCodec) Append(b *Batch, kv table.KeyValue) error {
	if len(kv.Key) != c.nKey || len(kv.Value) != c.nVal {
		return fmt.Errorf("record has %d key and %d value fields, want %d and %d", len(kv.Key), len(kv.Value), c.nKey, c.nVal)
	}
	for j := range c.kinds {
		var v any
		switch {
		case j < c.nKey:
			v = kv.Key[j]
		case j == c.nKey:
			v = kv.Seq
		case j == c.nKey+1:
			v = int8(kv.Kind)
		default:
			v = kv.Value[j-c.nKey-2]
		}
		if err := c.appendValue(b, j, v); err != nil {
			return err
		}
	}
	b.N++
	return nil
}

// KeyAt decodes the key of row i.
func (c *KVCodec) KeyAt(b *Batch, i int) (table.Row, error) {
	key := make(table.Row, c.nKey)
	for j := range key {
		col := &b.Cols[j]
		if col.IsNull(i) {
			return nil, fmt.Errorf("row %d: null key column %d", i, j)
		}
		v, err := c.dec[j](col.value(i))
		if err != nil {
			return nil, err
		}
		key[j] = v
	}
	return key, nil
}

// ValueAt decodes value field j of row i (nil for null).
func (c *KVCodec) ValueAt(b *Batch, i, j int) (any, error) {
	return c.ColumnValue(b, i, c.nKey+2+j)
}

// ValueCol is the batch column of value field j.
func (c *KVCodec) ValueCol(j int) int { return c.nKey + 2 + j }

// AppendAssembled appends one row built from several source rows: batch
// column col takes its value from take[from[col]], or is null when
// from[col] < 0.
func (b *Batch) AppendAssembled(take []Take, from []int) error {
	for c := range b.Cols {
		d := &b.Cols[c]
		if from[c] < 0 {
			if d.Null == nil {
				return fmt.Errorf("column %d: null in a NOT NULL column", c)
			}
			d.appendZero(true)
			continue
		}
		t := take[from[c]]
		s := &t.Src.Cols[c]
		i := int(t.Row)
		if d.Null != nil {
			d.Null = append(d.Null, s.IsNull(i))
		} else if s.IsNull(i) {
			return fmt.Errorf("column %d: null in a NOT NULL column", c)
		}
		switch d.Kind {
		case parquet.Boolean:
			d.Bool = append(d.Bool, s.Bool[i])
		case parquet.Int32:
			d.I32 = append(d.I32, s.I32[i])
		case parquet.Int64:
			d.I64 = append(d.I64, s.I64[i])
		case parquet.Int96:
			d.I96 = append(d.I96, s.I96[i])
		case parquet.Float:
			d.F32 = append(d.F32, s.F32[i])
		case parquet.Double:
			d.F64 = append(d.F64, s.F64[i])
		case parquet.ByteArray, parquet.FixedLenByteArray:
			d.Bytes = append(d.Bytes, s.BytesAt(i)...)
			if len(d.Bytes) > MaxBatchBytes {
				return fmt.Errorf("column %d: %w", c, ErrBatchTooLarge)
			}
			d.Offs = append(d.Offs, uint32(len(d.Bytes)))
		}
	}
	b.N++
	return nil
}
