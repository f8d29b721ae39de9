package cast

// DECIMAL casts: decimal to and from the numeric primitives, Java's
// BigDecimal string parsing and plain formatting, and HALF_UP rounding to a
// target precision and scale (null when the value does not fit).

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/compactd/compactd/table"
)

// decimalToNumericCast is DecimalToNumericPrimitiveCastRule: integral types
// round towards zero, keep the low 64 bits (BigDecimal.longValue) and then
// wrap; FLOAT is (float) of the DOUBLE result.
func decimalToNumericCast(tr table.TypeRoot) Func {
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

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }
