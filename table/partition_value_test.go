package table

import (
	"math"
	"math/big"
	"testing"
)

func TestPartitionValueStrings(t *testing.T) {
	ts := func(s string, nano int32) Timestamp {
		tm, err := parseLocalDateTime(jStr(s))
		if err != nil {
			t.Fatal(err)
		}
		return Timestamp{Millis: tm.UnixMilli(), NanoOfMilli: nano}
	}
	dec := Decimal{Unscaled: big.NewInt(1230), Precision: 10, Scale: 2}
	cases := []struct {
		name   string
		t      DataType
		v      any
		legacy bool
		want   string
	}{
		{"legacy DATE is the day number", DataType{Root: TypeDate}, int32(19723), true, "19723"},
		{"DATE cast to string", DataType{Root: TypeDate}, int32(19723), false, "2024-01-01"},
		{"DATE before the epoch", DataType{Root: TypeDate}, int32(-1), false, "1969-12-31"},
		{"legacy TIME is millis", DataType{Root: TypeTime}, int32(3723000), true, "3723000"},
		{"TIME cast", DataType{Root: TypeTime}, int32(3723000), false, "01:02:03"},
		{"legacy TIMESTAMP drops zero seconds", DataType{Root: TypeTimestamp, Precision: 3}, ts("2024-01-01T10:00:00", 0), true, "2024-01-01T10:00"},
		{"legacy TIMESTAMP millis", DataType{Root: TypeTimestamp, Precision: 3}, ts("2024-01-01T10:00:05.120", 0), true, "2024-01-01T10:00:05.120"},
		{"legacy TIMESTAMP micros", DataType{Root: TypeTimestamp, Precision: 6}, ts("2024-01-01T10:00:00.001", 2000), true, "2024-01-01T10:00:00.001002"},
		{"legacy TIMESTAMP nanos", DataType{Root: TypeTimestamp, Precision: 9}, ts("2024-01-01T10:00:00.001", 2), true, "2024-01-01T10:00:00.001000002"},
		{"legacy TIMESTAMP before the epoch", DataType{Root: TypeTimestamp, Precision: 3}, Timestamp{Millis: -1}, true, "1969-12-31T23:59:59.999"},
		{"TIMESTAMP(3) cast keeps three digits", DataType{Root: TypeTimestamp, Precision: 3}, ts("2024-01-01T10:00:05.100", 0), false, "2024-01-01 10:00:05.100"},
		{"TIMESTAMP(0) cast", DataType{Root: TypeTimestamp, Precision: 0}, ts("2024-01-01T10:00:05", 0), false, "2024-01-01 10:00:05"},
		{"TIMESTAMP(6) cast trims beyond precision", DataType{Root: TypeTimestamp, Precision: 6}, ts("2024-01-01T10:00:05.1", 0), false, "2024-01-01 10:00:05.100000"},
		{"DECIMAL plain", DataType{Root: TypeDecimal, Precision: 10, Scale: 2}, dec, true, "12.30"},
		{"BOOLEAN", DataType{Root: TypeBoolean}, true, true, "true"},
		{"TINYINT", DataType{Root: TypeTinyInt}, int8(-5), true, "-5"},
		{"BIGINT", DataType{Root: TypeBigInt}, int64(math.MinInt64), true, "-9223372036854775808"},
		{"DOUBLE plain range", DataType{Root: TypeDouble}, 1.5, true, "1.5"},
		{"DOUBLE integral", DataType{Root: TypeDouble}, 100.0, true, "100.0"},
		{"DOUBLE large is scientific", DataType{Root: TypeDouble}, 1e10, true, "1.0E10"},
		{"DOUBLE small is scientific", DataType{Root: TypeDouble}, 0.0001, true, "1.0E-4"},
		{"DOUBLE 1e-3 is plain", DataType{Root: TypeDouble}, 0.001, true, "0.001"},
		{"DOUBLE just under 1e7", DataType{Root: TypeDouble}, 9999999.5, true, "9999999.5"},
		{"DOUBLE 1e7", DataType{Root: TypeDouble}, 1e7, true, "1.0E7"},
		{"DOUBLE negative zero", DataType{Root: TypeDouble}, math.Copysign(0, -1), true, "-0.0"},
		{"DOUBLE NaN", DataType{Root: TypeDouble}, math.NaN(), true, "NaN"},
		{"FLOAT shortest digits", DataType{Root: TypeFloat}, float32(0.1), true, "0.1"},
		{"FLOAT large", DataType{Root: TypeFloat}, float32(1.2345678e20), true, "1.2345678E20"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PartitionValueString(c.t, c.v, c.legacy)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got %q want %q", got, c.want)
			}
		})
	}
	if _, err := PartitionValueString(DataType{Root: TypeInt}, "x", true); err == nil {
		t.Fatal("mismatched Go type accepted")
	}
	if _, err := PartitionValueString(DataType{Root: TypeVarBinary}, []byte("x"), true); err == nil {
		t.Fatal("legacy binary partition accepted")
	}
}
