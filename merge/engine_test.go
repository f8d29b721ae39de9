package merge

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/compactd/compactd/table"
)

type engineCase struct {
	name    string
	options map[string]string
	rt      table.RowType
	recs    []table.KeyValue
	want    string // fmtKVs of the output, or "" for no output
	wantErr string // substring of the expected error
}

func runEngineCases(t *testing.T, cases []engineCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := mergeRecords(t, c.options, c.rt, c.recs...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want one containing %q (output %s)", err, c.wantErr, fmtKVs(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("merge: %v", err)
			}
			if s := fmtKVs(got); s != c.want {
				t.Fatalf("got  %s\nwant %s", s, c.want)
			}
		})
	}
}

func TestDeduplicate(t *testing.T) {
	rt := schema("v", tString, "ts", tInt)
	runEngineCases(t, []engineCase{
		{name: "the newest record wins", rt: rt,
			recs: []table.KeyValue{rec("+I", 1, 1, "a", nil), rec("+U", 2, 1, "b", nil)},
			want: "+U2(1,b,null)"},
		{name: "a trailing delete is the result, kind included", rt: rt,
			recs: []table.KeyValue{rec("+I", 1, 1, "a", nil), rec("-D", 2, 1, "a", nil)},
			want: "-D2(1,a,null)"},
		{name: "ignore-delete skips retractions", rt: rt, options: map[string]string{"ignore-delete": "true"},
			recs: []table.KeyValue{rec("+I", 1, 1, "a", nil), rec("-D", 2, 1, "a", nil)},
			want: "+I1(1,a,null)"},
		{name: "the legacy key deduplicate.ignore-delete is honoured", rt: rt, options: map[string]string{"deduplicate.ignore-delete": "TRUE"},
			recs: []table.KeyValue{rec("+I", 1, 1, "a", nil), rec("-U", 2, 1, "a", nil)},
			want: "+I1(1,a,null)"},
		{name: "ignore-delete with only retractions yields no row", rt: rt, options: map[string]string{"ignore-delete": "true"},
			recs: []table.KeyValue{rec("-D", 1, 1, "a", nil), rec("-U", 2, 1, "b", nil)},
			want: ""},
		{name: "a lone delete passes the reducer unchanged even with ignore-delete", rt: rt, options: map[string]string{"ignore-delete": "true"},
			recs: []table.KeyValue{rec("-D", 7, 1, "a", nil)},
			want: "-D7(1,a,null)"},
		{name: "sequence.field decides the newest record before the system sequence", rt: rt, options: map[string]string{"sequence.field": "ts"},
			recs: []table.KeyValue{rec("+I", 1, 1, "a", int32(5)), rec("+I", 2, 1, "b", int32(3))},
			want: "+I1(1,a,5)"},
		{name: "descending sequence.field keeps the smallest value", rt: rt, options: map[string]string{"sequence.field": "ts", "sequence.field.sort-order": "descending"},
			recs: []table.KeyValue{rec("+I", 1, 1, "a", int32(5)), rec("+I", 2, 1, "b", int32(3))},
			want: "+I2(1,b,3)"},
		{name: "a null sequence field is the oldest even in descending order", rt: rt, options: map[string]string{"sequence.field": "ts", "sequence.field.sort-order": "descending"},
			recs: []table.KeyValue{rec("+I", 1, 1, "a", int32(3)), rec("+I", 2, 1, "b", nil)},
			want: "+I1(1,a,3)"},
		{name: "equal sequence fields fall back to the system sequence", rt: rt, options: map[string]string{"sequence.field": "ts"},
			recs: []table.KeyValue{rec("+I", 2, 1, "new", int32(3)), rec("+I", 1, 1, "old", int32(3))},
			want: "+I2(1,new,3)"},
		{name: "on a full tie the retraction is merged first", rt: rt,
			recs: []table.KeyValue{rec("+I", 5, 1, "a", nil), rec("-D", 5, 1, "a", nil)},
			want: "+I5(1,a,null)"},
	})
}

func TestFirstRow(t *testing.T) {
	rt := schema("v", tString)
	runEngineCases(t, []engineCase{
		{name: "the oldest addition wins", rt: rt, options: map[string]string{"merge-engine": "first-row"},
			recs: []table.KeyValue{rec("+I", 1, 1, "a"), rec("+I", 2, 1, "b")},
			want: "+I1(1,a)"},
		{name: "a retraction is an error without ignore-delete", rt: rt, options: map[string]string{"merge-engine": "first-row"},
			recs:    []table.KeyValue{rec("+I", 1, 1, "a"), rec("-D", 2, 1, "a")},
			wantErr: "can not accept DELETE/UPDATE_BEFORE"},
		{name: "ignore-delete skips retractions", rt: rt, options: map[string]string{"merge-engine": "first-row", "first-row.ignore-delete": "true"},
			recs: []table.KeyValue{rec("-D", 1, 1, "x"), rec("+I", 2, 1, "b"), rec("+I", 3, 1, "c")},
			want: "+I2(1,b)"},
	})
}

