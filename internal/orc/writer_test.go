package orc

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"
)

// testSchema covers every type the writer takes, nested ones included.
func testSchema() *TypeDesc {
	leaf := func(k Kind) *TypeDesc { return &TypeDesc{Kind: k} }
	return &TypeDesc{Kind: Struct,
		Fields: []string{"b", "i8", "i16", "i32", "i64", "f32", "f64", "s", "sdict", "vc", "ch", "bin",
			"dec", "dec38", "date", "ts", "tsi", "lst", "mp", "st", "deep"},
		Children: []*TypeDesc{
			leaf(Boolean), leaf(Byte), leaf(Short), leaf(Int), {Kind: Long, Attributes: map[string]string{"paimon.id": "4"}},
			leaf(Float), leaf(Double), leaf(String), leaf(String), {Kind: Varchar, MaxLength: 10}, {Kind: Char, MaxLength: 3},
			leaf(Binary), {Kind: Decimal, Precision: 18, Scale: 4}, {Kind: Decimal, Precision: 38, Scale: 10},
			leaf(Date), leaf(Timestamp), leaf(TimestampInstant),
			{Kind: List, Children: []*TypeDesc{leaf(Int)}},
			{Kind: Map, Children: []*TypeDesc{leaf(String), leaf(Double)}},
			{Kind: Struct, Fields: []string{"x", "y"}, Children: []*TypeDesc{leaf(Long), leaf(String)}},
			{Kind: List, Children: []*TypeDesc{{Kind: Map, Children: []*TypeDesc{leaf(Int),
				{Kind: Struct, Fields: []string{"a"}, Children: []*TypeDesc{leaf(Boolean)}}}}}},
		}}
}

// randValue draws a value of t as Column.Value returns it (nil ~1 in 6).
func randValue(r *rand.Rand, t *TypeDesc, row int, mode int) any {
	if r.IntN(6) == 0 && mode != 2 {
		return nil
	}
	pick := func(vals ...int64) int64 { return vals[r.IntN(len(vals))] }
	switch t.Kind {
	case Boolean:
		return r.IntN(3) == 0
	case Byte:
		return int64(int8(r.Uint32()))
	case Short:
		return int64(int16(r.Uint32()))
	case Int:
		if mode == 1 {
			return int64(row) // monotone: DELTA runs
		}
		return pick(int64(int32(r.Uint32())), 7, 7, math.MinInt32, math.MaxInt32, int64(row%5))
	case Long:
		if mode == 1 {
			return int64(row * 1000)
		}
		return pick(int64(r.Uint64()), math.MinInt64, math.MaxInt64, 0, -1, int64(row), 5, 5, 5)
	case Date:
		return int64(r.IntN(200000) - 100000)
	case Float:
		return float64(float32(r.NormFloat64() * 1e5))
	case Double:
		return float64(pick(0, 1, 2)) + r.NormFloat64()*1e10*float64(pick(0, 1))
	case String:
		if mode == 1 {
			return []byte([]string{"alpha", "beta", "", "gamma"}[r.IntN(4)])
		}
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return b
	case Varchar:
		return []byte(fmt.Sprintf("v%d", r.IntN(100)))
	case Char:
		return []byte(fmt.Sprintf("%03d", r.IntN(1000)))
	case Binary:
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	case Decimal:
		digits := make([]byte, 1+r.IntN(t.Precision))
		for i := range digits {
			digits[i] = byte('0' + r.IntN(10))
		}
		u, _ := new(big.Int).SetString(string(digits), 10)
		if r.IntN(2) == 0 {
			u.Neg(u)
		}
		return Dec{Unscaled: u, Scale: t.Scale}
	case Timestamp, TimestampInstant:
		secs := r.Int64N(8e9) - 4e9
		ns := int32(pick(0, int64(r.IntN(1e9)), int64(r.IntN(1000))*1e6, 123000, 999999999))
		return Time{Secs: secs, Nanos: ns}
	case Struct:
		out := make([]any, len(t.Children))
		for i, c := range t.Children {
			out[i] = randValue(r, c, row, mode)
		}
		return out
	case List:
		out := make([]any, r.IntN(4))
		for i := range out {
			out[i] = randValue(r, t.Children[0], row, mode)
		}
		return out
	case Map:
		out := make([]KV, r.IntN(4))
		for i := range out {
			k := randValue(r, t.Children[0], row, 2)
			out[i] = KV{Key: k, Value: randValue(r, t.Children[1], row, mode)}
		}
		return out
	}
	panic(t.Kind)
}

