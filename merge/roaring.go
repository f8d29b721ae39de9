package merge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sort"
)

// rbm32Agg is FieldRoaringBitmap32Agg: VARBINARY values holding 32-bit
// RoaringBitmaps in the portable serialization; agg is their union.
// Retraction is not supported.
//
// The union is written without run containers (cookie 12346): array
// containers up to 4096 values, bitmap containers above, which is what Java's
// RoaringBitmap.or produces from array and bitmap inputs. When an input holds
// run containers Java may keep runs; the value is the same, the bytes may
// differ.
type rbm32Agg struct{ aggBase }

func (a *rbm32Agg) agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		if acc == nil {
			return in, nil
		}
		return acc, nil
	}
	x, ok1 := acc.([]byte)
	y, ok2 := in.([]byte)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: expected VARBINARY values, got %T and %T", a.name, acc, in)
	}
	bx, err := decodeRoaring32(x)
	if err != nil {
		return nil, fmt.Errorf("%s: unable to deserialize roaring bitmap: %w", a.name, err)
	}
	by, err := decodeRoaring32(y)
	if err != nil {
		return nil, fmt.Errorf("%s: unable to deserialize roaring bitmap: %w", a.name, err)
	}
	return encodeRoaring32(unionRoaring32(bx, by)), nil
}

func (a *rbm32Agg) aggReversed(acc, in any) (any, error) { return reversed(a, acc, in) }

const (
	roaringCookieNoRuns  = 12346
	roaringCookieRuns    = 12347
	roaringNoOffsetLimit = 4
	roaringArrayMax      = 4096
)

var errRoaringCorrupt = errors.New("corrupt roaring bitmap")

// rcontainer holds the low 16 bits of the values of one high-16-bit key,
// either as a sorted array or as a 65536-bit bitmap.
type rcontainer struct {
	array  []uint16
	bitmap []uint64 // nil unless a bitmap container
}

func (c *rcontainer) card() int {
	if c.bitmap == nil {
		return len(c.array)
	}
	n := 0
	for _, w := range c.bitmap {
		n += bits.OnesCount64(w)
	}
	return n
}

func (c *rcontainer) toBitmap() []uint64 {
	if c.bitmap != nil {
		return c.bitmap
	}
	b := make([]uint64, 1024)
	for _, v := range c.array {
		b[v>>6] |= 1 << (v & 63)
	}
	return b
}

type roaring32 struct {
	keys  []uint16
	conts []*rcontainer
}

func decodeRoaring32(b []byte) (roaring32, error) {
	var bm roaring32
	if len(b) < 4 {
		return bm, errRoaringCorrupt
	}
	cookie := binary.LittleEndian.Uint32(b)
	p := 4
	var n int
	var runFlags []byte
	switch {
	case cookie&0xffff == roaringCookieRuns:
		n = int(cookie>>16) + 1
		fl := (n + 7) / 8
		if len(b) < p+fl {
			return bm, errRoaringCorrupt
		}
		runFlags = b[p : p+fl]
		p += fl
	case cookie == roaringCookieNoRuns:
		if len(b) < 8 {
			return bm, errRoaringCorrupt
		}
		n = int(binary.LittleEndian.Uint32(b[4:]))
		p = 8
	default:
		return bm, fmt.Errorf("%w: unknown cookie %d", errRoaringCorrupt, cookie)
	}
	if n < 0 || n > 1<<16 || len(b) < p+4*n {
		return bm, errRoaringCorrupt
	}
	cards := make([]int, n)
	bm.keys = make([]uint16, n)
	for i := 0; i < n; i++ {
		bm.keys[i] = binary.LittleEndian.Uint16(b[p:])
		cards[i] = int(binary.LittleEndian.Uint16(b[p+2:])) + 1
		p += 4
	}
	if runFlags == nil || n >= roaringNoOffsetLimit {
		p += 4 * n // offsets; containers follow in order
	}
	bm.conts = make([]*rcontainer, n)
	for i := 0; i < n; i++ {
		c := &rcontainer{}
		switch {
		case runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0:
			if len(b) < p+2 {
				return bm, errRoaringCorrupt
			}
			nr := int(binary.LittleEndian.Uint16(b[p:]))
			p += 2
			if len(b) < p+4*nr {
				return bm, errRoaringCorrupt
			}
			var vals []uint16
			for j := 0; j < nr; j++ {
				start := int(binary.LittleEndian.Uint16(b[p+4*j:]))
				length := int(binary.LittleEndian.Uint16(b[p+4*j+2:]))
				if start+length > 0xffff {
					return bm, errRoaringCorrupt
				}
				for v := start; v <= start+length; v++ {
					vals = append(vals, uint16(v))
				}
			}
			p += 4 * nr
			c.array = vals
			if len(vals) > roaringArrayMax {
				c.bitmap, c.array = c.toBitmap(), nil
			}
		case cards[i] > roaringArrayMax:
			if len(b) < p+8192 {
				return bm, errRoaringCorrupt
			}
			c.bitmap = make([]uint64, 1024)
			for j := range c.bitmap {
				c.bitmap[j] = binary.LittleEndian.Uint64(b[p+8*j:])
			}
			p += 8192
		default:
			if len(b) < p+2*cards[i] {
				return bm, errRoaringCorrupt
			}
			c.array = make([]uint16, cards[i])
			for j := range c.array {
				c.array[j] = binary.LittleEndian.Uint16(b[p+2*j:])
			}
			p += 2 * cards[i]
		}
		bm.conts[i] = c
	}
	return bm, nil
}

