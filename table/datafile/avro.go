package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/avro"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/cast"
)

// avroSource reads an Avro data file (Paimon's RowType → Avro mapping,
// spec §4.2) record by record through internal/avro, the Avro stack the
// manifests use too; memory is bounded by one Avro block (at most
// avro.MaxDataBlock) and every length in the file by the file's size.
type avroSource struct {
	path string
	f    fileio.Reader
	dec  *avro.Reader
	cols []avroCol
	pos  int64
}

type avroCol struct {
	field     int             // index in the writer schema's top record; -1: null column
	schema    *avro.Schema    // the field's writer schema
	typ       *table.DataType // file type; nil: null column
	cast      cast.Func
	fromValue int
}

func newAvroSource(ctx context.Context, fio fileio.FileIO, path string, fileFields table.RowType, wants []want) (source, error) {
	f, err := fio.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open data file %s: %w", path, err)
	}
	dec, err := avro.NewReader(f, f.Size(), avro.MaxDataBlock)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open data file %s: %w", path, err)
	}
	top := dec.Schema()
	if top.Kind != avro.RecordKind {
		f.Close()
		return nil, fmt.Errorf("open data file %s: %w: top-level Avro schema is not a record", path, avro.ErrCorrupt)
	}
	s := &avroSource{path: path, f: f, dec: dec}
	for _, w := range wants {
		c := avroCol{field: -1, fromValue: w.fromValue}
		if w.fileField != nil && w.fromValue < 0 {
			i, inFile := top.FieldIndex(w.fileField.Name)
			if !inFile && w.keyFallback >= 0 {
				c.fromValue = w.keyFallback
			} else if inFile {
				c.field = i
				c.schema = top.Fields[i].Schema
				t := w.fileField.Type
				c.typ = &t
				cf, err := cast.For(w.fileField.Type, w.readType)
				if err != nil {
					f.Close()
					return nil, fmt.Errorf("data file %s column %s: %w", path, w.fileField.Name, err)
				}
				c.cast = cf
			}
		}
		s.cols = append(s.cols, c)
	}
	return s, nil
}

