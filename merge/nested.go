package merge

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/compactd/compactd/table"
)

// mergeMapWithKeyTimeAgg is FieldMergeMapWithKeyTimeAgg: MAP<K, ROW<...>>
// merged key by key, keeping the row whose timestamp field is larger. The
// timestamp is compared as a string (Java calls getString on it and uses
// String.compareTo, i.e. UTF-16 code units). A null input row removes the
// key; an input row with a null timestamp is skipped. Retraction is not
// supported.
type mergeMapWithKeyTimeAgg struct {
	aggBase
	keyType table.DataType
	tsIndex int
}

func newMergeMapWithKeyTime(base aggBase, f table.DataField, options map[string]string, bad func(string, ...any) error) (fieldAgg, error) {
	t := f.Type
	if t.Root != table.TypeMap || t.Key == nil || t.Value == nil {
		return nil, bad("data type for field %q must be MAP but was %s", f.Name, t)
	}
	vt := *t.Value
	if vt.Root != table.TypeRow {
		return nil, bad("value type of MAP for field %q must be ROW but was %s", f.Name, vt)
	}
	if len(vt.Fields) < 2 {
		return nil, bad("ROW type for field %q must have at least 2 fields, but found %d", f.Name, len(vt.Fields))
	}
	ts := len(vt.Fields) - 1
	if name, ok := options[fieldKey(f.Name, "ts-field")]; ok {
		ts = table.RowType(vt.Fields).Index(name)
		if ts < 0 {
			return nil, fmt.Errorf("option %s: timestamp field %q not found in ROW type of field %q", fieldKey(f.Name, "ts-field"), name, f.Name)
		}
	}
	return &mergeMapWithKeyTimeAgg{aggBase: base, keyType: *t.Key, tsIndex: ts}, nil
}

func (a *mergeMapWithKeyTimeAgg) agg(acc, in any) (any, error) {
	if acc == nil {
		return in, nil
	}
	if in == nil {
		return acc, nil
	}
	x, ok1 := acc.(*table.Map)
	y, ok2 := in.(*table.Map)
	if !ok1 || !ok2 || x == nil || y == nil {
		return nil, fmt.Errorf("%s: expected MAP values, got %T and %T", a.name, acc, in)
	}
	m := newOrderedMap(a.keyType)
	for i, k := range x.Keys {
		m.put(k, mapValue(x, i))
	}
	for i, k := range y.Keys {
		v := mapValue(y, i)
		if v == nil {
			m.remove(k)
			continue
		}
		newRow, ok := v.(table.Row)
		if !ok {
			return nil, fmt.Errorf("%s: expected ROW map values, got %T", a.name, v)
		}
		newTs := field(newRow, a.tsIndex)
		if newTs == nil {
			continue
		}
		old, found := m.get(k)
		if !found || old == nil {
			m.put(k, newRow)
			continue
		}
		oldRow, ok := old.(table.Row)
		if !ok {
			return nil, fmt.Errorf("%s: expected ROW map values, got %T", a.name, old)
		}
		oldTs := field(oldRow, a.tsIndex)
		if oldTs == nil {
			m.put(k, newRow)
			continue
		}
		ns, ok1 := newTs.(string)
		os, ok2 := oldTs.(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%s: the timestamp field must hold strings (Java reads it with getString), got %T", a.name, newTs)
		}
		if compareUTF16(ns, os) > 0 {
			m.put(k, newRow)
		}
	}
	return m.toMap(), nil
}

func (a *mergeMapWithKeyTimeAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

// compareUTF16 is Java's String.compareTo: lexicographic over UTF-16 code units.
func compareUTF16(a, b string) int {
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(x) < len(y):
		return -1
	case len(x) > len(y):
		return 1
	}
	return 0
}

// orderedMap is a map with Java equals semantics for keys that keeps
// first-insertion order (Java's HashMap order is unspecified).
type orderedMap struct {
	keys    *valueSet
	k, v    []any
	removed []bool
}

func newOrderedMap(t table.DataType) *orderedMap { return &orderedMap{keys: newValueSet(t)} }

func (m *orderedMap) put(k, v any) {
	if i, ok := m.keys.index(k); ok {
		m.v[i], m.removed[i] = v, false
		return
	}
	m.keys.add(k)
	m.k, m.v, m.removed = append(m.k, k), append(m.v, v), append(m.removed, false)
}

func (m *orderedMap) get(k any) (any, bool) {
	if i, ok := m.keys.index(k); ok && !m.removed[i] {
		return m.v[i], true
	}
	return nil, false
}

func (m *orderedMap) remove(k any) {
	if i, ok := m.keys.index(k); ok {
		m.removed[i], m.v[i] = true, nil
	}
}

func (m *orderedMap) toMap() *table.Map {
	out := &table.Map{}
	for i := range m.k {
		if !m.removed[i] {
			out.Keys = append(out.Keys, m.k[i])
			out.Values = append(out.Values, m.v[i])
		}
	}
	return out
}

