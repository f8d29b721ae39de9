package datafile

import (
	"context"
	"errors"
	"io"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/cast"
)

func mustType(t testing.TB, s string) table.DataType {
	t.Helper()
	dt, err := table.ParseAtomicType(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return dt
}

func ptr(t table.DataType) *table.DataType { return &t }

// allTypesSchema has a column of every type the Parquet mapping covers,
// nested ones included; ids start at 0 as in Paimon.
func allTypesSchema(t testing.TB) table.RowType {
	atomic := []string{
		"BOOLEAN", "TINYINT", "SMALLINT", "INT NOT NULL", "BIGINT", "FLOAT", "DOUBLE",
		"DECIMAL(5, 2)", "DECIMAL(18, 4)", "DECIMAL(38, 10)", "DECIMAL(20, 0)",
		"CHAR(3)", "VARCHAR(20)", "STRING", "BINARY(4)", "BYTES", "DATE", "TIME(0)",
		"TIMESTAMP(0)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)",
		"TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP(9) WITH LOCAL TIME ZONE",
	}
	var fields table.RowType
	id := 0
	for _, s := range atomic {
		fields = append(fields, table.DataField{ID: id, Name: "c" + string(rune('a'+id%26)) + string(rune('0'+id/26)), Type: mustType(t, s)})
		id++
	}
	intT := mustType(t, "INT")
	strT := mustType(t, "STRING")
	nested := []table.DataType{
		{Root: table.TypeArray, Nullable: true, Element: ptr(intT)},
		{Root: table.TypeArray, Nullable: true, Element: &table.DataType{Root: table.TypeArray, Nullable: true, Element: ptr(strT)}},
		{Root: table.TypeMap, Nullable: true, Key: ptr(strT.WithNullable(false)), Value: ptr(intT)},
		{Root: table.TypeMultiset, Nullable: true, Element: ptr(strT)},
		{Root: table.TypeRow, Nullable: true, Fields: []table.DataField{
			{ID: 100, Name: "f0", Type: strT},
			{ID: 101, Name: "f1", Type: mustType(t, "DECIMAL(10, 2)")},
			{ID: 102, Name: "f2", Type: table.DataType{Root: table.TypeArray, Nullable: true, Element: ptr(mustType(t, "TIMESTAMP(6)"))}},
		}},
		{Root: table.TypeArray, Nullable: true, Element: &table.DataType{Root: table.TypeRow, Nullable: true, Fields: []table.DataField{
			{ID: 103, Name: "x", Type: intT},
			{ID: 104, Name: "m", Type: table.DataType{Root: table.TypeMap, Nullable: true, Key: ptr(mustType(t, "INT NOT NULL")), Value: ptr(mustType(t, "BYTES"))}},
		}}},
	}
	for _, nt := range nested {
		fields = append(fields, table.DataField{ID: id, Name: "n" + string(rune('a'+id%26)), Type: nt})
		id++
	}
	return fields
}

// randValue generates a random value of t (nil with some probability when
// nullable). Values are canonical so a read gives back an equal value.
func randValue(r *rand.Rand, t table.DataType) any {
	if t.Nullable && r.IntN(5) == 0 {
		return nil
	}
	switch t.Root {
	case table.TypeBoolean:
		return r.IntN(2) == 1
	case table.TypeTinyInt:
		return int8(r.Int32())
	case table.TypeSmallInt:
		return int16(r.Int32())
	case table.TypeInt:
		return int32(r.Uint32())
	case table.TypeBigInt:
		return int64(r.Uint64())
	case table.TypeFloat:
		return float32(r.NormFloat64())
	case table.TypeDouble:
		return r.NormFloat64() * 1e6
	case table.TypeDecimal:
		// random digits, so every precision up to 38 is covered
		u := new(big.Int)
		for range r.IntN(t.Precision) + 1 {
			u.Mul(u, big.NewInt(10))
			u.Add(u, big.NewInt(int64(r.IntN(10))))
		}
		if r.IntN(2) == 0 {
			u.Neg(u)
		}
		return table.Decimal{Unscaled: u, Precision: t.Precision, Scale: t.Scale}
	case table.TypeChar:
		return randString(r, t.Length)
	case table.TypeVarChar:
		return randString(r, r.IntN(min(t.Length, 30)+1))
	case table.TypeBinary:
		b := make([]byte, t.Length)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	case table.TypeVarBinary:
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	case table.TypeDate:
		return int32(r.IntN(100000) - 50000)
	case table.TypeTime:
		return int32(r.IntN(millisPerDay))
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		ms := r.Int64N(4e12) - 2e12
		var nanos int32
		switch {
		case t.Precision > 6:
			nanos = r.Int32N(1000000)
		case t.Precision > 3:
			nanos = r.Int32N(1000) * 1000
		}
		return table.Timestamp{Millis: ms, NanoOfMilli: nanos}
	case table.TypeArray:
		n := r.IntN(4)
		out := make([]any, n)
		for i := range out {
			out[i] = randValue(r, *t.Element)
		}
		return out
	case table.TypeMap, table.TypeMultiset:
		kt, vt := t.Key, t.Value
		if t.Root == table.TypeMultiset {
			kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
		}
		n := r.IntN(4)
		m := &table.Map{Keys: make([]any, n), Values: make([]any, n)}
		for i := range n {
			m.Keys[i] = randValue(r, kt.WithNullable(false))
			m.Values[i] = randValue(r, *vt)
		}
		return m
	case table.TypeRow:
		row := make(table.Row, len(t.Fields))
		for i, f := range t.Fields {
			row[i] = randValue(r, f.Type)
		}
		return row
	}
	panic("no generator for " + t.String())
}

func randString(r *rand.Rand, n int) string {
	const alphabet = "abcxyz€ü日本0123456789"
	runes := []rune(alphabet)
	out := make([]rune, n)
	for i := range out {
		out[i] = runes[r.IntN(len(runes))]
	}
	return string(out)
}

func TestRoundTripEveryTypeAppendFile(t *testing.T) {
	fields := allTypesSchema(t)
	r := rand.New(rand.NewPCG(1, 2))
	var rows []table.Row
	for range 3000 {
		row := make(table.Row, len(fields))
		for i, f := range fields {
			row[i] = randValue(r, f.Type)
		}
		rows = append(rows, row)
	}
	// Small blocks and pages so several row groups and pages are exercised.
	opts := map[string]string{"parquet.block.size": "64kb", "parquet.page.size": "8kb"}
	path := filepath.Join(t.TempDir(), "data-x-0.parquet")
	ctx := context.Background()
	w, err := NewRowWriter(ctx, fileio.NewLocal(), path, fields, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.RowCount != int64(len(rows)) {
		t.Fatalf("row count %d", st.RowCount)
	}
	info, err := fileio.NewLocal().Stat(ctx, path)
	if err != nil || info.Size != st.FileSize {
		t.Fatalf("file size %d, stats say %d (%v)", info.Size, st.FileSize, err)
	}
	got := readAllRows(t, path, fields, fields)
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
	}
	for i := range rows {
		for j := range fields {
			if !valuesEqual(rows[i][j], got[i][j]) {
				t.Fatalf("row %d column %s (%s): wrote %#v, read %#v", i, fields[j].Name, fields[j].Type, rows[i][j], got[i][j])
			}
		}
	}
	checkStats(t, fields, rows, st.ValueStats)
}

// valuesEqual compares decoded values; decimals by value.
func valuesEqual(a, b any) bool {
	switch x := a.(type) {
	case table.Decimal:
		y, ok := b.(table.Decimal)
		return ok && x.Scale == y.Scale && x.Precision == y.Precision && x.Unscaled.Cmp(y.Unscaled) == 0
	case table.Row:
		y, ok := b.(table.Row)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *table.Map:
		y, ok := b.(*table.Map)
		return ok && valuesEqual([]any(x.Keys), []any(y.Keys)) && valuesEqual([]any(x.Values), []any(y.Values))
	}
	return reflect.DeepEqual(a, b)
}

// checkStats recomputes min/max/null count in full and compares with what
// the writer reported under the default truncate(16) mode.
func checkStats(t *testing.T, fields table.RowType, rows []table.Row, s Stats) {
	t.Helper()
	for j, f := range fields {
		var nulls int64
		var mn, mx any
		for _, row := range rows {
			v := row[j]
			if v == nil {
				nulls++
				continue
			}
			if f.Type.IsComposite() {
				continue
			}
			if mn == nil || compareValues(v, mn) < 0 {
				mn = v
			}
			if mx == nil || compareValues(v, mx) > 0 {
				mx = v
			}
		}
		if f.Type.IsComposite() {
			if s.NullCounts[j] != nil || s.Min[j] != nil || s.Max[j] != nil {
				t.Errorf("column %s: nested column must have unknown stats", f.Name)
			}
			continue
		}
		if s.NullCounts[j] == nil || *s.NullCounts[j] != nulls {
			t.Errorf("column %s: null count %v, want %d", f.Name, s.NullCounts[j], nulls)
		}
		if (f.Type.Root == table.TypeTimestamp || f.Type.Root == table.TypeTimestampLTZ) && f.Type.Precision > 6 {
			if s.Min[j] != nil || s.Max[j] != nil {
				t.Errorf("column %s: INT96 column must have unknown min/max", f.Name)
			}
			continue
		}
		if f.Type.Root == table.TypeBinary || f.Type.Root == table.TypeVarBinary {
			// As Java's ParquetSimpleStatsExtractor: a null count, no min/max.
			if s.Min[j] != nil || s.Max[j] != nil {
				t.Errorf("column %s: BINARY/VARBINARY column must have unknown min/max", f.Name)
			}
			continue
		}
		if sv, ok := mn.(string); ok && len([]rune(sv)) > 16 {
			continue // truncated; covered by TestTruncateStats
		}
		if sv, ok := mx.(string); ok && len([]rune(sv)) > 16 {
			continue
		}
		if !valuesEqual(mn, s.Min[j]) || !valuesEqual(mx, s.Max[j]) {
			t.Errorf("column %s: min/max %v/%v, want %v/%v", f.Name, s.Min[j], s.Max[j], mn, mx)
		}
	}
}

func TestRoundTripKeyValueFile(t *testing.T) {
	fields := table.RowType{
		{ID: 0, Name: "id", Type: mustType(t, "BIGINT NOT NULL")},
		{ID: 1, Name: "dt", Type: mustType(t, "STRING NOT NULL")},
		{ID: 2, Name: "name", Type: mustType(t, "STRING")},
		{ID: 3, Name: "score", Type: mustType(t, "DOUBLE")},
	}
	schema := Schema{Fields: fields, KeyNames: TrimmedPrimaryKeys([]string{"id", "dt"}, []string{"dt"})}
	path := filepath.Join(t.TempDir(), "data-kv-0.parquet")
	ctx := context.Background()
	w, err := NewKeyValueWriter(ctx, fileio.NewLocal(), path, schema, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []table.KeyValue
	kinds := []table.RowKind{table.RowKindInsert, table.RowKindUpdateAfter, table.RowKindDelete, table.RowKindUpdateBefore}
	for i := range 1000 {
		kv := table.KeyValue{
			Key:   table.Row{int64(i * 2)},
			Seq:   int64(5000 - i),
			Kind:  kinds[i%4],
			Value: table.Row{int64(i * 2), "2026-01-01", nil, float64(i) / 3},
		}
		if i%3 == 0 {
			kv.Value[2] = "name-" + string(rune('a'+i%26))
		}
		want = append(want, kv)
		if err := w.Write(kv); err != nil {
			t.Fatal(err)
		}
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := readAllKV(t, path, schema, schema)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs; first read %+v, first written %+v", got[0], want[0])
	}
	if st.MinSeq != 4001 || st.MaxSeq != 5000 || st.DeleteRowCount != 500 || st.RowCount != 1000 {
		t.Errorf("stats: %+v", st)
	}
	if !reflect.DeepEqual(st.MinKey, table.Row{int64(0)}) || !reflect.DeepEqual(st.MaxKey, table.Row{int64(1998)}) {
		t.Errorf("min/max key %v %v", st.MinKey, st.MaxKey)
	}
	if !reflect.DeepEqual(st.KeyStats.Min, table.Row{int64(0)}) || !reflect.DeepEqual(st.KeyStats.Max, table.Row{int64(1998)}) || *st.KeyStats.NullCounts[0] != 0 {
		t.Errorf("key stats %+v", st.KeyStats)
	}
	if n := st.ValueStats.NullCounts[2]; n == nil || *n != 666 {
		t.Errorf("null count of name: %v", n)
	}
	if st.ValueStats.Min[2] != "name-a" || st.ValueStats.Max[2] != "name-z" {
		t.Errorf("name min/max %v %v", st.ValueStats.Min[2], st.ValueStats.Max[2])
	}
}

func TestReadThroughEvolvedSchema(t *testing.T) {
	old := table.RowType{
		{ID: 0, Name: "a", Type: mustType(t, "INT")},
		{ID: 1, Name: "b", Type: mustType(t, "STRING")},
		{ID: 2, Name: "gone", Type: mustType(t, "INT")},
		{ID: 3, Name: "d", Type: mustType(t, "DECIMAL(5, 2)")},
	}
	path := filepath.Join(t.TempDir(), "data-e-0.parquet")
	w, err := NewRowWriter(context.Background(), fileio.NewLocal(), path, old, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []table.Row{
		{int32(1), "x", int32(9), table.Decimal{Unscaled: big.NewInt(-12345), Precision: 5, Scale: 2}},
		{nil, nil, nil, nil},
	} {
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// renamed b -> name, widened a -> BIGINT, dropped "gone", added "new",
	// decimal widened to (10, 4), columns reordered.
	latest := table.RowType{
		{ID: 4, Name: "new", Type: mustType(t, "STRING")},
		{ID: 1, Name: "name", Type: mustType(t, "STRING")},
		{ID: 0, Name: "a", Type: mustType(t, "BIGINT")},
		{ID: 3, Name: "d", Type: mustType(t, "DECIMAL(10, 4)")},
	}
	got := readAllRows(t, path, old, latest)
	want := []table.Row{
		{nil, "x", int64(1), table.Decimal{Unscaled: big.NewInt(-1234500), Precision: 10, Scale: 4}},
		{nil, nil, nil, nil},
	}
	for i := range want {
		if !valuesEqual(want[i], got[i]) {
			t.Errorf("row %d: got %v, want %v", i, got[i], want[i])
		}
	}
	// A change Java Paimon has no cast rule for is refused with a clear error.
	noRule := table.RowType{{ID: 0, Name: "a", Type: mustType(t, "DATE")}}
	_, err = OpenRows(context.Background(), fileio.NewLocal(), path, old, noRule)
	if !errors.Is(err, cast.ErrUnsupportedEvolution) {
		t.Fatalf("INT to DATE: err = %v", err)
	}
	_ = io.EOF
}

// TestThinModeKeyFromValueColumns reads a KeyValue file without _KEY_
// columns (data-file.thin-mode) and takes the key from the value.
func TestThinModeKeyFromValueColumns(t *testing.T) {
	schema := Schema{Fields: table.RowType{
		{ID: 0, Name: "k", Type: mustType(t, "INT NOT NULL")},
		{ID: 1, Name: "v", Type: mustType(t, "STRING")},
	}, KeyNames: []string{"k"}}
	thin := table.RowType{
		{ID: SequenceNumberID, Name: SequenceNumberName, Type: mustType(t, "BIGINT NOT NULL")},
		{ID: ValueKindID, Name: ValueKindName, Type: mustType(t, "TINYINT NOT NULL")},
		schema.Fields[0], schema.Fields[1],
	}
	path := filepath.Join(t.TempDir(), "data-thin-0.parquet")
	w, err := NewRowWriter(context.Background(), fileio.NewLocal(), path, thin, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.Write(table.Row{int64(10 + i), int8(table.RowKindUpdateAfter), int32(i), "v"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readAllKV(t, path, schema, schema)
	for i, kv := range got {
		if !reflect.DeepEqual(kv, table.KeyValue{Key: table.Row{int32(i)}, Seq: int64(10 + i), Kind: table.RowKindUpdateAfter, Value: table.Row{int32(i), "v"}}) {
			t.Errorf("record %d: %+v", i, kv)
		}
	}
	if len(got) != 3 {
		t.Fatalf("%d records", len(got))
	}
}
