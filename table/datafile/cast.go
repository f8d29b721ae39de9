package datafile

// Schema-evolution casts. When a data file was written under an older schema
// (ALTER TABLE ... MODIFY COLUMN TYPE), Java Paimon converts each value of the
// file's type into the table's current type while reading
// (SchemaEvolutionUtil.createCastExecutor), with the rules registered in
// org.apache.paimon.casting.CastExecutors. castFor restates those rules, as
// they are in Paimon 1.4.2 (the interop oracle's version) and 2.0.0, which
// differ only in DateTimeUtils.truncate (2.0.0 counts significant fraction
// digits; taken here). Master since then floors TIMESTAMP to DATE/TIME for
// times before the epoch; the released behaviour is kept until a release
// has it.
//
// Assumptions:
//   - The JVM default time zone is UTC (compactd's deployments and CI). Java
//     uses the default zone for every TIMESTAMP_LTZ conversion; under UTC
//     they equal the TIMESTAMP conversions.
//   - A value Java cannot convert (an unparsable string, NaN to DECIMAL) fails
//     Java's read, so it fails here too, with an error wrapping
//     ErrUnsupportedEvolution. A DECIMAL that does not fit its precision is
//     null in Java (Decimal.fromBigDecimal) and nil here.
//
// Not restated: Java's STRING to ARRAY/MAP/ROW rules (ALTER TABLE cannot
// produce those changes, DataTypeCasts has no such cast; Paimon uses them for
// default values), non-ASCII digits in DECIMAL strings, '+'-signed years of
// five or more digits in TIMESTAMP strings; Double.toString of JDKs before 19
// (the oracle runs JDK 17) which prints a few values with a non-shortest
// digit string (1e23 as 9.999999999999999E22) where this prints the shortest.

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/compactd/compactd/table"
)

type castFunc func(any) (any, error)

// ErrUnsupportedEvolution is returned (wrapped) when a file's column type
// cannot be converted to the read schema's type, or a value of it cannot (as
// in Java Paimon, whose read fails then too).
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

func isIntegral(r table.TypeRoot) bool {
	return r == table.TypeTinyInt || r == table.TypeSmallInt || r == table.TypeInt || r == table.TypeBigInt
}
func isApprox(r table.TypeRoot) bool { return r == table.TypeFloat || r == table.TypeDouble }
func isString(r table.TypeRoot) bool { return r == table.TypeChar || r == table.TypeVarChar }
func isBinary(r table.TypeRoot) bool { return r == table.TypeBinary || r == table.TypeVarBinary }
func isTimestamp(r table.TypeRoot) bool {
	return r == table.TypeTimestamp || r == table.TypeTimestampLTZ
}

// castFor returns the conversion of values read as type from (a file's
// schema) into type to (the read schema) for schema evolution, nil when no
// conversion is needed. What Java Paimon cannot cast is refused with
// ErrUnsupportedEvolution.
func castFor(from, to table.DataType) (castFunc, error) {
	if sameType(from, to) {
		return nil, nil
	}
	refuse := func() (castFunc, error) {
		return nil, fmt.Errorf("%w: from %s to %s", ErrUnsupportedEvolution, from, to)
	}
	// Nested types are converted structurally, as SchemaEvolutionUtil does
	// before it consults the cast rules.
	switch {
	case from.Root == table.TypeRow && to.Root == table.TypeRow:
		return rowCast(from.Fields, to.Fields)
	case from.Root == table.TypeArray && to.Root == table.TypeArray:
		ec, err := castFor(*from.Element, *to.Element)
		if err != nil || ec == nil {
			return nil, err
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
		// Java requires equal key types (DataType.equals, nullability
		// included) and casts only the values.
		if !sameType(*from.Key, *to.Key) || from.Key.Nullable != to.Key.Nullable {
			return refuse()
		}
		vc, err := castFor(*from.Value, *to.Value)
		if err != nil || vc == nil {
			return nil, err
		}
		return func(v any) (any, error) { return castMap(v, vc) }, nil
	}
	if valuesUnchanged(from, to) {
		return nil, nil
	}
	if c := ruleCast(from, to); c != nil {
		return c, nil
	}
	return refuse()
}

// valuesUnchanged reports type changes whose Java cast returns every value
// as it is (under a UTC JVM zone): a string or binary widened to a
// VARCHAR/VARBINARY no shorter, a timestamp to a precision no smaller.
func valuesUnchanged(from, to table.DataType) bool {
	switch {
	case isString(from.Root) && to.Root == table.TypeVarChar,
		isBinary(from.Root) && to.Root == table.TypeVarBinary:
		return to.Length >= from.Length
	case isTimestamp(from.Root) && isTimestamp(to.Root):
		return to.Precision >= from.Precision
	}
	return false
}

func castMap(v any, vc castFunc) (any, error) {
	m := v.(*table.Map)
	out := &table.Map{Keys: m.Keys, Values: make([]any, len(m.Values))}
	for i, val := range m.Values {
		if val != nil {
			var err error
			if val, err = vc(val); err != nil {
				return nil, err
			}
		}
		out.Values[i] = val
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

// valueErr reports a value Java's cast throws on.
func valueErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupportedEvolution, fmt.Sprintf(format, args...))
}

// isStringType reports whether t is Java's VarCharType.STRING_TYPE, a
// nullable VARCHAR of the maximum length: the date/time to string rules are
// registered for that exact type only, so a VARCHAR(n) or STRING NOT NULL
// target finds no rule in Java.
func isStringType(t table.DataType) bool {
	return t.Root == table.TypeVarChar && t.Length == table.MaxLength && t.Nullable
}

var stringType = table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true}

