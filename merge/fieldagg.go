package merge

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/compactd/compactd/internal/javacompat"
	"github.com/compactd/compactd/table"
)

// fieldAgg is Paimon's FieldAggregator: one column's aggregate state machine.
// agg folds an addition, retract a retraction; aggReversed is agg with the
// arguments swapped (partial-update uses it for out-of-order sequence groups).
type fieldAgg interface {
	agg(acc, in any) (any, error)
	aggReversed(acc, in any) (any, error)
	retract(acc, in any) (any, error)
	reset()
}

// Aggregate function names (fields.<f>.aggregate-function).
const (
	AggSum                  = "sum"
	AggProduct              = "product"
	AggMax                  = "max"
	AggMin                  = "min"
	AggLastValue            = "last_value"
	AggLastNonNullValue     = "last_non_null_value"
	AggFirstValue           = "first_value"
	AggFirstNonNullValue    = "first_non_null_value"
	AggFirstNotNullValue    = "first_not_null_value" // legacy name of first_non_null_value
	AggListAgg              = "listagg"
	AggBoolAnd              = "bool_and"
	AggBoolOr               = "bool_or"
	AggCollect              = "collect"
	AggMergeMap             = "merge_map"
	aggPrimaryKey           = "primary-key"
	AggMergeMapWithKeyTime  = "merge_map_with_keytime"
	AggNestedUpdate         = "nested_update"
	AggNestedPartialUpdate  = "nested_partial_update"
	AggRoaringBitmap32      = "rbm32"
	aggRoaringBitmap64      = "rbm64"
	aggHllSketch            = "hll_sketch"
	aggThetaSketch          = "theta_sketch"
	errUnsupportedRetracted = "aggregate function '%s' does not support retraction; if you allow this function to ignore retraction messages, you can configure 'fields.${field_name}.ignore-retract'='true'"
)

// newFieldAgg is FieldAggregatorFactory.create. fnKey names the option the
// function came from, for error messages.
func newFieldAgg(fn string, f table.DataField, options map[string]string, fnKey string) (fieldAgg, error) {
	removeOnDelete, err := boolOption(options, OptAggregationRemoveOnDelete, false)
	if err != nil {
		return nil, err
	}
	ignoreKey := fieldKey(f.Name, "ignore-retract")
	ignoreRetract, err := boolOption(options, ignoreKey, false)
	if err != nil {
		return nil, err
	}
	t := f.Type
	bad := func(format string, args ...any) error {
		return fmt.Errorf("option %s: %s", fnKey, fmt.Sprintf(format, args...))
	}
	base := aggBase{name: fn}
	var a fieldAgg
	switch fn {
	case AggSum, AggProduct:
		if !isNumeric(t) {
			return nil, bad("data type for %s column %q must be numeric but was %s", fn, f.Name, t)
		}
		if fn == AggSum {
			a = &sumAgg{aggBase: base, t: t}
		} else {
			a = &productAgg{aggBase: base, t: t}
		}
	case AggMax, AggMin:
		if !isComparable(t) {
			return nil, bad("data type for %s column %q must be comparable but was %s", fn, f.Name, t)
		}
		a = &maxMinAgg{aggBase: base, t: t, max: fn == AggMax}
	case AggLastValue:
		a = &lastValueAgg{aggBase: base}
	case AggLastNonNullValue:
		a = &lastNonNullAgg{aggBase: base}
	case AggFirstValue:
		a = &firstValueAgg{aggBase: base}
	case AggFirstNonNullValue, AggFirstNotNullValue:
		a = &firstValueAgg{aggBase: base, nonNull: true}
	case AggListAgg:
		if t.Root != table.TypeVarChar {
			return nil, bad("data type for listagg column %q must be STRING but was %s", f.Name, t)
		}
		if t.Length != table.MaxLength {
			return nil, bad("data type for listagg column %q must be STRING (unbounded VARCHAR), but was VARCHAR(%d)", f.Name, t.Length)
		}
		delim := ","
		if v, ok := options[fieldKey(f.Name, "list-agg-delimiter")]; ok {
			delim = v
		}
		distinct, err := boolOption(options, fieldKey(f.Name, "distinct"), false)
		if err != nil {
			return nil, err
		}
		a = &listAgg{aggBase: base, delim: delim, distinct: distinct}
	case AggBoolAnd, AggBoolOr:
		if t.Root != table.TypeBoolean {
			return nil, bad("data type for %s column %q must be BOOLEAN but was %s", fn, f.Name, t)
		}
		a = &boolAgg{aggBase: base, and: fn == AggBoolAnd}
	case AggCollect:
		if t.Root != table.TypeArray || t.Element == nil {
			return nil, bad("data type for collect column %q must be ARRAY but was %s", f.Name, t)
		}
		distinct, err := boolOption(options, fieldKey(f.Name, "distinct"), false)
		if err != nil {
			return nil, err
		}
		a = &collectAgg{aggBase: base, elem: *t.Element, distinct: distinct, equaliser: needsEqualiser(*t.Element)}
	case AggMergeMap:
		if t.Root != table.TypeMap || t.Key == nil {
			return nil, bad("data type for merge_map column %q must be MAP but was %s", f.Name, t)
		}
		a = &mergeMapAgg{aggBase: base, keyType: *t.Key}
	case aggPrimaryKey:
		a = &primaryKeyAgg{aggBase: base}
	case AggMergeMapWithKeyTime:
		if a, err = newMergeMapWithKeyTime(base, f, options, bad); err != nil {
			return nil, err
		}
	case AggNestedUpdate:
		if a, err = newNestedUpdate(base, f, options, bad); err != nil {
			return nil, err
		}
	case AggNestedPartialUpdate:
		if a, err = newNestedPartialUpdate(base, f, options, bad); err != nil {
			return nil, err
		}
	case AggRoaringBitmap32:
		if t.Root != table.TypeVarBinary {
			return nil, bad("data type for roaring bitmap column %q must be VARBINARY but was %s", f.Name, t)
		}
		a = &rbm32Agg{aggBase: base}
	case aggRoaringBitmap64, aggHllSketch, aggThetaSketch:
		return nil, bad("aggregate function %q (field %q) is not implemented by compactd", fn, f.Name)
	default:
		return nil, bad("use unsupported aggregation: %s or spell aggregate function incorrectly", fn)
	}
	if removeOnDelete && ignoreRetract {
		return nil, fmt.Errorf("options %s and %s have conflicting behavior so should not be enabled at the same time", OptAggregationRemoveOnDelete, ignoreKey)
	}
	if ignoreRetract {
		return &ignoreRetractAgg{inner: a}, nil
	}
	return a, nil
}

