package datafile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
)

// Paimon's special field ids of nested ORC types (SpecialFields): an
// array element's, a map key's and a map value's id derive from the
// field's id and the nesting depth, in Java int arithmetic.
const (
	structuredFieldIDBase  = int32(math.MaxInt32 / 4)
	structuredDepthLimit   = int32(1 << 10)
	orcFieldIDAttribute    = "paimon.id"
	defaultORCCompressSize = orc.DefaultBlockSize
)

// orcTypeOf maps a Paimon type to the ORC type Java's OrcTypeUtil writes,
// with the paimon.id attribute it sets.
func orcTypeOf(t table.DataType, id int32, depth int32) (*orc.TypeDesc, error) {
	attr := map[string]string{orcFieldIDAttribute: strconv.Itoa(int(id))}
	leaf := func(k orc.Kind) (*orc.TypeDesc, error) { return &orc.TypeDesc{Kind: k, Attributes: attr}, nil }
	switch t.Root {
	case table.TypeChar:
		return &orc.TypeDesc{Kind: orc.Char, MaxLength: t.Length, Attributes: attr}, nil
	case table.TypeVarChar:
		if t.Length == table.MaxLength {
			return leaf(orc.String)
		}
		return &orc.TypeDesc{Kind: orc.Varchar, MaxLength: t.Length, Attributes: attr}, nil
	case table.TypeBoolean:
		return leaf(orc.Boolean)
	case table.TypeBlob, table.TypeBinary, table.TypeVarBinary:
		// OrcFileFormat.refineDataType writes BINARY(n) and VARBINARY(n)
		// as BYTES.
		return leaf(orc.Binary)
	case table.TypeDecimal:
		return &orc.TypeDesc{Kind: orc.Decimal, Precision: t.Precision, Scale: t.Scale, Attributes: attr}, nil
	case table.TypeTinyInt:
		return leaf(orc.Byte)
	case table.TypeSmallInt:
		return leaf(orc.Short)
	case table.TypeInt, table.TypeTime:
		return leaf(orc.Int)
	case table.TypeBigInt:
		return leaf(orc.Long)
	case table.TypeFloat:
		return leaf(orc.Float)
	case table.TypeDouble:
		return leaf(orc.Double)
	case table.TypeDate:
		return leaf(orc.Date)
	case table.TypeTimestamp:
		return leaf(orc.Timestamp)
	case table.TypeTimestampLTZ:
		return leaf(orc.TimestampInstant)
	case table.TypeArray:
		el, err := orcTypeOf(*t.Element, id, depth+1)
		if err != nil {
			return nil, err
		}
		el.Attributes = map[string]string{orcFieldIDAttribute: strconv.Itoa(int(structuredFieldIDBase + id*structuredDepthLimit + depth + 1))}
		return &orc.TypeDesc{Kind: orc.List, Children: []*orc.TypeDesc{el}, Attributes: attr}, nil
	case table.TypeMap, table.TypeMultiset:
		kt, vt := t.Key, t.Value
		if t.Root == table.TypeMultiset {
			// refineDataType: MULTISET<T> is MAP<T, INT NOT NULL>.
			kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
		}
		k, err := orcTypeOf(*kt, id, depth+1)
		if err != nil {
			return nil, err
		}
		k.Attributes = map[string]string{orcFieldIDAttribute: strconv.Itoa(int(structuredFieldIDBase - id*structuredDepthLimit - depth - 1))}
		v, err := orcTypeOf(*vt, id, depth+1)
		if err != nil {
			return nil, err
		}
		v.Attributes = map[string]string{orcFieldIDAttribute: strconv.Itoa(int(structuredFieldIDBase + id*structuredDepthLimit + depth + 1))}
		return &orc.TypeDesc{Kind: orc.Map, Children: []*orc.TypeDesc{k, v}, Attributes: attr}, nil
	case table.TypeRow:
		s, err := orcSchemaOf(t.Fields)
		if err != nil {
			return nil, err
		}
		s.Attributes = attr
		return s, nil
	}
	// Java's OrcTypeUtil refuses the others too (VARIANT, VECTOR, ...).
	return nil, fmt.Errorf("not supported: Paimon type %s in an ORC file", t)
}

func orcSchemaOf(fields table.RowType) (*orc.TypeDesc, error) {
	s := &orc.TypeDesc{Kind: orc.Struct}
	for _, f := range fields {
		c, err := orcTypeOf(f.Type, int32(f.ID), 0)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		s.Fields = append(s.Fields, f.Name)
		s.Children = append(s.Children, c)
	}
	return s, nil
}

