package table

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

func brType(t *testing.T, s string) DataType {
	t.Helper()
	dt, err := ParseAtomicType(s)
	if err != nil {
		t.Fatal(err)
	}
	return dt
}

func brUnhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func brDec(unscaled int64, p, s int) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Precision: p, Scale: s}
}

// The §6.3 worked examples of the format spec, plus vectors for every
// atomic type, as serialized BinaryRows (arity prefix + row).
func TestBinaryRowVectors(t *testing.T) {
	zero8 := "00 00 00 00 00 00 00 00"
	cases := []struct {
		name  string
		types []string
		row   Row
		hex   string
	}{
		{"the empty row of unpartitioned tables is twelve zero bytes", nil, Row{}, "00000000" + zero8},
		{"a short string is stored inline with 0x80|len in byte 7",
			[]string{"INT", "STRING"}, Row{int32(1), "abc"},
			"00000002" + zero8 + "01 00 00 00 00 00 00 00" + "61 62 63 00 00 00 00 83"},
		{"a twelve-byte string goes to the variable part at offset 24",
			[]string{"INT", "STRING"}, Row{int32(1), "hello world!"},
			"00000002" + zero8 + "01 00 00 00 00 00 00 00" + "0c 00 00 00 18 00 00 00" + "68 65 6c 6c 6f 20 77 6f 72 6c 64 21 00 00 00 00"},
		{"a date-like partition string of ten bytes",
			[]string{"STRING"}, Row{"2024-01-01"},
			"00000001" + zero8 + "0a 00 00 00 10 00 00 00" + "32 30 32 34 2d 30 31 2d 30 31 00 00 00 00 00 00"},
		{"a null sets bit 8 of the header and leaves the slot zero",
			[]string{"INT", "BIGINT", "BOOLEAN"}, Row{nil, int64(7), true},
			"00000003" + "00 01 00 00 00 00 00 00" + zero8 + "07 00 00 00 00 00 00 00" + "01 00 00 00 00 00 00 00"},
		{"the empty string is inline with length 0",
			[]string{"STRING"}, Row{""},
			"00000001" + zero8 + "00 00 00 00 00 00 00 80"},
		{"a seven-byte string is the longest inline one",
			[]string{"VARCHAR(10)"}, Row{"1234567"},
			"00000001" + zero8 + "31 32 33 34 35 36 37 87"},
		{"an eight-byte string is the shortest in the variable part",
			[]string{"CHAR(8)"}, Row{"12345678"},
			"00000001" + zero8 + "08 00 00 00 10 00 00 00" + "31 32 33 34 35 36 37 38"},
		{"a non-compact decimal takes a 16-byte chunk",
			[]string{"DECIMAL(20, 2)"}, Row{brDec(100, 20, 2)},
			"00000001" + zero8 + "01 00 00 00 10 00 00 00" + "64" + strings.Repeat("00", 15)},
		{"a negative non-compact decimal uses minimal two's complement",
			[]string{"DECIMAL(38, 0)"}, Row{brDec(-129, 38, 0)},
			"00000001" + zero8 + "02 00 00 00 10 00 00 00" + "ff 7f" + strings.Repeat("00", 14)},
		{"a null non-compact decimal still reserves its chunk",
			[]string{"DECIMAL(20, 2)"}, Row{nil},
			"00000001" + "00 01 00 00 00 00 00 00" + "00 00 00 00 10 00 00 00" + strings.Repeat("00", 16)},
		{"a compact decimal is its unscaled long",
			[]string{"DECIMAL(10, 2)"}, Row{brDec(-5, 10, 2)},
			"00000001" + zero8 + "fb ff ff ff ff ff ff ff"},
		{"a non-compact timestamp keeps millis in the variable part and nanos in the slot",
			[]string{"TIMESTAMP(6)"}, Row{Timestamp{Millis: 1, NanoOfMilli: 2000}},
			"00000001" + zero8 + "d0 07 00 00 10 00 00 00" + "01 00 00 00 00 00 00 00"},
		{"a null non-compact timestamp reserves eight bytes",
			[]string{"TIMESTAMP(9) WITH LOCAL TIME ZONE"}, Row{nil},
			"00000001" + "00 01 00 00 00 00 00 00" + "00 00 00 00 10 00 00 00" + zero8},
		{"a compact timestamp is epoch millis",
			[]string{"TIMESTAMP(3)"}, Row{Timestamp{Millis: -1}},
			"00000001" + zero8 + "ff ff ff ff ff ff ff ff"},
		{"small integer types use the low slot bytes",
			[]string{"TINYINT", "SMALLINT", "DATE", "TIME(0)"}, Row{int8(-1), int16(-2), int32(19000), int32(1000)},
			"00000004" + zero8 + "ff 00 00 00 00 00 00 00" + "fe ff 00 00 00 00 00 00" + "38 4a 00 00 00 00 00 00" + "e8 03 00 00 00 00 00 00"},
		{"floating point values are their IEEE bits",
			[]string{"FLOAT", "DOUBLE"}, Row{float32(1.5), -2.0},
			"00000002" + zero8 + "00 00 c0 3f 00 00 00 00" + "00 00 00 00 00 00 00 c0"},
		{"binary values follow the string rules",
			[]string{"BYTES", "BINARY(9)"}, Row{[]byte{1, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}},
			"00000002" + zero8 + "01 02 00 00 00 00 00 82" + "09 00 00 00 18 00 00 00" + "01 02 03 04 05 06 07 08 09 00 00 00 00 00 00 00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			types := make([]DataType, len(c.types))
			for i, s := range c.types {
				types[i] = brType(t, s)
			}
			want := brUnhex(t, c.hex)
			got, err := EncodeBinaryRow(types, c.row)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encode:\n got %x\nwant %x", got, want)
			}
			back, err := DecodeBinaryRow(types, want)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, c.row) {
				t.Fatalf("decode: got %#v, want %#v", back, c.row)
			}
		})
	}
}

