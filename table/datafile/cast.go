package datafile

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/compactd/compactd/table"
)

type castFunc func(any) (any, error)

// ErrUnsupportedEvolution is returned (wrapped) when a file's column type
// cannot be converted to the read schema's type.
var ErrUnsupportedEvolution = errors.New("unsupported schema evolution")

// sameType reports whether two types are equal ignoring nullability (of the
// type itself and of nested types) and nested field ids/names are compared.
func sameType(a, b table.DataType) bool {
	if a.Root != b.Root || a.Length != b.Length || a.Precision != b.Precision || a.Scale != b.Scale {
		return false
	}
	switch a.Root {
	case table.TypeArray, table.TypeMultiset:
		return sameType(*a.Element, *b.Element)
	case table.TypeMap:
		return sameType(*a.Key, *b.Key) && sameType(*a.Value, *b.Value)
	case table.TypeRow:
		if len(a.Fields) != len(b.Fields) {
			return false
		}
		for i := range a.Fields {
			if a.Fields[i].ID != b.Fields[i].ID || a.Fields[i].Name != b.Fields[i].Name || !sameType(a.Fields[i].Type, b.Fields[i].Type) {
				return false
			}
		}
	}
	return true
}

func intRank(r table.TypeRoot) int {
	switch r {
	case table.TypeTinyInt:
		return 1
	case table.TypeSmallInt:
		return 2
	case table.TypeInt:
		return 3
	case table.TypeBigInt:
		return 4
	}
	return 0
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

func isString(r table.TypeRoot) bool { return r == table.TypeChar || r == table.TypeVarChar }
func isBinary(r table.TypeRoot) bool { return r == table.TypeBinary || r == table.TypeVarBinary }

// castFor returns the conversion of values read as type from (a file's
// schema) into type to (the read schema) for schema evolution, nil when no
// conversion is needed. Only lossless or Paimon-defined simple casts are
// supported; anything else is refused.
func castFor(from, to table.DataType) (castFunc, error) {
	if sameType(from, to) {
		return nil, nil
	}
	refuse := func() (castFunc, error) {
		return nil, fmt.Errorf("%w: from %s to %s", ErrUnsupportedEvolution, from, to)
	}
	fr, tr := intRank(from.Root), intRank(to.Root)
	switch {
	case fr > 0 && tr > 0:
		if fr > tr {
			return refuse()
		}
		switch to.Root {
		case table.TypeSmallInt:
			return func(v any) (any, error) { return int16(toInt64(v)), nil }, nil
		case table.TypeInt:
			return func(v any) (any, error) { return int32(toInt64(v)), nil }, nil
		default:
			return func(v any) (any, error) { return toInt64(v), nil }, nil
		}
	case fr > 0 && to.Root == table.TypeDouble:
		return func(v any) (any, error) { return float64(toInt64(v)), nil }, nil
	case fr > 0 && fr <= 2 && to.Root == table.TypeFloat:
		return func(v any) (any, error) { return float32(toInt64(v)), nil }, nil
	case fr > 0 && to.Root == table.TypeDecimal:
		return func(v any) (any, error) {
			u := new(big.Int).Mul(big.NewInt(toInt64(v)), pow10(to.Scale))
			return checkedDecimal(u, to)
		}, nil
	case from.Root == table.TypeFloat && to.Root == table.TypeDouble:
		return func(v any) (any, error) { return float64(v.(float32)), nil }, nil
	case isString(from.Root) && isString(to.Root):
		if to.Root == table.TypeChar || to.Length < from.Length {
			// CHAR padding and VARCHAR truncation change values; Java casts
			// them but a compactor must not silently alter data.
			return refuse()
		}
		return nil, nil
	case isString(from.Root) && to.Root == table.TypeVarBinary:
		// Java casts a string to its UTF-8 bytes.
		return func(v any) (any, error) {
			b := []byte(v.(string))
			if len(b) > to.Length {
				return nil, fmt.Errorf("%w: %d bytes do not fit %s", ErrUnsupportedEvolution, len(b), to)
			}
			return b, nil
		}, nil
	case from.Root == table.TypeDate && to.Root == table.TypeTimestamp:
		return func(v any) (any, error) {
			return table.Timestamp{Millis: int64(v.(int32)) * millisPerDay}, nil
		}, nil
	case isBinary(from.Root) && isBinary(to.Root):
		if to.Root == table.TypeBinary || to.Length < from.Length {
			return refuse()
		}
		return nil, nil
	case from.Root == table.TypeDecimal && to.Root == table.TypeDecimal:
		if to.Scale < from.Scale {
			return refuse()
		}
		mul := pow10(to.Scale - from.Scale)
		return func(v any) (any, error) {
			d := v.(table.Decimal)
			return checkedDecimal(new(big.Int).Mul(d.Unscaled, mul), to)
		}, nil
	case from.Root == to.Root && (from.Root == table.TypeTimestamp || from.Root == table.TypeTimestampLTZ):
		if to.Precision >= from.Precision {
			return nil, nil
		}
		return refuse()
	case from.Root == table.TypeTime && to.Root == table.TypeTime:
		return nil, nil
	case from.Root == table.TypeRow && to.Root == table.TypeRow:
		return rowCast(from.Fields, to.Fields)
	case from.Root == to.Root && (from.Root == table.TypeArray || from.Root == table.TypeMultiset):
		ec, err := castFor(*from.Element, *to.Element)
		if err != nil || ec == nil {
			return nil, err
		}
		if from.Root == table.TypeMultiset {
			return func(v any) (any, error) { return castMap(v, ec, nil) }, nil
		}
		return func(v any) (any, error) {
			in := v.([]any)
			out := make([]any, len(in))
			for i, e := range in {
				if e == nil {
					continue
				}
				x, err := ec(e)
				if err != nil {
					return nil, err
				}
				out[i] = x
			}
			return out, nil
		}, nil
	case from.Root == table.TypeMap && to.Root == table.TypeMap:
		kc, err := castFor(*from.Key, *to.Key)
		if err != nil {
			return nil, err
		}
		vc, err := castFor(*from.Value, *to.Value)
		if err != nil {
			return nil, err
		}
		if kc == nil && vc == nil {
			return nil, nil
		}
		return func(v any) (any, error) { return castMap(v, kc, vc) }, nil
	}
	return refuse()
}

func castMap(v any, kc, vc castFunc) (any, error) {
	m := v.(*table.Map)
	out := &table.Map{Keys: make([]any, len(m.Keys)), Values: make([]any, len(m.Values))}
	for i := range m.Keys {
		k, val := m.Keys[i], m.Values[i]
		var err error
		if kc != nil && k != nil {
			if k, err = kc(k); err != nil {
				return nil, err
			}
		}
		if vc != nil && val != nil {
			if val, err = vc(val); err != nil {
				return nil, err
			}
		}
		out.Keys[i], out.Values[i] = k, val
	}
	return out, nil
}

// rowCast maps a nested row of the file's type to the read type by field id.
func rowCast(from, to []table.DataField) (castFunc, error) {
	src := make([]int, len(to))
	casts := make([]castFunc, len(to))
	for i, tf := range to {
		src[i] = -1
		for j, ff := range from {
			if ff.ID == tf.ID {
				src[i] = j
				c, err := castFor(ff.Type, tf.Type)
				if err != nil {
					return nil, fmt.Errorf("field %s: %w", tf.Name, err)
				}
				casts[i] = c
			}
		}
	}
	return func(v any) (any, error) {
		in := v.(table.Row)
		out := make(table.Row, len(to))
		for i, j := range src {
			if j < 0 || in[j] == nil {
				continue
			}
			x := in[j]
			if casts[i] != nil {
				var err error
				if x, err = casts[i](x); err != nil {
					return nil, err
				}
			}
			out[i] = x
		}
		return out, nil
	}, nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

func checkedDecimal(u *big.Int, to table.DataType) (any, error) {
	if new(big.Int).Abs(u).Cmp(pow10(to.Precision)) >= 0 {
		return nil, fmt.Errorf("value %s overflows %s", u, to)
	}
	return table.Decimal{Unscaled: u, Precision: to.Precision, Scale: to.Scale}, nil
}
