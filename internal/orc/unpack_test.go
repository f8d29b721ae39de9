package orc

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// unpackRef is the bit-at-a-time decoder unpackBits replaced
// (refIntReader.refUnpack): the reference its word loads are checked
// against.
func unpackRef(b []byte, l, w int) []uint64 {
	r := refIntReader{intReader: intReader{in: b}}
	out, err := r.refUnpack(nil, l, w)
	if err != nil {
		panic(err) // callers pass enough bytes
	}
	return out
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestUnpackBitsMatchesReference decodes random bytes at every width 1..64
// and every run length 1..512, with the run's bytes exactly at the end of
// the stream (the padded tail loads) and followed by other bytes (the word
// loads reading past the run), and compares with the bit-at-a-time
// decoder.
func TestUnpackBitsMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for w := 1; w <= 64; w++ {
		for l := 1; l <= 512; l++ {
			need := (l*w + 7) / 8
			for _, extra := range []int{0, 1, 9} {
				b := randBytes(r, need+extra)
				want := unpackRef(b, l, w)
				ir := intReader{in: b}
				got := make([]int64, l)
				if err := ir.unpack(got, w); err != nil {
					t.Fatalf("w=%d l=%d extra=%d: %v", w, l, extra, err)
				}
				for i := range got {
					if uint64(got[i]) != want[i] {
						t.Fatalf("w=%d l=%d extra=%d: value %d = %#x, want %#x", w, l, extra, i, uint64(got[i]), want[i])
					}
				}
				if len(ir.in) != extra {
					t.Fatalf("w=%d l=%d: %d bytes left, want %d", w, l, len(ir.in), extra)
				}
			}
			// One byte short: an error, nothing consumed.
			b := randBytes(r, need-1)
			ir := intReader{in: b}
			if err := ir.unpack(make([]int64, l), w); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("w=%d l=%d truncated: err = %v, want ErrCorrupt", w, l, err)
			}
			if len(ir.in) != need-1 {
				t.Fatalf("w=%d l=%d truncated: consumed input", w, l)
			}
		}
	}
}

// directRun is an RLE v2 DIRECT run of vals (zigzagged when signed) at
// width code c, packed by the writer's pack.
func directRun(vals []uint64, c int) []byte {
	l := len(vals) - 1
	out := []byte{1<<6 | byte(c)<<1 | byte(l>>8), byte(l)}
	return pack(out, vals, widths[c])
}

// TestRunV2DirectMatchesReference decodes DIRECT runs of every width code
// and lengths 1..512, signed and unsigned, against the reference unpack.
func TestRunV2DirectMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for c := range widths {
		w := widths[c]
		for _, l := range []int{1, 2, 3, 7, 8, 9, 63, 64, 65, 100, 255, 256, 257, 511, 512} {
			vals := make([]uint64, l)
			for i := range vals {
				vals[i] = r.Uint64()
				if w < 64 {
					vals[i] &= 1<<w - 1
				}
			}
			run := directRun(vals, c)
			for _, signed := range []bool{false, true} {
				ir := intReader{in: slices.Clone(run), signed: signed, v2: true}
				got, err := ir.ints(l)
				if err != nil {
					t.Fatalf("w=%d l=%d: %v", w, l, err)
				}
				for i, u := range unpackRef(run[2:], l, w) {
					want := int64(u)
					if signed {
						want = unzigzag(u)
					}
					if got[i] != want {
						t.Fatalf("w=%d l=%d signed=%v: value %d = %d, want %d", w, l, signed, i, got[i], want)
					}
				}
			}
			// Truncated: an error, not a panic.
			ir := intReader{in: run[:len(run)-1], v2: true}
			if _, err := ir.ints(l); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("w=%d l=%d truncated: err = %v", w, l, err)
			}
		}
	}
}