func unionRoaring32(x, y roaring32) roaring32 {
	var out roaring32
	i, j := 0, 0
	for i < len(x.keys) || j < len(y.keys) {
		switch {
		case j == len(y.keys) || (i < len(x.keys) && x.keys[i] < y.keys[j]):
			out.keys, out.conts = append(out.keys, x.keys[i]), append(out.conts, x.conts[i])
			i++
		case i == len(x.keys) || y.keys[j] < x.keys[i]:
			out.keys, out.conts = append(out.keys, y.keys[j]), append(out.conts, y.conts[j])
			j++
		default:
			out.keys, out.conts = append(out.keys, x.keys[i]), append(out.conts, unionContainers(x.conts[i], y.conts[j]))
			i++
			j++
		}
	}
	return out
}

func unionContainers(a, b *rcontainer) *rcontainer {
	if a.bitmap == nil && b.bitmap == nil && len(a.array)+len(b.array) <= roaringArrayMax {
		merged := append(append(make([]uint16, 0, len(a.array)+len(b.array)), a.array...), b.array...)
		sort.Slice(merged, func(i, j int) bool { return merged[i] < merged[j] })
		out := merged[:0]
		for k, v := range merged {
			if k == 0 || v != merged[k-1] {
				out = append(out, v)
			}
		}
		return &rcontainer{array: out}
	}
	ab, bb := a.toBitmap(), b.toBitmap()
	words := make([]uint64, 1024)
	for k := range words {
		words[k] = ab[k] | bb[k]
	}
	c := &rcontainer{bitmap: words}
	if c.card() <= roaringArrayMax {
		var vals []uint16
		for k, w := range words {
			for w != 0 {
				t := bits.TrailingZeros64(w)
				vals = append(vals, uint16(k*64+t))
				w &= w - 1
			}
		}
		return &rcontainer{array: vals}
	}
	return c
}

// encodeRoaring32 writes the portable format without run containers.
func encodeRoaring32(bm roaring32) []byte {
	n := len(bm.keys)
	out := make([]byte, 0, 8+8*n)
	out = binary.LittleEndian.AppendUint32(out, roaringCookieNoRuns)
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	cards := make([]int, n)
	for i, k := range bm.keys {
		cards[i] = bm.conts[i].card()
		out = binary.LittleEndian.AppendUint16(out, k)
		out = binary.LittleEndian.AppendUint16(out, uint16(cards[i]-1))
	}
	offset := 8 + 8*n // offsets are relative to the start of the bitmap
	for i := range bm.conts {
		out = binary.LittleEndian.AppendUint32(out, uint32(offset))
		if cards[i] > roaringArrayMax {
			offset += 8192
		} else {
			offset += 2 * cards[i]
		}
	}
	for i, c := range bm.conts {
		if cards[i] > roaringArrayMax {
			for _, w := range c.toBitmap() {
				out = binary.LittleEndian.AppendUint64(out, w)
			}
			continue
		}
		if c.bitmap != nil {
			for k, w := range c.bitmap {
				for w != 0 {
					t := bits.TrailingZeros64(w)
					out = binary.LittleEndian.AppendUint16(out, uint16(k*64+t))
					w &= w - 1
				}
			}
			continue
		}
		for _, v := range c.array {
			out = binary.LittleEndian.AppendUint16(out, v)
		}
	}
	return out
}
