package orc

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// byteRLE decodes n values of ORC's byte run-length encoding.
func byteRLE(in []byte, n int) ([]byte, error) {
	// A run of up to 130 values takes 2 bytes: n beyond that bound is a
	// corrupt header, not worth allocating for.
	out := make([]byte, 0, min(n, (len(in)+1)*65))
	for len(out) < n {
		if len(in) == 0 {
			return nil, fmt.Errorf("%w: byte RLE stream ends after %d of %d values", ErrCorrupt, len(out), n)
		}
		h := int8(in[0])
		in = in[1:]
		if h >= 0 {
			if len(in) == 0 {
				return nil, fmt.Errorf("%w: byte RLE run without a value", ErrCorrupt)
			}
			for k := 0; k < int(h)+3 && len(out) < n; k++ {
				out = append(out, in[0])
			}
			in = in[1:]
			continue
		}
		l := -int(h)
		if l > len(in) {
			return nil, fmt.Errorf("%w: byte RLE literal of %d bytes, %d left", ErrCorrupt, l, len(in))
		}
		if l > n-len(out) {
			l = n - len(out)
		}
		out = append(out, in[:l]...)
		in = in[-int(h):]
	}
	return out, nil
}

// boolRLE decodes n booleans: byte RLE of bit-packed bytes, MSB first.
func boolRLE(in []byte, n int) ([]bool, error) {
	b, err := byteRLE(in, (n+7)/8)
	if err != nil {
		return nil, err
	}
	out := make([]bool, n) // n <= 8*len(b): b was decoded
	for i := range out {
		out[i] = b[i>>3]&(0x80>>(i&7)) != 0
	}
	return out, nil
}

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// intReader decodes ORC integer run-length encodings v1 and v2.
type intReader struct {
	in     []byte
	signed bool
	v2     bool
	// Bit-unpacked patches of the current run, reused from run to run: a
	// fresh slice per run was a tenth of a compaction's allocations. (A
	// run's values are unpacked straight into the output.)
	patches []int64
}

func (r *intReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.in)
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint in an integer stream", ErrCorrupt)
	}
	r.in = r.in[n:]
	return v, nil
}

func (r *intReader) varint() (int64, error) {
	v, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	if r.signed {
		return unzigzag(v), nil
	}
	return int64(v), nil
}

func (r *intReader) byte() (byte, error) {
	if len(r.in) == 0 {
		return 0, fmt.Errorf("%w: integer stream ends inside a run header", ErrCorrupt)
	}
	b := r.in[0]
	r.in = r.in[1:]
	return b, nil
}

// ints decodes n values.
func (r *intReader) ints(n int) ([]int64, error) {
	// Sized once: growing the slice of a stripe's values cost a tenth of a
	// compaction's CPU in copies. A run holds at most 512 values in 2 or
	// more bytes, so a header claiming more than that is corrupt and gets
	// no more room up front than the stream could hold.
	out := make([]int64, 0, min(n, (len(r.in)+1)*256))
	var err error
	for len(out) < n {
		if len(r.in) == 0 {
			return nil, fmt.Errorf("%w: integer stream ends after %d of %d values", ErrCorrupt, len(out), n)
		}
		if r.v2 {
			out, err = r.runV2(out, n)
		} else {
			out, err = r.runV1(out, n)
		}
		if err != nil {
			return nil, err
		}
	}
	return out[:n], nil
}

