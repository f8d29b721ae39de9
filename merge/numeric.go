package merge

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/compactd/compactd/table"
)

// sumAgg is FieldSumAgg: null-safe add; retract subtracts (a null accumulator
// retracts to the negated input). Integer overflow is an error, as in Java.
type sumAgg struct {
	aggBase
	t table.DataType
}

func (a *sumAgg) agg(acc, in any) (any, error) { return nullSafeArith(a.t, '+', acc, in) }

func (a *sumAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

func (a *sumAgg) retract(acc, in any) (any, error) {
	if acc == nil || in == nil {
		if acc == nil {
			return negate(a.t, in)
		}
		return acc, nil
	}
	return arith(a.t, '-', acc, in)
}

// productAgg is FieldProductAgg: null-safe multiply; retract divides and
// leaves the accumulator alone when either side is null.
type productAgg struct {
	aggBase
	t table.DataType
}

func (a *productAgg) agg(acc, in any) (any, error) { return nullSafeArith(a.t, '*', acc, in) }

func (a *productAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

func (a *productAgg) retract(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return acc, nil
	}
	return arith(a.t, '/', acc, in)
}

// nullSafeArith combines acc and in, a null on either side leaving the
// other as the result.
func nullSafeArith(t table.DataType, op byte, acc, in any) (any, error) {
	switch {
	case acc == nil:
		return in, nil
	case in == nil:
		return acc, nil
	}
	return arith(t, op, acc, in)
}

var errDivideByZero = errors.New("/ by zero")

// arith applies op with Java's semantics for the column type: exact integer
// arithmetic that fails on overflow (Math.*Exact and the byte/short range
// checks), IEEE float arithmetic, and Paimon's decimal rules.
func arith(t table.DataType, op byte, a, b any) (any, error) {
	switch x := a.(type) {
	case int8:
		y, ok := b.(int8)
		if !ok {
			break
		}
		v, err := intOp(int64(x), int64(y), op, math.MinInt8, math.MaxInt8, "byte")
		return int8(v), err
	case int16:
		y, ok := b.(int16)
		if !ok {
			break
		}
		v, err := intOp(int64(x), int64(y), op, math.MinInt16, math.MaxInt16, "short")
		return int16(v), err
	case int32:
		y, ok := b.(int32)
		if !ok {
			break
		}
		v, err := intOp(int64(x), int64(y), op, math.MinInt32, math.MaxInt32, "int")
		return int32(v), err
	case int64:
		y, ok := b.(int64)
		if !ok {
			break
		}
		return longOp(x, y, op)
	case float32:
		y, ok := b.(float32)
		if !ok {
			break
		}
		switch op {
		case '+':
			return x + y, nil
		case '-':
			return x - y, nil
		case '*':
			return x * y, nil
		default:
			return x / y, nil
		}
	case float64:
		y, ok := b.(float64)
		if !ok {
			break
		}
		switch op {
		case '+':
			return x + y, nil
		case '-':
			return x - y, nil
		case '*':
			return x * y, nil
		default:
			return x / y, nil
		}
	case table.Decimal:
		y, ok := b.(table.Decimal)
		if !ok {
			break
		}
		return decimalOp(t, x, y, op)
	}
	return nil, fmt.Errorf("type %s not supported for arithmetic (values %T, %T)", t, a, b)
}

// intOp computes in int64 (exact for byte/short/int operands) and checks the range.
func intOp(x, y int64, op byte, lo, hi int64, name string) (int64, error) {
	var v int64
	switch op {
	case '+':
		v = x + y
	case '-':
		v = x - y
	case '*':
		v = x * y
	case '/':
		if y == 0 {
			return 0, errDivideByZero
		}
		v = x / y
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("%s overflow: %d %c %d", name, x, op, y)
	}
	return v, nil
}

func longOp(x, y int64, op byte) (any, error) {
	overflow := func() (any, error) { return nil, fmt.Errorf("long overflow: %d %c %d", x, op, y) }
	switch op {
	case '+':
		v := x + y
		if (x > 0 && y > 0 && v < 0) || (x < 0 && y < 0 && v >= 0) {
			return overflow()
		}
		return v, nil
	case '-':
		v := x - y
		if (x >= 0 && y < 0 && v < 0) || (x < 0 && y > 0 && v >= 0) {
			return overflow()
		}
		return v, nil
	case '*':
		if x == 0 || y == 0 {
			return int64(0), nil
		}
		v := x * y
		if v/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return overflow()
		}
		return v, nil
	default:
		if y == 0 {
			return nil, errDivideByZero
		}
		if x == math.MinInt64 && y == -1 {
			return overflow()
		}
		return x / y, nil
	}
}