func TestPartialUpdate(t *testing.T) {
	pu := func(kv ...string) map[string]string {
		m := map[string]string{"merge-engine": "partial-update"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	plain := schema("a", tString, "b", tInt)
	grouped := schema("a", tString, "g1", tInt, "b", tString, "g2", tInt)
	aggGroup := schema("c", tInt, "g", tInt)
	multi := schema("a", tString, "g1", tInt, "g2", tInt)
	runEngineCases(t, []engineCase{
		{name: "nulls never overwrite", rt: plain, options: pu(),
			recs: []table.KeyValue{rec("+I", 1, 1, "a", nil), rec("+I", 2, 1, nil, int32(5))},
			want: "+I2(1,a,5)"},
		{name: "a delete is rejected by default", rt: plain, options: pu(),
			recs:    []table.KeyValue{rec("+I", 1, 1, "a", nil), rec("-D", 2, 1, "a", nil)},
			wantErr: "partial update can not accept delete records"},
		{name: "ignore-delete skips retractions and keeps the last addition's sequence", rt: plain, options: pu("ignore-delete", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, "a", int32(1)), rec("-D", 2, 1, "a", int32(1))},
			want: "+I1(1,a,1)"},
		{name: "only retractions under ignore-delete give -D with sequence 0 and the first retraction's values", rt: plain, options: pu("partial-update.ignore-delete", "true"),
			recs: []table.KeyValue{rec("-D", 1, 1, "a", int32(1)), rec("-U", 2, 1, "b", int32(2))},
			want: "-D0(1,a,1)"},
		{name: "remove-record-on-delete turns a trailing -D into a delete of the row", rt: plain, options: pu("partial-update.remove-record-on-delete", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, "a", int32(1)), rec("-D", 2, 1, "x", nil)},
			want: "-D2(1,x,null)"},
		{name: "remove-record-on-delete: an addition after -D starts from the -D's values", rt: plain, options: pu("partial-update.remove-record-on-delete", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, "a", int32(1)), rec("-D", 2, 1, "x", int32(7)), rec("+I", 3, 1, nil, int32(9))},
			want: "+I3(1,x,9)"},
		{name: "remove-record-on-delete ignores -U but takes its sequence", rt: plain, options: pu("partial-update.remove-record-on-delete", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, "a", int32(1)), rec("-U", 2, 1, "b", int32(2))},
			want: "+I2(1,a,1)"},
		{name: "an older group ordering leaves the group alone while a newer one overwrites even with null", rt: grouped,
			options: pu("fields.g1.sequence-group", "a", "fields.g2.sequence-group", "b"),
			recs:    []table.KeyValue{rec("+I", 1, 1, "a1", int32(1), "b1", int32(1)), rec("+I", 2, 1, "a2", int32(0), nil, int32(2))},
			want:    "+I2(1,a1,1,null,2)"},
		{name: "a group whose ordering fields are all null is skipped", rt: grouped,
			options: pu("fields.g1.sequence-group", "a", "fields.g2.sequence-group", "b"),
			recs:    []table.KeyValue{rec("+I", 1, 1, "a1", int32(1), "b1", int32(1)), rec("+I", 2, 1, "a2", nil, "b2", int32(3))},
			want:    "+I2(1,a1,1,b2,3)"},
		{name: "an aggregated protected field aggregates even when the input is older", rt: aggGroup,
			options: pu("fields.g.sequence-group", "c", "fields.c.aggregate-function", "sum"),
			recs:    []table.KeyValue{rec("+I", 1, 1, int32(1), int32(5)), rec("+I", 2, 1, int32(2), int32(3))},
			want:    "+I2(1,3,5)"},
		{name: "a retraction with a newer group ordering nulls the protected fields", rt: schema("a", tString, "g", tInt),
			options: pu("fields.g.sequence-group", "a"),
			recs:    []table.KeyValue{rec("+I", 1, 1, "a1", int32(1)), rec("-D", 2, 1, "a1", int32(2))},
			want:    "+I2(1,null,2)"},
		{name: "remove-record-on-sequence-group deletes the row on a -D of that group", rt: schema("a", tString, "g", tInt),
			options: pu("fields.g.sequence-group", "a", "partial-update.remove-record-on-sequence-group", "g"),
			recs:    []table.KeyValue{rec("+I", 1, 1, "a1", int32(1)), rec("-D", 2, 1, "a1", int32(2))},
			want:    "-D2(1,a1,2)"},
		{name: "a retraction older than the group only retracts aggregated fields", rt: schema("a", tString, "g", tInt),
			options: pu("fields.g.sequence-group", "a"),
			recs:    []table.KeyValue{rec("+I", 1, 1, "a1", int32(5)), rec("-D", 2, 1, "a1", int32(3))},
			want:    "+I2(1,a1,5)"},
		{name: "a retraction with a newer ordering retracts an aggregated field", rt: aggGroup,
			options: pu("fields.g.sequence-group", "c", "fields.c.aggregate-function", "sum"),
			recs:    []table.KeyValue{rec("+I", 1, 1, int32(10), int32(1)), rec("-U", 2, 1, int32(4), int32(2))},
			want:    "+I2(1,6,2)"},
		{name: "a multi-field group ordering compares its fields in turn", rt: multi,
			options: pu("fields.g1,g2.sequence-group", "a"),
			recs:    []table.KeyValue{rec("+I", 1, 1, "a1", int32(1), int32(5)), rec("+I", 2, 1, "a2", int32(1), int32(4))},
			want:    "+I2(1,a1,1,5)"},
		{name: "a multi-field group ordering advances all its fields together", rt: multi,
			options: pu("fields.g1,g2.sequence-group", "a"),
			recs:    []table.KeyValue{rec("+I", 1, 1, "a1", int32(1), int32(5)), rec("+I", 2, 1, "a3", int32(2), nil)},
			want:    "+I2(1,a3,2,null)"},
		{name: "a lone retraction passes the reducer without an error", rt: plain, options: pu(),
			recs: []table.KeyValue{rec("-D", 3, 1, "a", nil)},
			want: "-D3(1,a,null)"},
		{name: "a null in a NOT NULL column is an error", rt: schema("a", tIntNN), options: pu(),
			recs:    []table.KeyValue{rec("+I", 1, 1, int32(1)), rec("+I", 2, 1, nil)},
			wantErr: "can not be null"},
	})
}

