package datafile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/table"
)

func tableFiles(t *testing.T, tbl string) (testSchema, map[string][]string) {
	t.Helper()
	dir := filepath.Join(fixtureRoot, "parquet", tbl)
	schemas := loadSchemas(t, dir)
	files := map[string][]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && filepath.Ext(p) == ".parquet" {
			files[filepath.Base(filepath.Dir(p))] = append(files[filepath.Base(filepath.Dir(p))], p)
		}
		return nil
	})
	return schemas[len(schemas)-1], files
}

// TestNestedPrimaryKeyTableContent checks records of pk_table_nested_type
// against the rows its README lists (ROW with an ARRAY inside, MAP).
func TestNestedPrimaryKeyTableContent(t *testing.T) {
	s, files := tableFiles(t, "pk_table_nested_type.db/pk_table_nested_type")
	byKey := map[int32][]table.KeyValue{}
	for _, fs := range files {
		for _, p := range fs {
			for _, kv := range readAllKV(t, p, s.schema(), s.schema()) {
				byKey[kv.Key[0].(int32)] = append(byKey[kv.Key[0].(int32)], kv)
			}
		}
	}
	row := func(id, col0 int32, f0 string, f1 int32, arr []any, mk, mv []any) table.Row {
		return table.Row{id, "2025-04-14", int32(10), col0,
			table.Row{f0, f1, arr}, &table.Map{Keys: mk, Values: mv}}
	}
	want := map[int32][]table.KeyValue{}
	for i := int32(0); i < 5; i++ {
		want[1000+i] = []table.KeyValue{{Key: table.Row{1000 + i}, Kind: table.RowKindInsert,
			Value: row(1000+i, 10*i, "str-"+string(rune('0'+i)), 100*i, []any{i, nil, i + 1}, []any{i, 100 + i}, []any{i, 100 + i})}}
	}
	second := map[int32]table.RowKind{1000: table.RowKindDelete, 1001: table.RowKindUpdateAfter, 1002: table.RowKindDelete, 1003: table.RowKindUpdateBefore}
	for id, kind := range second {
		kv := want[id][0]
		kv.Kind = kind
		want[id] = append(want[id], kv)
	}
	for id, kvs := range want {
		got := byKey[id]
		if len(got) != len(kvs) {
			t.Fatalf("key %d: %d records, want %d", id, len(got), len(kvs))
		}
		for i := range kvs {
			if got[i].Kind != kvs[i].Kind || !valuesEqual(got[i].Key, kvs[i].Key) || !valuesEqual(got[i].Value, kvs[i].Value) {
				t.Errorf("key %d record %d:\n got  %s %v\n want %s %v", id, i, got[i].Kind.ShortString(), got[i].Value, kvs[i].Kind.ShortString(), kvs[i].Value)
			}
		}
		if len(got) == 2 && got[1].Seq <= got[0].Seq {
			t.Errorf("key %d: later record has sequence %d <= %d", id, got[1].Seq, got[0].Seq)
		}
	}
	if len(byKey) != 8 {
		t.Errorf("%d keys, want 8", len(byKey))
	}
}

// TestTimestampPrecisionsContent checks millis/micros INT64 and INT96
// columns, with and without local time zone, against the README.
func TestTimestampPrecisionsContent(t *testing.T) {
	s, files := tableFiles(t, "append_with_multiple_ts_precision_and_timezone.db/append_with_multiple_ts_precision_and_timezone")
	var rows []table.Row
	for _, fs := range files {
		for _, p := range fs {
			rows = append(rows, readAllRows(t, p, s.Fields, s.Fields)...)
		}
	}
	ts := func(ms int64, ns int32) any { return table.Timestamp{Millis: ms, NanoOfMilli: ns} }
	want := []table.Row{
		{ts(1000, 0), ts(1, 0), ts(0, 1000), ts(0, 1), ts(2000, 0), ts(2, 0), ts(0, 2000), ts(0, 2)},
		{ts(3000, 0), ts(3, 0), nil, ts(0, 3), ts(4000, 0), ts(4, 0), ts(0, 4000), ts(0, 4)},
		{ts(5000, 0), ts(5, 0), nil, nil, ts(6000, 0), nil, ts(0, 6000), nil},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i := range want {
		if !valuesEqual(rows[i], want[i]) {
			t.Errorf("row %d: got %v, want %v", i, rows[i], want[i])
		}
	}
}

// TestAvroDataFiles reads every Avro data file of the fixtures and checks
// the contents of two tables against their READMEs.
func TestAvroDataFiles(t *testing.T) {
	dbs, _ := filepath.Glob(filepath.Join(fixtureRoot, "avro", "*.db", "*", "schema"))
	if len(dbs) == 0 {
		t.Fatal("no Avro fixture tables")
	}
	got := map[string][]any{}
	for _, sd := range dbs {
		dir := filepath.Dir(sd)
		schemas := loadSchemas(t, dir)
		s := schemas[len(schemas)-1]
		name := filepath.Base(dir)
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err != nil || filepath.Ext(p) != ".avro" {
				return nil
			}
			if len(s.PrimaryKeys) > 0 {
				for _, kv := range readAllKV(t, p, s.schema(), s.schema()) {
					got[name] = append(got[name], kv)
				}
			} else {
				for _, r := range readAllRows(t, p, s.Fields, s.Fields) {
					got[name] = append(got[name], r)
				}
			}
			return nil
		})
		if len(got[name]) == 0 {
			t.Errorf("%s: no records read", name)
		}
	}
	ts := func(ms int64, ns int32) any { return table.Timestamp{Millis: ms, NanoOfMilli: ns} }
	wantTS := []any{
		table.Row{ts(1000, 0), ts(1, 0), ts(0, 1000), ts(2000, 0), ts(2, 0), ts(0, 2000)},
		table.Row{nil, ts(3, 0), nil, nil, ts(4, 0), nil},
		table.Row{ts(5000, 0), nil, ts(0, 5000), ts(6000, 0), nil, ts(0, 6000)},
	}
	if !valuesEqual(got["append_with_multiple_ts_precision_and_timezone"], wantTS) {
		t.Errorf("timestamps: got %v", got["append_with_multiple_ts_precision_and_timezone"])
	}
	var pk []string
	for _, x := range got["pk_with_multiple_type"] {
		kv := x.(table.KeyValue)
		pk = append(pk, kv.Kind.ShortString()+kv.Key[1].(string))
		v := kv.Value
		if v[3] != int32(1) || v[4] != int64(1000) || v[6] != 2.5 || string(v[8].([]byte)) != "abcdef" || v[9] != int32(100) ||
			v[10].(table.Decimal).String() != "123.45" {
			t.Errorf("pk_with_multiple_type value %v", v)
		}
		nested := v[11].(table.Row)
		m := nested[0].(*table.Map)
		if !valuesEqual(m.Keys, []any{"key"}) || !valuesEqual(m.Values, []any{int32(123)}) || !valuesEqual(nested[1], []any{int32(1), int32(2), int32(3)}) {
			t.Errorf("pk_with_multiple_type nested %v", nested)
		}
	}
	if want := "+IAlice +IBob +IEmily +ITony -DEmily +ILucy"; strings.Join(pk, " ") != want {
		t.Errorf("pk_with_multiple_type records %v, want %s", pk, want)
	}
}