func TestBinaryRowHeaderGrowsPast56Fields(t *testing.T) {
	for _, arity := range []int{56, 57, 120, 121} {
		types := make([]DataType, arity)
		row := make(Row, arity)
		for i := range types {
			types[i] = brType(t, "INT")
			if i%3 == 0 {
				row[i] = int32(i)
			}
		}
		b, err := EncodeBinaryRow(types, row)
		if err != nil {
			t.Fatal(err)
		}
		w := 8
		if arity > 56 {
			w = 16
		}
		if arity > 120 {
			w = 24
		}
		if len(b) != 4+w+8*arity {
			t.Errorf("arity %d: %d bytes, want %d", arity, len(b), 4+w+8*arity)
		}
		back, err := DecodeBinaryRow(types, b)
		if err != nil || !reflect.DeepEqual(back, row) {
			t.Errorf("arity %d: round trip failed: %v", arity, err)
		}
	}
}

// Java's FixedBucketRowKeyExtractorTest: INT columns a=5, b=6, c=7 with 100
// buckets land in buckets 96, 27 and 40.
func TestHashBinaryRowMatchesJavaBuckets(t *testing.T) {
	intT := brType(t, "INT")
	cases := []struct {
		row    Row
		bucket int32
	}{
		{Row{int32(5)}, 96},
		{Row{int32(5), int32(6)}, 27},
		{Row{int32(5), int32(6), int32(7)}, 40},
	}
	for _, c := range cases {
		types := make([]DataType, len(c.row))
		for i := range types {
			types[i] = intT
		}
		b, err := EncodeBinaryRow(types, c.row)
		if err != nil {
			t.Fatal(err)
		}
		h, err := HashBinaryRow(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.row) == 1 && h != 260196596 {
			t.Errorf("hash of (5) = %d, want 260196596", h)
		}
		if got := BucketOf(h, 100); got != c.bucket {
			t.Errorf("bucket of %v = %d, want %d", c.row, got, c.bucket)
		}
	}
}

func TestEncodeBinaryRowRejectsBadValues(t *testing.T) {
	cases := []struct {
		name string
		typ  string
		v    any
	}{
		{"an int64 for an INT column", "INT", int64(1)},
		{"a decimal with the wrong scale", "DECIMAL(10, 2)", brDec(1, 10, 3)},
		{"a compact decimal that overflows a long", "DECIMAL(18, 0)", Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(1), 70), Precision: 18}},
		{"a decimal with more digits than its precision", "DECIMAL(3, 1)", brDec(-1000, 3, 1)},
		{"a decimal wider than 16 bytes", "DECIMAL(38, 0)", Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(1), 130), Precision: 38}},
		{"nanos of a millisecond out of range", "TIMESTAMP(9)", Timestamp{NanoOfMilli: 1_000_000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := EncodeBinaryRow([]DataType{brType(t, c.typ)}, Row{c.v}); err == nil {
				t.Fatal("no error")
			}
		})
	}
	arr := DataType{Root: TypeArray, Nullable: true, Element: &DataType{Root: TypeInt, Nullable: true}}
	if _, err := EncodeBinaryRow([]DataType{arr}, Row{[]any{int32(1)}}); err == nil {
		t.Error("composite value encoded without error")
	}
	if _, err := EncodeBinaryRow([]DataType{brType(t, "INT")}, Row{}); err == nil {
		t.Error("arity mismatch accepted")
	}
}