func isNumeric(t table.DataType) bool {
	switch t.Root {
	case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeBigInt, table.TypeFloat, table.TypeDouble, table.TypeDecimal:
		return true
	}
	return false
}

// isComparable is TypeCheckUtils.isComparable.
func isComparable(t table.DataType) bool {
	switch t.Root {
	case table.TypeMap, table.TypeMultiset, table.TypeRow, table.TypeArray, table.TypeVector, table.TypeVariant, table.TypeBlob:
		return false
	}
	return true
}

// needsEqualiser: Java's collect dedupes binary and constructed elements with
// a list + equaliser (keeping the accumulator as is), others with a HashSet.
func needsEqualiser(t table.DataType) bool {
	switch t.Root {
	case table.TypeBinary, table.TypeVarBinary, table.TypeArray, table.TypeMap, table.TypeMultiset, table.TypeRow, table.TypeVector:
		return true
	}
	return false
}

type aggBase struct{ name string }

func (b aggBase) reset() {}

func (b aggBase) retract(acc, in any) (any, error) {
	return nil, fmt.Errorf(errUnsupportedRetracted, b.name)
}

// reversed implements the default aggReversed: agg(in, acc).
func reversed(a fieldAgg, acc, in any) (any, error) { return a.agg(in, acc) }

type ignoreRetractAgg struct{ inner fieldAgg }

func (a *ignoreRetractAgg) agg(acc, in any) (any, error) { return a.inner.agg(acc, in) }

// aggReversed is not forwarded in Java (FieldIgnoreRetractAgg inherits the
// default), so collect's override is bypassed here too.
func (a *ignoreRetractAgg) aggReversed(acc, in any) (any, error) { return a.inner.agg(in, acc) }
func (a *ignoreRetractAgg) retract(acc, in any) (any, error)     { return acc, nil }
func (a *ignoreRetractAgg) reset()                               { a.inner.reset() }

type primaryKeyAgg struct{ aggBase }

func (a *primaryKeyAgg) agg(acc, in any) (any, error)         { return in, nil }
func (a *primaryKeyAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }
func (a *primaryKeyAgg) retract(acc, in any) (any, error)     { return in, nil }

type lastValueAgg struct{ aggBase }

func (a *lastValueAgg) agg(acc, in any) (any, error)         { return in, nil }
func (a *lastValueAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }
func (a *lastValueAgg) retract(acc, in any) (any, error)     { return nil, nil }

type lastNonNullAgg struct{ aggBase }