func dec(unscaled int64, p, s int) table.Decimal {
	return table.Decimal{Unscaled: big.NewInt(unscaled), Precision: p, Scale: s}
}

func TestAggregation(t *testing.T) {
	agg := func(kv ...string) map[string]string {
		m := map[string]string{"merge-engine": "aggregation"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	one := func(typ table.DataType) table.RowType { return schema("v", typ) }
	tDec := table.DataType{Root: table.TypeDecimal, Precision: 5, Scale: 2, Nullable: true}
	tDec20 := table.DataType{Root: table.TypeDecimal, Precision: 20, Scale: 2, Nullable: true}
	tSmall := table.DataType{Root: table.TypeSmallInt, Nullable: true}
	runEngineCases(t, []engineCase{
		{name: "functions apply per field and unconfigured fields keep the last non-null value",
			rt:      schema("s", tInt, "p", tBigInt, "mx", tInt, "mn", tInt, "lv", tString, "lnn", tString),
			options: agg("fields.s.aggregate-function", "sum", "fields.p.aggregate-function", "product", "fields.mx.aggregate-function", "max", "fields.mn.aggregate-function", "min", "fields.lv.aggregate-function", "last_value"),
			recs: []table.KeyValue{
				rec("+I", 1, 1, int32(1), int64(2), int32(5), int32(5), "a", "x"),
				rec("+I", 2, 1, nil, int64(3), int32(7), int32(7), "b", nil),
				rec("+I", 3, 1, int32(4), nil, int32(6), int32(1), nil, "z"),
			},
			want: "+I3(1,5,6,7,1,null,z)"},
		{name: "fields.default-aggregate-function applies to every value field", rt: schema("a", tInt, "b", tInt),
			options: agg("fields.default-aggregate-function", "sum"),
			recs:    []table.KeyValue{rec("+I", 1, 1, int32(1), int32(10)), rec("+I", 2, 1, int32(2), int32(20))},
			want:    "+I2(1,3,30)"},
		{name: "sum retracts by subtraction and a null accumulator retracts to the negation", rt: one(tInt),
			options: agg("fields.v.aggregate-function", "sum"),
			recs:    []table.KeyValue{rec("-U", 1, 1, int32(3)), rec("+I", 2, 1, int32(10))},
			want:    "+I2(1,7)"},
		{name: "sum overflow is an error", rt: one(tSmall), options: agg("fields.v.aggregate-function", "sum"),
			recs:    []table.KeyValue{rec("+I", 1, 1, int16(32000)), rec("+I", 2, 1, int16(1000))},
			wantErr: "short overflow"},
		{name: "decimal sums keep the column's precision and scale", rt: one(tDec), options: agg("fields.v.aggregate-function", "sum"),
			recs: []table.KeyValue{rec("+I", 1, 1, dec(12345, 5, 2)), rec("+I", 2, 1, dec(-45, 5, 2))},
			want: "+I2(1,123.00)"},
		{name: "a decimal sum beyond a large precision becomes null", rt: one(tDec20), options: agg("fields.v.aggregate-function", "sum"),
			recs: []table.KeyValue{rec("+I", 1, 1, table.Decimal{Unscaled: new(big.Int).Exp(big.NewInt(10), big.NewInt(19), nil), Precision: 20, Scale: 2}), rec("+I", 2, 1, table.Decimal{Unscaled: new(big.Int).Mul(big.NewInt(9), new(big.Int).Exp(big.NewInt(10), big.NewInt(19), nil)), Precision: 20, Scale: 2})},
			want: "+I2(1,null)"},
		{name: "product retracts by division", rt: one(tDouble), options: agg("fields.v.aggregate-function", "product"),
			recs: []table.KeyValue{rec("+I", 1, 1, 6.0), rec("+I", 2, 1, 4.0), rec("-U", 3, 1, 2.0)},
			want: "+I3(1,12)"},
		{name: "integer product division by zero is an error", rt: one(tInt), options: agg("fields.v.aggregate-function", "product"),
			recs:    []table.KeyValue{rec("+I", 1, 1, int32(6)), rec("-U", 2, 1, int32(0))},
			wantErr: "/ by zero"},
		{name: "max does not support retraction", rt: one(tInt), options: agg("fields.v.aggregate-function", "max"),
			recs:    []table.KeyValue{rec("+I", 1, 1, int32(6)), rec("-U", 2, 1, int32(6))},
			wantErr: "ignore-retract"},
		{name: "ignore-retract leaves the accumulator unchanged", rt: one(tInt), options: agg("fields.v.aggregate-function", "max", "fields.v.ignore-retract", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, int32(6)), rec("-U", 2, 1, int32(9)), rec("+I", 3, 1, int32(4))},
			want: "+I3(1,6)"},
		{name: "last_value retracts to null", rt: one(tString), options: agg("fields.v.aggregate-function", "last_value"),
			recs: []table.KeyValue{rec("+I", 1, 1, "a"), rec("-U", 2, 1, "a")},
			want: "+I2(1,null)"},
		{name: "last_non_null_value retracts to null only for a non-null input", rt: schema("a", tString, "b", tString), options: agg(),
			recs: []table.KeyValue{rec("+I", 1, 1, "a", "b"), rec("-U", 2, 1, "a", nil)},
			want: "+I2(1,null,b)"},
		{name: "first_value keeps the first value even if null while first_non_null_value skips nulls", rt: schema("f", tInt, "fnn", tInt),
			options: agg("fields.f.aggregate-function", "first_value", "fields.fnn.aggregate-function", "first_not_null_value"),
			recs:    []table.KeyValue{rec("+I", 1, 1, nil, nil), rec("+I", 2, 1, int32(2), int32(2)), rec("+I", 3, 1, int32(3), int32(3))},
			want:    "+I3(1,null,2)"},
		{name: "listagg joins non-blank values with the delimiter", rt: one(tString), options: agg("fields.v.aggregate-function", "listagg", "fields.v.list-agg-delimiter", "|"),
			recs: []table.KeyValue{rec("+I", 1, 1, "a"), rec("+I", 2, 1, " \t"), rec("+I", 3, 1, "b")},
			want: "+I3(1,a|b)"},
		{name: "distinct listagg skips tokens already present", rt: one(tString), options: agg("fields.v.aggregate-function", "listagg", "fields.v.distinct", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, "a,b"), rec("+I", 2, 1, "b,c,,a")},
			want: "+I2(1,a,b,c)"},
		{name: "bool_and and bool_or ignore nulls", rt: schema("x", tBool, "y", tBool),
			options: agg("fields.x.aggregate-function", "bool_and", "fields.y.aggregate-function", "bool_or"),
			recs:    []table.KeyValue{rec("+I", 1, 1, true, false), rec("+I", 2, 1, nil, nil), rec("+I", 3, 1, false, true)},
			want:    "+I3(1,false,true)"},
		{name: "collect concatenates arrays", rt: one(tIntList), options: agg("fields.v.aggregate-function", "collect"),
			recs: []table.KeyValue{rec("+I", 1, 1, []any{int32(1), int32(2)}), rec("+I", 2, 1, []any{int32(2), nil})},
			want: "+I2(1,[1 2 2 null])"},
		{name: "distinct collect drops duplicates", rt: one(tIntList), options: agg("fields.v.aggregate-function", "collect", "fields.v.distinct", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, []any{int32(1), int32(1)}), rec("+I", 2, 1, []any{int32(2), int32(1)})},
			want: "+I2(1,[1 2])"},
		{name: "collect retraction removes one occurrence per retracted element", rt: one(tIntList), options: agg("fields.v.aggregate-function", "collect"),
			recs: []table.KeyValue{rec("+I", 1, 1, []any{int32(1), int32(2), int32(2)}), rec("-U", 2, 1, []any{int32(2)})},
			want: "+I2(1,[1 2])"},
		{name: "merge_map merges key-wise with the input winning", rt: one(tMap), options: agg("fields.v.aggregate-function", "merge_map"),
			recs: []table.KeyValue{rec("+I", 1, 1, &table.Map{Keys: []any{"a", "b"}, Values: []any{int32(1), int32(2)}}), rec("+I", 2, 1, &table.Map{Keys: []any{"b", "c"}, Values: []any{int32(3), int32(4)}})},
			want: "+I2(1,{a:1 b:3 c:4})"},
		{name: "merge_map retraction removes the retracted keys", rt: one(tMap), options: agg("fields.v.aggregate-function", "merge_map"),
			recs: []table.KeyValue{rec("+I", 1, 1, &table.Map{Keys: []any{"a", "b"}, Values: []any{int32(1), int32(2)}}), rec("-U", 2, 1, &table.Map{Keys: []any{"a"}, Values: []any{int32(9)}})},
			want: "+I2(1,{b:2})"},
		{name: "remove-record-on-delete: a trailing -D yields -D with its own values", rt: one(tInt), options: agg("fields.v.aggregate-function", "sum", "aggregation.remove-record-on-delete", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, int32(1)), rec("-D", 2, 1, int32(10))},
			want: "-D2(1,10)"},
		{name: "remove-record-on-delete: an addition after -D aggregates on the -D's values", rt: one(tInt), options: agg("fields.v.aggregate-function", "sum", "aggregation.remove-record-on-delete", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, int32(1)), rec("-D", 2, 1, int32(10)), rec("+I", 3, 1, int32(5))},
			want: "+I3(1,15)"},
		{name: "a -D without remove-record-on-delete retracts and gives +I", rt: one(tInt), options: agg("fields.v.aggregate-function", "sum"),
			recs: []table.KeyValue{rec("+I", 1, 1, int32(7)), rec("-D", 2, 1, int32(7))},
			want: "+I2(1,0)"},
		{name: "ignore-delete is not consulted by the aggregation merge", rt: one(tInt), options: agg("fields.v.aggregate-function", "sum", "ignore-delete", "true"),
			recs: []table.KeyValue{rec("+I", 1, 1, int32(7)), rec("-U", 2, 1, int32(2))},
			want: "+I2(1,5)"},
		{name: "sequence.field columns aggregate as last_value and order the records", rt: schema("v", tInt, "ts", tInt),
			options: agg("fields.v.aggregate-function", "sum", "sequence.field", "ts"),
			recs:    []table.KeyValue{rec("+I", 1, 1, int32(1), int32(9)), rec("+I", 2, 1, int32(2), nil)},
			want:    "+I1(1,3,9)"},
		{name: "a lone -D passes unchanged", rt: one(tInt), options: agg("fields.v.aggregate-function", "sum"),
			recs: []table.KeyValue{rec("-D", 4, 1, int32(7))},
			want: "-D4(1,7)"},
	})
}

