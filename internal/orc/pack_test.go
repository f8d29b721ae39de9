package orc

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// packBits is the plain bit-by-bit big-endian packing pack must match.
func packBits(dst []byte, vals []uint64, w int) []byte {
	var acc byte
	n := 0
	for _, v := range vals {
		for b := w - 1; b >= 0; b-- {
			acc = acc<<1 | byte(v>>b&1)
			n++
			if n == 8 {
				dst = append(dst, acc)
				acc, n = 0, 0
			}
		}
	}
	if n > 0 {
		dst = append(dst, acc<<(8-n))
	}
	return dst
}

func TestPackMatchesBitByBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for w := 1; w <= 64; w++ {
		for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 63, 511, 512} {
			vals := make([]uint64, n)
			for i := range vals {
				vals[i] = rng.Uint64() // high bits above w must be ignored
			}
			prefix := []byte{0xAB}
			got := pack(bytes.Clone(prefix), vals, w)
			want := packBits(bytes.Clone(prefix), vals, w)
			if !bytes.Equal(got, want) {
				t.Fatalf("width %d, %d values: pack = %x, want %x", w, n, got, want)
			}
		}
	}
}
