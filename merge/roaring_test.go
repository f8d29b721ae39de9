package merge

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/compactd/compactd/internal/jroaring"
	"github.com/compactd/compactd/table"
)

func roaringValues(bm *jroaring.Bitmap) []uint32 {
	var out []uint32
	bm.Iterate(func(v uint32) bool { out = append(out, v); return true })
	return out
}

func roaringOf(vals ...uint32) *jroaring.Bitmap {
	bm := jroaring.New()
	for _, v := range vals {
		bm.Add(v)
	}
	return bm
}

func le(vals ...any) []byte {
	var b []byte
	for _, v := range vals {
		switch x := v.(type) {
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, x)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, x)
		case byte:
			b = append(b, x)
		}
	}
	return b
}

// javaBitmapOf1_5_70000 is RoaringBitmap.bitmapOf(1, 5, 70000).serialize():
// cookie 12346, 2 containers, keys/cardinalities, offsets, then the arrays.
var javaBitmapOf1_5_70000 = le(uint32(12346), uint32(2),
	uint16(0), uint16(1), uint16(1), uint16(0),
	uint32(24), uint32(28),
	uint16(1), uint16(5), uint16(4464))

func TestRoaringPortableFormat(t *testing.T) {
	bm, err := decodeRoaring32(javaBitmapOf1_5_70000)
	if err != nil {
		t.Fatal(err)
	}
	if got := roaringValues(bm); len(got) != 3 || got[0] != 1 || got[1] != 5 || got[2] != 70000 {
		t.Fatalf("decoded %v, want [1 5 70000]", got)
	}
	if enc := bm.AppendTo(nil); !bytes.Equal(enc, javaBitmapOf1_5_70000) {
		t.Fatalf("re-encoded\n%v\nwant Java's bytes\n%v", enc, javaBitmapOf1_5_70000)
	}

	// A run container (cookie 12347, one container, run flag set, no offsets
	// below four containers): the values 10..19.
	runs := le(uint32(12347), byte(1), uint16(0), uint16(9), uint16(1), uint16(10), uint16(9))
	bm, err = decodeRoaring32(runs)
	if err != nil {
		t.Fatal(err)
	}
	got := roaringValues(bm)
	if len(got) != 10 || got[0] != 10 || got[9] != 19 {
		t.Fatalf("run container decoded to %v, want 10..19", got)
	}

	for _, bad := range [][]byte{nil, {1, 2, 3}, le(uint32(99)), javaBitmapOf1_5_70000[:20]} {
		if _, err := decodeRoaring32(bad); err == nil {
			t.Fatalf("decoding %v succeeded", bad)
		}
	}
}

func TestRoaringUnionSwitchesToBitmapAboveArrayLimit(t *testing.T) {
	// Two containers of 3000 values each whose union has 6000 values in
	// 3000 runs: too many runs for a run container (Java runOptimizes
	// before serializing), too many values for an array.
	even, odd := jroaring.New(), roaringOf(9<<16|3)
	for i := uint32(0); i < 3000; i++ {
		even.Add(7<<16 | 3*i)
		odd.Add(7<<16 | 3*i + 1)
	}
	even.Or(odd)
	enc := even.AppendTo(nil)
	back, err := decodeRoaring32(enc)
	if err != nil {
		t.Fatal(err)
	}
	vals := roaringValues(back)
	if len(vals) != 6001 || vals[0] != 7<<16 || vals[5999] != 7<<16|(3*2999+1) || vals[6000] != 9<<16|3 {
		t.Fatalf("union has %d values (first %d, last %d), want 6001", len(vals), vals[0], vals[len(vals)-1])
	}
	// The first container is a bitmap container: no run cookie, and its
	// 8192 bytes follow the header (8 + 4 + 4 bytes per container).
	if cookie := binary.LittleEndian.Uint32(enc); cookie != 12346 || len(enc) != 8+8*2+8192+2 {
		t.Fatalf("a container of 6000 values in 3000 runs was not written as a bitmap container (cookie %d, %d bytes)", cookie, len(enc))
	}

	// The same number of values in one run is one run container, as Java
	// writes it after runOptimize.
	run := jroaring.New()
	for i := uint32(0); i < 6000; i++ {
		run.Add(7<<16 | i)
	}
	if enc := run.AppendTo(nil); !bytes.Equal(enc, le(uint32(12347), byte(1), uint16(7), uint16(5999), uint16(1), uint16(0), uint16(5999))) {
		t.Fatalf("6000 consecutive values written as %x, want one run container", enc)
	}
}

func TestRbm32AggregationUnionsBitmaps(t *testing.T) {
	tBytes := table.DataType{Root: table.TypeVarBinary, Length: table.MaxLength, Nullable: true}
	other := le(uint32(12346), uint32(1), uint16(0), uint16(1), uint32(16), uint16(5), uint16(9))
	got, err := mergeRecords(t, map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "rbm32"}, schema("v", tBytes),
		rec("+I", 1, 1, javaBitmapOf1_5_70000), rec("+I", 2, 1, nil), rec("+I", 3, 1, other))
	if err != nil {
		t.Fatal(err)
	}
	bm, err := decodeRoaring32(got[0].Value[1].([]byte))
	if err != nil {
		t.Fatal(err)
	}
	if v := roaringValues(bm); len(v) != 4 || v[0] != 1 || v[1] != 5 || v[2] != 9 || v[3] != 70000 {
		t.Fatalf("union = %v, want [1 5 9 70000]", v)
	}
	if err := Validate(map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "rbm32"}, schema("v", tString), []string{"k"}); err == nil {
		t.Fatal("rbm32 on a STRING column was accepted")
	}
	if err := Validate(map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "rbm64"}, schema("v", tBytes), []string{"k"}); err == nil {
		t.Fatal("rbm64 was accepted although it is not implemented")
	}
}
