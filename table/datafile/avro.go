package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"
)

// avroSource reads an Avro data file (Paimon's RowType → Avro mapping,
// spec §4.2) record by record; memory is bounded by one Avro block.
type avroSource struct {
	path string
	f    fileio.Reader
	dec  *ocf.Decoder
	cols []avroCol
	pos  int64
}

type avroCol struct {
	name      string
	typ       *table.DataType // file type; nil: null column
	cast      castFunc
	fromValue int
}

func newAvroSource(ctx context.Context, fio fileio.FileIO, path string, fileFields table.RowType, wants []want) (source, error) {
	f, err := fio.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open data file %s: %w", path, err)
	}
	dec, err := safeAvroDecoder(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open data file %s: %w", path, err)
	}
	s := &avroSource{path: path, f: f, dec: dec}
	names := map[string]bool{}
	if rec, ok := recordFieldNames(dec); ok {
		names = rec
	}
	for _, w := range wants {
		c := avroCol{fromValue: w.fromValue}
		if w.fileField != nil && w.fromValue < 0 {
			if !names[w.fileField.Name] && w.keyFallback >= 0 {
				c.fromValue = w.keyFallback
			} else if names[w.fileField.Name] {
				c.name = w.fileField.Name
				t := w.fileField.Type
				c.typ = &t
				cf, err := castFor(w.fileField.Type, w.readType)
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

func safeAvroDecoder(f io.Reader) (dec *ocf.Decoder, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt Avro file: %v", r)
		}
	}()
	return ocf.NewDecoder(f)
}

// recordFieldNames lists the top-level fields of the file's writer schema.
func recordFieldNames(dec *ocf.Decoder) (map[string]bool, bool) {
	rec, ok := dec.Schema().(*avro.RecordSchema)
	if !ok {
		return nil, false
	}
	out := map[string]bool{}
	for _, f := range rec.Fields() {
		out[f.Name()] = true
	}
	return out, true
}

func (s *avroSource) next(out []any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("read data file %s: corrupt Avro data: %v", s.path, r)
		}
	}()
	if !s.dec.HasNext() {
		if err := s.dec.Error(); err != nil {
			return fmt.Errorf("read data file %s: %w", s.path, err)
		}
		return io.EOF
	}
	var rec map[string]any
	if err := s.dec.Decode(&rec); err != nil {
		return fmt.Errorf("read data file %s: record %d: %w", s.path, s.pos, err)
	}
	s.pos++
	for i, c := range s.cols {
		out[i] = nil
		if c.typ == nil {
			continue
		}
		v, err := fromAvro(rec[c.name], *c.typ)
		if err != nil {
			return fmt.Errorf("read data file %s: record %d column %s: %w", s.path, s.pos-1, c.name, err)
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

// fromAvro converts a value decoded generically by hamba/avro into the Go
// value of Paimon type t.
func fromAvro(v any, t table.DataType) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.Nullable {
		// nullable columns are ["null", T] unions, decoded as {branch: value}
		if m, ok := v.(map[string]any); ok && len(m) == 1 {
			for _, x := range m {
				v = x
			}
		}
		if v == nil {
			return nil, nil
		}
	}
	bad := func() (any, error) { return nil, fmt.Errorf("%w %T for %s", errAvroType, v, t) }
	switch t.Root {
	case table.TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt:
		n, ok := v.(int)
		if !ok {
			return bad()
		}
		switch t.Root {
		case table.TypeTinyInt:
			return int8(n), nil
		case table.TypeSmallInt:
			return int16(n), nil
		}
		return int32(n), nil
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
	case table.TypeDate:
		switch x := v.(type) {
		case time.Time:
			return int32(table.FloorDiv(x.Unix(), 86400)), nil
		case int:
			return int32(x), nil
		}
	case table.TypeTime:
		switch x := v.(type) {
		case time.Duration:
			return int32(x.Milliseconds()), nil
		case int:
			return int32(x), nil
		}
	case table.TypeDecimal:
		switch x := v.(type) {
		case *big.Rat:
			u := new(big.Rat).Mul(x, new(big.Rat).SetInt(pow10(t.Scale)))
			if !u.IsInt() {
				return nil, fmt.Errorf("decimal %s has more than %d fraction digits", x, t.Scale)
			}
			return table.Decimal{Unscaled: new(big.Int).Set(u.Num()), Precision: t.Precision, Scale: t.Scale}, nil
		case []byte:
			return table.Decimal{Unscaled: bigFromTwosComplement(x), Precision: t.Precision, Scale: t.Scale}, nil
		}
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		switch x := v.(type) {
		case time.Time:
			// Not UnixNano: it overflows outside 1677-2262.
			return table.TimestampFromTime(x), nil
		case int64:
			// local-timestamp-millis/micros are not converted by the
			// decoder; the precision says which.
			if t.Precision <= 3 {
				return table.Timestamp{Millis: x}, nil
			}
			return table.TimestampFromMicros(x), nil
		}
	case table.TypeArray:
		arr, ok := v.([]any)
		if !ok {
			return bad()
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			x, err := fromAvro(e, *t.Element)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case table.TypeMap, table.TypeMultiset:
		kt, vt := t.Key, t.Value
		if t.Root == table.TypeMultiset {
			kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
		}
		m := &table.Map{Keys: []any{}, Values: []any{}}
		switch x := v.(type) {
		case map[string]any: // string keys: an Avro map, order not kept
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				val, err := fromAvro(x[k], *vt)
				if err != nil {
					return nil, err
				}
				m.Keys = append(m.Keys, k)
				m.Values = append(m.Values, val)
			}
		case []any: // other keys: an array of {key, value} records
			for _, e := range x {
				rec, ok := e.(map[string]any)
				if !ok {
					return bad()
				}
				k, err := fromAvro(rec["key"], kt.WithNullable(false))
				if err != nil {
					return nil, err
				}
				val, err := fromAvro(rec["value"], *vt)
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
	case table.TypeRow:
		rec, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		row := make(table.Row, len(t.Fields))
		for i, f := range t.Fields {
			x, err := fromAvro(rec[f.Name], f.Type)
			if err != nil {
				return nil, err
			}
			row[i] = x
		}
		return row, nil
	}
	return bad()
}
