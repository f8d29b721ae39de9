package orc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"slices"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// This file holds the writer's encoders: byte and boolean RLE, integer
// RLE v2 and the compression chunks. Every encoder is called once per row
// group and ends its runs there, so a row index position needs no "values
// already consumed in the current run" (always 0) and the writer can
// compute positions from byte offsets alone.

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func putUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// encodeByteRLE appends vals in byte RLE: runs of 3 to 130 equal bytes,
// literals of up to 128.
func encodeByteRLE(dst, vals []byte) []byte {
	i := 0
	for i < len(vals) {
		j := i + 1
		for j < len(vals) && vals[j] == vals[i] && j-i < 130 {
			j++
		}
		if j-i >= 3 {
			dst = append(dst, byte(j-i-3), vals[i])
			i = j
			continue
		}
		k := i
		for k < len(vals) && k-i < 128 {
			if k+2 < len(vals) && vals[k] == vals[k+1] && vals[k] == vals[k+2] {
				break
			}
			k++
		}
		dst = append(dst, byte(-int8(k-i)))
		dst = append(dst, vals[i:k]...)
		i = k
	}
	return dst
}

// boolEncoder packs booleans MSB first into bytes and byte-RLEs the
// complete ones at every mark; a partial byte waits for the next group.
type boolEncoder struct {
	buf     []byte
	pending []byte
	cur     byte
	nbits   int
}

func (e *boolEncoder) add(v bool) {
	if v {
		e.cur |= 0x80 >> e.nbits
	}
	e.nbits++
	if e.nbits == 8 {
		e.pending = append(e.pending, e.cur)
		e.cur, e.nbits = 0, 0
	}
}

// addAll adds vs, whole bytes at a time where it can.
func (e *boolEncoder) addAll(vs []bool) {
	for len(vs) > 0 && e.nbits != 0 {
		e.add(vs[0])
		vs = vs[1:]
	}
	for len(vs) >= 8 {
		var b byte
		for k, v := range vs[:8] {
			if v {
				b |= 0x80 >> k
			}
		}
		e.pending = append(e.pending, b)
		vs = vs[8:]
	}
	for _, v := range vs {
		e.add(v)
	}
}

// mark ends a row group; it returns the byte offset of the next run and
// the bits of the current byte already used.
func (e *boolEncoder) mark() (uint64, uint64) {
	e.buf = encodeByteRLE(e.buf, e.pending)
	e.pending = e.pending[:0]
	return uint64(len(e.buf)), uint64(e.nbits)
}

func (e *boolEncoder) finish() []byte {
	if e.nbits > 0 {
		e.pending = append(e.pending, e.cur)
		e.cur, e.nbits = 0, 0
	}
	e.mark()
	return e.buf
}

// widthCode is the RLE v2 5-bit code of a width closestFixedBits returns.
func widthCode(w int) int {
	switch {
	case w <= 24:
		return w - 1
	case w == 26:
		return 24
	case w == 28:
		return 25
	case w == 30:
		return 26
	case w == 32:
		return 27
	case w == 40:
		return 28
	case w == 48:
		return 29
	case w == 56:
		return 30
	}
	return 31
}

func bitsFor(u uint64) int { return bits.Len64(u) }

// pack appends vals big-endian bit-packed at width w, padded to a byte.
// It works a value at a time through a 64-bit accumulator written out 32
// bits at a time (and byte-aligned widths as one 64-bit store per value):
// packing bit run by bit run was a tenth of an ORC compaction's CPU.
func pack(dst []byte, vals []uint64, w int) []byte {
	n := len(dst)
	size := (len(vals)*w + 7) / 8
	if w%8 == 0 {
		// Each value is stored as 8 bytes, its nb bytes first; the next
		// value overwrites the rest, and the slack past the end is cut.
		nb := w / 8
		dst = slices.Grow(dst, size+8)[:n+size+8]
		out := dst[n:]
		for i, v := range vals {
			binary.BigEndian.PutUint64(out[i*nb:], v<<(64-w))
		}
		return dst[:n+size]
	}
	dst = slices.Grow(dst, size)[:n+size]
	out := dst[n:]
	var acc uint64
	have, o := 0, 0
	if w < 32 {
		// Fewer than 32 bits stay in acc after a store, so a value of
		// up to 32 bits fits beside them.
		mask := uint64(1)<<w - 1
		for _, v := range vals {
			acc = acc<<w | v&mask
			have += w
			if have >= 32 {
				have -= 32
				binary.BigEndian.PutUint32(out[o:], uint32(acc>>have))
				o += 4
			}
		}
	} else {
		// Wider unaligned widths (no RLE v2 width is one, but pack takes
		// any) go a byte at a time, as two halves.
		for _, v := range vals {
			for _, part := range [2]struct {
				x uint64
				w int
			}{{v >> 32, w - 32}, {v, 32}} {
				acc = acc<<part.w | part.x&(uint64(1)<<part.w-1)
				have += part.w
				for have >= 8 {
					have -= 8
					out[o] = byte(acc >> have)
					o++
				}
			}
		}
	}
	for have >= 8 {
		have -= 8
		out[o] = byte(acc >> have)
		o++
	}
	if have > 0 {
		out[o] = byte(acc << (8 - have))
	}
	return dst
}

