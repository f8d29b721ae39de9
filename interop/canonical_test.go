package interop

import (
	"math/big"
	"reflect"
	"testing"

	"github.com/compactd/compactd/table"
)

// TestCanonicalRowMatchesJavaOutput pins CanonicalRow to the text Java printed for the same
// values (copied from a `read` of a table holding them).
func TestCanonicalRowMatchesJavaOutput(t *testing.T) {
	rt := table.RowType{
		{ID: 0, Name: "id", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeVarChar, Nullable: true, Length: table.MaxLength}},
		{ID: 2, Name: "d", Type: table.DataType{Root: table.TypeDecimal, Nullable: true, Precision: 10, Scale: 2}},
		{ID: 3, Name: "ts", Type: table.DataType{Root: table.TypeTimestamp, Nullable: true, Precision: 3}},
		{ID: 4, Name: "f", Type: table.DataType{Root: table.TypeFloat, Nullable: true}},
		{ID: 5, Name: "day", Type: table.DataType{Root: table.TypeDate, Nullable: true}},
		{ID: 6, Name: "b", Type: table.DataType{Root: table.TypeVarBinary, Nullable: true, Length: table.MaxLength}},
	}
	row := table.Row{
		int64(1), "a", table.Decimal{Unscaled: big.NewInt(150), Precision: 10, Scale: 2},
		table.Timestamp{Millis: 1704164645123}, float32(0.1), int32(19724), []byte("hi"),
	}
	got, err := CanonicalRow(rt, row)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseRows([]byte(`{"id":1,"v":"a","d":"1.50","ts":"2024-01-02T03:04:05.123000000","f":0.10000000149011612,"day":"2024-01-02","b":"aGk="}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want[0]) {
		t.Errorf("got  %v\nwant %v", got, want[0])
	}
}
