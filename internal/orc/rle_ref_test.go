package orc

import "fmt"

// refIntReader is the integer run decoder as it was before runs were
// unpacked a word at a time straight into the output (commit 487c8bb):
// the reference FuzzIntsMatchesReference compares intReader with.
type refIntReader struct {
	intReader
	vals, patches []uint64
}

// ints decodes n values.
func (r *refIntReader) refInts(n int) ([]int64, error) {
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
			out, err = r.refRunv2(out, n)
		} else {
			out, err = r.refRunv1(out, n)
		}
		if err != nil {
			return nil, err
		}
	}
	return out[:n], nil
}

func (r *refIntReader) refRunv1(out []int64, n int) ([]int64, error) {
	h, _ := r.intReader.byte()
	if int8(h) >= 0 {
		l := int(h) + 3
		d, err := r.intReader.byte()
		if err != nil {
			return nil, err
		}
		base, err := r.intReader.varint()
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
		v, err := r.intReader.varint()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// unpack reads l big-endian bit-packed values of width w bits.
func (r *refIntReader) refUnpack(dst []uint64, l, w int) ([]uint64, error) {
	need := (l*w + 7) / 8
	if need > len(r.in) {
		return nil, fmt.Errorf("%w: %d values of %d bits need %d bytes, %d left", ErrCorrupt, l, w, need, len(r.in))
	}
	b := r.in[:need]
	r.in = r.in[need:]
	var acc uint64
	var have int
	for k := 0; k < l; k++ {
		var v uint64
		rem := w
		for rem > 0 {
			if have == 0 {
				acc, have = uint64(b[0]), 8
				b = b[1:]
			}
			take := min(rem, have)
			v = v<<take | (acc>>(have-take))&(1<<take-1)
			have -= take
			rem -= take
		}
		dst = append(dst, v)
	}
	return dst, nil
}

func (r *refIntReader) refLength9(h byte) (int, error) {
	b, err := r.intReader.byte()
	if err != nil {
		return 0, err
	}
	return (int(h&1)<<8 | int(b)) + 1, nil
}

func (r *refIntReader) refRunv2(out []int64, n int) ([]int64, error) {
	h, _ := r.intReader.byte()
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
		l, err := r.refLength9(h)
		if err != nil {
			return nil, err
		}
		us, err := r.refUnpack(r.vals[:0], l, w)
		if err != nil {
			return nil, err
		}
		r.vals = us
		for _, u := range us {
			if r.signed {
				out = append(out, unzigzag(u))
			} else {
				out = append(out, int64(u))
			}
		}
		return out, nil
	case 2:
		return r.refPatchedbase(out, h)
	}
	return r.refDelta(out, h)
}

func (r *refIntReader) refPatchedbase(out []int64, h byte) ([]int64, error) {
	w := widths[h>>1&31]
	l, err := r.refLength9(h)
	if err != nil {
		return nil, err
	}
	b3, err := r.intReader.byte()
	if err != nil {
		return nil, err
	}
	b4, err := r.intReader.byte()
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
	vals, err := r.refUnpack(r.vals[:0], l, w)
	if err != nil {
		return nil, err
	}
	r.vals = vals
	if pgw+pw > 64 {
		return nil, fmt.Errorf("%w: patch of %d bits", ErrCorrupt, pgw+pw)
	}
	patches, err := r.refUnpack(r.patches[:0], pll, closestFixedBits(pgw+pw))
	if err != nil {
		return nil, err
	}
	r.patches = patches
	idx := 0
	for _, p := range patches {
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
			vals[idx] |= patch << w
		}
	}
	for _, v := range vals {
		out = append(out, base+int64(v))
	}
	return out, nil
}

func (r *refIntReader) refDelta(out []int64, h byte) ([]int64, error) {
	code := int(h >> 1 & 31)
	w := 0
	if code != 0 {
		w = widths[code]
	}
	l, err := r.refLength9(h)
	if err != nil {
		return nil, err
	}
	base, err := r.intReader.varint()
	if err != nil {
		return nil, err
	}
	du, err := r.intReader.uvarint()
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
		ds, err := r.refUnpack(r.vals[:0], l-2, w)
		if err != nil {
			return nil, err
		}
		r.vals = ds
		for _, x := range ds {
			if d < 0 {
				v -= int64(x)
			} else {
				v += int64(x)
			}
			out = append(out, v)
		}
	}
	return out, nil
}