// encodeIntV2 appends vals in integer RLE v2: runs of equal values as
// SHORT_REPEAT (3 to 10) or DELTA with a zero delta, monotone stretches as
// DELTA when that is smaller, everything else DIRECT. (PATCHED_BASE, which
// Java also writes for outliers, is not needed: DIRECT holds any value.)
func encodeIntV2(dst []byte, vals []int64, signed bool) []byte {
	var scratch []uint64
	i := 0
	for i < len(vals) {
		j := i + 1
		for j < len(vals) && vals[j] == vals[i] && j-i < 512 {
			j++
		}
		if j-i >= 3 {
			dst = encodeRepeat(dst, vals[i], j-i, signed)
			i = j
			continue
		}
		k := i
		for k < len(vals) && k-i < 512 {
			if k+2 < len(vals) && vals[k] == vals[k+1] && vals[k] == vals[k+2] {
				break
			}
			k++
		}
		dst, scratch = encodeLiterals(dst, vals[i:k], signed, scratch)
		i = k
	}
	return dst
}

func encodeRepeat(dst []byte, v int64, n int, signed bool) []byte {
	u := uint64(v)
	if signed {
		u = zigzag(v)
	}
	if n <= 10 {
		nb := max(1, (bitsFor(u)+7)/8)
		dst = append(dst, byte(nb-1)<<3|byte(n-3))
		for k := nb - 1; k >= 0; k-- {
			dst = append(dst, byte(u>>(8*k)))
		}
		return dst
	}
	// DELTA, width 0: base and a zero delta.
	dst = append(dst, 3<<6|byte((n-1)>>8&1), byte(n-1))
	if signed {
		dst = putUvarint(dst, zigzag(v))
	} else {
		dst = putUvarint(dst, uint64(v))
	}
	return append(dst, 0)
}

func encodeLiterals(dst []byte, vals []int64, signed bool, scratch []uint64) ([]byte, []uint64) {
	n := len(vals)
	scratch = scratch[:0]
	var maxU uint64
	for _, v := range vals {
		u := uint64(v)
		if signed {
			u = zigzag(v)
		}
		scratch = append(scratch, u)
		maxU |= u
	}
	w := closestFixedBits(bitsFor(maxU))
	directSize := (n*w + 7) / 8
	if n >= 3 {
		var ok bool
		if dst, scratch, ok = appendDelta(dst, vals, signed, directSize, scratch); ok {
			return dst, scratch
		}
	}
	dst = append(dst, 1<<6|byte(widthCode(w))<<1|byte((n-1)>>8&1), byte(n-1))
	return pack(dst, scratch[:n], w), scratch
}

// appendDelta appends vals (at least 3) as a DELTA run if every step has
// the sign of the first, no difference overflows, and the run's body is
// smaller than directSize bytes. It looks before it builds: most literal
// runs are not monotone, and building each as a delta first was an
// allocation per run. The deltas go in scratch past its first len(vals)
// entries.
func appendDelta(dst []byte, vals []int64, signed bool, directSize int, scratch []uint64) ([]byte, []uint64, bool) {
	n := len(vals)
	if !signed && vals[0] < 0 {
		return dst, scratch, false
	}
	first, ok := sub(vals[1], vals[0])
	if !ok {
		return dst, scratch, false
	}
	var maxD uint64
	fixed := true
	for k := 2; k < n; k++ {
		d, ok := sub(vals[k], vals[k-1])
		if !ok || (first >= 0 && d < 0) || (first < 0 && d > 0) || (first == 0 && d != 0) {
			return dst, scratch, false
		}
		fixed = fixed && d == first
		if d < 0 {
			d = -d
		}
		maxD |= uint64(d)
	}
	base := uint64(vals[0])
	if signed {
		base = zigzag(vals[0])
	}
	code, w := 0, 0 // a fixed delta: width 0, no packed deltas
	if !fixed {
		// Code 0 means a fixed delta, so 1-bit deltas use 2 bits (as Java
		// does).
		w = closestFixedBits(max(bitsFor(maxD), 2))
		code = widthCode(w)
	}
	if uvarintLen(base)+uvarintLen(zigzag(first))+((n-2)*w+7)/8 >= directSize {
		return dst, scratch, false
	}
	dst = append(dst, 3<<6|byte(code)<<1|byte((n-1)>>8&1), byte(n-1))
	dst = putUvarint(dst, base)
	dst = putUvarint(dst, zigzag(first))
	if fixed {
		return dst, scratch, true
	}
	scratch = scratch[:n]
	for k := 2; k < n; k++ {
		d := vals[k] - vals[k-1] // checked above: no overflow
		if d < 0 {
			d = -d
		}
		scratch = append(scratch, uint64(d))
	}
	return pack(dst, scratch[n:], w), scratch, true
}