func (s *avroSource) next(out []any) error {
	v, err := s.dec.Next()
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	if err != nil {
		return fmt.Errorf("read data file %s: record %d: %w", s.path, s.pos, err)
	}
	rec, ok := v.(*avro.Record)
	if !ok {
		return fmt.Errorf("read data file %s: record %d: %w: not a record", s.path, s.pos, avro.ErrCorrupt)
	}
	s.pos++
	for i, c := range s.cols {
		out[i] = nil
		if c.typ == nil {
			continue
		}
		v, err := fromAvro(rec.Values[c.field], c.schema, *c.typ)
		if err != nil {
			return fmt.Errorf("read data file %s: record %d column %s: %w", s.path, s.pos-1, rec.Schema.Fields[c.field].Name, err)
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

func (s *avroSource) close() error { return s.f.Close() }

var errAvroType = errors.New("unexpected Avro value")

// valueBranch returns the schema a non-null value of a union was written
// with: Paimon writes nullable types as ["null", T].
func valueBranch(s *avro.Schema) (*avro.Schema, error) {
	var b *avro.Schema
	for _, x := range s.Branches {
		if x.Kind == avro.Null {
			continue
		}
		if b != nil {
			return nil, fmt.Errorf("%w: union with several non-null branches", errAvroType)
		}
		b = x
	}
	if b == nil {
		return nil, fmt.Errorf("%w: non-null value of a null-only union", errAvroType)
	}
	return b, nil
}

// fromAvro converts a value decoded by internal/avro under writer schema s
// into the Go value of Paimon type t.
func fromAvro(v any, s *avro.Schema, t table.DataType) (any, error) {
	if v == nil {
		return nil, nil
	}
	if s.Kind == avro.Union {
		b, err := valueBranch(s)
		if err != nil {
			return nil, err
		}
		s = b
	}
	bad := func() (any, error) { return nil, fmt.Errorf("%w %T for %s", errAvroType, v, t) }
	switch t.Root {
	case table.TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt:
		n, ok := v.(int32)
		if !ok {
			return bad()
		}
		switch t.Root {
		case table.TypeTinyInt:
			return int8(n), nil
		case table.TypeSmallInt:
			return int16(n), nil
		}
		return n, nil
	case table.TypeBigInt:
		if n, ok := v.(int64); ok {
			return n, nil
		}
	case table.TypeFloat:
		if f, ok := v.(float32); ok {
			return f, nil
		}
	case table.TypeDouble:
		if f, ok := v.(float64); ok {
			return f, nil
		}
	case table.TypeChar, table.TypeVarChar:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case table.TypeBinary, table.TypeVarBinary, table.TypeBlob:
		if b, ok := v.([]byte); ok {
			return b, nil
		}
	case table.TypeDate, table.TypeTime:
		// date: days since 1970; time-millis: milliseconds of the day.
		if n, ok := v.(int32); ok {
			return n, nil
		}
	case table.TypeDecimal:
		// bytes or fixed with logicalType decimal: the big-endian two's
		// complement unscaled value, at the Paimon type's scale.
		if b, ok := v.([]byte); ok {
			return table.Decimal{Unscaled: bigFromTwosComplement(b), Precision: t.Precision, Scale: t.Scale}, nil
		}
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		return avroTimestamp(x, s.Logical, t.Precision), nil
	case table.TypeArray:
		arr, ok := v.([]any)
		if !ok || s.Kind != avro.Array {
			return bad()
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			x, err := fromAvro(e, s.Items, *t.Element)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case table.TypeMap, table.TypeMultiset:
		return avroMap(v, s, t)
	case table.TypeRow:
		rec, ok := v.(*avro.Record)
		if !ok {
			return bad()
		}
		row := make(table.Row, len(t.Fields))
		for i, f := range t.Fields {
			j, ok := rec.Schema.FieldIndex(f.Name)
			if !ok {
				continue
			}
			x, err := fromAvro(rec.Values[j], rec.Schema.Fields[j].Schema, f.Type)
			if err != nil {
				return nil, err
			}
			row[i] = x
		}
		return row, nil
	}
	return bad()
}

// avroTimestamp reads a timestamp long by its logical type; a long without
// one (or local-timestamp-* read by an older decoder) goes by the Paimon
// precision, as Paimon writes millis up to precision 3 and micros above.
func avroTimestamp(x int64, logical string, precision int) table.Timestamp {
	switch logical {
	case "timestamp-millis", "local-timestamp-millis":
		return table.Timestamp{Millis: x}
	case "timestamp-micros", "local-timestamp-micros":
		return table.TimestampFromMicros(x)
	}
	if precision <= 3 {
		return table.Timestamp{Millis: x}
	}
	return table.TimestampFromMicros(x)
}

// avroMap reads MAP and MULTISET values: an Avro map for string keys (its
// order is not kept; keys are sorted), else an array of {key, value}
// records.
func avroMap(v any, s *avro.Schema, t table.DataType) (any, error) {
	kt, vt := t.Key, t.Value
	if t.Root == table.TypeMultiset {
		kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
	}
	bad := func() (any, error) { return nil, fmt.Errorf("%w %T for %s", errAvroType, v, t) }
	m := &table.Map{Keys: []any{}, Values: []any{}}
	switch x := v.(type) {
	case map[string]any:
		if s.Kind != avro.Map {
			return bad()
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			val, err := fromAvro(x[k], s.Items, *vt)
			if err != nil {
				return nil, err
			}
			m.Keys = append(m.Keys, k)
			m.Values = append(m.Values, val)
		}
	case []any:
		if s.Kind != avro.Array {
			return bad()
		}
		for _, e := range x {
			rec, ok := e.(*avro.Record)
			if !ok {
				return bad()
			}
			ki, kok := rec.Schema.FieldIndex("key")
			vi, vok := rec.Schema.FieldIndex("value")
			if !kok || !vok {
				return nil, fmt.Errorf("%w: map entry record without key or value", errAvroType)
			}
			k, err := fromAvro(rec.Values[ki], rec.Schema.Fields[ki].Schema, kt.WithNullable(false))
			if err != nil {
				return nil, err
			}
			val, err := fromAvro(rec.Values[vi], rec.Schema.Fields[vi].Schema, *vt)
			if err != nil {
				return nil, err
			}
			m.Keys = append(m.Keys, k)
			m.Values = append(m.Values, val)
		}
	default:
		return bad()
	}
	return m, nil
}