func (r *intReader) runV1(out []int64, n int) ([]int64, error) {
	h, _ := r.byte()
	if int8(h) >= 0 {
		l := int(h) + 3
		d, err := r.byte()
		if err != nil {
			return nil, err
		}
		base, err := r.varint()
		if err != nil {
			return nil, err
		}
		// The whole run, as every other run kind: a streaming decoder
		// (rows.go) keeps what is beyond n for its next call.
		for k := 0; k < l; k++ {
			out = append(out, base+int64(k)*int64(int8(d)))
		}
		return out, nil
	}
	l := -int(int8(h))
	for k := 0; k < l; k++ {
		v, err := r.varint()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// widths maps RLE v2's 5-bit width codes to bit widths.
var widths = [32]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 26, 28, 30, 32, 40, 48, 56, 64}

// closestFixedBits rounds a width up to one RLE v2 can encode.
func closestFixedBits(n int) int {
	switch {
	case n == 0:
		return 1
	case n <= 24:
		return n
	case n <= 26:
		return 26
	case n <= 28:
		return 28
	case n <= 30:
		return 30
	case n <= 32:
		return 32
	case n <= 40:
		return 40
	case n <= 48:
		return 48
	case n <= 56:
		return 56
	}
	return 64
}

// unpack fills dst with the next len(dst) big-endian bit-packed values of
// width w bits (1..64), as int64 bit patterns, and consumes their bytes.
func (r *intReader) unpack(dst []int64, w int) error {
	need := (len(dst)*w + 7) / 8
	if need > len(r.in) {
		return fmt.Errorf("%w: %d values of %d bits need %d bytes, %d left", ErrCorrupt, len(dst), w, need, len(r.in))
	}
	// All of r.in, not just the run's bytes: the word loads of unpackBits
	// may read past the run (masked off) and stay in bounds longer.
	unpackBits(dst, r.in, w)
	r.in = r.in[need:]
	return nil
}

// unpackBits fills dst with big-endian bit-packed values of w bits (1..64)
// from b, which holds at least (len(dst)*w+7)/8 bytes. Bit packing was a
// third of a wide ORC file's read CPU when taken a bit at a time; here a
// value is one unaligned 64-bit load and two shifts (a value of at most 57
// bits spans at most 8 bytes from its first), and the widths that split or
// fill whole bytes take no shifts across bytes at all. Hand-written for
// speed; TestUnpackBitsMatchesReference compares every width to the
// bit-at-a-time decoder.
func unpackBits(dst []int64, b []byte, w int) {
	n := len(dst)
	switch w {
	case 1, 2, 4:
		// 8/w values per byte, the first in the high bits.
		per := 8 / w
		mask := byte(1)<<w - 1
		full := n / per
		for j, x := range b[:full] {
			d := dst[j*per : j*per+per]
			for k := range d {
				d[k] = int64(x >> (8 - w*(k+1)) & mask)
			}
		}
		if rest := dst[full*per:]; len(rest) > 0 {
			x := b[full]
			for k := range rest {
				rest[k] = int64(x >> (8 - w*(k+1)) & mask)
			}
		}
		return
	case 8:
		for i, x := range b[:n] {
			dst[i] = int64(x)
		}
		return
	case 16:
		b = b[:2*n]
		for i := range dst {
			dst[i] = int64(binary.BigEndian.Uint16(b[2*i:]))
		}
		return
	case 32:
		b = b[:4*n]
		for i := range dst {
			dst[i] = int64(binary.BigEndian.Uint32(b[4*i:]))
		}
		return
	case 64:
		b = b[:8*n]
		for i := range dst {
			dst[i] = int64(binary.BigEndian.Uint64(b[8*i:]))
		}
		return
	}
	if w > 57 {
		// No ORC width (the fixed widths stop at 56, then 64), but any
		// width decodes: the high w-32 bits, then the low 32.
		for i := range dst {
			off := i * w
			hi := loadBits(b, off, w-32)
			dst[i] = int64(hi<<32 | loadBits(b, off+w-32, 32))
		}
		return
	}
	// Values whose 8-byte window lies inside b, without a bounds test each;
	// the last few go through loadBits, which pads.
	shift := uint(64 - w)
	fast := 0
	if len(b) >= 8 {
		// Value i starts at byte i*w/8; it fits if i*w/8+8 <= len(b).
		fast = min(n, ((len(b)-8)*8)/w+1)
	}
	off := 0
	for i := range dst[:fast] {
		p := off >> 3
		dst[i] = int64(binary.BigEndian.Uint64(b[p:p+8:p+8]) << uint(off&7) >> shift)
		off += w
	}
	for i := fast; i < n; i++ {
		dst[i] = int64(loadBits(b, i*w, w))
	}
}

// loadBits is the w bits (1..57) of b from bit off on, big-endian; b may
// end within the 8-byte window of the load (it is padded with zeros).
func loadBits(b []byte, off, w int) uint64 {
	var x uint64
	if k := off >> 3; k+8 <= len(b) {
		x = binary.BigEndian.Uint64(b[k:])
	} else {
		var p [8]byte
		copy(p[:], b[k:])
		x = binary.BigEndian.Uint64(p[:])
	}
	return x << uint(off&7) >> uint(64-w)
}

func (r *intReader) length9(h byte) (int, error) {
	b, err := r.byte()
	if err != nil {
		return 0, err
	}
	return (int(h&1)<<8 | int(b)) + 1, nil
}

func (r *intReader) runV2(out []int64, n int) ([]int64, error) {
	h, _ := r.byte()
	switch h >> 6 {
	case 0: // short repeat
		w := int(h>>3&7) + 1
		l := int(h&7) + 3
		if w > len(r.in) {
			return nil, fmt.Errorf("%w: short repeat run truncated", ErrCorrupt)
		}
		var u uint64
		for _, c := range r.in[:w] {
			u = u<<8 | uint64(c)
		}
		r.in = r.in[w:]
		v := int64(u)
		if r.signed {
			v = unzigzag(u)
		}
		for k := 0; k < l; k++ {
			out = append(out, v)
		}
		return out, nil
	case 1: // direct
		w := widths[h>>1&31]
		l, err := r.length9(h)
		if err != nil {
			return nil, err
		}
		// Unpacked straight into out, then unzigzagged in place: no
		// intermediate slice and second copy.
		start := len(out)
		out = slices.Grow(out, l)[:start+l]
		vs := out[start:]
		if err := r.unpack(vs, w); err != nil {
			return nil, err
		}
		if r.signed {
			for i, v := range vs {
				vs[i] = unzigzag(uint64(v))
			}
		}
		return out, nil
	case 2:
		return r.patchedBase(out, h)
	}
	return r.delta(out, h)
}

func (r *intReader) patchedBase(out []int64, h byte) ([]int64, error) {
	w := widths[h>>1&31]
	l, err := r.length9(h)
	if err != nil {
		return nil, err
	}
	b3, err := r.byte()
	if err != nil {
		return nil, err
	}
	b4, err := r.byte()
	if err != nil {
		return nil, err
	}
	bw := int(b3>>5&7) + 1
	pw := widths[b3&31]
	pgw := int(b4>>5&7) + 1
	pll := int(b4 & 31)
	if bw > len(r.in) {
		return nil, fmt.Errorf("%w: patched base run truncated", ErrCorrupt)
	}
	var ub uint64
	for _, c := range r.in[:bw] {
		ub = ub<<8 | uint64(c)
	}
	r.in = r.in[bw:]
	// The base is sign-magnitude: its top bit is the sign.
	signBit := uint64(1) << (bw*8 - 1)
	base := int64(ub &^ signBit)
	if ub&signBit != 0 {
		base = -base
	}
	start := len(out)
	out = slices.Grow(out, l)[:start+l]
	vals := out[start:]
	if err := r.unpack(vals, w); err != nil {
		return nil, err
	}
	if pgw+pw > 64 {
		return nil, fmt.Errorf("%w: patch of %d bits", ErrCorrupt, pgw+pw)
	}
	if cap(r.patches) < pll {
		r.patches = make([]int64, pll)
	}
	patches := r.patches[:pll]
	if err := r.unpack(patches, closestFixedBits(pgw+pw)); err != nil {
		return nil, err
	}
	idx := 0
	for _, ps := range patches {
		p := uint64(ps)
		gap := int(p >> pw)
		idx += gap
		patch := p & (1<<pw - 1)
		if pw == 64 {
			patch = p
		}
		if patch == 0 && gap == 255 {
			continue // a gap longer than 255 is split into empty patches
		}
		if idx >= l {
			return nil, fmt.Errorf("%w: patch at %d of a run of %d", ErrCorrupt, idx, l)
		}
		if w < 64 {
			vals[idx] |= int64(patch << w)
		}
	}
	for i, v := range vals {
		vals[i] = base + v
	}
	return out, nil
}

func (r *intReader) delta(out []int64, h byte) ([]int64, error) {
	code := int(h >> 1 & 31)
	w := 0
	if code != 0 {
		w = widths[code]
	}
	l, err := r.length9(h)
	if err != nil {
		return nil, err
	}
	base, err := r.varint()
	if err != nil {
		return nil, err
	}
	du, err := r.uvarint()
	if err != nil {
		return nil, err
	}
	d := unzigzag(du)
	out = append(out, base)
	if l == 1 {
		return out, nil
	}
	if w == 0 {
		for k := 1; k < l; k++ {
			out = append(out, base+int64(k)*d)
		}
		return out, nil
	}
	v := base + d
	out = append(out, v)
	if l > 2 {
		// The deltas' magnitudes, unpacked into out and summed in place.
		start := len(out)
		out = slices.Grow(out, l-2)[:start+l-2]
		ds := out[start:]
		if err := r.unpack(ds, w); err != nil {
			return nil, err
		}
		if d < 0 {
			for i, x := range ds {
				v -= x
				ds[i] = v
			}
		} else {
			for i, x := range ds {
				v += x
				ds[i] = v
			}
		}
	}
	return out, nil
}
