package jroaring

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

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

func of(vals ...uint32) *Bitmap {
	b := New()
	for _, v := range vals {
		b.Add(v)
	}
	return b
}

func values(b *Bitmap) []uint32 {
	var out []uint32
	b.Iterate(func(v uint32) bool { out = append(out, v); return true })
	return out
}

// Java's RoaringBitmap.bitmapOf(1, 5, 70000) after runOptimize().serialize().
var javaBitmapOf1_5_70000 = le(uint32(12346), uint32(2),
	uint16(0), uint16(1), uint16(1), uint16(0),
	uint32(24), uint32(28),
	uint16(1), uint16(5), uint16(4464))

// javaRun10To12 is a Java-written run container holding 10, 11, 12: one run
// is 6 bytes, as large as the array, so Java keeps it a run container.
var javaRun10To12 = le(uint32(12347), byte(1), uint16(0), uint16(2), uint16(1), uint16(10), uint16(2))

func TestDecodeAndEncodeJavaBytes(t *testing.T) {
	for _, c := range []struct {
		name  string
		bytes []byte
		want  []uint32
	}{
		{"arrays", javaBitmapOf1_5_70000, []uint32{1, 5, 70000}},
		{"run container at a tie with an array", javaRun10To12, []uint32{10, 11, 12}},
		{"empty", le(uint32(12346), uint32(0)), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, n, err := Decode(append(slices.Clone(c.bytes), 0xee)) // a trailing byte is not read
			if err != nil || n != len(c.bytes) {
				t.Fatalf("decode: n=%d err=%v", n, err)
			}
			if got := values(b); !slices.Equal(got, c.want) {
				t.Fatalf("values %v, want %v", got, c.want)
			}
			if got := b.AppendTo(nil); !bytes.Equal(got, c.bytes) {
				t.Fatalf("re-encoded\n%x\nwant Java's\n%x", got, c.bytes)
			}
		})
	}
}

// kinds parses the container kinds out of a serialized bitmap: 'a'rray,
// 'b'itmap, 'r'un.
func kinds(t *testing.T, b []byte) string {
	t.Helper()
	cookie := binary.LittleEndian.Uint32(b)
	var n, hdr int
	var flags []byte
	if cookie&0xffff == cookieRuns {
		n = int(cookie>>16) + 1
		flags = b[4 : 4+(n+7)/8]
		hdr = 4 + len(flags)
	} else {
		n, hdr = int(binary.LittleEndian.Uint32(b[4:])), 8
	}
	var out []byte
	for i := range n {
		card := int(binary.LittleEndian.Uint16(b[hdr+4*i+2:])) + 1
		switch {
		case flags != nil && flags[i/8]&(1<<(i%8)) != 0:
			out = append(out, 'r')
		case card > arrayMax:
			out = append(out, 'b')
		default:
			out = append(out, 'a')
		}
	}
	return string(out)
}

// runsOf3 holds n runs of three values four apart in container 0.
func runsOf3(n int) *Bitmap {
	b := New()
	for i := range uint32(n) {
		b.Add(4 * i)
		b.Add(4*i + 1)
		b.Add(4*i + 2)
	}
	return b
}

// TestContainerKindsFollowJavaRunOptimize: the container kinds of the
// written bytes are the ones Java's runOptimize picks (RoaringFormatSpec
// sizes: array 2c, bitmap 8192, run 2+4r).
func TestContainerKindsFollowJavaRunOptimize(t *testing.T) {
	contiguous := New()
	for v := range uint32(6000) {
		contiguous.Add(7<<16 | v)
	}
	tieArray, _, err := Decode(le(uint32(12346), uint32(1), uint16(0), uint16(2), uint32(16), uint16(10), uint16(11), uint16(12)))
	if err != nil {
		t.Fatal(err)
	}
	tieRun, _, err := Decode(javaRun10To12)
	if err != nil {
		t.Fatal(err)
	}
	orTie, _, _ := Decode(javaRun10To12)
	orTie.Or(of(11))
	for _, c := range []struct {
		name string
		bm   *Bitmap
		want string
	}{
		{"ten consecutive values: a run is smaller than the array", of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), "r"},
		{"three consecutive values added: a tie keeps the array", of(10, 11, 12), "a"},
		{"three consecutive values read as an array stay one", tieArray, "a"},
		{"three consecutive values read as a run stay one", tieRun, "r"},
		{"a union with a run container at a tie stays a run", orTie, "r"},
		{"6000 consecutive values: one run", contiguous, "r"},
		{"2047 runs of 6141 values: 8190 bytes beat the bitmap", runsOf3(2047), "r"},
		{"2048 runs of 6144 values: 8194 bytes lose to the bitmap", runsOf3(2048), "b"},
		{"2055 runs: Java keeps the bitmap", runsOf3(2055), "b"},
		{"dense random-like values", of(1, 3, 5, 70000, 70002), "aa"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := values(c.bm)
			b := c.bm.AppendTo(nil)
			if got := kinds(t, b); got != c.want {
				t.Fatalf("container kinds %q, want %q", got, c.want)
			}
			back, n, err := Decode(b)
			if err != nil || n != len(b) || !slices.Equal(values(back), want) {
				t.Fatalf("written bytes do not read back: n=%d of %d, err=%v", n, len(b), err)
			}
			if again := back.AppendTo(nil); !bytes.Equal(again, b) {
				t.Fatal("writing what was read changes the bytes (Java's runOptimize is idempotent)")
			}
		})
	}
}