// FuzzUnpackBits compares unpackBits with the reference on any bytes.
func FuzzUnpackBits(f *testing.F) {
	f.Add([]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(13), uint16(5))
	f.Fuzz(func(t *testing.T, b []byte, w8 uint8, l16 uint16) {
		w := int(w8)%64 + 1
		l := int(l16)%512 + 1
		ir := intReader{in: b}
		got := make([]int64, l)
		err := ir.unpack(got, w)
		if need := (l*w + 7) / 8; need > len(b) {
			if err == nil {
				t.Fatalf("w=%d l=%d: %d bytes decoded, need %d", w, l, len(b), need)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range unpackRef(b, l, w) {
			if uint64(got[i]) != u {
				t.Fatalf("w=%d l=%d: value %d = %#x, want %#x", w, l, i, uint64(got[i]), u)
			}
		}
	})
}

// FuzzIntsMatchesReference decodes any bytes as RLE v1 and v2, signed and
// unsigned, with intReader and with the decoder it replaced: the same
// values, the same errors, the same bytes consumed. Random bytes make
// every run kind (short repeat, direct, patched base, delta) and every
// kind of truncation.
func FuzzIntsMatchesReference(f *testing.F) {
	f.Add([]byte{0x5e, 0x03, 0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef}, uint16(4), uint8(3))
	f.Add([]byte{0x90, 0x6d, 0x04, 0xa4, 0x8d, 0x10, 0x83, 0xc2, 0x00, 0xf0, 0x70, 0x40, 0x3c, 0x54, 0x18, 0x03, 0xc1, 0xc9, 0x80, 0x78, 0x3c, 0x21, 0x04, 0xf4, 0x03, 0xc1, 0xc0, 0xe0, 0x80, 0x38, 0x20, 0x0f, 0x16, 0x83, 0x81, 0xe1, 0x00, 0x70, 0x54, 0x56, 0x0e, 0x08, 0x6a, 0xd8, 0x88, 0x00}, uint16(20), uint8(1))
	f.Add([]byte{0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46}, uint16(10), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, n16 uint16, mode uint8) {
		n := int(n16)%2048 + 1
		signed, v2 := mode&1 != 0, mode&2 == 0
		got := intReader{in: in, signed: signed, v2: v2}
		ref := refIntReader{intReader: intReader{in: in, signed: signed, v2: v2}}
		gv, gerr := got.ints(n)
		rv, rerr := ref.refInts(n)
		if (gerr == nil) != (rerr == nil) || (gerr != nil && gerr.Error() != rerr.Error()) {
			t.Fatalf("err = %v, reference %v", gerr, rerr)
		}
		if gerr != nil {
			return
		}
		if !slices.Equal(gv, rv) {
			t.Fatalf("values %v, reference %v", gv, rv)
		}
		if len(got.in) != len(ref.in) {
			t.Fatalf("%d bytes left, reference %d", len(got.in), len(ref.in))
		}
	})
}

// TestIntsMatchesReferenceOnRandomRuns is FuzzIntsMatchesReference over
// generated streams of well-formed run headers with random bodies, so
// that long runs of every kind decode (random bytes mostly end in a
// truncation early).
func TestIntsMatchesReferenceOnRandomRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	decoded := 0
	for iter := 0; iter < 3000; iter++ {
		var in []byte
		for range 1 + r.IntN(8) {
			switch r.IntN(4) {
			case 0: // short repeat
				in = append(in, byte(r.IntN(64)))
				in = append(in, randBytes(r, 8)...)
			case 1: // direct
				c, l := r.IntN(32), r.IntN(512)
				in = append(in, 1<<6|byte(c)<<1|byte(l>>8), byte(l))
				in = append(in, randBytes(r, ((l+1)*widths[c]+7)/8)...)
			case 2: // patched base: small patch lists, valid widths
				c, l := r.IntN(32), r.IntN(512)
				bw, pc, pgw, pll := r.IntN(8), r.IntN(32), r.IntN(8), r.IntN(8)
				if pgw+1+widths[pc] > 64 {
					pc = 0
				}
				in = append(in, 2<<6|byte(c)<<1|byte(l>>8), byte(l), byte(bw)<<5|byte(pc), byte(pgw)<<5|byte(pll))
				in = append(in, randBytes(r, bw+1)...)
				in = append(in, randBytes(r, ((l+1)*widths[c]+7)/8)...)
				// Zero gaps keep the patches inside the run.
				in = append(in, make([]byte, (pll*closestFixedBits(pgw+1+widths[pc])+7)/8)...)
			case 3: // delta
				c, l := r.IntN(32), r.IntN(512)
				in = append(in, 3<<6|byte(c)<<1|byte(l>>8), byte(l))
				in = append(in, randBytes(r, 2)...)
				in = append(in, 0x04) // delta base +2 (zigzag)
				if r.IntN(2) == 0 {
					in[len(in)-1] = 0x03 // -2
				}
				w := 0
				if c != 0 {
					w = widths[c]
				}
				in = append(in, randBytes(r, (l*w+7)/8)...)
			}
		}
		for mode := range uint8(4) {
			signed, v2 := mode&1 != 0, mode&2 == 0
			n := 1 + r.IntN(3000)
			got := intReader{in: in, signed: signed, v2: v2}
			ref := refIntReader{intReader: intReader{in: in, signed: signed, v2: v2}}
			gv, gerr := got.ints(n)
			rv, rerr := ref.refInts(n)
			if (gerr == nil) != (rerr == nil) || (gerr != nil && gerr.Error() != rerr.Error()) {
				t.Fatalf("iter %d mode %d: err = %v, reference %v", iter, mode, gerr, rerr)
			}
			if !slices.Equal(gv, rv) || len(got.in) != len(ref.in) {
				t.Fatalf("iter %d mode %d: values differ from the reference", iter, mode)
			}
			if gerr == nil && mode&2 == 0 {
				decoded++
			}
		}
	}
	// Most v2 streams hold fewer values than asked (an error); enough
	// must decode for the comparison to mean something.
	if decoded < 500 {
		t.Errorf("only %d of 6000 v2 decodes succeeded", decoded)
	}
	t.Logf("%d of 6000 v2 decodes succeeded", decoded)
}

// TestBoolDecMatchesBoolRLE reads random boolean streams (runs and
// literals of bytes) in random steps with boolDec and compares with the
// whole-stream decoder boolRLE, the count of trues included.
func TestBoolDecMatchesBoolRLE(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for iter := 0; iter < 200; iter++ {
		n := 1 + r.IntN(5000)
		raw := make([]byte, (n+7)/8)
		for i := range raw {
			switch r.IntN(3) {
			case 0:
				raw[i] = 0xff
			case 1:
				raw[i] = byte(r.Uint32())
			}
		}
		enc := encodeByteRLE(nil, raw)
		want, err := boolRLE(enc, n)
		if err != nil {
			t.Fatal(err)
		}
		d := boolDec{b: byteDec{s: &inStream{buf: enc}}}
		var got []bool
		for len(got) < n {
			k := min(1+r.IntN(100), n-len(got))
			before := len(got)
			var trues int
			if got, trues, err = d.next(got, k); err != nil {
				t.Fatalf("iter %d: %v", iter, err)
			}
			wantTrues := 0
			for _, ok := range want[before : before+k] {
				if ok {
					wantTrues++
				}
			}
			if trues != wantTrues {
				t.Fatalf("iter %d: %d trues in %d..%d, want %d", iter, trues, before, before+k, wantTrues)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iter %d: booleans differ from boolRLE", iter)
		}
	}
}
