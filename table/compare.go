package table

import (
	"bytes"
	"math"
	"math/big"
	"strings"
)

// CompareValues orders two values of type t exactly as Paimon's generated
// RecordComparator orders key fields (paimon-codegen GenerateUtils.generateCompare,
// used by KeyComparatorSupplier and UserDefinedSeqComparator):
//
//   - NULL sorts before every non-null value (nullIsLast=false at every depth);
//   - BOOLEAN false < true; integers, DATE and TIME numerically;
//   - FLOAT/DOUBLE as Java's Float.compare/Double.compare: -0.0 < 0.0 and NaN
//     equal to itself and greater than +Inf;
//   - CHAR/VARCHAR by unsigned UTF-8 bytes (BinaryString.compareTo), which is
//     what Go's string comparison does;
//   - BINARY/VARBINARY by unsigned bytes, shorter prefix first;
//   - DECIMAL numerically whatever the scales;
//   - TIMESTAMP/TIMESTAMP_LTZ by millisecond, then nano-of-millisecond;
//   - ARRAY (and VECTOR) element-wise, then shorter first; ROW field by field;
//     MAP/MULTISET by size, then key array, then value array (in stored order).
//
// The result is -1, 0 or +1. Values whose Go type does not match t are
// compared by their Go representation alone, so the function never panics.
func CompareValues(t DataType, a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		default:
			return 1
		}
	}
	switch x := a.(type) {
	case bool:
		y, ok := b.(bool)
		if !ok {
			return mismatch(a, b)
		}
		switch {
		case x == y:
			return 0
		case x:
			return 1
		default:
			return -1
		}
	case int8:
		if y, ok := b.(int8); ok {
			return cmpOrdered(x, y)
		}
	case int16:
		if y, ok := b.(int16); ok {
			return cmpOrdered(x, y)
		}
	case int32:
		if y, ok := b.(int32); ok {
			return cmpOrdered(x, y)
		}
	case int64:
		if y, ok := b.(int64); ok {
			return cmpOrdered(x, y)
		}
	case float32:
		if y, ok := b.(float32); ok {
			return javaFloatCompare(x, y)
		}
	case float64:
		if y, ok := b.(float64); ok {
			return javaDoubleCompare(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y)
		}
	case Decimal:
		if y, ok := b.(Decimal); ok {
			return CompareDecimals(x, y)
		}
	case Timestamp:
		if y, ok := b.(Timestamp); ok {
			if c := cmpOrdered(x.Millis, y.Millis); c != 0 {
				return c
			}
			return cmpOrdered(x.NanoOfMilli, y.NanoOfMilli)
		}
	case []any:
		if y, ok := b.([]any); ok {
			return compareArrays(elementType(t.Element), x, y)
		}
	case Row:
		if y, ok := b.(Row); ok {
			return compareRowValues(t.Fields, x, y)
		}
	case *Map:
		if y, ok := b.(*Map); ok {
			kt, vt := elementType(t.Key), elementType(t.Value)
			if t.Root == TypeMultiset {
				kt, vt = elementType(t.Element), DataType{Root: TypeInt}
			}
			return compareMaps(kt, vt, x, y)
		}
	}
	return mismatch(a, b)
}

// CompareRows compares two rows field by field with CompareValues, ascending,
// over the first len(types) fields — Paimon's primary-key order. A row shorter
// than types sorts as if the missing fields were NULL.
func CompareRows(types []DataType, a, b Row) int {
	for i, t := range types {
		var x, y any
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if c := CompareValues(t, x, y); c != 0 {
			return c
		}
	}
	return 0
}

// CompareDecimals compares two decimals numerically, aligning scales.
func CompareDecimals(a, b Decimal) int {
	x, y := a.Unscaled, b.Unscaled
	if x == nil {
		x = new(big.Int)
	}
	if y == nil {
		y = new(big.Int)
	}
	if a.Scale == b.Scale {
		return x.Cmp(y)
	}
	if a.Scale < b.Scale {
		x = new(big.Int).Mul(x, pow10(b.Scale-a.Scale))
	} else {
		y = new(big.Int).Mul(y, pow10(a.Scale-b.Scale))
	}
	return x.Cmp(y)
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

func elementType(t *DataType) DataType {
	if t == nil {
		return DataType{}
	}
	return *t
}

func compareArrays(et DataType, a, b []any) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if c := CompareValues(et, a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmpOrdered(len(a), len(b))
}

func compareRowValues(fields []DataField, a, b Row) int {
	n := max(len(a), len(b))
	for i := 0; i < n; i++ {
		var x, y any
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		var t DataType
		if i < len(fields) {
			t = fields[i].Type
		}
		if c := CompareValues(t, x, y); c != 0 {
			return c
		}
	}
	return 0
}

func compareMaps(kt, vt DataType, a, b *Map) int {
	if a == nil || b == nil {
		return mismatch(a, b)
	}
	if c := cmpOrdered(len(a.Keys), len(b.Keys)); c != 0 {
		return c
	}
	if c := compareArrays(kt, a.Keys, b.Keys); c != 0 {
		return c
	}
	return compareArrays(vt, a.Values, b.Values)
}

type ordered interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

func cmpOrdered[T ordered](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// javaFloatCompare is java.lang.Float.compare: it orders by the bits of the
// canonical-NaN representation, so -0.0 < 0.0 and NaN is the largest value.
func javaFloatCompare(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := javaFloatBits(a), javaFloatBits(b)
	return cmpOrdered(ab, bb)
}

func javaFloatBits(f float32) int32 {
	if f != f {
		return 0x7fc00000
	}
	return int32(math.Float32bits(f))
}

func javaDoubleCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := javaDoubleBits(a), javaDoubleBits(b)
	return cmpOrdered(ab, bb)
}

func javaDoubleBits(f float64) int64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return int64(math.Float64bits(f))
}

// mismatch gives values of unexpected or different Go types a stable order
// (by a rank of their kind) instead of panicking; well-formed rows never get here.
func mismatch(a, b any) int {
	return cmpOrdered(kindRank(a), kindRank(b))
}

func kindRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case int8, int16, int32, int64:
		return 2
	case float32, float64:
		return 3
	case Decimal:
		return 4
	case string:
		return 5
	case []byte:
		return 6
	case Timestamp:
		return 7
	case []any:
		return 8
	case *Map:
		return 9
	case Row:
		return 10
	}
	return 11
}
