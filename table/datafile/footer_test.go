package datafile

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
)

// rawSchema decodes a file's footer keeping "field id unset" apart from 0.
func rawSchema(t *testing.T, path string) []schemaElementOut {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	var md fileMetaDataOut
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[len(b)-8-n:len(b)-8], &md); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return md.Schema
}

func describe(e schemaElementOut) string {
	s := e.Name
	if e.RepetitionType.Valid {
		s += fmt.Sprintf(" rep=%v", e.RepetitionType.V)
	}
	if e.Type.Valid {
		s += fmt.Sprintf(" type=%v", e.Type.V)
	}
	if e.TypeLength.Valid {
		s += fmt.Sprintf(" len=%d", e.TypeLength.V)
	}
	if e.NumChildren.Valid {
		s += fmt.Sprintf(" children=%d", e.NumChildren.V)
	}
	if e.ConvertedType.Valid {
		s += fmt.Sprintf(" converted=%v", e.ConvertedType.V)
	}
	if e.Scale.Valid || e.Precision.Valid {
		s += fmt.Sprintf(" decimal=(%d,%d)", e.Precision.V, e.Scale.V)
	}
	if e.FieldID.Valid {
		s += fmt.Sprintf(" id=%d", e.FieldID.V)
	}
	if e.LogicalType.Value != nil {
		s += fmt.Sprintf(" logical=%v", e.LogicalType.Value)
	}
	return s
}

// TestWrittenFooterMatchesJava writes a file with the schema of a fixture
// table and compares every schema element of the footer (names, ids incl.
// 0, repetition, physical, converted and logical types) with the file Java
// wrote. Paimon 0.9 wrote no field ids at all; for its tables the ids are
// left out of the comparison (we write ids as every later release does).
func TestWrittenFooterMatchesJava(t *testing.T) {
	tables := []string{
		"pk_table_nested_type.db/pk_table_nested_type",
		"append_complex_build_in_fieldid.db/append_complex_build_in_fieldid",
		"append_with_multiple_ts_precision_and_timezone.db/append_with_multiple_ts_precision_and_timezone",
		"append_09.db/append_09",
		"pk_09.db/pk_09",
	}
	for _, tbl := range tables {
		t.Run(tbl, func(t *testing.T) {
			dir := filepath.Join(fixtureRoot, "parquet", tbl)
			files, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*", "data-*.parquet"))
			more, _ := filepath.Glob(filepath.Join(dir, "*", "*", "data-*.parquet"))
			files = append(files, more...)
			more, _ = filepath.Glob(filepath.Join(dir, "*", "data-*.parquet"))
			files = append(files, more...)
			if len(files) == 0 {
				t.Fatalf("no data files in %s", dir)
			}
			javaFile := files[0]
			ts := fileSchemaOf(t, javaFile, loadSchemas(t, dir))
			out := filepath.Join(t.TempDir(), "data-w-0.parquet")
			var err error
			ctx := context.Background()
			if len(ts.PrimaryKeys) > 0 {
				w, e := NewKeyValueWriter(ctx, fileio.NewLocal(), out, ts.schema(), nil)
				if e != nil {
					t.Fatal(e)
				}
				_, err = w.Close()
			} else {
				w, e := NewRowWriter(ctx, fileio.NewLocal(), out, ts.Fields, nil)
				if e != nil {
					t.Fatal(e)
				}
				_, err = w.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			want, got := rawSchema(t, javaFile), rawSchema(t, out)
			if len(want) != len(got) {
				t.Fatalf("%d schema elements, Java wrote %d", len(got), len(want))
			}
			for i := range want {
				if strings.HasSuffix(tbl, "_09") {
					if !got[i].FieldID.Valid && i > 0 {
						t.Errorf("element %d (%s) has no field id", i, got[i].Name)
					}
					want[i].FieldID, got[i].FieldID = thrift.Null[int32]{}, thrift.Null[int32]{}
				}
				if describe(want[i]) != describe(got[i]) {
					t.Errorf("element %d:\n  java: %s\n  ours: %s", i, describe(want[i]), describe(got[i]))
				}
			}
		})
	}
}

// TestNoMisorderedFooterStatistics: parquet-go orders FIXED_LEN_BYTE_ARRAY
// decimals as unsigned bytes; such min/max must not reach the footer where
// Java's filter push-down would trust them.
func TestNoMisorderedFooterStatistics(t *testing.T) {
	fields := table.RowType{
		{ID: 0, Name: "big", Type: mustType(t, "DECIMAL(38, 2)")},
		{ID: 1, Name: "small", Type: mustType(t, "DECIMAL(9, 2)")},
		{ID: 2, Name: "ts9", Type: mustType(t, "TIMESTAMP(9)")},
	}
	path := filepath.Join(t.TempDir(), "data-dec-0.parquet")
	w, err := NewRowWriter(context.Background(), fileio.NewLocal(), path, fields, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int64{-5, 3, -100, 7} {
		d := func(p int) table.Decimal { return table.Decimal{Unscaled: big.NewInt(v), Precision: p, Scale: 2} }
		if err := w.Write(table.Row{d(38), d(9), table.Timestamp{Millis: v}}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.ValueStats.Min[0].(table.Decimal).String() != "-1.00" || st.ValueStats.Max[0].(table.Decimal).String() != "0.07" {
		t.Errorf("file stats of the decimal: %v %v", st.ValueStats.Min[0], st.ValueStats.Max[0])
	}
	b, _ := os.ReadFile(path)
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	var md fileMetaDataOut
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[len(b)-8-n:len(b)-8], &md); err != nil {
		t.Fatal(err)
	}
	cols := md.RowGroups[0].Columns
	for _, i := range []int{0, 2} {
		s := cols[i].MetaData.Statistics
		if s.MinValue != nil || s.MaxValue != nil || s.Min != nil || s.Max != nil || cols[i].ColumnIndexOffset != 0 {
			t.Errorf("column %d keeps footer min/max or a column index", i)
		}
	}
	// Readers that load the page index (parquet-go's default) still open it.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("parquet-go panics opening the file with its page index: %v", r)
			}
		}()
		if _, err := parquet.OpenFile(f, int64(len(b))); err != nil {
			t.Fatalf("parquet-go cannot open the file with its page index: %v", err)
		}
	}()
	s := cols[1].MetaData.Statistics
	if int32(binary.LittleEndian.Uint32(s.MinValue)) != -100 || int32(binary.LittleEndian.Uint32(s.MaxValue)) != 7 {
		t.Errorf("INT32 decimal footer stats %x %x", s.MinValue, s.MaxValue)
	}
}
