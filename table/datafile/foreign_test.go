package datafile

import (
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
)

// TestForeignPhysicalLayouts reads encodings other writers (parquet-cpp,
// Spark, Hive) use for Paimon types: INT64 nanosecond timestamps, INT64
// microsecond TIME, BYTE_ARRAY decimals and a 2-level LIST.
func TestForeignPhysicalLayouts(t *testing.T) {
	schema := parquet.NewSchema("schema", parquet.Group{
		"a_ts_nanos":   parquet.Optional(parquet.Timestamp(parquet.Nanosecond)),
		"b_time_micro": parquet.Optional(parquet.Time(parquet.Microsecond)),
		"c_dec_bytes":  parquet.Optional(parquet.Decimal(2, 30, parquet.ByteArrayType)),
		"d_list2":      parquet.Optional(&group{typ: listGroupType, fields: []parquet.Field{field{parquet.Repeated(parquet.Leaf(parquet.Int32Type)), "array"}}}),
	})
	path := filepath.Join(t.TempDir(), "data-foreign-0.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewWriter(f, schema)
	neg, _ := twosComplement(big.NewInt(-12345), 5)
	rows := []parquet.Row{
		{
			parquet.Int64Value(-1_500_000_001).Level(0, 1, 0), // -1500.000001 ms
			parquet.Int64Value(3_723_004_000).Level(0, 1, 1),  // 01:02:03.004
			parquet.ByteArrayValue(neg).Level(0, 1, 2),        // -123.45
			parquet.Int32Value(7).Level(0, 2, 3), parquet.Int32Value(8).Level(1, 2, 3),
		},
		{
			parquet.NullValue().Level(0, 0, 0),
			parquet.NullValue().Level(0, 0, 1),
			parquet.NullValue().Level(0, 0, 2),
			parquet.NullValue().Level(0, 0, 3),
		},
	}
	if _, err := w.WriteRows(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fields := table.RowType{
		{ID: 0, Name: "a_ts_nanos", Type: mustType(t, "TIMESTAMP(9)")},
		{ID: 1, Name: "b_time_micro", Type: mustType(t, "TIME(3)")},
		{ID: 2, Name: "c_dec_bytes", Type: mustType(t, "DECIMAL(30, 2)")},
		{ID: 3, Name: "d_list2", Type: table.DataType{Root: table.TypeArray, Nullable: true, Element: ptr(mustType(t, "INT"))}},
	}
	got := readAllRows(t, path, fields, fields)
	want := []table.Row{
		{table.Timestamp{Millis: -1501, NanoOfMilli: 999999}, int32(3723004), table.Decimal{Unscaled: big.NewInt(-12345), Precision: 30, Scale: 2}, []any{int32(7), int32(8)}},
		{nil, nil, nil, nil},
	}
	for i := range want {
		if !valuesEqual(got[i], want[i]) {
			t.Errorf("row %d: got %v, want %v", i, got[i], want[i])
		}
	}
}