func ptr[T any](v T) *T { return &v }

func writeFile(t testing.TB, schema *TypeDesc, opts WriterOptions, data [][]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, schema, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range data {
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// normalize turns written values into what the reader returns: Time,
// Dec at the column scale, []byte for strings.
func normalize(v any) any {
	switch x := v.(type) {
	case string:
		return []byte(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case []KV:
		out := make([]KV, len(x))
		for i, e := range x {
			out[i] = KV{normalize(e.Key), normalize(e.Value)}
		}
		return out
	case Dec:
		return Dec{Unscaled: new(big.Int).Set(x.Unscaled), Scale: x.Scale}
	}
	return v
}

func equalValue(a, b any) bool {
	switch x := a.(type) {
	case Dec:
		y, ok := b.(Dec)
		return ok && x.Scale == y.Scale && x.Unscaled.Cmp(y.Unscaled) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case []KV:
		y, ok := b.([]KV)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValue(x[i].Key, y[i].Key) || !equalValue(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || (math.IsNaN(x) && math.IsNaN(y)))
	}
	return reflect.DeepEqual(a, b)
}

func genRows(seed uint64, schema *TypeDesc, n, mode int) [][]any {
	r := rand.New(rand.NewPCG(seed, 1))
	data := make([][]any, n)
	for i := range data {
		row := make([]any, len(schema.Children))
		for k, c := range schema.Children {
			row[k] = randValue(r, c, i, mode)
		}
		data[i] = row
	}
	return data
}

// TestWriteReadRoundTrip writes every type with every codec, several
// stripes and row groups, dictionary and direct strings, and reads the
// rows back with the package's reader.
func TestWriteReadRoundTrip(t *testing.T) {
	t.Parallel()
	schema := testSchema()
	cases := []struct {
		name string
		opts WriterOptions
		n    int
		mode int
	}{
		{"none", WriterOptions{Compression: CompressionNone, RowIndexStride: 100}, 1000, 0},
		{"zlib-small-stripes", WriterOptions{Compression: CompressionZlib, StripeSize: 20000, RowIndexStride: 64}, 1500, 0},
		{"snappy-monotone", WriterOptions{Compression: CompressionSnappy, BlockSize: 1000}, 3000, 1},
		{"lz4", WriterOptions{Compression: CompressionLZ4, RowIndexStride: -1}, 700, 0},
		{"zstd-dict", WriterOptions{Compression: CompressionZstd, CompressionLevel: 3, DictionaryKeyRatio: ptr(1.0)}, 2000, 1},
		{"zstd-direct", WriterOptions{Compression: CompressionZstd, DictionaryKeyRatio: ptr(0.0), BlockSize: 4096, RowIndexStride: 333}, 2000, 0},
		{"empty", WriterOptions{Compression: CompressionZstd}, 0, 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := genRows(uint64(i), schema, tc.n, tc.mode)
			b := writeFile(t, schema, tc.opts, data)
			f, err := Open(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if f.Compression != tc.opts.Compression || f.NumRows != uint64(tc.n) {
				t.Fatalf("compression %s rows %d", f.Compression, f.NumRows)
			}
			if tc.name == "zlib-small-stripes" && len(f.Stripes) < 3 {
				t.Fatalf("%d stripes, want several", len(f.Stripes))
			}
			if got := f.Types[f.Types[0].Subtypes[4]].Attributes["paimon.id"]; got != "4" {
				t.Fatalf("paimon.id = %q", got)
			}
			got := rows(t, f)
			for r := range data {
				for k := range data[r] {
					want := normalize(data[r][k])
					if !equalValue(want, got[r][k]) {
						t.Fatalf("row %d column %s: got %#v, want %#v", r, schema.Fields[k], got[r][k], want)
					}
				}
			}
		})
	}
}

// TestIntV2RoundTrip checks the integer encoder on patterns that hit
// every run kind, signed and unsigned.
func TestIntV2RoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	for it := 0; it < 300; it++ {
		n := r.IntN(2000) + 1
		vals := make([]int64, n)
		signed := it%2 == 0
		for i := range vals {
			switch it % 6 {
			case 0:
				vals[i] = int64(r.Uint64())
			case 1:
				vals[i] = int64(i / 7)
			case 2:
				vals[i] = 1000 - int64(i)*3
			case 3:
				vals[i] = int64(r.IntN(4))
			case 4:
				vals[i] = int64(i) * int64(i)
			default:
				vals[i] = []int64{math.MaxInt64, math.MinInt64, 0, 1, -1}[r.IntN(5)]
			}
			if !signed && vals[i] < 0 {
				vals[i] = -(vals[i] + 1)
			}
		}
		enc := encodeIntV2(nil, vals, signed)
		ir := intReader{in: enc, signed: signed, v2: true}
		got, err := ir.ints(n)
		if err != nil {
			t.Fatalf("iteration %d: %v", it, err)
		}
		if !reflect.DeepEqual(got, vals) || len(ir.in) != 0 {
			t.Fatalf("iteration %d (signed %v): round trip differs (%d bytes left)", it, signed, len(ir.in))
		}
	}
}

// FuzzWriteRead writes fuzzer-chosen integers, strings and booleans and
// requires the reader to return them exactly.
func FuzzWriteRead(f *testing.F) {
	f.Add([]byte("hello orc writer"), uint8(0), uint16(10))
	f.Add([]byte{0, 0, 0, 0, 1, 2, 3, 255, 255, 255}, uint8(5), uint16(3))
	schema := &TypeDesc{Kind: Struct, Fields: []string{"i", "s", "b", "l"}, Children: []*TypeDesc{
		{Kind: Long}, {Kind: String}, {Kind: Boolean}, {Kind: List, Children: []*TypeDesc{{Kind: Short}}}}}
	f.Fuzz(func(t *testing.T, raw []byte, codec uint8, stride uint16) {
		var data [][]any
		for i := 0; i+2 < len(raw); i += 3 {
			var iv any = int64(int8(raw[i]))*int64(raw[i+1])<<uint(raw[i+2]%56) + int64(i)
			var sv any = raw[i : i+1+int(raw[i+1]%2)]
			var bv any = raw[i+2]%2 == 0
			if raw[i]%5 == 0 {
				iv = nil
			}
			if raw[i+1]%7 == 0 {
				sv, bv = nil, nil
			}
			lv := []any{int64(int16(raw[i])), nil}[:raw[i+2]%3%2+1]
			data = append(data, []any{iv, sv, bv, lv})
		}
		comps := []Compression{CompressionNone, CompressionZlib, CompressionSnappy, CompressionLZ4, CompressionZstd}
		opts := WriterOptions{Compression: comps[int(codec)%len(comps)], RowIndexStride: int(stride%50) + 1, BlockSize: 64 + int(stride)}
		b := writeFile(t, schema, opts, data)
		file, err := Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		got := rows(t, file)
		for r := range data {
			for k := range data[r] {
				if want := normalize(data[r][k]); !equalValue(want, got[r][k]) {
					t.Fatalf("row %d column %d: got %#v, want %#v", r, k, got[r][k], want)
				}
			}
		}
	})
}

// TestDecimalPrecisionBound: a DECIMAL(5, 2) takes unscaled values of up to
// 5 digits and refuses 6, either sign.
func TestDecimalPrecisionBound(t *testing.T) {
	t.Parallel()
	schema := &TypeDesc{Kind: Struct, Fields: []string{"d"}, Children: []*TypeDesc{{Kind: Decimal, Precision: 5, Scale: 2}}}
	for _, tc := range []struct {
		v  int64
		ok bool
	}{{0, true}, {99999, true}, {-99999, true}, {100000, false}, {-100000, false}} {
		w, err := NewWriter(io.Discard, schema, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Write([]any{Dec{Unscaled: big.NewInt(tc.v), Scale: 2}})
		if (err == nil) != tc.ok {
			t.Fatalf("DECIMAL(5, 2) unscaled %d: err %v, want ok=%v", tc.v, err, tc.ok)
		}
	}
}