func TestValidate(t *testing.T) {
	rt := schema("a", tString, "n", tInt, "g", tInt, "arr", tIntList)
	cases := []struct {
		name    string
		options map[string]string
		wantErr string // "" = valid
	}{
		{"the default engine is valid", nil, ""},
		{"an unknown merge engine names the option", map[string]string{"merge-engine": "upsert"}, "merge-engine"},
		{"engine names are case-insensitive", map[string]string{"merge-engine": "Partial-Update"}, ""},
		{"a missing sequence field names the option", map[string]string{"sequence.field": "nope"}, "sequence.field"},
		{"an empty sequence field is refused", map[string]string{"sequence.field": ""}, "sequence.field"},
		{"a trailing comma in sequence.field is dropped, as Java's split drops it", map[string]string{"sequence.field": "n,"}, ""},
		{"a repeated sequence field is rejected", map[string]string{"sequence.field": "n, n"}, "repeatedly"},
		{"an aggregate function on a sequence field is rejected", map[string]string{"sequence.field": "n", "merge-engine": "aggregation", "fields.n.aggregate-function": "sum"}, "fields.n.aggregate-function"},
		{"a bad sort order is rejected", map[string]string{"sequence.field.sort-order": "up"}, "sequence.field.sort-order"},
		{"first-row with sequence.field is rejected", map[string]string{"merge-engine": "first-row", "sequence.field": "n"}, "first-row"},
		{"a bad boolean names the option", map[string]string{"ignore-delete": "yes"}, "ignore-delete"},
		{"a fields option on an unknown column is rejected", map[string]string{"fields.zz.aggregate-function": "sum"}, "fields.zz.aggregate-function"},
		{"an unknown aggregate function names the option", map[string]string{"merge-engine": "aggregation", "fields.n.aggregate-function": "sumx"}, "fields.n.aggregate-function"},
		{"an unimplemented sketch function is refused", map[string]string{"merge-engine": "aggregation", "fields.a.aggregate-function": "hll_sketch"}, "not implemented"},
		{"an unknown default function names the default option", map[string]string{"merge-engine": "aggregation", "fields.default-aggregate-function": "nope"}, "fields.default-aggregate-function"},
		{"sum on a string column is rejected", map[string]string{"merge-engine": "aggregation", "fields.a.aggregate-function": "sum"}, "numeric"},
		{"max on an array column is rejected", map[string]string{"merge-engine": "aggregation", "fields.arr.aggregate-function": "max"}, "comparable"},
		{"aggregation without any function option is valid", map[string]string{"merge-engine": "aggregation"}, ""},
		{"ignore-retract conflicts with aggregation.remove-record-on-delete", map[string]string{"merge-engine": "aggregation", "aggregation.remove-record-on-delete": "true", "fields.n.ignore-retract": "true"}, "conflicting"},
		{"partial-update aggregate without a sequence group is rejected", map[string]string{"merge-engine": "partial-update", "fields.n.aggregate-function": "sum"}, "sequence group"},
		{"partial-update last_non_null_value needs no sequence group", map[string]string{"merge-engine": "partial-update", "fields.n.aggregate-function": "last_non_null_value"}, ""},
		{"partial-update aggregate under a sequence group is valid", map[string]string{"merge-engine": "partial-update", "fields.g.sequence-group": "n", "fields.n.aggregate-function": "sum"}, ""},
		{"a primary key in a sequence group is rejected", map[string]string{"merge-engine": "partial-update", "fields.g.sequence-group": "k"}, "primary key"},
		{"a field protected by two groups is rejected", map[string]string{"merge-engine": "partial-update", "fields.g.sequence-group": "a", "fields.n.sequence-group": "a"}, "repeatedly"},
		{"remove-record-on-delete conflicts with ignore-delete", map[string]string{"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true", "ignore-delete": "true"}, "conflicting"},
		{"remove-record-on-delete conflicts with sequence groups", map[string]string{"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true", "fields.g.sequence-group": "a"}, "conflicting"},
		{"remove-record-on-sequence-group conflicts with ignore-delete", map[string]string{"merge-engine": "partial-update", "fields.g.sequence-group": "a", "partial-update.remove-record-on-sequence-group": "g", "ignore-delete": "true"}, "conflicting"},
		{"remove-record-on-sequence-group must name an ordering field", map[string]string{"merge-engine": "partial-update", "fields.g.sequence-group": "a", "partial-update.remove-record-on-sequence-group": "n"}, "must be part of sequence groups"},
		{"a rowkind field must exist", map[string]string{"rowkind.field": "kind"}, "rowkind.field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.options, rt, []string{"k"})
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
			}
		})
	}
	bounded := table.RowType{{Name: "k", Type: tIntNN}, {ID: 1, Name: "s", Type: table.DataType{Root: table.TypeVarChar, Length: 10, Nullable: true}}}
	if err := Validate(map[string]string{"merge-engine": "aggregation", "fields.s.aggregate-function": "listagg"}, bounded, []string{"k"}); err == nil || !strings.Contains(err.Error(), "unbounded") {
		t.Fatalf("listagg on VARCHAR(10): error = %v, want unbounded-string error", err)
	}
	if _, err := NewMergeFunction(nil, rt, nil); err == nil {
		t.Fatal("a table without primary key was accepted")
	}
}

