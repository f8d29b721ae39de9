package cast

// Schema-evolution casts. When a data file was written under an older schema
// (ALTER TABLE ... MODIFY COLUMN TYPE), Java Paimon converts each value of the
// file's type into the table's current type while reading
// (SchemaEvolutionUtil.createCastExecutor), with the rules registered in
// org.apache.paimon.casting.CastExecutors. For restates those rules, as
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
//
// Files: this one resolves the rules (For, ruleCast, nested and row
// casts); number.go holds the numeric primitives and string-to-number
// parsing, decimal.go DECIMAL, string.go the casts to strings and length
// fitting, temporal.go DATE/TIME/TIMESTAMP truncation and parsing (their
// text forms are internal/javacompat's).

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/compactd/compactd/internal/javacompat"
	"github.com/compactd/compactd/table"
)

// Func converts one value of a file's type to the read type; nil values
// never reach it.
type Func func(any) (any, error)

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

// For returns the conversion of values read as type from (a file's
// schema) into type to (the read schema) for schema evolution, nil when no
// conversion is needed. What Java Paimon cannot cast is refused with
// ErrUnsupportedEvolution.
func For(from, to table.DataType) (Func, error) {
	if sameType(from, to) {
		return nil, nil
	}
	refuse := func() (Func, error) {
		return nil, fmt.Errorf("%w: from %s to %s", ErrUnsupportedEvolution, from, to)
	}
	// Nested types are converted structurally, as SchemaEvolutionUtil does
	// before it consults the cast rules.
	switch {
	case from.Root == table.TypeRow && to.Root == table.TypeRow:
		return rowCast(from.Fields, to.Fields)
	case from.Root == table.TypeArray && to.Root == table.TypeArray:
		ec, err := For(*from.Element, *to.Element)
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
		vc, err := For(*from.Value, *to.Value)
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

func castMap(v any, vc Func) (any, error) {
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
func rowCast(from, to []table.DataField) (Func, error) {
	src := make([]int, len(to))
	casts := make([]Func, len(to))
	for i, tf := range to {
		src[i] = -1
		for j, ff := range from {
			if ff.ID == tf.ID {
				src[i] = j
				c, err := For(ff.Type, tf.Type)
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
func ruleCast(from, to table.DataType) Func {
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
			return func(v any) (any, error) { return int32(v.(table.Timestamp).Millis / table.MillisPerDay), nil }
		case fr == table.TypeTimestampLTZ:
			// Through LocalDateTime.ofInstant: floored.
			return func(v any) (any, error) {
				return int32(javacompat.FloorDiv(v.(table.Timestamp).Millis, table.MillisPerDay)), nil
			}
		}
	case tr == table.TypeTime:
		switch {
		case isString(fr):
			return func(v any) (any, error) { return stringToTime(v.(string)) }
		case fr == table.TypeTimestamp:
			// Java's % up to 2.0.0: negative before the epoch; master floors.
			return func(v any) (any, error) { return int32(v.(table.Timestamp).Millis % table.MillisPerDay), nil }
		case fr == table.TypeTimestampLTZ:
			return func(v any) (any, error) {
				return int32(javacompat.FloorMod(v.(table.Timestamp).Millis, table.MillisPerDay)), nil
			}
		}
	case isTimestamp(tr):
		switch {
		case fr == table.TypeInt || fr == table.TypeBigInt:
			// NumericPrimitiveToTimestamp: the number is seconds (long
			// multiplication wraps). Other numeric types create no executor.
			return func(v any) (any, error) { return table.Timestamp{Millis: javaLong(v) * 1000}, nil }
		case fr == table.TypeDate:
			return func(v any) (any, error) { return table.Timestamp{Millis: int64(v.(int32)) * table.MillisPerDay}, nil }
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