// uvarintLen is the length of u as a base-128 varint.
func uvarintLen(u uint64) int { return (bitsFor(u|1) + 6) / 7 }

func sub(a, b int64) (int64, bool) {
	d := a - b
	if (a >= b) != (d >= 0) || d == -1<<63 {
		return 0, false
	}
	return d, true
}

// appendBigVarint appends v zigzag base-128 (ORC DECIMAL data).
func appendBigVarint(dst []byte, v *big.Int) []byte {
	if v.IsInt64() {
		x := v.Int64()
		if x > -1<<62 && x < 1<<62 {
			return putUvarint(dst, zigzag(x))
		}
	}
	z := new(big.Int).Lsh(v, 1)
	if v.Sign() < 0 {
		z.Neg(z).Sub(z, big.NewInt(1))
	}
	for {
		low := byte(z.Uint64() & 0x7f)
		z.Rsh(z, 7)
		if z.Sign() == 0 {
			return append(dst, low)
		}
		dst = append(dst, low|0x80)
	}
}

// compressor writes ORC's chunked compression with one encoder per file.
type compressor struct {
	kind  Compression
	block int
	zstd  *zstd.Encoder
	flate *flate.Writer
	level int
	out   bytes.Buffer
}

func newCompressor(kind Compression, block, level int) (*compressor, error) {
	c := &compressor{kind: kind, block: block, level: level}
	switch kind {
	case CompressionNone, CompressionSnappy, CompressionLZ4:
	case CompressionZlib:
		if level < 1 || level > 9 {
			level = flate.DefaultCompression
		}
		w, err := flate.NewWriter(nil, level)
		if err != nil {
			return nil, fmt.Errorf("zlib level %d: %w", level, err)
		}
		c.flate = w
	case CompressionZstd:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
			zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20),
			// No frame checksum, as libzstd's default (Java's zstd-jni)
			// writes none: hashing every chunk was 1.5% of an ORC
			// compaction's CPU, and ORC readers need no checksum.
			zstd.WithEncoderCRC(false))
		if err != nil {
			return nil, fmt.Errorf("zstd level %d: %w", level, err)
		}
		c.zstd = enc
	default:
		return nil, fmt.Errorf("%w: compression %s for writing", ErrUnsupported, kind)
	}
	return c, nil
}

// compress returns data in compression chunks of at most c.block
// uncompressed bytes and the compressed offset at which each chunk starts.
func (c *compressor) compress(data []byte) ([]byte, []uint64, error) {
	if c.kind == CompressionNone {
		return data, nil, nil
	}
	var out []byte
	var starts []uint64
	for off := 0; off < len(data); off += c.block {
		starts = append(starts, uint64(len(out)))
		var err error
		if out, err = c.appendChunk(out, data[off:min(off+c.block, len(data))]); err != nil {
			return nil, nil, err
		}
	}
	return out, starts, nil
}

// appendChunk appends chunk (at most c.block bytes) compressed, with its
// header, or as is when compressing does not make it smaller.
func (c *compressor) appendChunk(out, chunk []byte) ([]byte, error) {
	if c.kind == CompressionZstd {
		// Encoded in place after its header: a chunk encoded apart and
		// copied was an allocation per chunk.
		at := len(out)
		out = c.zstd.EncodeAll(chunk, append(out, 0, 0, 0))
		h := uint32(len(out)-at-3) << 1
		if int(h>>1) >= len(chunk) {
			out = append(out[:at+3], chunk...)
			h = uint32(len(chunk))<<1 | 1
		}
		out[at], out[at+1], out[at+2] = byte(h), byte(h>>8), byte(h>>16)
		return out, nil
	}
	z, err := c.chunk(chunk)
	if err != nil {
		return nil, err
	}
	if len(z) >= len(chunk) {
		h := uint32(len(chunk))<<1 | 1
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
		return append(out, chunk...), nil
	}
	h := uint32(len(z)) << 1
	out = append(out, byte(h), byte(h>>8), byte(h>>16))
	return append(out, z...), nil
}

