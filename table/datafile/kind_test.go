package datafile

import (
	"testing"

	"github.com/compactd/compactd/table"
)

// Codec.Kinds tells code outside this package (the merge) which slice of a
// Vec holds each column's values, without naming Parquet types: it must
// agree with the columns of the codec's batches.
func TestCodecKindsNameTheSliceHoldingEachColumn(t *testing.T) {
	cases := []struct {
		typ  string
		want Kind
	}{
		{"BOOLEAN", KindBoolean},
		{"TINYINT", KindInt32},
		{"SMALLINT", KindInt32},
		{"INT", KindInt32},
		{"DATE", KindInt32},
		{"DECIMAL(9, 2)", KindInt32},
		{"BIGINT", KindInt64},
		{"DECIMAL(18, 2)", KindInt64},
		{"TIMESTAMP(6)", KindInt64},
		{"TIMESTAMP(9)", KindInt96},
		{"FLOAT", KindFloat},
		{"DOUBLE", KindDouble},
		{"STRING", KindBytes},
		{"BINARY(4)", KindBytes},
		{"DECIMAL(30, 2)", KindBytes},
	}
	var rt table.RowType
	for i, c := range cases {
		dt, err := table.ParseAtomicType(c.typ)
		if err != nil {
			t.Fatalf("parse %q: %v", c.typ, err)
		}
		rt = append(rt, table.DataField{ID: i, Name: "f" + string(rune('a'+i)), Type: dt})
	}
	codec, err := NewCodec(rt)
	if err != nil {
		t.Fatal(err)
	}
	kinds := codec.Kinds()
	b := codec.NewBatch()
	for i, c := range cases {
		if kinds[i] != c.want {
			t.Errorf("%s: kind %d, want %d", c.typ, kinds[i], c.want)
		}
		if got := kindOf(b.Cols[i].Kind); got != kinds[i] {
			t.Errorf("%s: batch column of kind %d, codec says %d", c.typ, got, kinds[i])
		}
	}
}
