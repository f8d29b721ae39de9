package interop

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/compactd/compactd/table"
)

// CanonicalRow converts a compactd row (table.Row, values as documented in table/row.go) into the
// canonical form the oracles print, normalized like ParseRows output, so a compactd scan can be
// compared with JavaOracle.Read using reflect.DeepEqual after SortRows.
func CanonicalRow(rt table.RowType, row table.Row) (Row, error) {
	if len(row) != len(rt) {
		return nil, fmt.Errorf("row has %d values for %d fields", len(row), len(rt))
	}
	out := make(Row, len(rt))
	for i, f := range rt {
		v, err := CanonicalValue(f.Type, row[i])
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		out[f.Name] = v
	}
	return out, nil
}

// CanonicalValue converts one compactd value of type t into its canonical, normalized form.
func CanonicalValue(t table.DataType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) { return nil, fmt.Errorf("value %T does not fit %s", v, t) }
	switch t.Root {
	case table.TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeBigInt, table.TypeDate, table.TypeTime:
		var n int64
		switch x := v.(type) {
		case int8:
			n = int64(x)
		case int16:
			n = int64(x)
		case int32:
			n = int64(x)
		case int64:
			n = x
		default:
			return bad()
		}
		switch t.Root {
		case table.TypeDate:
			return time.Unix(n*86400, 0).UTC().Format("2006-01-02"), nil
		case table.TypeTime:
			return fmt.Sprintf("%02d:%02d:%02d.%03d", n/3600000, n/60000%60, n/1000%60, n%1000), nil
		}
		return n, nil
	case table.TypeFloat, table.TypeDouble:
		var f float64
		switch x := v.(type) {
		case float32:
			f = float64(x)
		case float64:
			f = x
		default:
			return bad()
		}
		switch {
		case math.IsNaN(f):
			return "NaN", nil
		case math.IsInf(f, 1):
			return "Infinity", nil
		case math.IsInf(f, -1):
			return "-Infinity", nil
		}
		return f, nil
	case table.TypeChar, table.TypeVarChar:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case table.TypeBinary, table.TypeVarBinary, table.TypeVariant, table.TypeBlob:
		if b, ok := v.([]byte); ok {
			return base64.StdEncoding.EncodeToString(b), nil
		}
	case table.TypeDecimal:
		if d, ok := v.(table.Decimal); ok {
			return d.String(), nil
		}
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		if ts, ok := v.(table.Timestamp); ok {
			tm := time.UnixMilli(ts.Millis).UTC().Add(time.Duration(ts.NanoOfMilli))
			return tm.Format("2006-01-02T15:04:05.000000000"), nil
		}
	case table.TypeArray:
		if a, ok := v.([]any); ok && t.Element != nil {
			out := make([]any, len(a))
			for i, e := range a {
				c, err := CanonicalValue(*t.Element, e)
				if err != nil {
					return nil, err
				}
				out[i] = c
			}
			return out, nil
		}
	case table.TypeMap, table.TypeMultiset:
		m, ok := v.(*table.Map)
		if !ok {
			return bad()
		}
		kt, vt := t.Key, t.Value
		if t.Root == table.TypeMultiset {
			kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
		}
		if kt == nil || vt == nil {
			return bad()
		}
		pairs := make([]any, len(m.Keys))
		keys := make([]string, len(m.Keys))
		for i := range m.Keys {
			k, err := CanonicalValue(*kt, m.Keys[i])
			if err != nil {
				return nil, err
			}
			val, err := CanonicalValue(*vt, m.Values[i])
			if err != nil {
				return nil, err
			}
			pairs[i] = []any{k, val}
			kj, _ := json.Marshal(k)
			keys[i] = string(kj)
		}
		idx := make([]int, len(pairs))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
		out := make([]any, len(pairs))
		for i, j := range idx {
			out[i] = pairs[j]
		}
		return out, nil
	case table.TypeRow:
		if r, ok := v.(table.Row); ok {
			return CanonicalRow(table.RowType(t.Fields), r)
		}
	}
	return bad()
}