// ruleCast resolves the cast rule for from -> to as CastExecutors.resolve
// does (by target type, then input type), nil when Java has none or its
// rule creates no executor (Java's read fails with "Cannot cast").
func ruleCast(from, to table.DataType) castFunc {
	fr, tr := from.Root, to.Root
	switch {
	case isIntegral(tr) || isApprox(tr):
		switch {
		case isIntegral(fr) || isApprox(fr):
			return numericPrimitiveCast(fr, tr)
		case fr == table.TypeDecimal:
			return decimalToNumericCast(tr)
		case isString(fr):
			return stringToNumericCast(tr)
		case fr == table.TypeBoolean:
			return func(v any) (any, error) { return fromJavaLong(boolInt(v), tr), nil }
		case isTimestamp(fr) && (tr == table.TypeInt || tr == table.TypeBigInt):
			// TimestampToNumericPrimitiveCastRule: seconds since the epoch,
			// Java's long division (towards zero); INT wraps. For
			// TIMESTAMP_LTZ Java goes through toLocalDateTime, which is
			// zone-free, so both kinds give the same number.
			return func(v any) (any, error) {
				return fromJavaLong(v.(table.Timestamp).Millis/1000, tr), nil
			}
		}
	case tr == table.TypeDecimal:
		p, s := to.Precision, to.Scale
		switch {
		case fr == table.TypeDecimal:
			return func(v any) (any, error) {
				d := v.(table.Decimal)
				return decimalOf(d.Unscaled, d.Scale, p, s), nil
			}
		case isIntegral(fr):
			return func(v any) (any, error) { return decimalOf(big.NewInt(javaLong(v)), 0, p, s), nil }
		case isApprox(fr):
			// BigDecimal.valueOf(double) parses Double.toString; a FLOAT is
			// widened to double first (0.1f is 0.10000000149011612).
			return func(v any) (any, error) {
				f := javaDouble(v)
				if math.IsNaN(f) || math.IsInf(f, 0) {
					return nil, valueErr("cannot cast %v to %s", f, to)
				}
				u, sc := decimalDigits(strconv.FormatFloat(f, 'e', -1, 64))
				return decimalOf(u, sc, p, s), nil
			}
		case isString(fr):
			return func(v any) (any, error) {
				u, sc, ok := parseJavaBigDecimal(v.(string))
				if !ok {
					return nil, valueErr("cannot parse %q as %s", v, to)
				}
				if u.Sign() != 0 && (s-sc > maxJavaPow10 || sc-s > maxJavaPow10) {
					// BigInteger.pow overflows in setScale: Java throws.
					return nil, valueErr("cannot cast %q to %s: exponent out of range", v, to)
				}
				return decimalOf(u, sc, p, s), nil
			}
		case fr == table.TypeBoolean:
			return func(v any) (any, error) { return decimalOf(big.NewInt(boolInt(v)), 0, p, s), nil }
		}
	case tr == table.TypeBoolean:
		switch {
		case isIntegral(fr):
			return func(v any) (any, error) { return javaLong(v) != 0, nil }
		case isString(fr):
			return func(v any) (any, error) {
				switch strings.ToLower(v.(string)) {
				case "t", "true", "y", "yes", "1":
					return true, nil
				case "f", "false", "n", "no", "0":
					return false, nil
				}
				return nil, valueErr("cannot parse %q as BOOLEAN", v)
			}
		}
	case isString(tr):
		return toStringCast(from, to)
	case tr == table.TypeDate:
		switch {
		case isString(fr):
			return func(v any) (any, error) { return stringToDate(v.(string)) }
		case fr == table.TypeTimestamp:
			// Released Paimon (up to 2.0.0) divides towards zero, so the
			// last millisecond before the epoch is day 0; master floors.
			return func(v any) (any, error) { return int32(v.(table.Timestamp).Millis / millisPerDay), nil }
		case fr == table.TypeTimestampLTZ:
			// Through LocalDateTime.ofInstant: floored.
			return func(v any) (any, error) { return int32(table.FloorDiv(v.(table.Timestamp).Millis, millisPerDay)), nil }
		}
	case tr == table.TypeTime:
		switch {
		case isString(fr):
			return func(v any) (any, error) { return stringToTime(v.(string)) }
		case fr == table.TypeTimestamp:
			// Java's % up to 2.0.0: negative before the epoch; master floors.
			return func(v any) (any, error) { return int32(v.(table.Timestamp).Millis % millisPerDay), nil }
		case fr == table.TypeTimestampLTZ:
			return func(v any) (any, error) { return int32(table.FloorMod(v.(table.Timestamp).Millis, millisPerDay)), nil }
		}
	case isTimestamp(tr):
		switch {
		case fr == table.TypeInt || fr == table.TypeBigInt:
			// NumericPrimitiveToTimestamp: the number is seconds (long
			// multiplication wraps). Other numeric types create no executor.
			return func(v any) (any, error) { return table.Timestamp{Millis: javaLong(v) * 1000}, nil }
		case fr == table.TypeDate:
			return func(v any) (any, error) { return table.Timestamp{Millis: int64(v.(int32)) * millisPerDay}, nil }
		case fr == table.TypeTime:
			return func(v any) (any, error) { return table.Timestamp{Millis: int64(v.(int32))}, nil }
		case isTimestamp(fr):
			// A precision no smaller is valuesUnchanged.
			p := to.Precision
			return func(v any) (any, error) { return truncateTimestamp(v.(table.Timestamp), p), nil }
		case isString(fr):
			p, ltz := to.Precision, tr == table.TypeTimestampLTZ
			return func(v any) (any, error) { return stringToTimestamp(v.(string), p, ltz) }
		}
	case isBinary(tr):
		if isString(fr) {
			return func(v any) (any, error) { return fitBinary([]byte(v.(string)), to), nil }
		}
		if isBinary(fr) {
			return func(v any) (any, error) { return fitBinary(v.([]byte), to), nil }
		}
	}
	return nil
}

