package scan

import (
	"fmt"
	"strconv"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// batchJSON writes rows of a batch as AppendJSON writes the same rows, but
// straight from the column vectors: decoding every value into a table.Row
// first (one boxed value per cell) cost a scan more CPU than a compaction
// of the same data (#19). Each column's encoder is chosen once, from its
// Paimon type and the physical form the codec gives it, and formats the
// unboxed value with AppendJSON's own helpers; forms without a helper
// for unboxed values decode the one value and go through appendValue.
type batchJSON struct {
	fields table.RowType
	// keys[k] is what precedes field k's value: "{" or "," and the quoted
	// name with its colon, as AppendJSON writes them.
	keys [][]byte
	cols []int // batch column of each field
	enc  []cellEncoder
}

// cellEncoder appends the JSON of row i of v, the encoder's column of b;
// the row is not null there.
type cellEncoder func(dst []byte, b *datafile.Batch, v *datafile.Vec, i int) ([]byte, error)

// newBatchJSON prepares the encoding of fields, field k held by batch
// column cols[k] of codec's batches.
func newBatchJSON(fields table.RowType, codec *datafile.Codec, cols []int) *batchJSON {
	e := &batchJSON{fields: fields, cols: cols}
	kinds := codec.Kinds()
	for k, f := range fields {
		sep := byte(',')
		if k == 0 {
			sep = '{'
		}
		e.keys = append(e.keys, appendKey([]byte{sep}, f.Name))
		e.enc = append(e.enc, cellEncoderOf(f.Type, kinds[cols[k]], codec.TimestampUnit(cols[k]), codec, cols[k]))
	}
	return e
}

// cellEncoderOf mirrors appendValue for the value that codec's decoder
// makes of a cell of kind (datafile's leafDecoder): the same conversion
// (int8/int16 truncation, float widening, timestamp units), then the same
// helper.
func cellEncoderOf(t table.DataType, kind datafile.Kind, tsUnit int, codec *datafile.Codec, col int) cellEncoder {
	switch {
	case t.Root == table.TypeBoolean && kind == datafile.KindBoolean:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return strconv.AppendBool(dst, v.Bool[i]), nil
		}
	case t.Root == table.TypeTinyInt && kind == datafile.KindInt32:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return strconv.AppendInt(dst, int64(int8(v.I32[i])), 10), nil
		}
	case t.Root == table.TypeSmallInt && kind == datafile.KindInt32:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return strconv.AppendInt(dst, int64(int16(v.I32[i])), 10), nil
		}
	case (t.Root == table.TypeInt || t.Root == table.TypeBigInt) && kind == datafile.KindInt32:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return strconv.AppendInt(dst, int64(v.I32[i]), 10), nil
		}
	case t.Root == table.TypeBigInt && kind == datafile.KindInt64:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return strconv.AppendInt(dst, v.I64[i], 10), nil
		}
	case t.Root == table.TypeFloat && kind == datafile.KindFloat:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendFloat(dst, float64(v.F32[i]), 32), nil
		}
	case t.Root == table.TypeDouble && kind == datafile.KindFloat:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendFloat(dst, float64(v.F32[i]), 64), nil
		}
	case t.Root == table.TypeDouble && kind == datafile.KindDouble:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendFloat(dst, v.F64[i], 64), nil
		}
	case (t.Root == table.TypeChar || t.Root == table.TypeVarChar) && kind == datafile.KindBytes:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendString(dst, v.BytesAt(i)), nil
		}
	case (t.Root == table.TypeBinary || t.Root == table.TypeVarBinary) && kind == datafile.KindBytes:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendBinary(dst, v.BytesAt(i)), nil
		}
	case t.Root == table.TypeDecimal && kind == datafile.KindInt32:
		scale := t.Scale
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendDecimalInt(dst, int64(v.I32[i]), scale), nil
		}
	case t.Root == table.TypeDecimal && kind == datafile.KindInt64:
		scale := t.Scale
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendDecimalInt(dst, v.I64[i], scale), nil
		}
	case t.Root == table.TypeDate && kind == datafile.KindInt32:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendDate(dst, v.I32[i]), nil
		}
	case t.Root == table.TypeTime && kind == datafile.KindInt32:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendTime(dst, v.I32[i]), nil
		}
	case (t.Root == table.TypeTimestamp || t.Root == table.TypeTimestampLTZ) && kind == datafile.KindInt64 && tsUnit == 1:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendTimestamp(dst, table.Timestamp{Millis: v.I64[i]}), nil
		}
	case (t.Root == table.TypeTimestamp || t.Root == table.TypeTimestampLTZ) && kind == datafile.KindInt64 && tsUnit == 2:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendTimestamp(dst, table.TimestampFromMicros(v.I64[i])), nil
		}
	case (t.Root == table.TypeTimestamp || t.Root == table.TypeTimestampLTZ) && kind == datafile.KindInt64 && tsUnit == 3:
		return func(dst []byte, _ *datafile.Batch, v *datafile.Vec, i int) ([]byte, error) {
			return appendTimestamp(dst, table.TimestampFromNanos(v.I64[i])), nil
		}
	}
	// Wide decimals (big.Int), INT96 timestamps and any other form: the
	// codec's decoder and appendValue, one value at a time.
	return func(dst []byte, b *datafile.Batch, _ *datafile.Vec, i int) ([]byte, error) {
		val, err := codec.ColumnValue(b, i, col)
		if err != nil {
			return nil, err
		}
		return appendValue(dst, t, val)
	}
}

// appendRow appends row i of b as one JSON object.
func (e *batchJSON) appendRow(dst []byte, b *datafile.Batch, i int) ([]byte, error) {
	for k, col := range e.cols {
		dst = append(dst, e.keys[k]...)
		v := &b.Cols[col]
		if v.IsNull(i) {
			dst = append(dst, "null"...)
			continue
		}
		var err error
		if dst, err = e.enc[k](dst, b, v, i); err != nil {
			return nil, fmt.Errorf("column %s: %w", e.fields[k].Name, err)
		}
	}
	if len(e.cols) == 0 {
		dst = append(dst, '{')
	}
	return append(dst, '}'), nil
}