// TestLibraryWriterDiffersFromJava records why AppendTo does not use the
// library's RunOptimize and WriteTo: for these bitmaps its bytes are not
// Java's. When this test fails the library has changed its rules, and
// AppendTo could perhaps use it.
func TestLibraryWriterDiffersFromJava(t *testing.T) {
	lib := func(b *Bitmap) []byte {
		c := b.bits.Clone()
		c.RunOptimize()
		out, err := c.ToBytes()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tieRun, _, _ := Decode(javaRun10To12)
	for _, c := range []struct {
		name string
		bm   *Bitmap
	}{
		{"2048 runs over 4096 values (Go counts a bitmap as 8224 bytes)", runsOf3(2048)},
		{"a run container at a tie with an array", tieRun},
	} {
		if bytes.Equal(lib(c.bm), c.bm.AppendTo(nil)) {
			t.Errorf("%s: the library now writes Java's bytes", c.name)
		}
	}
	// Where the rules agree, so do the bytes.
	for _, bm := range []*Bitmap{of(1, 5, 70000), runsOf3(100), runsOf3(3000), of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)} {
		if !bytes.Equal(lib(bm), bm.AppendTo(nil)) {
			t.Errorf("%v...: the library's bytes differ where its rules agree with Java's", values(bm)[:3])
		}
	}
}

func TestOffsetsWithManyRunContainers(t *testing.T) {
	// From four containers on, a bitmap with runs has an offset header too.
	b := New()
	for k := range uint32(5) {
		for v := range uint32(100) {
			b.Add(k<<16 | v)
		}
	}
	out := b.AppendTo([]byte{1, 2, 3})[3:]
	if got := kinds(t, out); got != "rrrrr" {
		t.Fatalf("kinds %q", got)
	}
	hdr := 4 + 1 + 4*5
	off := hdr + 4*5
	for i := range 5 {
		if got := int(binary.LittleEndian.Uint32(out[hdr+4*i:])); got != off {
			t.Fatalf("container %d offset %d, want %d", i, got, off)
		}
		off += 2 + 4
	}
	if off != len(out) {
		t.Fatalf("containers end at %d of %d", off, len(out))
	}
	back, _, err := Decode(out)
	if err != nil || back.Cardinality() != 500 {
		t.Fatalf("read back %v, %v", back, err)
	}
}

func TestDecodeRejectsMalformedBitmaps(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"nothing", nil},
		{"short", []byte{1, 2, 3}},
		{"unknown cookie", le(uint32(99), uint32(0))},
		{"truncated arrays", javaBitmapOf1_5_70000[:len(javaBitmapOf1_5_70000)-1]},
		{"truncated header", javaBitmapOf1_5_70000[:12]},
		{"keys out of order", le(uint32(12346), uint32(2), uint16(1), uint16(0), uint16(0), uint16(0), uint32(24), uint32(26), uint16(1), uint16(2))},
		{"array values out of order", le(uint32(12346), uint32(1), uint16(0), uint16(1), uint32(16), uint16(5), uint16(1))},
		{"repeated array value", le(uint32(12346), uint32(1), uint16(0), uint16(1), uint32(16), uint16(5), uint16(5))},
		{"run past 65535", le(uint32(12347), byte(1), uint16(0), uint16(9), uint16(1), uint16(65530), uint16(9))},
		{"overlapping runs", le(uint32(12347), byte(1), uint16(0), uint16(9), uint16(2), uint16(10), uint16(4), uint16(12), uint16(3))},
		{"runs out of order", le(uint32(12347), byte(1), uint16(0), uint16(9), uint16(2), uint16(20), uint16(4), uint16(10), uint16(3))},
		{"run container without runs", le(uint32(12347), byte(1), uint16(0), uint16(0), uint16(0))},
		{"too many containers", le(uint32(12346), uint32(1<<16+1))},
		{"bitmap container with a wrong cardinality", append(le(uint32(12346), uint32(1), uint16(0), uint16(5000), uint32(16)), make([]byte, 8192)...)},
	} {
		if _, _, err := Decode(c.b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", c.name, err)
		}
	}
}

// FuzzDecode: whatever Decode accepts is a valid bitmap the library agrees
// with, and it writes back to bytes Decode reads as the same values.
func FuzzDecode(f *testing.F) {
	f.Add(javaBitmapOf1_5_70000)
	f.Add(javaRun10To12)
	f.Add(runsOf3(2048).AppendTo(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, _, err := Decode(data)
		if err != nil {
			return
		}
		if err := b.bits.Validate(); err != nil {
			t.Fatalf("accepted an invalid bitmap: %v", err)
		}
		back, _, err := Decode(b.AppendTo(nil))
		if err != nil || !back.bits.Equals(b.bits) {
			t.Fatalf("written bytes do not read back: %v", err)
		}
	})
}