// negate is FieldSumAgg.negative.
func negate(t table.DataType, v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int8:
		if x == math.MinInt8 {
			return nil, fmt.Errorf("byte overflow: -%d", x)
		}
		return -x, nil
	case int16:
		if x == math.MinInt16 {
			return nil, fmt.Errorf("short overflow: -%d", x)
		}
		return -x, nil
	case int32:
		if x == math.MinInt32 {
			return nil, fmt.Errorf("int overflow: -%d", x)
		}
		return -x, nil
	case int64:
		if x == math.MinInt64 {
			return nil, fmt.Errorf("long overflow: -%d", x)
		}
		return -x, nil
	case float32:
		return -x, nil
	case float64:
		return -x, nil
	case table.Decimal:
		p, s := decimalTypeOf(t, x)
		return decimalFromRat(new(big.Rat).Neg(decimalRat(x)), p, s), nil
	}
	return nil, fmt.Errorf("type %s not supported for negation (value %T)", t, v)
}

// decimalOp follows Paimon's DecimalUtils/FieldProductAgg:
//   - add/subtract with precision ≤ 18 and equal scales work on the unscaled
//     longs and keep the result even if it has more digits than the precision
//     (Decimal.fromUnscaledLong does not check); on long overflow, or for
//     larger precisions, the exact result is rounded HALF_UP to the scale and
//     becomes NULL when it does not fit the precision (Decimal.fromBigDecimal);
//   - multiply: exact product, then fromBigDecimal;
//   - divide: BigDecimal.divide without a MathContext, which fails on a
//     non-terminating quotient, then fromBigDecimal.
//
// The result takes the precision and scale of the accumulator's type.
func decimalOp(t table.DataType, x, y table.Decimal, op byte) (any, error) {
	p, s := decimalTypeOf(t, x)
	if (op == '+' || op == '-') && p <= 18 && x.Scale == y.Scale && x.Unscaled != nil && y.Unscaled != nil &&
		x.Unscaled.IsInt64() && y.Unscaled.IsInt64() {
		v, err := longOp(x.Unscaled.Int64(), y.Unscaled.Int64(), op)
		if err == nil {
			return table.Decimal{Unscaled: big.NewInt(v.(int64)), Precision: p, Scale: s}, nil
		}
	}
	a, b := decimalRat(x), decimalRat(y)
	var r *big.Rat
	switch op {
	case '+':
		r = new(big.Rat).Add(a, b)
	case '-':
		r = new(big.Rat).Sub(a, b)
	case '*':
		r = new(big.Rat).Mul(a, b)
	default:
		if b.Sign() == 0 {
			if a.Sign() == 0 {
				return nil, errors.New("division undefined")
			}
			return nil, errors.New("division by zero")
		}
		r = new(big.Rat).Quo(a, b)
		if !terminating(r.Denom()) {
			return nil, errors.New("non-terminating decimal expansion; no exact representable decimal result")
		}
	}
	return decimalFromRat(r, p, s), nil
}

func decimalTypeOf(t table.DataType, v table.Decimal) (int, int) {
	if v.Precision > 0 {
		return v.Precision, v.Scale
	}
	return t.Precision, t.Scale
}

func decimalRat(d table.Decimal) *big.Rat {
	u := d.Unscaled
	if u == nil {
		u = new(big.Int)
	}
	return new(big.Rat).SetFrac(u, pow10(d.Scale))
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// decimalFromRat is Decimal.fromBigDecimal: round HALF_UP to scale, NULL
// (untyped nil) when the digits exceed the precision.
func decimalFromRat(r *big.Rat, precision, scale int) any {
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(pow10(scale)))
	num, den := scaled.Num(), scaled.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	// HALF_UP: round away from zero when the remainder is at least half.
	if m.Sign() != 0 {
		twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
		if twice.Cmp(den) >= 0 {
			if num.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	if digits(q) > precision {
		return nil
	}
	return table.Decimal{Unscaled: q, Precision: precision, Scale: scale}
}

// digits is BigDecimal.precision of an unscaled value (0 has one digit).
func digits(v *big.Int) int {
	if v.Sign() == 0 {
		return 1
	}
	return len(new(big.Int).Abs(v).String())
}

func terminating(den *big.Int) bool {
	d := new(big.Int).Set(den)
	two, five, zero := big.NewInt(2), big.NewInt(5), new(big.Int)
	m := new(big.Int)
	for {
		q, r := new(big.Int).QuoRem(d, two, m)
		if r.Cmp(zero) != 0 {
			break
		}
		d = q
	}
	for {
		q, r := new(big.Int).QuoRem(d, five, m)
		if r.Cmp(zero) != 0 {
			break
		}
		d = q
	}
	return d.IsInt64() && d.Int64() == 1
}