// toStringCast resolves the rules whose target is a character string.
func toStringCast(from, to table.DataType) castFunc {
	fr := from.Root
	if isStringType(to) {
		switch {
		case fr == table.TypeDate:
			return func(v any) (any, error) { return formatDate(v.(int32)), nil }
		case fr == table.TypeTime:
			p := from.Precision
			return func(v any) (any, error) { return formatTime(v.(int32), p), nil }
		case isTimestamp(fr):
			p := from.Precision
			return func(v any) (any, error) { return formatTimestamp(v.(table.Timestamp), p), nil }
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

// ---- numbers

func boolInt(v any) int64 {
	if v.(bool) {
		return 1
	}
	return 0
}

// javaLong is Number.longValue: integers as they are, FLOAT/DOUBLE by Java's
// saturating (long) conversion.
func javaLong(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case float32:
		return javaD2L(float64(x))
	case float64:
		return javaD2L(x)
	}
	panic(fmt.Sprintf("datafile: not a number: %T", v))
}

// javaDouble is Number.doubleValue.
func javaDouble(v any) float64 {
	switch x := v.(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	}
	return float64(javaLong(v))
}

// javaD2L is Java's (long) d: NaN is 0, out of range saturates, otherwise
// truncation towards zero.
func javaD2L(d float64) int64 {
	switch {
	case math.IsNaN(d):
		return 0
	case d >= 9223372036854775807:
		return math.MaxInt64
	case d <= -9223372036854775808:
		return math.MinInt64
	}
	return int64(d)
}

// javaD2I is Java's (int) d.
func javaD2I(d float64) int32 {
	switch {
	case math.IsNaN(d):
		return 0
	case d >= math.MaxInt32:
		return math.MaxInt32
	case d <= math.MinInt32:
		return math.MinInt32
	}
	return int32(d)
}

// fromJavaLong narrows (wrapping, as Java's (int)/(short)/(byte)) or widens
// a long to the integral or approximate type r.
func fromJavaLong(x int64, r table.TypeRoot) any {
	switch r {
	case table.TypeTinyInt:
		return int8(x)
	case table.TypeSmallInt:
		return int16(x)
	case table.TypeInt:
		return int32(x)
	case table.TypeBigInt:
		return x
	case table.TypeFloat:
		return float32(x)
	case table.TypeDouble:
		return float64(x)
	}
	panic(fmt.Sprintf("datafile: not a primitive numeric type: %v", r))
}

// numericPrimitiveCast is NumericPrimitiveCastRule: Number.byteValue() ...
// doubleValue(). For a Float/Double, byteValue and shortValue are
// (byte)(int)d and (short)(int)d: saturate to int, then wrap.
func numericPrimitiveCast(fr, tr table.TypeRoot) castFunc {
	if isIntegral(fr) {
		return func(v any) (any, error) { return fromJavaLong(javaLong(v), tr), nil }
	}
	return func(v any) (any, error) {
		d := javaDouble(v)
		switch tr {
		case table.TypeTinyInt:
			return int8(javaD2I(d)), nil
		case table.TypeSmallInt:
			return int16(javaD2I(d)), nil
		case table.TypeInt:
			return javaD2I(d), nil
		case table.TypeBigInt:
			return javaD2L(d), nil
		case table.TypeFloat:
			return float32(d), nil
		}
		return d, nil
	}
}

// decimalToNumericCast is DecimalToNumericPrimitiveCastRule: integral types
// round towards zero, keep the low 64 bits (BigDecimal.longValue) and then
// wrap; FLOAT is (float) of the DOUBLE result.
func decimalToNumericCast(tr table.TypeRoot) castFunc {
	return func(v any) (any, error) {
		d := v.(table.Decimal)
		switch tr {
		case table.TypeFloat:
			return float32(decimalDouble(d)), nil
		case table.TypeDouble:
			return decimalDouble(d), nil
		}
		q := new(big.Int).Quo(d.Unscaled, pow10(d.Scale))
		return fromJavaLong(lowInt64(q), tr), nil
	}
}

// lowInt64 is BigInteger.longValue: the low 64 bits in two's complement.
func lowInt64(x *big.Int) int64 {
	mask := new(big.Int).SetUint64(math.MaxUint64)
	u := new(big.Int).And(new(big.Int).Abs(x), mask).Uint64()
	if x.Sign() < 0 {
		u = -u
	}
	return int64(u)
}

// decimalDouble is DecimalUtils.doubleValue. A compact decimal (precision up
// to 18) divides its unscaled long by a power of ten in double arithmetic;
// a larger one takes BigDecimal.doubleValue, whose fast path does the same
// when the unscaled value is below 2^52 and the scale below 23, and rounds
// exactly otherwise.
func decimalDouble(d table.Decimal) float64 {
	fits := d.Unscaled.IsInt64()
	if d.Precision <= 18 && fits {
		return float64(d.Unscaled.Int64()) / float64(pow10(d.Scale).Int64())
	}
	if fits {
		u := d.Unscaled.Int64()
		if d.Scale == 0 {
			return float64(u)
		}
		if u > -(1<<52) && u < 1<<52 && d.Scale > 0 && d.Scale < 23 {
			return float64(u) / math.Pow10(d.Scale)
		}
	}
	f, _ := new(big.Rat).SetFrac(d.Unscaled, pow10(d.Scale)).Float64()
	return f
}

// decimalOf is Decimal.fromBigDecimal(unscaled × 10^-scale, p, s): rounded
// HALF_UP to scale s, nil when it then has more than p digits.
func decimalOf(unscaled *big.Int, scale, p, s int) any {
	u := new(big.Int).Set(unscaled)
	// Shortcuts keep absurd exponents ("1e999999999") from building huge
	// powers of ten: past them the value overflows, or rounds to zero (a
	// value below 10^digits shifted right by more than digits+1 places is
	// under 0.01).
	switch {
	case u.Sign() == 0:
		return table.Decimal{Unscaled: u, Precision: p, Scale: s}
	case s-scale > p:
		return nil
	case scale-s > 1 && scale-s > len(u.Text(10))+1:
		return table.Decimal{Unscaled: new(big.Int), Precision: p, Scale: s}
	}
	switch {
	case s > scale:
		u.Mul(u, pow10(s-scale))
	case s < scale:
		div := pow10(scale - s)
		q, r := new(big.Int).QuoRem(u, div, new(big.Int))
		// Half away from zero: |r| * 2 >= div.
		if new(big.Int).Lsh(r.Abs(r), 1).Cmp(div) >= 0 {
			if u.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
		u = q
	}
	if new(big.Int).Abs(u).Cmp(pow10(p)) >= 0 {
		return nil
	}
	return table.Decimal{Unscaled: u, Precision: p, Scale: s}
}

// maxJavaPow10 is about the largest n for which Java's BigInteger can hold
// 10^n (2^31 bits).
const maxJavaPow10 = 646456993

// decimalDigits splits Go's 'e' formatting (-1.2345e-07) into an unscaled
// integer and a scale.
func decimalDigits(s string) (*big.Int, int) {
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	intPart, frac, _ := strings.Cut(mant, ".")
	u, _ := new(big.Int).SetString(intPart+frac, 10)
	return u, len(frac) - e
}

// parseJavaBigDecimal accepts what new BigDecimal(String) accepts (ASCII
// digits): an optional sign, digits with at most one point and at least one
// digit, an optional exponent. No surrounding whitespace.
func parseJavaBigDecimal(s string) (*big.Int, int, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var digits []byte
	scale, dot := 0, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			if dot {
				scale++
			}
		case c == '.' && !dot:
			dot = true
		default:
			goto exp
		}
	}
exp:
	if len(digits) == 0 {
		return nil, 0, false
	}
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return nil, 0, false
		}
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return nil, 0, false
		}
		scale -= int(e)
	}
	u, _ := new(big.Int).SetString(string(digits), 10)
	if neg {
		u.Neg(u)
	}
	return u, scale, true
}