func TestDecodeBinaryRowRejectsCorruptInput(t *testing.T) {
	str := []DataType{brType(t, "STRING")}
	good, err := EncodeBinaryRow(str, Row{"hello world!"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		types []DataType
		data  []byte
	}{
		{"fewer than four bytes", nil, []byte{0, 0}},
		{"a negative arity", nil, []byte{0xff, 0xff, 0xff, 0xff}},
		{"an arity different from the types", str, EmptyBinaryRow()},
		{"a row shorter than its fixed part", str, good[:12]},
		{"a variable part cut off", str, good[:len(good)-8]},
		{"an offset past the end", str, append(append([]byte{}, good[:12]...), 0x0c, 0, 0, 0, 0xff, 0, 0, 0)},
		{"an inline length above seven", str, brUnhex(t, "00000001 0000000000000000 000000000000008f")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeBinaryRow(c.types, c.data)
			if !errors.Is(err, ErrCorruptBinaryRow) {
				t.Fatalf("want ErrCorruptBinaryRow, got %v", err)
			}
		})
	}
}

func TestJavaBigIntegerBytes(t *testing.T) {
	cases := map[int64]string{0: "00", 1: "01", 127: "7f", 128: "0080", -1: "ff", -128: "80", -129: "ff7f", 255: "00ff", -256: "ff00", math.MinInt64: "8000000000000000"}
	for v, want := range cases {
		got := hex.EncodeToString(bigIntToJavaBytes(big.NewInt(v)))
		if got != want {
			t.Errorf("%d: got %s want %s", v, got, want)
		}
		if back := javaBytesToBigInt(brUnhex(t, want)); back.Int64() != v {
			t.Errorf("%s: decoded %s want %d", want, back, v)
		}
	}
}

func FuzzDecodeBinaryRow(f *testing.F) {
	types := []DataType{}
	for _, s := range []string{"INT", "STRING", "DECIMAL(20, 2)", "TIMESTAMP(6)", "BYTES", "DECIMAL(10, 2)", "DOUBLE", "BOOLEAN"} {
		dt, _ := ParseAtomicType(s)
		types = append(types, dt)
	}
	seed, _ := EncodeBinaryRow(types, Row{int32(1), "hello world!", brDec(100, 20, 2), Timestamp{Millis: 5, NanoOfMilli: 7}, []byte("bytes and more bytes"), brDec(3, 10, 2), 1.5, true})
	f.Add(seed, uint8(255))
	f.Add(EmptyBinaryRow(), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, mask uint8) {
		// mask picks a prefix-free subset of the types so that rows of
		// every arity up to 8 are exercised.
		var ts []DataType
		for i, dt := range types {
			if mask&(1<<i) != 0 {
				ts = append(ts, dt)
			}
		}
		row, err := DecodeBinaryRow(ts, data)
		if err != nil {
			return
		}
		// What decodes must re-encode and decode to the same values.
		enc, err := EncodeBinaryRow(ts, row)
		if err != nil {
			if strings.Contains(err.Error(), "digits") {
				return // corrupt decimal bytes beyond the type's precision
			}
			t.Fatalf("re-encode of decoded row failed: %v", err)
		}
		again, err := DecodeBinaryRow(ts, enc)
		if err != nil {
			t.Fatalf("decode of re-encoded row failed: %v", err)
		}
		if !rowsEqualForFuzz(row, again) {
			t.Fatalf("row changed: %#v vs %#v", row, again)
		}
	})
}

func rowsEqualForFuzz(a, b Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if fx, ok := x.(float64); ok {
			fy, _ := y.(float64)
			if math.Float64bits(fx) != math.Float64bits(fy) {
				return false
			}
			continue
		}
		if dx, ok := x.(Decimal); ok {
			dy, _ := y.(Decimal)
			if dy.Unscaled == nil || dx.Unscaled.Cmp(dy.Unscaled) != 0 {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
