package cast

// Casts to CHAR/VARCHAR (numbers, booleans, dates and times, nested types
// rendered as Java's to-string rules do) and the fitting of strings and
// binaries to a target length. The rule dispatch is in cast.go.

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/compactd/compactd/internal/javacompat"
	"github.com/compactd/compactd/table"
)

// toStringCast resolves the rules whose target is a character string.
func toStringCast(from, to table.DataType) Func {
	fr := from.Root
	if isStringType(to) {
		switch {
		case fr == table.TypeDate:
			return func(v any) (any, error) { return javacompat.FormatDate(v.(int32)), nil }
		case fr == table.TypeTime:
			p := from.Precision
			return func(v any) (any, error) { return javacompat.FormatTime(v.(int32), p), nil }
		case isTimestamp(fr):
			p := from.Precision
			return func(v any) (any, error) {
				ts := v.(table.Timestamp)
				return javacompat.FormatTimestamp(ts.Millis, ts.NanoOfMilli, p), nil
			}
		}
	}
	switch {
	case isIntegral(fr) || isApprox(fr) || fr == table.TypeDecimal:
		return func(v any) (any, error) { return fitString(javaNumberString(v), to), nil }
	case fr == table.TypeBoolean:
		return func(v any) (any, error) { return fitString(strconv.FormatBool(v.(bool)), to), nil }
	case isString(fr):
		return func(v any) (any, error) { return fitString(v.(string), to), nil }
	case isBinary(fr):
		// BinaryString.fromBytes: no length applied.
		return func(v any) (any, error) { return string(v.([]byte)), nil }
	case fr == table.TypeArray || fr == table.TypeMap || fr == table.TypeRow:
		// The nested to-string rules build the whole text and apply no
		// target length either.
		f := nestedToString(from)
		if f == nil {
			return nil
		}
		return func(v any) (any, error) {
			var sb strings.Builder
			if err := f(&sb, v); err != nil {
				return nil, err
			}
			return sb.String(), nil
		}
	}
	return nil
}

type appendFunc func(*strings.Builder, any) error

// nestedToString renders ARRAY as [a, b], MAP as {k -> v, ...} and ROW as
// {a, b}, with null for nulls and each element cast to STRING
// (ArrayToStringCastRule, MapToStringCastRule, RowToStringCastRule).
func nestedToString(t table.DataType) appendFunc {
	elem := func(et table.DataType) appendFunc {
		if et.Root == table.TypeArray || et.Root == table.TypeMap || et.Root == table.TypeRow {
			return nestedToString(et)
		}
		c := ruleCast(et, stringType)
		if c == nil {
			return nil
		}
		return func(sb *strings.Builder, v any) error {
			s, err := c(v)
			if err != nil {
				return err
			}
			sb.WriteString(s.(string))
			return nil
		}
	}
	put := func(sb *strings.Builder, f appendFunc, v any) error {
		if v == nil {
			sb.WriteString("null")
			return nil
		}
		return f(sb, v)
	}
	switch t.Root {
	case table.TypeArray:
		ef := elem(*t.Element)
		if ef == nil {
			return nil
		}
		return func(sb *strings.Builder, v any) error {
			sb.WriteByte('[')
			for i, e := range v.([]any) {
				if i > 0 {
					sb.WriteString(", ")
				}
				if err := put(sb, ef, e); err != nil {
					return err
				}
			}
			sb.WriteByte(']')
			return nil
		}
	case table.TypeMap:
		kf, vf := elem(*t.Key), elem(*t.Value)
		if kf == nil || vf == nil {
			return nil
		}
		return func(sb *strings.Builder, v any) error {
			m := v.(*table.Map)
			sb.WriteByte('{')
			for i := range m.Keys {
				if i > 0 {
					sb.WriteString(", ")
				}
				if err := put(sb, kf, m.Keys[i]); err != nil {
					return err
				}
				sb.WriteString(" -> ")
				if err := put(sb, vf, m.Values[i]); err != nil {
					return err
				}
			}
			sb.WriteByte('}')
			return nil
		}
	case table.TypeRow:
		fs := make([]appendFunc, len(t.Fields))
		for i, f := range t.Fields {
			if fs[i] = elem(f.Type); fs[i] == nil {
				return nil
			}
		}
		return func(sb *strings.Builder, v any) error {
			r := v.(table.Row)
			sb.WriteByte('{')
			for i := range fs {
				if i > 0 {
					sb.WriteString(", ")
				}
				if err := put(sb, fs[i], r[i]); err != nil {
					return err
				}
			}
			sb.WriteByte('}')
			return nil
		}
	}
	return nil
}

// javaNumberString is Java's toString of a Byte/Short/Integer/Long/Float/
// Double and Decimal.toString (BigDecimal.toPlainString).
func javaNumberString(v any) string {
	switch x := v.(type) {
	case float32:
		return javacompat.FloatString(float64(x), 32)
	case float64:
		return javacompat.FloatString(x, 64)
	case table.Decimal:
		return plainDecimal(x)
	}
	return strconv.FormatInt(javaLong(v), 10)
}

// fitString is BinaryStringUtils.toCharacterString: cut to the target length
// in characters; a CHAR is padded with spaces.
func fitString(s string, to table.DataType) string {
	n := utf8.RuneCountInString(s)
	if n > to.Length {
		i, k := 0, 0
		for k < to.Length {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			k++
		}
		return s[:i]
	}
	if n < to.Length && to.Root == table.TypeChar {
		return s + strings.Repeat(" ", to.Length-n)
	}
	return s
}

// fitBinary is BinaryStringUtils.toBinaryString: BINARY(n) is cut or padded
// with zero bytes to n, VARBINARY(n) cut to n.
func fitBinary(b []byte, to table.DataType) []byte {
	switch {
	case len(b) == to.Length:
		return b
	case len(b) > to.Length:
		return append([]byte(nil), b[:to.Length]...)
	case to.Root == table.TypeBinary:
		out := make([]byte, to.Length)
		copy(out, b)
		return out
	}
	return b
}
