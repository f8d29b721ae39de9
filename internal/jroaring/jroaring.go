// Package jroaring holds 32-bit RoaringBitmaps as Paimon's Java code does and
// reads and writes them in the portable serialization
// (https://github.com/RoaringBitmap/RoaringFormatSpec) byte for byte as Java's
// RoaringBitmap writes them.
//
// Paimon serializes every 32-bit bitmap it stores (deletion vectors, the
// 64-bit vectors' buckets, rbm32 aggregation values) after runOptimize().
// The set operations, membership and iteration are
// github.com/RoaringBitmap/roaring/v2's. Two things are our own:
//
//   - Writing. The library's RunOptimize picks container kinds by other
//     rules than Java's, so its bytes differ from Java's for some bitmaps: it
//     counts a bitmap container as 8224 bytes (its in-memory size) where Java
//     counts 8192, so a container of more than 4096 values in 2048 to 2055
//     runs becomes a run container in Go and stays a bitmap container in
//     Java; and at a tie between array and run size (an odd cardinality c in
//     (c-1)/2 runs) Go always picks the array, Java keeps a run container
//     that is already one. AppendTo applies Java's rules (see javaKind).
//   - Checking what is read. The library's Validate compares every pair of
//     runs of a run container (quadratic: 1.5 s for 100 containers of 2047
//     runs, which Java writes for a vector of every fourth row kept), so
//     Decode checks the serialized form itself in one pass before the library
//     reads it.
package jroaring

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2"
)

// ErrCorrupt is wrapped by every Decode error.
var ErrCorrupt = errors.New("corrupt roaring bitmap")

const (
	cookieNoRuns      = 12346
	cookieRuns        = 12347
	noOffsetThreshold = 4    // with runs, offsets are written from this many containers on
	arrayMax          = 4096 // more values than this are a bitmap container
	bitmapBytes       = 8192
)

// Bitmap is a set of uint32 values. The zero value is not usable; use New.
type Bitmap struct {
	bits *roaring.Bitmap
	// runKeys are the sorted high 16 bits of the containers Java holds as
	// run containers: those read as one, and (after Or) those either side
	// held as one. Adding values keeps a run container a run container in
	// Java. They only decide the tie in javaKind.
	runKeys []uint16
}

// New returns an empty bitmap.
func New() *Bitmap { return &Bitmap{bits: roaring.New()} }

// Add inserts v.
func (b *Bitmap) Add(v uint32) { b.bits.Add(v) }

// Contains reports whether v is in b.
func (b *Bitmap) Contains(v uint32) bool { return b.bits.Contains(v) }

// Cardinality is the number of values in b.
func (b *Bitmap) Cardinality() uint64 { return b.bits.GetCardinality() }

// IsEmpty reports whether b holds no value.
func (b *Bitmap) IsEmpty() bool { return b.bits.IsEmpty() }

// Iterate calls f with the values of b in ascending order until f returns
// false.
func (b *Bitmap) Iterate(f func(uint32) bool) { b.bits.Iterate(f) }

// Maximum is the largest value of b; b must not be empty.
func (b *Bitmap) Maximum() uint32 { return b.bits.Maximum() }

// Clone returns an independent copy of b (its run containers included, so
// it serializes as b does).
func (b *Bitmap) Clone() *Bitmap {
	return &Bitmap{bits: b.bits.Clone(), runKeys: append([]uint16(nil), b.runKeys...)}
}

// Or adds the values of o to b, as Java's RoaringBitmap.or does.
func (b *Bitmap) Or(o *Bitmap) {
	b.bits.Or(o.bits)
	b.runKeys = unionKeys(b.runKeys, o.runKeys)
}

func unionKeys(x, y []uint16) []uint16 {
	if len(y) == 0 {
		return x
	}
	out := make([]uint16, 0, len(x)+len(y))
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case j == len(y) || (i < len(x) && x[i] < y[j]):
			out = append(out, x[i])
			i++
		case i == len(x) || y[j] < x[i]:
			out = append(out, y[j])
			j++
		default:
			out = append(out, x[i])
			i++
			j++
		}
	}
	return out
}