func TestErrorsAreMatchable(t *testing.T) {
	_, err := mergeRecords(t, map[string]string{"merge-engine": "partial-update"}, schema("a", tString),
		rec("+I", 1, 1, "a"), rec("-D", 2, 1, "a"))
	if !errors.Is(err, ErrPartialUpdateDelete) {
		t.Fatalf("error %v does not wrap ErrPartialUpdateDelete", err)
	}
}

func TestPartitionColumnsOfThePrimaryKeyPassThroughAggregation(t *testing.T) {
	rt := table.RowType{
		{ID: 0, Name: "dt", Type: tString},
		{ID: 1, Name: "k", Type: tIntNN},
		{ID: 2, Name: "v", Type: tInt},
	}
	e, err := NewEngine(map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}, rt, []string{"dt", "k"}, "dt")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.KeyTypes()) != 1 || e.KeyTypes()[0].Root != table.TypeInt {
		t.Fatalf("key types %v, want the trimmed key (k INT)", e.KeyTypes())
	}
	kv := func(kind table.RowKind, seq int64, v int32) table.KeyValue {
		return table.KeyValue{Key: table.Row{int32(1)}, Seq: seq, Kind: kind, Value: table.Row{"2024-01-01", int32(1), v}}
	}
	got, err := Collect(e.NewReader(context.Background(), []Iterator{
		FromSlice([]table.KeyValue{kv(table.RowKindInsert, 1, 5)}),
		FromSlice([]table.KeyValue{kv(table.RowKindUpdateBefore, 2, 2)}),
	}, false))
	if err != nil {
		t.Fatal(err)
	}
	// The retraction keeps dt (primary-key aggregator) instead of nulling it
	// (last_non_null_value's retract).
	if want := "+I2(2024-01-01,1,3)"; fmtKVs(got) != want {
		t.Fatalf("got %s, want %s", fmtKVs(got), want)
	}
	if _, err := NewEngine(nil, rt, []string{"dt"}, "dt"); err == nil {
		t.Fatal("a primary key equal to the partition keys was accepted")
	}
}