// spill compresses the full chunks of s's pending bytes (and with final
// the tail): chunks start at the same uncompressed offsets as when the
// whole stream is compressed at once, so the bytes and positions are the
// same while only compressed bytes and less than a chunk stay pending.
func (c *compressor) spill(s *stream, final bool) error {
	if c.kind == CompressionNone {
		if final {
			s.z = segments{bufs: [][]byte{s.data}, n: len(s.data), aliased: true}
		}
		return nil
	}
	i := 0
	for len(s.data)-i >= c.block || (final && i < len(s.data)) {
		end := min(i+c.block, len(s.data))
		s.starts = append(s.starts, uint64(s.z.n))
		if err := c.appendSegment(&s.z, s.data[i:end]); err != nil {
			return err
		}
		i = end
	}
	s.off += uint64(i)
	s.data = s.data[:copy(s.data, s.data[i:])]
	return nil
}

// appendSegment appends chunk compressed, with its header, to z.
func (c *compressor) appendSegment(z *segments, chunk []byte) error {
	// Room for the worst case: a stored chunk and its header, or zstd's
	// bound before the stored form replaces it (len/256 + 64 more).
	b := z.tail(len(chunk) + len(chunk)/64 + 64)
	had := len(b)
	b, err := c.appendChunk(b, chunk)
	if err != nil {
		return err
	}
	z.bufs[len(z.bufs)-1] = b
	z.n += len(b) - had
	return nil
}

// segments holds a stream's compressed bytes as a list of buffers, so
// appending a chunk never moves the bytes before it: one contiguous
// buffer grew by doubling, copying its bytes again at every growth and
// holding up to half of itself unused when the stripe ended (its peak
// counts in a compaction's RSS). A stripe's segments are kept for the
// next one's streams (recycle).
type segments struct {
	bufs [][]byte
	n    int
	free [][]byte // the previous stripe's buffers, emptied
	// aliased: bufs is the stream's uncompressed data itself (no
	// compression), so its buffer is not free for reuse.
	aliased bool
}

// maxSegment bounds a new buffer's size when it is not needed for one
// chunk: a segment as large as the stream so far (append's doubling,
// without the copies) up to this.
const maxSegment = 1 << 20

// tail returns the last buffer, with room for need more bytes.
func (z *segments) tail(need int) []byte {
	if k := len(z.bufs); k > 0 {
		if b := z.bufs[k-1]; cap(b)-len(b) >= need {
			return b
		}
	}
	size := max(need, min(z.n, maxSegment))
	var b []byte
	if k := len(z.free); k > 0 && cap(z.free[k-1]) >= size {
		b, z.free = z.free[k-1][:0], z.free[:k-1]
	} else {
		b = make([]byte, 0, size)
	}
	z.bufs = append(z.bufs, b)
	return b
}

// recycled returns empty segments whose free buffers are z's (the buffers
// of a stripe already written out).
func (z *segments) recycled() segments {
	if z.aliased {
		return segments{free: z.free}
	}
	free := z.free
	for i := len(z.bufs) - 1; i >= 0; i-- {
		free = append(free, z.bufs[i][:0])
	}
	clear(z.bufs)
	return segments{bufs: z.bufs[:0], free: free}
}

func (c *compressor) chunk(b []byte) ([]byte, error) {
	switch c.kind {
	case CompressionZlib:
		c.out.Reset()
		c.flate.Reset(&c.out)
		if _, err := c.flate.Write(b); err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
		if err := c.flate.Close(); err != nil {
			return nil, fmt.Errorf("zlib: %w", err)
		}
		return c.out.Bytes(), nil
	case CompressionSnappy:
		return snappy.Encode(nil, b), nil
	case CompressionLZ4:
		buf := make([]byte, lz4.CompressBlockBound(len(b)))
		n, err := lz4.CompressBlock(b, buf, nil)
		if err != nil {
			return nil, fmt.Errorf("lz4: %w", err)
		}
		if n == 0 { // incompressible: lz4 leaves it to the caller
			return b, nil
		}
		return buf[:n], nil
	case CompressionZstd:
		return c.zstd.EncodeAll(b, nil), nil
	}
	return b, nil
}

// position maps an uncompressed offset u of a stream to its row index
// positions: (compressed chunk start, offset in the chunk) or (u).
func (c *compressor) position(dst []uint64, starts []uint64, compressedLen int, u uint64) []uint64 {
	if c.kind == CompressionNone {
		return append(dst, u)
	}
	k := int(u / uint64(c.block))
	start := uint64(compressedLen)
	if k < len(starts) {
		start = starts[k]
	}
	return append(dst, start, u%uint64(c.block))
}