// Decode reads one serialized bitmap from the start of data and returns it
// with the number of bytes it took. The bitmap does not reference data.
// Anything that is not a well-formed portable bitmap (unknown cookie,
// truncation, keys or values out of order, runs overlapping or past 65535, a
// bitmap container whose cardinality is not its population count) is an
// error wrapping ErrCorrupt.
func Decode(data []byte) (*Bitmap, int, error) {
	n, runKeys, err := check(data)
	if err != nil {
		return nil, 0, err
	}
	// The library reads a buffer without copying it (its containers point
	// into it, copy-on-write), so it gets a copy of its own: one allocation
	// instead of one per container.
	bm := roaring.New()
	read, err := bm.FromBuffer(bytes.Clone(data[:n]))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if int(read) != n {
		return nil, 0, fmt.Errorf("%w: read %d bytes of %d", ErrCorrupt, read, n)
	}
	return &Bitmap{bits: bm, runKeys: runKeys}, n, nil
}

// check walks the serialized bitmap at the start of b once and returns its
// length and its run containers' keys.
func check(b []byte) (int, []uint16, error) {
	corrupt := func(format string, args ...any) (int, []uint16, error) {
		return 0, nil, fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
	if len(b) < 4 {
		return corrupt("%d bytes", len(b))
	}
	cookie := binary.LittleEndian.Uint32(b)
	p := 4
	var n int
	var runFlags []byte
	switch {
	case cookie&0xffff == cookieRuns:
		n = int(cookie>>16) + 1
		runFlags = b[min(p, len(b)):min(p+(n+7)/8, len(b))]
		p += (n + 7) / 8
	case cookie == cookieNoRuns:
		if len(b) < 8 {
			return corrupt("truncated header")
		}
		n = int(binary.LittleEndian.Uint32(b[4:]))
		p = 8
	default:
		return corrupt("unknown cookie %d", cookie)
	}
	if n > 1<<16 {
		return corrupt("%d containers", n)
	}
	header := p
	p += 4 * n
	if runFlags == nil || n >= noOffsetThreshold {
		p += 4 * n
	}
	if len(b) < p {
		return corrupt("truncated header")
	}
	var runKeys []uint16
	prevKey := -1
	for i := range n {
		key := int(binary.LittleEndian.Uint16(b[header+4*i:]))
		card := int(binary.LittleEndian.Uint16(b[header+4*i+2:])) + 1
		if key <= prevKey {
			return corrupt("container keys out of order")
		}
		prevKey = key
		switch {
		case runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0:
			runKeys = append(runKeys, uint16(key))
			if len(b) < p+2 {
				return corrupt("truncated run container")
			}
			nr := int(binary.LittleEndian.Uint16(b[p:]))
			p += 2
			if nr == 0 || len(b) < p+4*nr {
				return corrupt("run container of %d runs", nr)
			}
			next := 0 // smallest start the next run may have
			for j := range nr {
				start := int(binary.LittleEndian.Uint16(b[p+4*j:]))
				last := start + int(binary.LittleEndian.Uint16(b[p+4*j+2:]))
				if start < next || last > 0xffff {
					return corrupt("runs out of order or past 65535")
				}
				next = last + 1
			}
			p += 4 * nr
		case card > arrayMax:
			if len(b) < p+bitmapBytes {
				return corrupt("truncated bitmap container")
			}
			pop := 0
			for j := 0; j < bitmapBytes; j += 8 {
				pop += bits.OnesCount64(binary.LittleEndian.Uint64(b[p+j:]))
			}
			if pop != card {
				return corrupt("bitmap container of %d values says %d", pop, card)
			}
			p += bitmapBytes
		default:
			if len(b) < p+2*card {
				return corrupt("truncated array container")
			}
			prev := -1
			for j := range card {
				v := int(binary.LittleEndian.Uint16(b[p+2*j:]))
				if v <= prev {
					return corrupt("array values out of order")
				}
				prev = v
			}
			p += 2 * card
		}
	}
	return p, runKeys, nil
}

type kind int

const (
	kindArray kind = iota
	kindBitmap
	kindRun
)

// javaKind is the container Java's RoaringBitmap serializes after
// runOptimize() for card values in runs runs. A run container is 2+4*runs
// bytes, an array 2*card, a bitmap 8192. Arrays (at most 4096 values)
// become runs only when strictly smaller, bitmap containers likewise; a
// run container stays one when no larger than the smaller of the two
// (RunContainer.toEfficientContainer), which differs only at a tie with an
// array.
func javaKind(card, runs int, wasRun bool) kind {
	runSize := 2 + 4*runs
	if card <= arrayMax {
		if runSize < 2*card || (wasRun && runSize == 2*card) {
			return kindRun
		}
		return kindArray
	}
	if runSize < bitmapBytes {
		return kindRun
	}
	return kindBitmap
}

// container is one key's values, as AppendTo writes them.
type container struct {
	key  uint16
	kind kind
	lows []uint16 // the values' low 16 bits
	runs int
}

func (c *container) size() int {
	switch c.kind {
	case kindRun:
		return 2 + 4*c.runs
	case kindBitmap:
		return bitmapBytes
	}
	return 2 * len(c.lows)
}

// AppendTo appends the bytes Java's RoaringBitmap.runOptimize() followed by
// serialize() writes for b.
func (b *Bitmap) AppendTo(out []byte) []byte {
	conts := b.containers()
	hasRun := false
	for _, c := range conts {
		hasRun = hasRun || c.kind == kindRun
	}
	n := len(conts)
	start := len(out) // offsets count from the bitmap's first byte
	if hasRun {
		out = binary.LittleEndian.AppendUint32(out, cookieRuns|uint32(n-1)<<16)
		flags := make([]byte, (n+7)/8)
		for i, c := range conts {
			if c.kind == kindRun {
				flags[i/8] |= 1 << (i % 8)
			}
		}
		out = append(out, flags...)
	} else {
		out = binary.LittleEndian.AppendUint32(out, cookieNoRuns)
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
	}
	for _, c := range conts {
		out = binary.LittleEndian.AppendUint16(out, c.key)
		out = binary.LittleEndian.AppendUint16(out, uint16(len(c.lows)-1))
	}
	if !hasRun || n >= noOffsetThreshold {
		offset := len(out) - start + 4*n
		for _, c := range conts {
			out = binary.LittleEndian.AppendUint32(out, uint32(offset))
			offset += c.size()
		}
	}
	for _, c := range conts {
		switch c.kind {
		case kindRun:
			out = binary.LittleEndian.AppendUint16(out, uint16(c.runs))
			for i := 0; i < len(c.lows); {
				j := i + 1
				for j < len(c.lows) && c.lows[j] == c.lows[j-1]+1 {
					j++
				}
				out = binary.LittleEndian.AppendUint16(out, c.lows[i])
				out = binary.LittleEndian.AppendUint16(out, uint16(j-i-1))
				i = j
			}
		case kindBitmap:
			var words [bitmapBytes / 8]uint64
			for _, v := range c.lows {
				words[v>>6] |= 1 << (v & 63)
			}
			for _, w := range words {
				out = binary.LittleEndian.AppendUint64(out, w)
			}
		default:
			for _, v := range c.lows {
				out = binary.LittleEndian.AppendUint16(out, v)
			}
		}
	}
	return out
}

// containers splits b's values by their high 16 bits and picks each
// container's kind as Java would.
func (b *Bitmap) containers() []*container {
	var conts []*container
	var cur *container
	it := b.bits.ManyIterator()
	buf := make([]uint32, 1024)
	for {
		m := it.NextMany(buf)
		if m == 0 {
			break
		}
		for _, v := range buf[:m] {
			key, low := uint16(v>>16), uint16(v)
			if cur == nil || cur.key != key {
				cur = &container{key: key}
				conts = append(conts, cur)
			}
			if len(cur.lows) == 0 || low != cur.lows[len(cur.lows)-1]+1 {
				cur.runs++
			}
			cur.lows = append(cur.lows, low)
		}
	}
	k := 0
	for _, c := range conts {
		for k < len(b.runKeys) && b.runKeys[k] < c.key {
			k++
		}
		wasRun := k < len(b.runKeys) && b.runKeys[k] == c.key
		c.kind = javaKind(len(c.lows), c.runs, wasRun)
	}
	return conts
}
