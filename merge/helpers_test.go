package merge

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/compactd/compactd/table"
)

var (
	tInt     = table.DataType{Root: table.TypeInt, Nullable: true}
	tIntNN   = table.DataType{Root: table.TypeInt}
	tBigInt  = table.DataType{Root: table.TypeBigInt, Nullable: true}
	tString  = table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true}
	tDouble  = table.DataType{Root: table.TypeDouble, Nullable: true}
	tBool    = table.DataType{Root: table.TypeBoolean, Nullable: true}
	tIntList = table.DataType{Root: table.TypeArray, Element: &tInt, Nullable: true}
	tMap     = table.DataType{Root: table.TypeMap, Key: &tString, Value: &tInt, Nullable: true}
)

// schema builds a row type "k INT NOT NULL" followed by the given columns.
func schema(cols ...any) table.RowType {
	rt := table.RowType{{ID: 0, Name: "k", Type: tIntNN}}
	for i := 0; i < len(cols); i += 2 {
		rt = append(rt, table.DataField{ID: len(rt), Name: cols[i].(string), Type: cols[i+1].(table.DataType)})
	}
	return rt
}

// rec builds a record of key k: "+I"/"-U"/"+U"/"-D", sequence number and the
// non-key values.
func rec(kind string, seq int64, k int32, vals ...any) table.KeyValue {
	rk, err := table.ParseRowKind(kind)
	if err != nil {
		panic(err)
	}
	v := append(table.Row{k}, vals...)
	return table.KeyValue{Key: table.Row{k}, Seq: seq, Kind: rk, Value: v}
}

// mergeRecords merges records of (usually) one key, each in its own run, as
// a non-top-level compaction would (retractions kept).
func mergeRecords(t *testing.T, options map[string]string, rt table.RowType, recs ...table.KeyValue) ([]table.KeyValue, error) {
	t.Helper()
	e, err := NewEngine(options, rt, []string{"k"})
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	runs := make([]Iterator, len(recs))
	for i, r := range recs {
		runs[i] = FromSlice([]table.KeyValue{r})
	}
	return Collect(e.NewReader(context.Background(), runs, false))
}

func fmtKV(kv table.KeyValue) string {
	parts := make([]string, len(kv.Value))
	for i, v := range kv.Value {
		parts[i] = fmtVal(v)
	}
	return fmt.Sprintf("%s%d(%s)", kv.Kind.ShortString(), kv.Seq, strings.Join(parts, ","))
}

func fmtVal(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmtVal(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case *table.Map:
		parts := make([]string, len(x.Keys))
		for i := range x.Keys {
			parts[i] = fmtVal(x.Keys[i]) + ":" + fmtVal(x.Values[i])
		}
		return "{" + strings.Join(parts, " ") + "}"
	case table.Decimal:
		return x.String()
	}
	return fmt.Sprint(v)
}

func fmtKVs(kvs []table.KeyValue) string {
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = fmtKV(kv)
	}
	return strings.Join(parts, " ")
}