// toORC converts a Go value of Paimon type t into the writer's generic
// value (the inverse of fromORC).
func toORC(v any, t table.DataType) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Root {
	case table.TypeBoolean:
		return v, nil
	case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeTime, table.TypeDate, table.TypeBigInt:
		return v, nil
	case table.TypeFloat:
		if f, ok := v.(float32); ok {
			return float64(f), nil
		}
	case table.TypeDouble:
		return v, nil
	case table.TypeChar, table.TypeVarChar:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return v, nil
	case table.TypeBinary, table.TypeVarBinary, table.TypeBlob:
		return v, nil
	case table.TypeDecimal:
		if d, ok := v.(table.Decimal); ok && d.Unscaled != nil {
			return orc.Dec{Unscaled: d.Unscaled, Scale: d.Scale}, nil
		}
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		if ts, ok := v.(table.Timestamp); ok {
			secs := ts.Millis / 1000
			ms := ts.Millis % 1000
			if ms < 0 {
				secs--
				ms += 1000
			}
			return orc.Time{Secs: secs, Nanos: int32(ms)*1e6 + ts.NanoOfMilli}, nil
		}
	case table.TypeArray:
		if a, ok := v.([]any); ok {
			out := make([]any, len(a))
			for i, e := range a {
				x, err := toORC(e, *t.Element)
				if err != nil {
					return nil, err
				}
				out[i] = x
			}
			return out, nil
		}
	case table.TypeMap, table.TypeMultiset:
		kt, vt := t.Key, t.Value
		if t.Root == table.TypeMultiset {
			kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
		}
		if m, ok := v.(*table.Map); ok && m != nil && len(m.Keys) == len(m.Values) {
			out := make([]orc.KV, len(m.Keys))
			for i := range m.Keys {
				k, err := toORC(m.Keys[i], *kt)
				if err != nil {
					return nil, err
				}
				x, err := toORC(m.Values[i], *vt)
				if err != nil {
					return nil, err
				}
				out[i] = orc.KV{Key: k, Value: x}
			}
			return out, nil
		}
	case table.TypeRow:
		if r, ok := v.(table.Row); ok && len(r) == len(t.Fields) {
			out := make([]any, len(r))
			for i, f := range t.Fields {
				x, err := toORC(r[i], f.Type)
				if err != nil {
					return nil, err
				}
				out[i] = x
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("value %T for Paimon type %s", v, t)
}

// orcWriterOptions derives the ORC writer settings of a data file as
// Paimon's OrcFileFormat does (table.ORCWriterOptions, with
// file.compression).
func orcWriterOptions(topts *table.Options, options map[string]string) (orc.WriterOptions, error) {
	o, err := table.ORCWriterOptions(options, topts, table.OptFileCompression)
	if err != nil {
		return o, fmt.Errorf("not supported: %w", err)
	}
	return o, nil
}

// CheckWriter reports what would make a writer of these columns with
// these table options fail before it writes a row: for ORC tables, an
// orc.* option Java would refuse or a column type Paimon does not write
// to ORC.
func CheckWriter(fields table.RowType, options map[string]string) error {
	topts, err := table.ParseOptions(options)
	if err != nil {
		return err
	}
	if topts.FileFormat != "orc" {
		return nil
	}
	if _, err := orcWriterOptions(topts, options); err != nil {
		return err
	}
	if _, err := orcSchemaOf(fields); err != nil {
		return err
	}
	return nil
}

// countingWriter counts what reaches the output file.
type countingWriter struct {
	w fileio.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// orcFileWriter writes rows of a fixed column layout into one ORC file;
// statistics are collected from the Go values as for Parquet.
type orcFileWriter struct {
	path   string
	out    fileio.Writer
	cw     *countingWriter
	w      *orc.Writer
	fields table.RowType
	colls  []*colCollector
	row    []any
	rows   int64
	closed bool
	decs   []decodeFunc // batch column decoders, set by the first batch
	perSec []int64      // parts of a second an INT64 TIMESTAMP batch column counts (initBatch)
	puts   []orcPut     // how each batch column is written, set by the first batch
}

func newORCWriter(ctx context.Context, fio fileio.FileIO, path string, fields table.RowType, topts *table.Options, options map[string]string) (*orcFileWriter, error) {
	schema, err := orcSchemaOf(fields)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	opts, err := orcWriterOptions(topts, options)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	modes, err := statsModes(fields, options)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	w := &orcFileWriter{path: path, fields: fields, row: make([]any, len(fields))}
	for i, f := range fields {
		w.colls = append(w.colls, newCollector(f.Type, modes[i]))
	}
	out, err := fio.Create(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("create data file %s: %w", path, err)
	}
	w.out = out
	w.cw = &countingWriter{w: out}
	if w.w, err = orc.NewWriter(w.cw, schema, opts); err != nil {
		out.Abort()
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	return w, nil
}

func (w *orcFileWriter) write(row []any) error {
	for i, f := range w.fields {
		x, err := toORC(row[i], f.Type)
		if err != nil {
			return fmt.Errorf("write data file %s: column %s: %w", w.path, f.Name, err)
		}
		w.row[i] = x
	}
	if err := w.w.Write(w.row); err != nil {
		return fmt.Errorf("write data file %s: %w", w.path, err)
	}
	for i, c := range w.colls {
		c.add(row[i])
	}
	w.rows++
	return nil
}

func (w *orcFileWriter) initBatch(fields table.RowType) error {
	if w.decs != nil {
		return nil
	}
	layout, err := parquetSchema(fields)
	if err != nil {
		return fmt.Errorf("data file %s: %w", w.path, err)
	}
	leaves := layout.schema.Columns()
	if len(leaves) != len(fields) {
		return fmt.Errorf("data file %s: batches need flat columns", w.path)
	}
	for i, f := range fields {
		leaf, ok := layout.schema.Lookup(leaves[i]...)
		if !ok {
			return fmt.Errorf("data file %s: column %s missing from its layout", w.path, f.Name)
		}
		dec, err := leafDecoder(f.Type, leaf.Node.Type())
		if err != nil {
			return fmt.Errorf("data file %s: column %s: %w", w.path, f.Name, err)
		}
		w.decs = append(w.decs, dec)
		// Seconds' parts of an INT64 TIMESTAMP column, by the unit the
		// codec's batches count it in (int64TimestampUnit, as Codec).
		var perSec int64
		if (f.Type.Root == table.TypeTimestamp || f.Type.Root == table.TypeTimestampLTZ) && leaf.Node.Type().Kind() == parquet.Int64 {
			perSec = [...]int64{1: 1_000, 2: 1_000_000, 3: 1_000_000_000}[int64TimestampUnit(f.Type, leaf.Node.Type())]
		}
		w.perSec = append(w.perSec, perSec)
	}
	return nil
}

// orcPut says how writeBatch hands a batch column's values to the ORC
// writer without a Go value per entry; orcPutValue decodes to the Go value
// and takes the row path's conversion (toORC).
type orcPut uint8

const (
	orcPutValue orcPut = iota
	orcPutBool
	orcPutI32 // TINYINT, SMALLINT, INT, DATE, TIME in Vec.I32 (the ORC writer range-checks)
	orcPutI64
	orcPutF32
	orcPutF64
	orcPutBytes
	orcPutDecI32 // DECIMAL(p <= 9): unscaled in Vec.I32
	orcPutDecI64 // DECIMAL(p <= 18): unscaled in Vec.I64
	orcPutTs     // TIMESTAMP in Vec.I64, in the unit of orcFileWriter.perSec
)

func orcPutOf(t table.DataType, k parquet.Kind) orcPut {
	switch {
	case t.Root == table.TypeBoolean && k == parquet.Boolean:
		return orcPutBool
	case (t.Root == table.TypeTinyInt || t.Root == table.TypeSmallInt || t.Root == table.TypeInt ||
		t.Root == table.TypeDate || t.Root == table.TypeTime) && k == parquet.Int32:
		return orcPutI32
	case t.Root == table.TypeBigInt && k == parquet.Int64:
		return orcPutI64
	case t.Root == table.TypeFloat && k == parquet.Float:
		return orcPutF32
	case t.Root == table.TypeDouble && k == parquet.Double:
		return orcPutF64
	case (t.Root == table.TypeChar || t.Root == table.TypeVarChar || t.Root == table.TypeBinary || t.Root == table.TypeVarBinary) && k == parquet.ByteArray:
		return orcPutBytes
	case t.Root == table.TypeDecimal && k == parquet.Int32:
		return orcPutDecI32
	case t.Root == table.TypeDecimal && k == parquet.Int64:
		return orcPutDecI64
	case (t.Root == table.TypeTimestamp || t.Root == table.TypeTimestampLTZ) && k == parquet.Int64:
		return orcPutTs
	}
	return orcPutValue
}

// writeBatch writes rows [from, to) of b into the ORC writer a column at
// a time, in runs that end where the writer's row groups end, each value
// straight from its batch column (batches come in Parquet's physical
// layout); the file is the one the row path writes for the same rows, but
// for where a stripe ends (checked per run, not per row). Types without a
// direct form (nanosecond timestamps, wide decimals, nested types) take
// the row path's conversion per value.
func (w *orcFileWriter) writeBatch(b *Batch, from, to int) error {
	if len(b.Cols) != len(w.fields) {
		return fmt.Errorf("write data file %s: batch has %d columns, file %d", w.path, len(b.Cols), len(w.fields))
	}
	if from < 0 || to > b.N {
		return fmt.Errorf("write data file %s: rows [%d, %d) of a batch of %d", w.path, from, to, b.N)
	}
	if w.puts == nil {
		for c := range b.Cols {
			w.puts = append(w.puts, orcPutOf(w.fields[c].Type, b.Cols[c].Kind))
		}
	}
	for i := from; i < to; {
		n, err := w.w.BeginRows(to - i)
		if err != nil {
			return fmt.Errorf("write data file %s: %w", w.path, err)
		}
		for c := range b.Cols {
			if err := w.putRun(&b.Cols[c], c, i, n); err != nil {
				return fmt.Errorf("write data file %s: column %s: %w", w.path, w.fields[c].Name, err)
			}
		}
		if err := w.w.EndRows(n); err != nil {
			return fmt.Errorf("write data file %s: %w", w.path, err)
		}
		w.rows += int64(n)
		i += n
	}
	for c := range b.Cols {
		if err := w.colls[c].addVec(&b.Cols[c], from, to, w.decs[c]); err != nil {
			return fmt.Errorf("write data file %s: column %s: %w", w.path, w.fields[c].Name, err)
		}
	}
	return nil
}

// putRun hands rows [i, i+n) of batch column c to the ORC writer.
func (w *orcFileWriter) putRun(col *Vec, c, i, n int) error {
	var null []bool
	if col.Null != nil {
		null = col.Null[i : i+n]
	}
	switch w.puts[c] {
	case orcPutBool:
		return w.w.PutBools(c, n, col.Bool[i:], null)
	case orcPutI32:
		return w.w.PutInt32s(c, n, col.I32[i:], null)
	case orcPutI64:
		return w.w.PutInts(c, n, col.I64[i:], null)
	case orcPutF32:
		return w.w.PutFloat32s(c, n, col.F32[i:], null)
	case orcPutF64:
		return w.w.PutFloat64s(c, n, col.F64[i:], null)
	case orcPutBytes:
		return w.w.PutByteArrays(c, n, col.Bytes, col.Offs[i:i+n+1], null)
	case orcPutDecI32:
		return w.w.PutDecimal32s(c, n, col.I32[i:], null)
	case orcPutDecI64:
		return w.w.PutDecimal64s(c, n, col.I64[i:], null)
	case orcPutTs:
		return w.w.PutTimestamps(c, n, col.I64[i:], w.perSec[c], null)
	}
	for r := i; r < i+n; r++ {
		if col.IsNull(r) {
			w.w.PutNull(c)
			continue
		}
		x, err := w.decs[c](col.value(r))
		if err != nil {
			return err
		}
		if x, err = toORC(x, w.fields[c].Type); err != nil {
			return err
		}
		if err := w.w.PutValue(c, x); err != nil {
			return err
		}
	}
	return nil
}

func (w *orcFileWriter) close() (int64, error) {
	if w.closed {
		return 0, errors.New("data file writer already closed")
	}
	w.closed = true
	err := w.w.Close()
	if err == nil {
		err = w.out.Close()
	}
	if err != nil {
		w.out.Abort()
		return 0, fmt.Errorf("write data file %s: %w", w.path, err)
	}
	return w.cw.n, nil
}

func (w *orcFileWriter) abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.out.Abort()
}

func (w *orcFileWriter) stats(from, to int) Stats {
	s := Stats{Min: make(table.Row, to-from), Max: make(table.Row, to-from), NullCounts: make([]*int64, to-from)}
	for i := from; i < to; i++ {
		s.Min[i-from], s.Max[i-from], s.NullCounts[i-from] = w.colls[i].result()
	}
	return s
}

func (w *orcFileWriter) estimated() int64          { return w.w.EstimatedSize() }
func (w *orcFileWriter) rowCount() int64           { return w.rows }
func (w *orcFileWriter) filePath() string          { return w.path }
func (w *orcFileWriter) batchDec(j int) decodeFunc { return w.decs[j] }
