package scan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/compactd/compactd/internal/javacompat"
	"github.com/compactd/compactd/table"
)

// AppendJSON appends row as one JSON object in the canonical form shared with
// the interop oracles (interop/README.md): columns by name in table order,
// integers as numbers, DECIMAL as a plain string with the type's scale,
// DATE "2006-01-02", TIME "15:04:05.000", TIMESTAMP "2006-01-02T15:04:05.000000000",
// binary as base64, non-finite floats as strings, MAP/MULTISET as [key, value]
// pairs sorted by the key's JSON text.
func AppendJSON(dst []byte, rowType table.RowType, row table.Row) ([]byte, error) {
	dst = append(dst, '{')
	for i, f := range rowType {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendKey(dst, f.Name)
		var v any
		if i < len(row) {
			v = row[i]
		}
		var err error
		if dst, err = appendValue(dst, f.Type, v); err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
	}
	return append(dst, '}'), nil
}

// appendKey appends a column name and its colon.
func appendKey(dst []byte, name string) []byte {
	if plainASCII(name) {
		// What strconv.AppendQuote writes for it, without its
		// rune-by-rune escaping pass (a fifth of a scan's CPU).
		dst = append(dst, '"')
		dst = append(dst, name...)
		return append(dst, '"', ':')
	}
	dst = strconv.AppendQuote(dst, name)
	return append(dst, ':')
}

