package orc

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkUnpackBits unpacks runs of 512 values at some widths.
func BenchmarkUnpackBits(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, w := range []int{1, 3, 7, 8, 12, 17, 24, 32, 40, 64} {
		in := randBytes(r, 512*8+8)
		dst := make([]int64, 512)
		b.Run(fmt.Sprint(w), func(b *testing.B) {
			b.SetBytes(512 * 8)
			for b.Loop() {
				unpackBits(dst, in, w)
			}
		})
	}
}
