package datafile

import (
	"context"
	"fmt"
	"io"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/cast"
)

// orcSource reads an ORC data file (Paimon's OrcTypeUtil mapping) stripe
// by stripe through internal/orc; memory is bounded by one decoded
// stripe. Columns are matched by name, as Java's reader does for files
// without field ids (Paimon before 1.0).
type orcSource struct {
	path   string
	f      fileio.Reader
	of     *orc.File
	stripe int
	st     *orc.Stripe
	row    int
	cols   []orcCol
	top    map[int]bool
	pos    int64
}

type orcCol struct {
	id        int // ORC column id; -1: null column
	typ       *table.DataType
	cast      cast.Func
	fromValue int
}

// openORC opens the ORC data file at path and reads its tail; the caller
// closes f.
func openORC(ctx context.Context, fio fileio.FileIO, path string) (fileio.Reader, *orc.File, error) {
	f, err := fio.Open(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("open data file %s: %w", path, err)
	}
	of, err := orc.Open(f, f.Size())
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("open data file %s: %w", path, err)
	}
	return f, of, nil
}

func newORCSource(ctx context.Context, fio fileio.FileIO, path string, wants []want) (source, error) {
	f, of, err := openORC(ctx, fio, path)
	if err != nil {
		return nil, err
	}
	root := of.Types[0]
	byName := make(map[string]int, len(root.FieldNames))
	for k, n := range root.FieldNames {
		byName[n] = k
	}
	s := &orcSource{path: path, f: f, of: of, top: map[int]bool{}}
	for _, w := range wants {
		c := orcCol{id: -1, fromValue: w.fromValue}
		if w.fileField != nil && w.fromValue < 0 {
			k, inFile := byName[w.fileField.Name]
			if !inFile && w.keyFallback >= 0 {
				c.fromValue = w.keyFallback
			} else if inFile {
				c.id = root.Subtypes[k]
				if err := orcTypeFits(of, c.id, w.fileField.Type); err != nil {
					f.Close()
					return nil, fmt.Errorf("data file %s column %s: %w", path, w.fileField.Name, err)
				}
				t := w.fileField.Type
				c.typ = &t
				cf, err := cast.For(w.fileField.Type, w.readType)
				if err != nil {
					f.Close()
					return nil, fmt.Errorf("data file %s column %s: %w", path, w.fileField.Name, err)
				}
				c.cast = cf
				s.top[k] = true
			}
		}
		s.cols = append(s.cols, c)
	}
	return s, nil
}