func (a *lastNonNullAgg) agg(acc, in any) (any, error) {
	if in == nil {
		return acc, nil
	}
	return in, nil
}
func (a *lastNonNullAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }
func (a *lastNonNullAgg) retract(acc, in any) (any, error) {
	if in != nil {
		return nil, nil
	}
	return acc, nil
}

// firstValueAgg is first_value / first_non_null_value: the state lives in the
// aggregator (not the accumulator) and is cleared by reset, as in Java.
type firstValueAgg struct {
	aggBase
	nonNull     bool
	initialized bool
}

func (a *firstValueAgg) agg(acc, in any) (any, error) {
	if !a.initialized && (!a.nonNull || in != nil) {
		a.initialized = true
		return in, nil
	}
	return acc, nil
}
func (a *firstValueAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }
func (a *firstValueAgg) reset()                               { a.initialized = false }

type maxMinAgg struct {
	aggBase
	t   table.DataType
	max bool
}

func (a *maxMinAgg) agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		if acc == nil {
			return in, nil
		}
		return acc, nil
	}
	less := table.CompareValues(a.t, acc, in) < 0
	if a.max == less {
		return in, nil
	}
	return acc, nil
}
func (a *maxMinAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

type boolAgg struct {
	aggBase
	and bool
}

func (a *boolAgg) agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		if acc == nil {
			return in, nil
		}
		return acc, nil
	}
	x, ok1 := acc.(bool)
	y, ok2 := in.(bool)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: expected BOOLEAN values, got %T and %T", a.name, acc, in)
	}
	if a.and {
		return x && y, nil
	}
	return x || y, nil
}
func (a *boolAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

type listAgg struct {
	aggBase
	delim    string
	distinct bool
}

func (a *listAgg) agg(acc, in any) (any, error) {
	s, _ := in.(string)
	if in == nil || javacompat.IsBlank(s) {
		return acc, nil
	}
	cur, _ := acc.(string)
	if acc == nil || javacompat.IsBlank(cur) {
		return in, nil
	}
	if !a.distinct {
		return cur + a.delim + s, nil
	}
	// Java splits on " " when the delimiter is empty but still joins with "".
	sep := a.delim
	if sep == "" {
		sep = " "
	}
	seen := map[string]bool{}
	for _, tok := range strings.Split(cur, sep) {
		seen[tok] = true
	}
	var b strings.Builder
	b.WriteString(cur)
	for _, tok := range strings.Split(s, sep) {
		if javacompat.IsBlank(tok) || seen[tok] {
			continue
		}
		seen[tok] = true
		b.WriteString(a.delim)
		b.WriteString(tok)
	}
	return b.String(), nil
}
func (a *listAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

type collectAgg struct {
	aggBase
	elem      table.DataType
	distinct  bool
	equaliser bool
}

func (a *collectAgg) agg(acc, in any) (any, error) {
	if acc == nil && in == nil {
		return nil, nil
	}
	if (acc == nil || in == nil) && !a.distinct {
		if acc == nil {
			return in, nil
		}
		return acc, nil
	}
	x, err := asArray(acc)
	if err != nil {
		return nil, err
	}
	y, err := asArray(in)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(x)+len(y))
	switch {
	case a.equaliser:
		// The accumulator is taken as already distinct.
		out = append(out, x...)
		for _, v := range y {
			if !a.containsValue(out, v) {
				out = append(out, v)
			}
		}
	case a.distinct:
		// Java uses a HashSet (iteration order unspecified); first-seen order here.
		set := newValueSet(a.elem)
		for _, v := range append(append([]any(nil), x...), y...) {
			if set.add(v) {
				out = append(out, v)
			}
		}
	default:
		out = append(append(out, x...), y...)
	}
	return out, nil
}

// aggReversed keeps the accumulator first, as Java's override does.
func (a *collectAgg) aggReversed(acc, in any) (any, error) { return a.agg(acc, in) }

func (a *collectAgg) retract(acc, in any) (any, error) {
	if acc == nil {
		return nil, nil
	}
	if in == nil {
		return acc, nil
	}
	r, err := asArray(in)
	if err != nil {
		return nil, err
	}
	if len(r) == 0 {
		return acc, nil
	}
	x, err := asArray(acc)
	if err != nil {
		return nil, err
	}
	pending := append([]any(nil), r...)
	out := make([]any, 0, len(x))
	for _, v := range x {
		found := -1
		for i, p := range pending {
			if table.CompareValues(a.elem, p, v) == 0 {
				found = i
				break
			}
		}
		if found >= 0 {
			pending = append(pending[:found], pending[found+1:]...)
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

func (a *collectAgg) containsValue(list []any, v any) bool {
	for _, o := range list {
		if table.CompareValues(a.elem, o, v) == 0 {
			return true
		}
	}
	return false
}

func asArray(v any) ([]any, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("collect: expected an ARRAY value ([]any), got %T", v)
	}
	return arr, nil
}

type mergeMapAgg struct {
	aggBase
	keyType table.DataType
}

func (a *mergeMapAgg) agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		if acc == nil {
			return in, nil
		}
		return acc, nil
	}
	x, ok1 := acc.(*table.Map)
	y, ok2 := in.(*table.Map)
	if !ok1 || !ok2 || x == nil || y == nil {
		return nil, fmt.Errorf("merge_map: expected MAP values, got %T and %T", acc, in)
	}
	// Java builds a HashMap (order unspecified); here keys keep first-seen
	// order and later values win.
	out := &table.Map{}
	idx := newValueSet(a.keyType)
	put := func(k, v any) {
		if i, ok := idx.index(k); ok {
			out.Values[i] = v
			return
		}
		idx.add(k)
		out.Keys = append(out.Keys, k)
		out.Values = append(out.Values, v)
	}
	for i, k := range x.Keys {
		put(k, mapValue(x, i))
	}
	for i, k := range y.Keys {
		put(k, mapValue(y, i))
	}
	return out, nil
}

func (a *mergeMapAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

func (a *mergeMapAgg) retract(acc, in any) (any, error) {
	if acc == nil {
		return nil, nil
	}
	if in == nil {
		return acc, nil
	}
	x, ok1 := acc.(*table.Map)
	r, ok2 := in.(*table.Map)
	if !ok1 || !ok2 || x == nil || r == nil {
		return nil, fmt.Errorf("merge_map: expected MAP values, got %T and %T", acc, in)
	}
	if len(r.Keys) == 0 {
		return acc, nil
	}
	drop := newValueSet(a.keyType)
	for _, k := range r.Keys {
		drop.add(k)
	}
	out := &table.Map{}
	seen := newValueSet(a.keyType)
	for i, k := range x.Keys {
		if _, ok := drop.index(k); ok {
			continue
		}
		if i2, ok := seen.index(k); ok { // duplicate keys collapse as in a HashMap
			out.Values[i2] = mapValue(x, i)
			continue
		}
		seen.add(k)
		out.Keys = append(out.Keys, k)
		out.Values = append(out.Values, mapValue(x, i))
	}
	return out, nil
}

func mapValue(m *table.Map, i int) any {
	if i < len(m.Values) {
		return m.Values[i]
	}
	return nil
}

// valueSet is a set of values with Java equals semantics (CompareValues == 0),
// hashing the value kinds Go can hash and scanning the rest.
type valueSet struct {
	t      table.DataType
	hashed map[any]int
	other  []any
	n      int
	otherI []int
}

func newValueSet(t table.DataType) *valueSet { return &valueSet{t: t, hashed: map[any]int{}} }

// add inserts v and reports whether it was new.
func (s *valueSet) add(v any) bool {
	if _, ok := s.index(v); ok {
		return false
	}
	if k, ok := hashKey(v); ok {
		s.hashed[k] = s.n
	} else {
		s.other = append(s.other, v)
		s.otherI = append(s.otherI, s.n)
	}
	s.n++
	return true
}

// index returns the insertion index of a value equal to v.
func (s *valueSet) index(v any) (int, bool) {
	if k, ok := hashKey(v); ok {
		i, found := s.hashed[k]
		return i, found
	}
	for j, o := range s.other {
		if table.CompareValues(s.t, o, v) == 0 {
			return s.otherI[j], true
		}
	}
	return 0, false
}

type floatKey32 struct{ bits uint32 }
type floatKey64 struct{ bits uint64 }
type decimalKey struct{ s string }
type nullKey struct{}

// hashKey maps v to a comparable Go value with Java equals semantics (floats
// by canonical bits: NaN equals NaN, -0.0 differs from 0.0).
func hashKey(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nullKey{}, true
	case bool, int8, int16, int32, int64, string, table.Timestamp:
		return x, true
	case float32:
		if x != x {
			return floatKey32{0x7fc00000}, true
		}
		return floatKey32{math.Float32bits(x)}, true
	case float64:
		if x != x {
			return floatKey64{0x7ff8000000000000}, true
		}
		return floatKey64{math.Float64bits(x)}, true
	case table.Decimal:
		if x.Unscaled == nil {
			return decimalKey{"0"}, true
		}
		// Numeric identity: strip the scale by normalising trailing zeros.
		r := new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		return decimalKey{r.RatString()}, true
	}
	return nil, false
}