// javaNumberString is Java's toString of a Byte/Short/Integer/Long/Float/
// Double and Decimal.toString (BigDecimal.toPlainString).
func javaNumberString(v any) string {
	switch x := v.(type) {
	case float32:
		return table.JavaFloatString(float64(x), 32)
	case float64:
		return table.JavaFloatString(x, 64)
	case table.Decimal:
		return plainDecimal(x)
	}
	return strconv.FormatInt(javaLong(v), 10)
}

func plainDecimal(d table.Decimal) string {
	s := new(big.Int).Abs(d.Unscaled).String()
	sign := ""
	if d.Unscaled.Sign() < 0 {
		sign = "-"
	}
	if d.Scale <= 0 {
		return sign + s + strings.Repeat("0", -d.Scale)
	}
	if len(s) <= d.Scale {
		s = strings.Repeat("0", d.Scale-len(s)+1) + s
	}
	return sign + s[:len(s)-d.Scale] + "." + s[len(s)-d.Scale:]
}

// stringToNumericCast is StringToNumericPrimitiveCastRule over
// BinaryStringUtils.toByte/toShort/toInt/toLong (no trimming, an optional
// sign, digits, an optional well-formed fraction that is dropped; overflow
// is an error, also for TINYINT/SMALLINT) and Float/Double.parseFloat
// (which trims).
func stringToNumericCast(tr table.TypeRoot) castFunc {
	switch tr {
	case table.TypeFloat, table.TypeDouble:
		return func(v any) (any, error) {
			s := v.(string)
			f, ok := parseJavaDouble(s, tr == table.TypeFloat)
			if !ok {
				return nil, valueErr("cannot parse %q as %v", s, tr)
			}
			if tr == table.TypeFloat {
				return float32(f), nil
			}
			return f, nil
		}
	}
	return func(v any) (any, error) {
		s := v.(string)
		var x int64
		var ok bool
		if tr == table.TypeBigInt {
			x, ok = parseJavaIntegral(s, 64)
		} else {
			x, ok = parseJavaIntegral(s, 32)
			switch {
			case tr == table.TypeTinyInt && int64(int8(x)) != x,
				tr == table.TypeSmallInt && int64(int16(x)) != x:
				ok = false
			}
		}
		if !ok {
			return nil, valueErr("cannot parse %q as %v", s, typeName(tr))
		}
		return fromJavaLong(x, tr), nil
	}
}