// orcTypeFits checks that ORC column id can hold Paimon type t, so that a
// file whose columns do not match its schema fails on open, not with a
// wrong value.
func orcTypeFits(of *orc.File, id int, t table.DataType) error {
	ot := of.Types[id]
	ok := false
	switch t.Root {
	case table.TypeBoolean:
		ok = ot.Kind == orc.Boolean
	case table.TypeTinyInt:
		ok = ot.Kind == orc.Byte
	case table.TypeSmallInt:
		ok = ot.Kind == orc.Short
	case table.TypeInt, table.TypeTime:
		ok = ot.Kind == orc.Int
	case table.TypeBigInt:
		ok = ot.Kind == orc.Long
	case table.TypeFloat:
		ok = ot.Kind == orc.Float
	case table.TypeDouble:
		ok = ot.Kind == orc.Double
	case table.TypeChar, table.TypeVarChar:
		ok = ot.Kind == orc.String || ot.Kind == orc.Varchar || ot.Kind == orc.Char
	case table.TypeBinary, table.TypeVarBinary, table.TypeBlob:
		ok = ot.Kind == orc.Binary
	case table.TypeDecimal:
		ok = ot.Kind == orc.Decimal && ot.Scale == t.Scale
	case table.TypeDate:
		ok = ot.Kind == orc.Date
	case table.TypeTimestamp:
		ok = ot.Kind == orc.Timestamp
	case table.TypeTimestampLTZ:
		// Paimon writes TIMESTAMP_INSTANT; a plain TIMESTAMP (Paimon's
		// legacy LTZ mapping) is taken only from a UTC writer (checked per
		// stripe), where both mean the same instant.
		ok = ot.Kind == orc.TimestampInstant || ot.Kind == orc.Timestamp
	case table.TypeArray:
		ok = ot.Kind == orc.List
		if ok {
			return orcTypeFits(of, ot.Subtypes[0], *t.Element)
		}
	case table.TypeMap, table.TypeMultiset:
		ok = ot.Kind == orc.Map
		if ok {
			kt, vt := t.Key, t.Value
			if t.Root == table.TypeMultiset {
				kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
			}
			if err := orcTypeFits(of, ot.Subtypes[0], *kt); err != nil {
				return err
			}
			return orcTypeFits(of, ot.Subtypes[1], *vt)
		}
	case table.TypeRow:
		ok = ot.Kind == orc.Struct
		if ok {
			for _, f := range t.Fields {
				for k, n := range ot.FieldNames {
					if n == f.Name {
						if err := orcTypeFits(of, ot.Subtypes[k], f.Type); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}
	}
	if !ok {
		return fmt.Errorf("not supported: ORC type %s for Paimon type %s", ot.Kind, t)
	}
	return nil
}

func (s *orcSource) next(out []any) error {
	for s.st == nil || s.row >= s.st.NumRows {
		if s.stripe >= len(s.of.Stripes) {
			return io.EOF
		}
		st, err := s.of.ReadStripe(s.stripe, func(k int) bool { return s.top[k] })
		if err != nil {
			return fmt.Errorf("read data file %s: %w", s.path, err)
		}
		s.stripe++
		s.st, s.row = st, 0
	}
	r := s.row
	s.row++
	s.pos++
	for i, c := range s.cols {
		out[i] = nil
		if c.typ == nil {
			continue
		}
		v, err := fromORC(s.st, s.st.Columns[c.id], r, *c.typ)
		if err != nil {
			return fmt.Errorf("read data file %s: row %d: %w", s.path, s.pos-1, err)
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

func (s *orcSource) close() error { return s.f.Close() }

// fromORC converts entry i of ORC column c into the Go value of Paimon
// type t (orcTypeFits has checked the pairing).
func fromORC(st *orc.Stripe, c *orc.Column, i int, t table.DataType) (any, error) {
	if c.Null(i) {
		return nil, nil
	}
	j := c.Index(i)
	switch t.Root {
	case table.TypeBoolean:
		return c.Bools[j], nil
	case table.TypeTinyInt:
		return int8(c.Ints32[j]), nil
	case table.TypeSmallInt:
		return int16(c.Ints32[j]), nil
	case table.TypeInt, table.TypeTime, table.TypeDate:
		return c.Ints32[j], nil
	case table.TypeBigInt:
		return c.Ints[j], nil
	case table.TypeFloat:
		return float32(c.Floats[j]), nil
	case table.TypeDouble:
		return c.Floats[j], nil
	case table.TypeChar, table.TypeVarChar:
		return string(c.BytesAt(j)), nil
	case table.TypeBinary, table.TypeVarBinary, table.TypeBlob:
		return c.BytesAt(j), nil
	case table.TypeDecimal:
		return table.Decimal{Unscaled: c.Decimal(j), Precision: t.Precision, Scale: t.Scale}, nil
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		// A TIMESTAMP_LTZ written outside UTC is the instant itself with
		// orc.timestamp-ltz.legacy.type=false, but with Paimon's default
		// (true) the instant the writer's zone gives the UTC wall-clock
		// time, which Java's reader turns back in its own zone; the file
		// does not say which, so such values are refused, not guessed.
		if err := orcZoneOK(st, t); err != nil {
			return nil, err
		}
		ns := int64(c.Nanos[j])
		return table.Timestamp{Millis: c.Secs[j]*1000 + ns/1e6, NanoOfMilli: int32(ns % 1e6)}, nil
	case table.TypeArray:
		lo, hi := c.Offsets[j], c.Offsets[j+1]
		out := make([]any, 0, hi-lo)
		for k := lo; k < hi; k++ {
			v, err := fromORC(st, c.Children[0], k, *t.Element)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case table.TypeMap, table.TypeMultiset:
		kt, vt := t.Key, t.Value
		if t.Root == table.TypeMultiset {
			kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
		}
		lo, hi := c.Offsets[j], c.Offsets[j+1]
		m := &table.Map{Keys: make([]any, 0, hi-lo), Values: make([]any, 0, hi-lo)}
		for k := lo; k < hi; k++ {
			key, err := fromORC(st, c.Children[0], k, *kt)
			if err != nil {
				return nil, err
			}
			val, err := fromORC(st, c.Children[1], k, *vt)
			if err != nil {
				return nil, err
			}
			m.Keys = append(m.Keys, key)
			m.Values = append(m.Values, val)
		}
		return m, nil
	case table.TypeRow:
		row := make(table.Row, len(t.Fields))
		for fi, f := range t.Fields {
			for k, n := range c.Type.FieldNames {
				if n != f.Name {
					continue
				}
				v, err := fromORC(st, c.Children[k], j, f.Type)
				if err != nil {
					return nil, err
				}
				row[fi] = v
			}
		}
		return row, nil
	}
	return nil, fmt.Errorf("not supported: Paimon type %s in an ORC file", t)
}