func TestAggregationMapWithKeyTimeAndNestedUpdate(t *testing.T) {
	agg := func(kv ...string) map[string]string {
		m := map[string]string{"merge-engine": "aggregation"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	valRow := table.DataType{Root: table.TypeRow, Nullable: true, Fields: []table.DataField{{Name: "v", Type: tInt}, {ID: 1, Name: "ts", Type: tString}}}
	tKeyTime := table.DataType{Root: table.TypeMap, Key: &tString, Value: &valRow, Nullable: true}
	nestedRow := table.DataType{Root: table.TypeRow, Nullable: true, Fields: []table.DataField{{Name: "id", Type: tInt}, {ID: 1, Name: "v", Type: tString}, {ID: 2, Name: "s", Type: tInt}}}
	tNested := table.DataType{Root: table.TypeArray, Element: &nestedRow, Nullable: true}
	m := func(kv ...any) *table.Map {
		out := &table.Map{}
		for i := 0; i < len(kv); i += 2 {
			out.Keys = append(out.Keys, kv[i])
			out.Values = append(out.Values, kv[i+1])
		}
		return out
	}
	r := func(vals ...any) table.Row { return table.Row(vals) }
	arr := func(rows ...any) []any { return rows }
	runEngineCases(t, []engineCase{
		{name: "merge_map_with_keytime keeps the row with the larger timestamp per key", rt: schema("v", tKeyTime),
			options: agg("fields.v.aggregate-function", "merge_map_with_keytime"),
			recs: []table.KeyValue{
				rec("+I", 1, 1, m("a", r(int32(1), "2024-01-02"), "b", r(int32(2), "2024-01-01"))),
				rec("+I", 2, 1, m("a", r(int32(9), "2024-01-01"), "b", r(int32(8), "2024-01-05"), "c", r(int32(3), nil), "d", r(int32(4), "x"))),
				rec("+I", 3, 1, m("a", nil)),
			},
			want: "+I3(1,{b:[8 2024-01-05] d:[4 x]})"},
		{name: "merge_map_with_keytime does not support retraction", rt: schema("v", tKeyTime),
			options: agg("fields.v.aggregate-function", "merge_map_with_keytime"),
			recs:    []table.KeyValue{rec("+I", 1, 1, m("a", r(int32(1), "t"))), rec("-U", 2, 1, m("a", r(int32(1), "t")))},
			wantErr: "does not support retraction"},
		{name: "nested_update without a key appends non-null rows", rt: schema("v", tNested),
			options: agg("fields.v.aggregate-function", "nested_update"),
			recs:    []table.KeyValue{rec("+I", 1, 1, arr(r(int32(1), "a", nil))), rec("+I", 2, 1, arr(r(int32(1), "a", nil), nil))},
			want:    "+I2(1,[[1 a <nil>] [1 a <nil>]])"},
		{name: "nested_update count-limit stops appending", rt: schema("v", tNested),
			options: agg("fields.v.aggregate-function", "nested_update", "fields.v.count-limit", "2"),
			recs:    []table.KeyValue{rec("+I", 1, 1, arr(r(int32(1), "a", nil), r(int32(2), "b", nil))), rec("+I", 2, 1, arr(r(int32(3), "c", nil)))},
			want:    "+I2(1,[[1 a <nil>] [2 b <nil>]])"},
		{name: "nested_update upserts by nested key", rt: schema("v", tNested),
			options: agg("fields.v.aggregate-function", "nested_update", "fields.v.nested-key", "id"),
			recs:    []table.KeyValue{rec("+I", 1, 1, arr(r(int32(1), "a", int32(1)), r(int32(2), "b", int32(1)))), rec("+I", 2, 1, arr(r(int32(1), "x", int32(0)), r(int32(3), "c", int32(1))))},
			want:    "+I2(1,[[1 x 0] [2 b 1] [3 c 1]])"},
		{name: "nested_update keeps a row whose nested sequence is newer", rt: schema("v", tNested),
			options: agg("fields.v.aggregate-function", "nested_update", "fields.v.nested-key", "id", "fields.v.nested-sequence-field", "s"),
			recs:    []table.KeyValue{rec("+I", 1, 1, arr(r(int32(1), "a", int32(1)))), rec("+I", 2, 1, arr(r(int32(1), "x", int32(0))))},
			want:    "+I2(1,[[1 a 1]])"},
		{name: "nested_update retraction removes rows by nested key", rt: schema("v", tNested),
			options: agg("fields.v.aggregate-function", "nested_update", "fields.v.nested-key", "id"),
			recs:    []table.KeyValue{rec("+I", 1, 1, arr(r(int32(1), "a", nil), r(int32(2), "b", nil))), rec("-U", 2, 1, arr(r(int32(2), "zzz", nil)))},
			want:    "+I2(1,[[1 a <nil>]])"},
		{name: "nested_update ignore strategy drops rows with a null nested key", rt: schema("v", tNested),
			options: agg("fields.v.aggregate-function", "nested_update", "fields.v.nested-key", "id", "fields.v.nested-key-null-strategy", "ignore"),
			recs:    []table.KeyValue{rec("+I", 1, 1, arr(r(int32(1), "a", nil))), rec("+I", 2, 1, arr(r(nil, "b", nil)))},
			want:    "+I2(1,[[1 a <nil>]])"},
		{name: "nested_partial_update merges non-null fields of rows with the same nested key", rt: schema("v", tNested),
			options: agg("fields.v.aggregate-function", "nested_partial_update", "fields.v.nested-key", "id"),
			recs:    []table.KeyValue{rec("+I", 1, 1, arr(r(int32(1), "a", nil))), rec("+I", 2, 1, arr(r(int32(1), nil, int32(5)), nil, r(int32(2), "b", nil)))},
			want:    "+I2(1,[[1 a 5] [2 b <nil>]])"},
		{name: "nested_update error strategy fails on a null nested key", rt: schema("v", tNested),
			options: agg("fields.v.aggregate-function", "nested_update", "fields.v.nested-key", "id", "fields.v.nested-key-null-strategy", "error"),
			recs:    []table.KeyValue{rec("+I", 1, 1, arr(r(int32(1), "a", nil))), rec("+I", 2, 1, arr(r(nil, "b", nil)))},
			wantErr: "nested key contains null"},
	})
	if err := Validate(agg("fields.v.aggregate-function", "nested_partial_update"), schema("v", tNested), []string{"k"}); err == nil || !strings.Contains(err.Error(), "nested-key") {
		t.Fatalf("nested_partial_update without nested-key: error = %v", err)
	}
	if err := Validate(agg("fields.v.aggregate-function", "nested_update", "fields.v.nested-sequence-field", "s"), schema("v", tNested), []string{"k"}); err == nil || !strings.Contains(err.Error(), "nested-key") {
		t.Fatalf("nested-sequence-field without nested-key: error = %v", err)
	}
	if err := Validate(agg("fields.v.aggregate-function", "nested_update", "fields.v.nested-key", "nope"), schema("v", tNested), []string{"k"}); err == nil || !strings.Contains(err.Error(), "fields.v.nested-key") {
		t.Fatalf("unknown nested key: error = %v", err)
	}
	if err := Validate(agg("fields.v.aggregate-function", "merge_map_with_keytime", "fields.v.ts-field", "nope"), schema("v", tKeyTime), []string{"k"}); err == nil || !strings.Contains(err.Error(), "fields.v.ts-field") {
		t.Fatalf("unknown ts field: error = %v", err)
	}
}
