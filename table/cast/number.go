package cast

// Casts between the numeric primitives (Java's widening, narrowing and
// double-to-integer conversions) and from strings to numbers, parsed as
// BinaryStringUtils and Float/Double.parseFloat parse them.

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
func numericPrimitiveCast(fr, tr table.TypeRoot) Func {
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

// stringToNumericCast is StringToNumericPrimitiveCastRule over
// BinaryStringUtils.toByte/toShort/toInt/toLong (no trimming, an optional
// sign, digits, an optional well-formed fraction that is dropped; overflow
// is an error, also for TINYINT/SMALLINT) and Float/Double.parseFloat
// (which trims).
func stringToNumericCast(tr table.TypeRoot) Func {
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
	s = javacompat.Trim(s)
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