// nestedUpdateAgg is FieldNestedUpdateAgg over ARRAY<ROW>: without a nested
// key rows are appended (up to count-limit) and retracted by equality; with
// fields.<f>.nested-key rows are upserted by key (a newer row replaces an
// existing one unless fields.<f>.nested-sequence-field says it is older),
// new keys stop at count-limit, and retraction removes keys. Java collects
// keyed rows in a HashMap (unspecified order); here they keep first-seen order.
type nestedUpdateAgg struct {
	aggBase
	rowType    table.RowType
	key        []int
	seq        []int
	nullPolicy string
	countLimit int
}

func newNestedUpdate(base aggBase, f table.DataField, options map[string]string, bad func(string, ...any) error) (fieldAgg, error) {
	t := f.Type
	if t.Root != table.TypeArray || t.Element == nil || t.Element.Root != table.TypeRow {
		return nil, bad("data type for nested table column %q must be ARRAY<ROW> but was %s", f.Name, t)
	}
	a := &nestedUpdateAgg{aggBase: base, rowType: table.RowType(t.Element.Fields), nullPolicy: "merge", countLimit: int(^uint32(0) >> 1)}
	fieldsOf := func(opt string) ([]int, error) {
		v, ok := options[fieldKey(f.Name, opt)]
		if !ok {
			return nil, nil
		}
		var idx []int
		for _, n := range strings.Split(v, ",") {
			i := a.rowType.Index(strings.TrimSpace(n))
			if i < 0 {
				return nil, fmt.Errorf("option %s: field %q not found in the nested row of %q", fieldKey(f.Name, opt), strings.TrimSpace(n), f.Name)
			}
			idx = append(idx, i)
		}
		return idx, nil
	}
	var err error
	if a.key, err = fieldsOf("nested-key"); err != nil {
		return nil, err
	}
	if a.seq, err = fieldsOf("nested-sequence-field"); err != nil {
		return nil, err
	}
	if v, ok := options[fieldKey(f.Name, "nested-key-null-strategy")]; ok {
		if len(a.key) == 0 {
			return nil, fmt.Errorf("option %s requires %s to be configured", fieldKey(f.Name, "nested-key-null-strategy"), fieldKey(f.Name, "nested-key"))
		}
		switch p := strings.ToLower(strings.TrimSpace(v)); p {
		case "merge", "ignore", "error":
			a.nullPolicy = p
		default:
			return nil, fmt.Errorf("option %s: invalid value %q (want merge, ignore or error)", fieldKey(f.Name, "nested-key-null-strategy"), v)
		}
	}
	if len(a.seq) > 0 && len(a.key) == 0 {
		return nil, fmt.Errorf("option %s requires %s to be configured", fieldKey(f.Name, "nested-sequence-field"), fieldKey(f.Name, "nested-key"))
	}
	if v, ok := options[fieldKey(f.Name, "count-limit")]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("option %s: %w", fieldKey(f.Name, "count-limit"), err)
		}
		a.countLimit = int(n)
	}
	return a, nil
}

func (a *nestedUpdateAgg) rows(v any) ([]table.Row, error) {
	if v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: expected an ARRAY value ([]any), got %T", a.name, v)
	}
	out := make([]table.Row, 0, len(arr))
	for _, e := range arr {
		if e == nil {
			continue // null elements are dropped, as Java's isNullAt checks do
		}
		r, ok := e.(table.Row)
		if !ok {
			return nil, fmt.Errorf("%s: expected ROW elements, got %T", a.name, e)
		}
		out = append(out, r)
	}
	return out, nil
}

func toArray(rows []table.Row) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

func (a *nestedUpdateAgg) rowsEqual(x, y table.Row) bool {
	for i, f := range a.rowType {
		if table.CompareValues(f.Type, field(x, i), field(y, i)) != 0 {
			return false
		}
	}
	return true
}

// keyed is an insertion-ordered map from nested key to row.
type keyed struct {
	a    *nestedUpdateAgg
	keys []table.Row
	rows []table.Row
	gone []bool
	live int
}

func (a *nestedUpdateAgg) project(r table.Row, idx []int) table.Row {
	k := make(table.Row, len(idx))
	for i, j := range idx {
		k[i] = field(r, j)
	}
	return k
}

func (a *nestedUpdateAgg) keyTypes(idx []int) []table.DataType {
	ts := make([]table.DataType, len(idx))
	for i, j := range idx {
		ts[i] = a.rowType[j].Type
	}
	return ts
}

func (m *keyed) find(k table.Row) int {
	kt := m.a.keyTypes(m.a.key)
	for i, x := range m.keys {
		if !m.gone[i] && table.CompareRows(kt, x, k) == 0 {
			return i
		}
	}
	return -1
}

// acceptKey applies nested-key-null-strategy to a key with a null field.
func (a *nestedUpdateAgg) acceptKey(k table.Row) (bool, error) {
	for _, v := range k {
		if v == nil {
			switch a.nullPolicy {
			case "ignore":
				return false, nil
			case "error":
				return false, fmt.Errorf("nested key contains null values; primary key fields must not be null")
			}
			return true, nil
		}
	}
	return true, nil
}

