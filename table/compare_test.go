package table

import (
	"math"
	"math/big"
	"testing"
)

func dec(unscaled int64, p, s int) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Precision: p, Scale: s}
}

func TestCompareValues(t *testing.T) {
	intT := DataType{Root: TypeInt, Nullable: true}
	arrT := DataType{Root: TypeArray, Element: &intT}
	rowT := DataType{Root: TypeRow, Fields: []DataField{{Name: "a", Type: intT}, {Name: "b", Type: DataType{Root: TypeVarChar}}}}
	mapT := DataType{Root: TypeMap, Key: &DataType{Root: TypeVarChar}, Value: &intT}
	nan32, nan64 := float32(math.NaN()), math.NaN()
	negZero32, negZero64 := float32(math.Copysign(0, -1)), math.Copysign(0, -1)
	cases := []struct {
		name string
		t    DataType
		a, b any
		want int
	}{
		{"null sorts before any value", intT, nil, int32(math.MinInt32), -1},
		{"two nulls are equal", intT, nil, nil, 0},
		{"a value sorts after null", intT, int32(0), nil, 1},
		{"false sorts before true", DataType{Root: TypeBoolean}, false, true, -1},
		{"tinyint compares signed", DataType{Root: TypeTinyInt}, int8(-1), int8(1), -1},
		{"bigint compares numerically", DataType{Root: TypeBigInt}, int64(math.MaxInt64), int64(-5), 1},
		{"float negative zero sorts before positive zero", DataType{Root: TypeFloat}, negZero32, float32(0), -1},
		{"float NaN sorts after +Inf", DataType{Root: TypeFloat}, nan32, float32(math.Inf(1)), 1},
		{"float NaN equals NaN", DataType{Root: TypeFloat}, nan32, nan32, 0},
		{"double negative zero sorts before positive zero", DataType{Root: TypeDouble}, negZero64, 0.0, -1},
		{"double NaN sorts after +Inf", DataType{Root: TypeDouble}, nan64, math.Inf(1), 1},
		{"double NaN sorts after negative numbers", DataType{Root: TypeDouble}, nan64, -3.0, 1},
		{"strings compare as unsigned bytes so non-ASCII sorts after ASCII", DataType{Root: TypeVarChar}, "é", "z", 1},
		{"a string prefix sorts first", DataType{Root: TypeVarChar}, "ab", "abc", -1},
		{"binary compares unsigned bytes", DataType{Root: TypeVarBinary}, []byte{0xff}, []byte{0x01, 0x00}, 1},
		{"decimals compare numerically across scales", DataType{Root: TypeDecimal}, dec(150, 5, 2), dec(15, 5, 1), 0},
		{"negative decimal sorts first", DataType{Root: TypeDecimal}, dec(-1, 5, 2), dec(0, 5, 2), -1},
		{"timestamps compare millis first", DataType{Root: TypeTimestamp}, Timestamp{1, 999999}, Timestamp{2, 0}, -1},
		{"timestamps compare nanos on equal millis", DataType{Root: TypeTimestamp}, Timestamp{2, 5}, Timestamp{2, 4}, 1},
		{"arrays compare element-wise", arrT, []any{int32(1), int32(3)}, []any{int32(2)}, -1},
		{"array null element sorts first", arrT, []any{nil}, []any{int32(0)}, -1},
		{"shorter array prefix sorts first", arrT, []any{int32(1)}, []any{int32(1), int32(0)}, -1},
		{"rows compare field by field", rowT, Row{int32(1), "b"}, Row{int32(1), "a"}, 1},
		{"smaller map sorts first", mapT, &Map{Keys: []any{"z"}, Values: []any{int32(1)}}, &Map{Keys: []any{"a", "b"}, Values: []any{int32(1), int32(1)}}, -1},
		{"maps of equal size compare keys then values", mapT, &Map{Keys: []any{"a"}, Values: []any{int32(2)}}, &Map{Keys: []any{"a"}, Values: []any{int32(1)}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CompareValues(c.t, c.a, c.b); got != c.want {
				t.Fatalf("CompareValues(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
			}
			if got := CompareValues(c.t, c.b, c.a); got != -c.want {
				t.Fatalf("reversed CompareValues(%v, %v) = %d, want %d", c.b, c.a, got, -c.want)
			}
		})
	}
}

func TestCompareRowsOrdersByFieldsInTurn(t *testing.T) {
	types := []DataType{{Root: TypeVarChar}, {Root: TypeInt}}
	rows := []Row{{nil, int32(5)}, {"a", nil}, {"a", int32(-1)}, {"a", int32(2)}, {"b", int32(0)}}
	for i := range rows {
		for j := range rows {
			want := cmpOrdered(i, j)
			if got := CompareRows(types, rows[i], rows[j]); got != want {
				t.Errorf("CompareRows(%v, %v) = %d, want %d", rows[i], rows[j], got, want)
			}
		}
	}
}

func TestCompareValuesNeverPanicsOnMismatchedTypes(t *testing.T) {
	if CompareValues(DataType{Root: TypeInt}, int32(1), "x") == 0 {
		t.Fatal("values of different Go types compared equal")
	}
}