func typeName(r table.TypeRoot) string {
	return table.DataType{Root: r, Nullable: true}.String()
}

// parseJavaIntegral is BinaryStringUtils.toInt (bits 32) / toLong (bits 64).
func parseJavaIntegral(s string, bits int) (int64, bool) {
	if s == "" {
		return 0, false
	}
	i, neg := 0, false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		i++
		if len(s) == 1 {
			return 0, false
		}
	}
	limit := new(big.Int).Lsh(big.NewInt(1), uint(bits-1)) // magnitude of MIN_VALUE
	acc := new(big.Int)
	ten := big.NewInt(10)
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			// The fraction must be digits only; it is dropped.
			for _, f := range []byte(s[i+1:]) {
				if f < '0' || f > '9' {
					return 0, false
				}
			}
			break
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		acc.Mul(acc, ten).Add(acc, big.NewInt(int64(c-'0')))
		if acc.Cmp(limit) > 0 {
			return 0, false
		}
	}
	if neg {
		acc.Neg(acc)
	} else if acc.Cmp(limit) == 0 {
		return 0, false
	}
	return acc.Int64(), true
}

// parseJavaDouble is Double.parseDouble / Float.parseFloat: surrounding
// characters <= ' ' trimmed, an optional sign, NaN, Infinity, a decimal
// number with optional exponent or a hexadecimal one with a binary exponent,
// and an optional f/F/d/D suffix.
func parseJavaDouble(s string, float bool) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	body := s
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch body {
	case "NaN":
		// Java's canonical NaN (Go's math.NaN has other payload bits).
		return math.Float64frombits(0x7ff8000000000000), true
	case "Infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(body); n > 0 && strings.ContainsRune("fFdD", rune(body[n-1])) {
		body = body[:n-1]
	}
	if !javaFloatLiteral(body) {
		return 0, false
	}
	bitSize := 64
	if float {
		// Float.parseFloat rounds the decimal directly to float.
		bitSize = 32
	}
	f, err := strconv.ParseFloat(body, bitSize)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