// add upserts rows; limitNewKeys applies count-limit to new keys and
// lastWins skips the nested-sequence-field check (Java's retract path).
func (m *keyed) add(rows []table.Row, limitNewKeys, lastWins bool) error {
	a := m.a
	for _, r := range rows {
		k := a.project(r, a.key)
		ok, err := a.acceptKey(k)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if i := m.find(k); i >= 0 {
			if lastWins || len(a.seq) == 0 || table.CompareRows(a.keyTypes(a.seq), a.project(r, a.seq), a.project(m.rows[i], a.seq)) >= 0 {
				m.rows[i] = r
			}
			continue
		}
		if !limitNewKeys || m.live < a.countLimit {
			m.keys, m.rows, m.gone = append(m.keys, k), append(m.rows, r), append(m.gone, false)
			m.live++
		}
	}
	return nil
}

func (m *keyed) result() []any {
	var out []any
	for i, r := range m.rows {
		if !m.gone[i] {
			out = append(out, r)
		}
	}
	if out == nil {
		out = []any{}
	}
	return out
}

func (a *nestedUpdateAgg) agg(acc, in any) (any, error) {
	if in == nil {
		return acc, nil
	}
	input, err := a.rows(in)
	if err != nil {
		return nil, err
	}
	if len(a.key) == 0 {
		if acc == nil {
			return toArray(input[:min(len(input), a.countLimit)]), nil
		}
		raw, ok := acc.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: expected an ARRAY value ([]any), got %T", a.name, acc)
		}
		if len(raw) >= a.countLimit {
			return acc, nil
		}
		cur, err := a.rows(acc)
		if err != nil {
			return nil, err
		}
		remain := a.countLimit - len(raw)
		return toArray(append(cur, input[:min(len(input), remain)]...)), nil
	}
	m := &keyed{a: a}
	cur, err := a.rows(acc)
	if err != nil {
		return nil, err
	}
	if err := m.add(cur, false, false); err != nil {
		return nil, err
	}
	if err := m.add(input, true, false); err != nil {
		return nil, err
	}
	return m.result(), nil
}

func (a *nestedUpdateAgg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

func (a *nestedUpdateAgg) retract(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return acc, nil
	}
	cur, err := a.rows(acc)
	if err != nil {
		return nil, err
	}
	del, err := a.rows(in)
	if err != nil {
		return nil, err
	}
	if len(a.key) == 0 {
		var out []table.Row
	next:
		for _, r := range cur {
			for _, d := range del {
				if a.rowsEqual(r, d) {
					continue next
				}
			}
			out = append(out, r)
		}
		return toArray(out), nil
	}
	m := &keyed{a: a}
	if err := m.add(cur, false, true); err != nil {
		return nil, err
	}
	for _, d := range del {
		k := a.project(d, a.key)
		ok, err := a.acceptKey(k)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if i := m.find(k); i >= 0 {
			m.gone[i] = true
			m.live--
		}
	}
	return m.result(), nil
}

// nestedPartialUpdateAgg is FieldNestedPartialUpdateAgg over ARRAY<ROW>: the
// accumulator's rows then the input's rows are grouped by
// fields.<f>.nested-key (required) and each group is partially updated —
// a non-null field overwrites, a null one leaves the value. Groups keep
// first-seen order (Java's HashMap order is unspecified). Retraction is not
// supported.
type nestedPartialUpdateAgg struct {
	nested *nestedUpdateAgg
}

func newNestedPartialUpdate(base aggBase, f table.DataField, options map[string]string, bad func(string, ...any) error) (fieldAgg, error) {
	a, err := newNestedUpdate(base, f, options, bad)
	if err != nil {
		return nil, err
	}
	n := a.(*nestedUpdateAgg)
	if len(n.key) == 0 {
		return nil, fmt.Errorf("option %s is required by nested_partial_update on field %q", fieldKey(f.Name, "nested-key"), f.Name)
	}
	return &nestedPartialUpdateAgg{nested: n}, nil
}

func (a *nestedPartialUpdateAgg) agg(acc, in any) (any, error) {
	n := a.nested
	if in == nil {
		return acc, nil
	}
	cur, err := n.rows(acc)
	if err != nil {
		return nil, err
	}
	input, err := n.rows(in)
	if err != nil {
		return nil, err
	}
	m := &keyed{a: n}
	for _, r := range append(cur, input...) {
		k := n.project(r, n.key)
		ok, err := n.acceptKey(k)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		i := m.find(k)
		if i < 0 {
			m.keys, m.rows, m.gone = append(m.keys, k), append(m.rows, make(table.Row, len(n.rowType))), append(m.gone, false)
			i = len(m.rows) - 1
		}
		for j := range n.rowType {
			if v := field(r, j); v != nil {
				m.rows[i][j] = v
			}
		}
	}
	return m.result(), nil
}

func (a *nestedPartialUpdateAgg) aggReversed(acc, in any) (any, error) { return a.agg(in, acc) }
func (a *nestedPartialUpdateAgg) retract(acc, in any) (any, error) {
	return nil, fmt.Errorf(errUnsupportedRetracted, a.nested.name)
}
func (a *nestedPartialUpdateAgg) reset() {}