// plainASCII reports whether s is printable ASCII that both
// encoding/json and strconv.Quote write unchanged between quotes.
func plainASCII[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// appendString appends s (a string, or a string's bytes as a batch
// column holds them) as a JSON string.
func appendString[T string | []byte](dst []byte, s T) []byte {
	// Most strings are printable ASCII that encoding/json leaves as is;
	// copy those without Marshal's allocation and escaping pass.
	if plainASCII(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	b, _ := json.Marshal(string(s))
	return append(dst, b...)
}

// appendBinary appends b as a base64 JSON string. Base64's alphabet is
// plainASCII, so this is appendString of the encoded text without the
// intermediate string.
func appendBinary(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendDate appends a DATE (days since 1970-01-01) as "2006-01-02".
func appendDate(dst []byte, days int32) []byte {
	dst = append(dst, '"')
	dst = appendUTC(dst, int64(days)*86400, 0, false)
	return append(dst, '"')
}

// appendTime appends a TIME (milliseconds of the day) as "15:04:05.000".
func appendTime(dst []byte, ms32 int32) []byte {
	ms := int64(ms32)
	dst = append(dst, '"')
	dst = fmt.Appendf(dst, "%02d:%02d:%02d.%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
	return append(dst, '"')
}

// appendTimestamp appends a TIMESTAMP as "2006-01-02T15:04:05.000000000".
func appendTimestamp(dst []byte, ts table.Timestamp) []byte {
	dst = append(dst, '"')
	// ts.Time()'s seconds and nanoseconds.
	dst = appendUTC(dst, javacompat.FloorDiv(ts.Millis, 1000), javacompat.FloorMod(ts.Millis, 1000)*table.NanosPerMilli+int64(ts.NanoOfMilli), true)
	return append(dst, '"')
}

const (
	dateLayout     = "2006-01-02"
	dateTimeLayout = "2006-01-02T15:04:05.000000000"
)

// appendUTC appends the instant sec seconds and nsec nanoseconds after the
// epoch as time.Unix(sec, nsec).UTC().AppendFormat does with dateLayout,
// or with dateTimeLayout when clock is set. Formatting through time.Time
// was a quarter of a wide scan's CPU (#19); years 0 to 9999 (four digits,
// no sign) and nsec within a second are written here, other instants go
// through time as before. TestAppendUTCMatchesTime compares the two.
func appendUTC(dst []byte, sec, nsec int64, clock bool) []byte {
	days := javacompat.FloorDiv(sec, 86400)
	y, m, d := javacompat.CivilFromDays(days)
	if y < 0 || y > 9999 || nsec < 0 || nsec >= 1e9 {
		layout := dateLayout
		if clock {
			layout = dateTimeLayout
		}
		return time.Unix(sec, nsec).UTC().AppendFormat(dst, layout)
	}
	dst = appendDigits(dst, y, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, int64(m), 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, int64(d), 2)
	if !clock {
		return dst
	}
	s := sec - days*86400
	dst = append(dst, 'T')
	dst = appendDigits(dst, s/3600, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, s/60%60, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, s%60, 2)
	dst = append(dst, '.')
	return appendDigits(dst, nsec, 9)
}

// appendDigits appends v (0 <= v < 10^width) as width decimal digits.
func appendDigits(dst []byte, v int64, width int) []byte {
	n := len(dst)
	for range width {
		dst = append(dst, 0)
	}
	for i := len(dst) - 1; i >= n; i-- {
		dst[i] = byte('0' + v%10)
		v /= 10
	}
	return dst
}

// AppendValue appends one value of type t in the canonical JSON form.
func AppendValue(dst []byte, t table.DataType, v any) ([]byte, error) { return appendValue(dst, t, v) }

func appendValue(dst []byte, t table.DataType, v any) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	switch t.Root {
	case table.TypeBoolean:
		return strconv.AppendBool(dst, v.(bool)), nil
	case table.TypeTinyInt:
		return strconv.AppendInt(dst, int64(v.(int8)), 10), nil
	case table.TypeSmallInt:
		return strconv.AppendInt(dst, int64(v.(int16)), 10), nil
	case table.TypeInt:
		return strconv.AppendInt(dst, int64(v.(int32)), 10), nil
	case table.TypeBigInt:
		return strconv.AppendInt(dst, v.(int64), 10), nil
	case table.TypeFloat:
		return appendFloat(dst, float64(v.(float32)), 32), nil
	case table.TypeDouble:
		return appendFloat(dst, v.(float64), 64), nil
	case table.TypeChar, table.TypeVarChar:
		return appendString(dst, v.(string)), nil
	case table.TypeBinary, table.TypeVarBinary, table.TypeVariant, table.TypeBlob:
		return appendBinary(dst, v.([]byte)), nil
	case table.TypeDecimal:
		d := v.(table.Decimal)
		return appendString(dst, decimalString(d.Unscaled, t.Scale, d.Scale)), nil
	case table.TypeDate:
		return appendDate(dst, v.(int32)), nil
	case table.TypeTime:
		return appendTime(dst, v.(int32)), nil
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		return appendTimestamp(dst, v.(table.Timestamp)), nil
	case table.TypeArray, table.TypeVector:
		arr := v.([]any)
		dst = append(dst, '[')
		for i, e := range arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, *t.Element, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case table.TypeMap, table.TypeMultiset:
		m := v.(*table.Map)
		kt, vt := t.Key, t.Value
		if t.Root == table.TypeMultiset {
			kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
		}
		pairs := make([][2][]byte, len(m.Keys))
		for i := range m.Keys {
			k, err := appendValue(nil, *kt, m.Keys[i])
			if err != nil {
				return nil, err
			}
			val, err := appendValue(nil, *vt, m.Values[i])
			if err != nil {
				return nil, err
			}
			pairs[i] = [2][]byte{k, val}
		}
		sort.SliceStable(pairs, func(i, j int) bool { return bytes.Compare(pairs[i][0], pairs[j][0]) < 0 })
		dst = append(dst, '[')
		for i, p := range pairs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = append(dst, p[0]...)
			dst = append(dst, ',')
			dst = append(dst, p[1]...)
			dst = append(dst, ']')
		}
		return append(dst, ']'), nil
	case table.TypeRow:
		return AppendJSON(dst, t.Fields, v.(table.Row))
	}
	return nil, fmt.Errorf("cannot encode %s", t)
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	// Java widens a float to double before printing; print the double.
	// Keep a decimal point so that a JSON reader sees a float, as Java's
	// Double.toString always prints one.
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	// bytes.ContainsAny(dst[start:], ".eEn") without building its set on
	// every call.
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' || c == 'E' || c == 'n' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

func decimalString(unscaled *big.Int, typeScale, valueScale int) string {
	if unscaled == nil {
		return "null"
	}
	u := new(big.Int).Set(unscaled)
	if valueScale < typeScale {
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(typeScale-valueScale)), nil))
	}
	return string(appendDecimalDigits(nil, u.Sign() < 0, new(big.Int).Abs(u).Append(nil, 10), typeScale))
}

// appendDecimalInt appends a DECIMAL stored as an unscaled integer of the
// type's scale (the INT32 and INT64 forms) as decimalString writes it,
// quoted, without a big.Int.
func appendDecimalInt(dst []byte, unscaled int64, scale int) []byte {
	abs := uint64(unscaled)
	if unscaled < 0 {
		abs = -abs // two's complement: right for math.MinInt64 too
	}
	var digits [20]byte
	dst = append(dst, '"')
	dst = appendDecimalDigits(dst, unscaled < 0, strconv.AppendUint(digits[:0], abs, 10), scale)
	return append(dst, '"')
}

// appendDecimalDigits appends a decimal of absolute value digits (base 10,
// no sign) times 10^-scale: a minus sign when neg, at least one digit before
// the point, exactly scale digits after it.
func appendDecimalDigits(dst []byte, neg bool, digits []byte, scale int) []byte {
	if neg {
		dst = append(dst, '-')
	}
	if scale <= 0 {
		return append(dst, digits...)
	}
	if len(digits) <= scale {
		// Zero-padded to scale+1 digits: "0." and the padding.
		dst = append(dst, '0', '.')
		for n := len(digits); n < scale; n++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-scale:]...)
}