// javaFloatLiteral checks the unsigned grammar of Java's floating literals
// (Go's ParseFloat also takes inf, underscores and more).
func javaFloatLiteral(s string) bool {
	digitsIn := func(s string, hex bool) int {
		n := 0
		for n < len(s) && (s[n] >= '0' && s[n] <= '9' || hex && strings.ContainsRune("abcdefABCDEF", rune(s[n]))) {
			n++
		}
		return n
	}
	hex := len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	if hex {
		s = s[2:]
	}
	a := digitsIn(s, hex)
	s = s[a:]
	b := 0
	if s != "" && s[0] == '.' {
		s = s[1:]
		b = digitsIn(s, hex)
		s = s[b:]
	}
	if a+b == 0 {
		return false
	}
	expChar := "eE"
	if hex {
		expChar = "pP"
	}
	if s == "" {
		return !hex // a hexadecimal literal needs its binary exponent
	}
	if !strings.ContainsRune(expChar, rune(s[0])) {
		return false
	}
	s = s[1:]
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return s != "" && digitsIn(s, false) == len(s)
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

// ---- dates and times

// truncateTimestamp is DateTimeUtils.truncate (Paimon master): when the
// fraction of a second has more significant digits than the precision, the
// epoch milliseconds (precision <= 3) or the nanoseconds of the millisecond
// lose their last digits, by Java's division towards zero.
func truncateTimestamp(ts table.Timestamp, p int) table.Timestamp {
	nano := table.FloorMod(ts.Millis, 1000)*1000000 + int64(ts.NanoOfMilli)
	frac := strings.TrimRight(fmt.Sprintf("%09d", nano), "0")
	if len(frac) <= p {
		return ts
	}
	if p <= 3 {
		m := int64(math.Pow10(3 - p))
		return table.Timestamp{Millis: ts.Millis / m * m}
	}
	m := int32(math.Pow10(9 - p))
	return table.Timestamp{Millis: ts.Millis, NanoOfMilli: ts.NanoOfMilli / m * m}
}

// civil is Paimon's julian-day arithmetic (DateTimeUtils.julianToString).
func civil(days int32) (year, month, day int) {
	j := int(days) + julianEpochDay + 32044
	g := j / 146097
	dg := j % 146097
	c := (dg/36524 + 1) * 3 / 4
	dc := dg - c*36524
	b := dc / 1461
	db := dc % 1461
	a := (db/365 + 1) * 3 / 4
	da := db - a*365
	y := g*400 + c*100 + b*4 + a
	m := (da*5+308)/153 - 2
	d := da - (m+4)*153/5 + 122
	return y - 4800 + (m+2)/12, (m+2)%12 + 1, d + 1
}

func unixDate(y, m, d int) int32 {
	a := (14 - m) / 12
	yy := y + 4800 - a
	mm := m + 12*a - 3
	julian := d + (153*mm+2)/5 + 365*yy + yy/4 - yy/100 + yy/400 - 32045
	return int32(julian - julianEpochDay)
}

// digitsN appends the last n decimal digits of i as Java's int2/int4 do.
func digitsN(sb *strings.Builder, i, n int) {
	for k := n - 1; k >= 0; k-- {
		sb.WriteRune(rune('0' + (i/int(math.Pow10(k)))%10))
	}
}

func formatDate(days int32) string {
	var sb strings.Builder
	y, m, d := civil(days)
	digitsN(&sb, y, 4)
	sb.WriteByte('-')
	digitsN(&sb, m, 2)
	sb.WriteByte('-')
	digitsN(&sb, d, 2)
	return sb.String()
}

// formatTime is DateTimeUtils.formatTimestampMillis: HH:mm:ss and, for a
// positive precision, the milliseconds up to the precision, stopping after
// the last non-zero digit but keeping at least one.
func formatTime(t int32, p int) string {
	time := int(t)
	for time < 0 {
		time += millisPerDay
	}
	var sb strings.Builder
	digitsN(&sb, time/3600000, 2)
	sb.WriteByte(':')
	digitsN(&sb, time%3600000/60000, 2)
	sb.WriteByte(':')
	digitsN(&sb, time%60000/1000, 2)
	if p > 0 {
		sb.WriteByte('.')
		ms := time % 1000
		for p > 0 {
			sb.WriteByte(byte('0' + ms/100))
			ms = ms % 100 * 10
			if ms == 0 {
				break
			}
			p--
		}
	}
	return sb.String()
}

// formatTimestamp is DateTimeUtils.formatTimestamp: yyyy-MM-dd HH:mm:ss and
// the nine-digit fraction with trailing zeros dropped down to the precision.
func formatTimestamp(ts table.Timestamp, p int) string {
	day := table.FloorDiv(ts.Millis, millisPerDay)
	ms := table.FloorMod(ts.Millis, millisPerDay)
	var sb strings.Builder
	sb.WriteString(formatDate(int32(day)))
	sb.WriteByte(' ')
	digitsN(&sb, int(ms/3600000), 2)
	sb.WriteByte(':')
	digitsN(&sb, int(ms%3600000/60000), 2)
	sb.WriteByte(':')
	digitsN(&sb, int(ms%60000/1000), 2)
	frac := fmt.Sprintf("%09d", ms%1000*1000000+int64(ts.NanoOfMilli))
	for len(frac) > p && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	if frac != "" {
		sb.WriteByte('.')
		sb.WriteString(frac)
	}
	return sb.String()
}

// isJavaNumeric is StringUtils.isNumeric: an optional '-' and at least one
// (Unicode) digit.
func isJavaNumeric(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// javaTrim is String.trim: characters <= ' ' at both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// javaParseInt is Integer.parseInt after Paimon's isInteger check (ASCII
// digits only).
func javaParseInt(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int(n), err == nil
}

// stringToDate is BinaryStringUtils.toDate: a numeric string is the day
// number (toInt); otherwise DateTimeUtils.parseDate: text after the first
// space is ignored, then y, y-m or y-m-d with each part trimmed, and the
// date must exist in years 0..9999.
func stringToDate(str string) (any, error) {
	if isJavaNumeric(str) {
		n, ok := parseJavaIntegral(str, 32)
		if !ok {
			return nil, valueErr("cannot parse %q as DATE", str)
		}
		return int32(n), nil
	}
	s := str
	if ws := strings.IndexByte(s, ' '); ws > 0 {
		s = s[:ws]
	}
	parts := strings.SplitN(s, "-", 3)
	ymd := []int{0, 1, 1}
	for i, p := range parts {
		n, ok := javaParseInt(javaTrim(p))
		if !ok {
			return nil, valueErr("cannot parse %q as DATE", str)
		}
		ymd[i] = n
	}
	y, m, d := ymd[0], ymd[1], ymd[2]
	if !legalDate(y, m, d) {
		return nil, valueErr("cannot parse %q as DATE", str)
	}
	return unixDate(y, m, d), nil
}

func legalDate(y, m, d int) bool {
	if y < 0 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31 {
		return false
	}
	leap := y%400 == 0 || y%4 == 0 && y%100 != 0
	if m == 2 && d > 28 && !(leap && d == 29) {
		return false
	}
	if d == 31 {
		switch m {
		case 1, 3, 5, 7, 8, 10, 12:
			return true
		}
		return false
	}
	return true
}

// stringToTime is BinaryStringUtils.toTime: a numeric string is the
// milliseconds of the day (toInt); otherwise DateTimeUtils.parseTime:
// h[:m[:s[.fff]]] with an optional zone suffix introduced by the first '-'
// (or else '+') whose hours and minutes are added with the opposite sign of
// '-' and the same sign of '+', in wrapping int arithmetic.
func stringToTime(str string) (any, error) {
	if isJavaNumeric(str) {
		n, ok := parseJavaIntegral(str, 32)
		if !ok {
			return nil, valueErr("cannot parse %q as TIME", str)
		}
		return int32(n), nil
	}
	bad := func() (any, error) { return nil, valueErr("cannot parse %q as TIME", str) }
	v := str
	// sub is String.substring(begin, end) followed by trim and the integer
	// parse; an impossible range throws in Java.
	sub := func(begin, end int) (int, bool) {
		if begin < 0 || end > len(v) || begin > end {
			return 0, false
		}
		return javaParseInt(javaTrim(v[begin:end]))
	}
	colon1 := strings.IndexByte(v, ':')
	operator, end := -1, len(v)
	tz := strings.IndexByte(v, '-')
	if tz < 0 {
		tz = strings.IndexByte(v, '+')
		operator = 1
	}
	var tzHour, tzMinute, hour, minute, second, milli int
	var ok bool
	if tz >= 0 {
		end = tz
		colon3 := indexFrom(v, ':', tz)
		if colon3 < 0 {
			if tzHour, ok = sub(tz+1, len(v)); !ok {
				return bad()
			}
		} else {
			if tzHour, ok = sub(tz+1, colon3); !ok {
				return bad()
			}
			if tzMinute, ok = sub(colon3+1, len(v)); !ok {
				return bad()
			}
		}
	}
	if colon1 < 0 {
		if hour, ok = sub(0, end); !ok {
			return bad()
		}
	} else {
		if hour, ok = sub(0, colon1); !ok {
			return bad()
		}
		colon2 := indexFrom(v, ':', colon1+1)
		if colon2 < 0 {
			if minute, ok = sub(colon1+1, end); !ok {
				return bad()
			}
		} else {
			if minute, ok = sub(colon1+1, colon2); !ok {
				return bad()
			}
			dot := indexFrom(v, '.', colon2)
			if dot < 0 {
				if second, ok = sub(colon2+1, end); !ok {
					return bad()
				}
			} else {
				if second, ok = sub(colon2+1, dot); !ok {
					return bad()
				}
				if dot+1 > end {
					return bad()
				}
				milli = parseFraction(javaTrim(v[dot+1 : end]))
			}
		}
	}
	h := int32(hour) + int32(operator)*int32(tzHour)
	m := int32(minute) + int32(operator)*int32(tzMinute)
	return h*3600000 + m*60000 + int32(second)*1000 + int32(milli), nil
}

func indexFrom(s string, c byte, from int) int {
	if from > len(s) {
		return -1
	}
	i := strings.IndexByte(s[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

// parseFraction is DateTimeUtils.parseFraction: the first three characters
// as milliseconds (a non-digit counts 0), rounded up when the fourth is >= '5'.
func parseFraction(v string) int {
	mult, r := 100, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		x := 0
		if c >= '0' && c <= '9' {
			x = int(c - '0')
		}
		r += mult * x
		if mult < 10 {
			if i+1 < len(v) && v[i+1] >= '5' {
				r++
			}
			break
		}
		mult /= 10
	}
	return r
}

// stringToTimestamp is BinaryStringUtils.toTimestamp. For TIMESTAMP a
// numeric string is an epoch count in the unit of the precision (0, 3, 6 or
// 9; other precisions throw); everything else, and every TIMESTAMP_LTZ
// string, is parsed by DateTimeUtils.parseTimestampData.
func stringToTimestamp(s string, p int, ltz bool) (any, error) {
	if !ltz && isJavaNumeric(s) {
		n, ok := parseJavaIntegral(s, 64)
		if !ok {
			return nil, valueErr("cannot parse %q as TIMESTAMP", s)
		}
		switch p {
		case 0:
			return table.Timestamp{Millis: n * 1000}, nil
		case 3:
			return table.Timestamp{Millis: n}, nil
		case 6:
			return table.TimestampFromMicros(n), nil
		case 9:
			return table.TimestampFromNanos(n), nil
		}
		return nil, valueErr("cannot cast %q to TIMESTAMP(%d): unsupported precision", s, p)
	}
	ts, ok := parseTimestampText(s, p)
	if !ok {
		return nil, valueErr("cannot parse %q as TIMESTAMP", s)
	}
	return ts, nil
}

// parseTimestampText parses with Paimon's DEFAULT_TIMESTAMP_FORMATTER,
// "yyyy-[MM][M]-[dd][d]" and optionally " [HH][H]:[mm][m]:[ss][s]" with a
// fraction of up to nine digits, resolved SMART (a day past the month's end
// clamps to its last day; 24:00:00 is the next midnight) with a missing time
// of 0, then the nanoseconds floored to the precision. Years need exactly four digits (Java also takes a '+' and more
// digits; not supported).
func parseTimestampText(s string, p int) (table.Timestamp, bool) {
	pos := 0
	digits := func(max int) (int, int) {
		n := 0
		for n < max && pos+n < len(s) && s[pos+n] >= '0' && s[pos+n] <= '9' {
			n++
		}
		v, _ := strconv.Atoi(s[pos : pos+n])
		pos += n
		return v, n
	}
	// num reads a field written [XX][X]: two digits and then, greedily,
	// more digits that must repeat the value (Java parses the field twice
	// and rejects a conflict), or one digit alone. -1 when absent, -2 on
	// a conflict.
	num := func() int {
		v, n := digits(2)
		if n == 0 {
			return -1
		}
		if n == 2 {
			if w, m := digits(18); m > 0 && w != v {
				return -2
			}
		}
		return v
	}
	lit := func(c byte) bool {
		if pos < len(s) && s[pos] == c {
			pos++
			return true
		}
		return false
	}
	if len(s) < 4 {
		return table.Timestamp{}, false
	}
	year, err := strconv.Atoi(s[:4])
	if err != nil || strings.ContainsAny(s[:4], "+-") || year < 1 {
		return table.Timestamp{}, false
	}
	pos = 4
	if !lit('-') {
		return table.Timestamp{}, false
	}
	month := num()
	if month < 0 || !lit('-') {
		return table.Timestamp{}, false
	}
	day := num()
	if day < 0 {
		return table.Timestamp{}, false
	}
	var hour, minute, second, nano int
	if rest := pos; lit(' ') {
		// A missing time field is 0.
		hour = num()
		ok := hour != -2 && lit(':')
		minute = num()
		ok = ok && minute != -2 && lit(':')
		second = num()
		ok = ok && second != -2
		hour, minute, second = max(hour, 0), max(minute, 0), max(second, 0)
		if ok && lit('.') {
			start := pos
			for pos < len(s) && pos-start < 9 && s[pos] >= '0' && s[pos] <= '9' {
				pos++
			}
			f := s[start:pos] + strings.Repeat("0", 9-(pos-start))
			nano, _ = strconv.Atoi(f)
		}
		if !ok {
			pos = rest
		}
	}
	if pos != len(s) {
		return table.Timestamp{}, false
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 59 {
		return table.Timestamp{}, false
	}
	day = min(day, daysIn(year, month))
	days := int64(unixDate(year, month, day))
	if hour == 24 {
		if minute != 0 || second != 0 || nano != 0 {
			return table.Timestamp{}, false
		}
		hour, days = 0, days+1
	}
	if p == 0 {
		nano = 0
	} else if p < 9 {
		m := int(math.Pow10(9 - p))
		nano = nano / m * m
	}
	millis := days*millisPerDay + int64(hour)*3600000 + int64(minute)*60000 + int64(second)*1000 + int64(nano/1000000)
	return table.Timestamp{Millis: millis, NanoOfMilli: int32(nano % 1000000)}, true
}

func daysIn(y, m int) int {
	switch m {
	case 4, 6, 9, 11:
		return 30
	case 2:
		if y%400 == 0 || y%4 == 0 && y%100 != 0 {
			return 29
		}
		return 28
	}
	return 31
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }
