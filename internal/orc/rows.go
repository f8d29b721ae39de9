package orc

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"time"
)

// StripeRows decodes one stripe a bounded number of rows at a time: each
// column keeps its streams' decompressors and run-length decoders alive
// between calls and pulls the next values, so memory is one compression
// chunk per stream plus the rows of one call, not the whole decoded stripe
// (ReadStripe), which was most of a compaction's peak heap. No seeking:
// the rows are read in order, which is all a compaction needs.
type StripeRows struct {
	f     *File
	index int
	left  int // rows not yet decoded
	top   []*colDec
	names []string // of the top-level columns in top
	st    Stripe
	// scratch holds the stored chunk being decompressed (window mode):
	// streams are read one after the other, never at once.
	scratch []byte
}

// rowsMaxRun bounds the encoded bytes of one run of any of ORC's
// run-length encodings (RLE v2 patched base: 4 header bytes, an 8-byte
// base, 512 values and up to 31 patches of 64 bits); a decoder buffers
// that many before it decodes a run, so a run that crosses compression
// chunks decodes whole.
const rowsMaxRun = 8 << 10

// OpenStripeRows prepares stripe i for reading with Next; read selects the
// top-level columns (nil: all). With window > 0 streams are read from the
// file as they are consumed: a compressed stream one chunk at a time into
// a buffer all streams of the stripe share (so what stays in memory per
// stream is its decompressed chunk), an uncompressed one window bytes at a
// time. With 0 the stripe is read with one ReadAt, as ReadStripe does
// (for object stores, where every read is a round trip).
func (f *File) OpenStripeRows(i int, read func(col int) bool, window int) (*StripeRows, error) {
	si, err := f.stripeInfo(i)
	if err != nil {
		return nil, err
	}
	var data, footer []byte
	if window > 0 {
		footer = make([]byte, si.FooterLength)
		if err := readFull(f.r, footer, int64(si.Offset+si.IndexLength+si.DataLength)); err != nil {
			return nil, fmt.Errorf("read stripe %d footer: %w", i, err)
		}
	} else {
		buf := make([]byte, si.IndexLength+si.DataLength+si.FooterLength)
		if _, err := f.r.ReadAt(buf, int64(si.Offset)); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read stripe %d: %w", i, err)
		}
		data, footer = buf[:si.IndexLength+si.DataLength], buf[si.IndexLength+si.DataLength:]
	}
	sf, err := f.parseStripeFooter(i, footer)
	if err != nil {
		return nil, err
	}
	streams := map[streamKey]*inStream{}
	for _, s := range sf.streams {
		if !readStream(s.kind) {
			continue
		}
		if s.column < 0 || s.column >= len(f.Types) {
			return nil, fmt.Errorf("%w: stripe %d has a stream of column %d", ErrCorrupt, i, s.column)
		}
		in := &inStream{comp: f.Compression, block: f.BlockSize}
		if window > 0 {
			in.r, in.pos, in.end, in.window = f.r, int64(si.Offset+s.off), int64(si.Offset+s.off+s.length), window
		} else if f.Compression == CompressionNone {
			in.buf = data[s.off : s.off+s.length]
		} else {
			in.raw = data[s.off : s.off+s.length]
		}
		streams[streamKey{s.column, s.kind}] = in
	}
	r := &StripeRows{f: f, index: i, left: int(si.NumRows)}
	for _, in := range streams {
		in.scratch = &r.scratch
	}
	r.st.WriterTimezone = sf.zone
	r.st.Columns = make([]*Column, len(f.Types))
	root := f.Types[0]
	for k, id := range root.Subtypes {
		if read != nil && !read(k) {
			continue
		}
		d, err := r.newColDec(id, sf, streams)
		if err != nil {
			return nil, fmt.Errorf("stripe %d column %s: %w", i, root.FieldNames[k], err)
		}
		r.top = append(r.top, d)
		r.names = append(r.names, root.FieldNames[k])
	}
	return r, nil
}

// Left is the number of rows Next has not returned yet.
func (r *StripeRows) Left() int { return r.left }

// Next decodes the next min(n, Left()) rows (at least one); io.EOF when
// none are left. The returned Stripe and its columns (string values too)
// are reused by the next call. After an error r is not to be used again:
// the columns' decoders stopped at different rows.
func (r *StripeRows) Next(n int) (*Stripe, error) {
	if r.left == 0 {
		return nil, io.EOF
	}
	n = min(max(n, 1), r.left)
	for k, d := range r.top {
		if err := d.next(n); err != nil {
			return nil, fmt.Errorf("stripe %d column %s: %w", r.index, r.names[k], err)
		}
	}
	r.left -= n
	r.st.NumRows = n
	return &r.st, nil
}

// readFull reads len(p) bytes at off; fewer is a file shorter than its
// stripes say.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %d of %d bytes at offset %d", ErrCorrupt, n, len(p), off)
	}
	return err
}

// inStream yields the decompressed bytes of one stream a compression
// chunk at a time.
type inStream struct {
	comp  Compression
	block uint64
	// raw: stored bytes not yet decompressed (a compressed stream held in
	// memory) or not yet consumed (an uncompressed stream read from the
	// file, window bytes at a time into rawBack). In window mode the rest
	// of the stream are the file bytes pos..end; hdr is the header of the
	// next compressed chunk when hasHdr (read along with the chunk before).
	raw      []byte
	rawBack  []byte
	r        io.ReaderAt
	pos, end int64
	window   int
	hdr      [3]byte
	hasHdr   bool
	scratch  *[]byte
	// buf: decoded bytes not yet consumed, in back (compressed streams).
	buf      []byte
	back     []byte
	decoded  int
	chunkMax int // the largest decoded chunk so far
}

func (s *inStream) more() bool { return len(s.raw) > 0 || s.pos < s.end || s.hasHdr }

// rawNeed makes raw hold at least n bytes, or all that is left
// (uncompressed streams in window mode).
func (s *inStream) rawNeed(n int) error {
	if len(s.raw) >= n || s.pos >= s.end {
		return nil
	}
	read := int(min(int64(max(n-len(s.raw), s.window)), s.end-s.pos))
	if cap(s.rawBack) < len(s.raw)+read {
		s.rawBack = make([]byte, 0, len(s.raw)+read)
	}
	s.rawBack = append(s.rawBack[:0], s.raw...) // a move to the front
	p := s.rawBack[len(s.raw) : len(s.raw)+read]
	if err := readFull(s.r, p, s.pos); err != nil {
		return fmt.Errorf("read stream: %w", err)
	}
	s.pos += int64(read)
	s.raw = s.rawBack[:len(s.raw)+read]
	return nil
}

// chunk is the next stored compression chunk and its header.
func (s *inStream) chunk() (uint32, []byte, error) {
	if s.r == nil {
		if len(s.raw) < 3 {
			return 0, nil, fmt.Errorf("%w: truncated compression chunk header", ErrCorrupt)
		}
		h := uint32(s.raw[0]) | uint32(s.raw[1])<<8 | uint32(s.raw[2])<<16
		size := int(h >> 1)
		if size > len(s.raw)-3 {
			return 0, nil, fmt.Errorf("%w: compression chunk of %d bytes, %d left", ErrCorrupt, size, len(s.raw)-3)
		}
		c := s.raw[3 : 3+size]
		s.raw = s.raw[3+size:]
		return h, c, nil
	}
	if !s.hasHdr {
		if s.end-s.pos < 3 {
			return 0, nil, fmt.Errorf("%w: truncated compression chunk header", ErrCorrupt)
		}
		if err := readFull(s.r, s.hdr[:], s.pos); err != nil {
			return 0, nil, fmt.Errorf("read stream: %w", err)
		}
		s.pos += 3
	}
	s.hasHdr = false
	h := uint32(s.hdr[0]) | uint32(s.hdr[1])<<8 | uint32(s.hdr[2])<<16
	size := int64(h >> 1)
	if size > s.end-s.pos {
		return 0, nil, fmt.Errorf("%w: compression chunk of %d bytes, %d left", ErrCorrupt, size, s.end-s.pos)
	}
	// The next chunk's header comes with this chunk: one read per chunk.
	next := int64(0)
	if s.end-s.pos-size >= 3 {
		next = 3
	}
	b := *s.scratch
	if int64(cap(b)) < size+next {
		b = make([]byte, size+next)
		*s.scratch = b
	}
	b = b[:size+next]
	if err := readFull(s.r, b, s.pos); err != nil {
		return 0, nil, fmt.Errorf("read stream: %w", err)
	}
	s.pos += size + next
	if next == 3 {
		copy(s.hdr[:], b[size:])
		s.hasHdr = true
	}
	return h, b[:size], nil
}

// fill makes buf hold at least n bytes, or all that is left of the stream.
func (s *inStream) fill(n int) error {
	if len(s.buf) >= n {
		return nil
	}
	if s.comp == CompressionNone {
		// The stored bytes are the decoded ones: buf is raw.
		s.raw = s.buf
		err := s.rawNeed(n)
		s.buf, s.raw = s.raw, nil
		return err
	}
	for len(s.buf) < n && s.more() {
		h, chunk, err := s.chunk()
		if err != nil {
			return err
		}
		s.back = append(s.back[:0], s.buf...) // a move to the front
		if want := len(s.back) + s.chunkMax + rowsMaxRun; s.chunkMax > 0 && cap(s.back) < want {
			// Room for the largest chunk so far and a run's leftover: sized
			// to fit only, every chunk after a longer leftover reallocated.
			s.back = append(make([]byte, 0, want), s.back...)
		}
		had := len(s.back)
		if h&1 == 1 {
			s.back = append(s.back, chunk...)
		} else if s.back, err = decompressChunk(s.comp, s.block, chunk, s.back); err != nil {
			return err
		}
		s.chunkMax = max(s.chunkMax, len(s.back)-had)
		if s.decoded += len(s.back) - had; s.decoded > maxStreamDecoded {
			return fmt.Errorf("%w: stream decompresses to more than %d bytes", ErrCorrupt, maxStreamDecoded)
		}
		s.buf = s.back
	}
	return nil
}

// intDec decodes an integer stream n values at a time: runs are decoded
// whole, and the values of the last run beyond what was asked wait in pend
// for the next call.
type intDec struct {
	s     *inStream
	r     intReader
	pend  []int64
	spare []int64
}

// next appends the next n values to dst.
func (d *intDec) next(dst []int64, n int) ([]int64, error) {
	k := min(n, len(d.pend))
	dst = append(dst, d.pend[:k]...)
	d.pend = d.pend[k:]
	want := len(dst) + n - k
	// Room for a chunk's values and a run's overshoot up front: growing
	// run by run copied them several times. Bounded: n is a claim of the
	// file (a dictionary's size) until the values decode.
	dst = slices.Grow(dst, min(want-len(dst), 16<<10)+512)
	for len(dst) < want {
		if err := d.s.fill(rowsMaxRun); err != nil {
			return nil, err
		}
		if len(d.s.buf) == 0 {
			return nil, fmt.Errorf("%w: integer stream ends %d values short", ErrCorrupt, want-len(dst))
		}
		d.r.in = d.s.buf
		var err error
		if d.r.v2 {
			dst, err = d.r.runV2(dst, want)
		} else {
			dst, err = d.r.runV1(dst, want)
		}
		if err != nil {
			return nil, err
		}
		d.s.buf = d.r.in
	}
	if len(dst) > want {
		// pend is empty here (the loop ran), so spare is free to reuse.
		d.pend = append(d.spare[:0], dst[want:]...)
		d.spare = d.pend[:0]
		dst = dst[:want]
	}
	return dst, nil
}

// byteDec decodes a byte run-length stream n values at a time.
type byteDec struct {
	s     *inStream
	pend  []byte
	spare []byte
}

func (d *byteDec) next(dst []byte, n int) ([]byte, error) {
	k := min(n, len(d.pend))
	dst = append(dst, d.pend[:k]...)
	d.pend = d.pend[k:]
	want := len(dst) + n - k
	for len(dst) < want {
		if err := d.s.fill(130); err != nil {
			return nil, err
		}
		in := d.s.buf
		if len(in) == 0 {
			return nil, fmt.Errorf("%w: byte RLE stream ends %d values short", ErrCorrupt, want-len(dst))
		}
		h := int8(in[0])
		if h >= 0 {
			if len(in) < 2 {
				return nil, fmt.Errorf("%w: byte RLE run without a value", ErrCorrupt)
			}
			for k := 0; k < int(h)+3; k++ {
				dst = append(dst, in[1])
			}
			d.s.buf = in[2:]
			continue
		}
		l := -int(h)
		if l > len(in)-1 {
			return nil, fmt.Errorf("%w: byte RLE literal of %d bytes, %d left", ErrCorrupt, l, len(in)-1)
		}
		dst = append(dst, in[1:1+l]...)
		d.s.buf = in[1+l:]
	}
	if len(dst) > want {
		d.pend = append(d.spare[:0], dst[want:]...)
		d.spare = d.pend[:0]
		dst = dst[:want]
	}
	return dst, nil
}

// boolDec decodes a boolean stream (byte RLE of bytes of 8 bits, MSB
// first) n values at a time; left bits of cur are not taken yet.
type boolDec struct {
	b    byteDec
	cur  byte
	left int
	tmp  []byte
}

// next appends the next n booleans to dst and returns how many of them
// are true (a PRESENT stream's count of values).
func (d *boolDec) next(dst []bool, n int) ([]bool, int, error) {
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	trues := 0
	k := 0
	for ; k < len(out) && d.left > 0; k++ {
		out[k] = d.cur&(0x80>>(8-d.left)) != 0
		if out[k] {
			trues++
		}
		d.left--
	}
	out = out[k:]
	if len(out) == 0 {
		return dst, trues, nil
	}
	nb := (len(out) + 7) / 8
	var err error
	if d.tmp, err = d.b.next(d.tmp[:0], nb); err != nil {
		return nil, 0, err
	}
	// A byte's 8 flags in one store from a table, and counted with a
	// popcount: expanding bit by bit was a tenth of a wide file's read CPU.
	full := len(out) / 8
	for i, b := range d.tmp[:full] {
		*(*[8]bool)(out[8*i : 8*i+8]) = byteBools[b]
		trues += bits.OnesCount8(b)
	}
	if r := len(out) % 8; r != 0 {
		b := d.tmp[nb-1]
		copy(out[8*full:], byteBools[b][:r])
		trues += bits.OnesCount8(b >> (8 - r))
		d.cur, d.left = b, 8-r
	}
	return dst, trues, nil
}

// byteBools is each byte's bits as booleans, most significant first.
var byteBools = func() (t [256][8]bool) {
	for b := range t {
		for i := range 8 {
			t[b][i] = b&(0x80>>i) != 0
		}
	}
	return t
}()

// colDec decodes one column (and its children) into c, a chunk of rows
// at a time.
type colDec struct {
	id      int
	t       *Type
	enc     uint64
	c       *Column
	present *boolDec
	// Decoders of the column's other streams (nil: the stream is absent,
	// an error once a value needs it).
	bools  *boolDec
	bytes  *byteDec
	ints   *intDec // DATA: integers, dictionary indexes, timestamp seconds
	sec    *intDec // SECONDARY: decimal scales, timestamp nanoseconds
	lens   *intDec // LENGTH: direct string lengths, LIST and MAP lengths
	data   *inStream
	kids   []*colDec
	zone   string
	tsLoc  *time.Location
	tsBase int64
	tsDone bool
	tmp    []int64
	bs     []byte
}

func (r *StripeRows) newColDec(id int, sf *stripeFooter, streams map[streamKey]*inStream) (*colDec, error) {
	t := &r.f.Types[id]
	d := &colDec{id: id, t: t, enc: sf.encs[id], c: &Column{ID: id, Type: t}, zone: sf.zone}
	r.st.Columns[id] = d.c
	v2 := d.enc == encDirectV2 || d.enc == encDictionaryV2
	ints := func(kind int, signed bool) *intDec {
		if s := streams[streamKey{id, kind}]; s != nil {
			return &intDec{s: s, r: intReader{signed: signed, v2: v2}}
		}
		return nil
	}
	if s := streams[streamKey{id, streamPresent}]; s != nil {
		d.present = &boolDec{b: byteDec{s: s}}
	}
	data := streams[streamKey{id, streamData}]
	switch t.Kind {
	case Boolean:
		if data != nil {
			d.bools = &boolDec{b: byteDec{s: data}}
		}
	case Byte:
		if data != nil {
			d.bytes = &byteDec{s: data}
		}
	case Short, Int, Date, Long:
		d.ints = ints(streamData, true)
	case Float, Double:
		d.data = data
	case String, Varchar, Char, Binary:
		switch d.enc {
		case encDirect, encDirectV2:
			d.data, d.lens = data, ints(streamLength, false)
		case encDictionary, encDictionaryV2:
			d.ints = ints(streamData, false)
			if err := d.dictionary(sf.dicts[id], streams[streamKey{id, streamDictData}], ints(streamLength, false)); err != nil {
				return nil, fmt.Errorf("column %d (%s): %w", id, t.Kind, err)
			}
		default:
			return nil, fmt.Errorf("column %d (%s): %w: column encoding %d", id, t.Kind, ErrUnsupported, d.enc)
		}
	case Decimal:
		d.data, d.sec = data, ints(streamSecondary, true)
	case Timestamp, TimestampInstant:
		// Nanoseconds read unsigned, as Java writes them (see timestamps).
		d.ints, d.sec = ints(streamData, true), ints(streamSecondary, false)
	case Struct, List, Map:
		if t.Kind != Struct {
			d.lens = ints(streamLength, false)
		}
		for _, s := range t.Subtypes {
			k, err := r.newColDec(s, sf, streams)
			if err != nil {
				return nil, err
			}
			d.kids = append(d.kids, k)
			d.c.Children = append(d.c.Children, k.c)
		}
	default:
		return nil, fmt.Errorf("%w: column type %s", ErrUnsupported, t.Kind)
	}
	return d, nil
}

// dictionary decodes a string column's dictionary, which every chunk's
// indexes point into, once.
func (d *colDec) dictionary(size uint64, data *inStream, lens *intDec) error {
	var dict []byte
	if data != nil {
		if err := data.fill(maxStreamDecoded + 1); err != nil {
			return err
		}
		dict = data.buf
	}
	if size > uint64(len(dict))+uint64(maxStripeRows) {
		return fmt.Errorf("%w: dictionary of %d entries", ErrCorrupt, size)
	}
	var ls []int64
	if size > 0 {
		if lens == nil {
			return fmt.Errorf("%w: column %d lacks stream kind %d", ErrCorrupt, d.id, streamLength)
		}
		var err error
		if ls, err = lens.next(nil, int(size)); err != nil {
			return fmt.Errorf("dictionary lengths: %w", err)
		}
	}
	offs, err := offsets(dict, ls)
	if err != nil {
		return err
	}
	d.c.strData, d.c.strOffs = dict, offs
	if d.t.Kind == Char {
		d.c.trimTrailingSpaces()
	}
	return nil
}

func (d *colDec) lacks(kind int) error {
	return fmt.Errorf("%w: column %d lacks stream kind %d", ErrCorrupt, d.id, kind)
}

// next decodes the column's next n entries into d.c.
func (d *colDec) next(n int) error {
	if err := d.decode(n); err != nil {
		return fmt.Errorf("column %d (%s): %w", d.id, d.t.Kind, err)
	}
	return nil
}

func (d *colDec) decode(n int) error {
	c := d.c
	c.N, c.rank = n, nil
	nn := n
	c.Present = c.Present[:0]
	if d.present != nil {
		var err error
		if c.Present, nn, err = d.present.next(c.Present, n); err != nil {
			return fmt.Errorf("present: %w", err)
		}
	} else {
		c.Present = nil
	}
	var err error
	switch d.t.Kind {
	case Boolean:
		c.Bools = c.Bools[:0]
		if nn > 0 {
			if d.bools == nil {
				return d.lacks(streamData)
			}
			c.Bools, _, err = d.bools.next(c.Bools, nn)
		}
	case Byte:
		c.Ints32 = c.Ints32[:0]
		if nn > 0 {
			if d.bytes == nil {
				return d.lacks(streamData)
			}
			if d.bs, err = d.bytes.next(d.bs[:0], nn); err != nil {
				return err
			}
			out := slices.Grow(c.Ints32, len(d.bs))[:len(d.bs)]
			for i, b := range d.bs {
				out[i] = int32(int8(b))
			}
			c.Ints32 = out
		}
	case Short, Int, Date:
		c.Ints32 = c.Ints32[:0]
		if d.tmp, err = d.intsOf(d.ints, streamData, nn); err != nil {
			return err
		}
		lo, hi := intRange(d.t.Kind)
		out := slices.Grow(c.Ints32, len(d.tmp))[:len(d.tmp)]
		for i, x := range d.tmp {
			if x < lo || x > hi {
				return fmt.Errorf("%w: value %d out of range for a %s", ErrCorrupt, x, d.t.Kind)
			}
			out[i] = int32(x)
		}
		c.Ints32 = out
	case Long:
		c.Ints, err = d.intsInto(c.Ints, d.ints, streamData, nn)
	case Float, Double:
		err = d.floats(nn)
	case String, Varchar, Char, Binary:
		err = d.strings(nn)
	case Decimal:
		err = d.decimals(nn)
	case Timestamp, TimestampInstant:
		err = d.timestamps(nn)
	case Struct:
		for _, k := range d.kids {
			if err := k.next(nn); err != nil {
				return err
			}
		}
	case List, Map:
		if d.tmp, err = d.intsOf(d.lens, streamLength, nn); err != nil {
			return fmt.Errorf("lengths: %w", err)
		}
		c.Offsets = append(c.Offsets[:0], 0)
		for i, l := range d.tmp {
			if l < 0 || l > maxStripeRows || c.Offsets[i]+int(l) > maxStripeRows {
				return fmt.Errorf("%w: %s entry of %d elements", ErrCorrupt, d.t.Kind, l)
			}
			c.Offsets = append(c.Offsets, c.Offsets[i]+int(l))
		}
		for _, k := range d.kids {
			if err := k.next(c.Offsets[len(d.tmp)]); err != nil {
				return err
			}
		}
	}
	return err
}

// intsOf is the next n values of integer stream dec (kind) in d.tmp.
func (d *colDec) intsOf(dec *intDec, kind, n int) ([]int64, error) {
	return d.intsInto(d.tmp, dec, kind, n)
}

// intsInto is the next n values of integer stream dec (kind) in dst,
// reused.
func (d *colDec) intsInto(dst []int64, dec *intDec, kind, n int) ([]int64, error) {
	dst = dst[:0]
	if n == 0 {
		return dst, nil
	}
	if dec == nil {
		return nil, d.lacks(kind)
	}
	return dec.next(dst, n)
}

func (d *colDec) floats(nn int) error {
	c := d.c
	c.Floats = c.Floats[:0]
	if nn == 0 {
		return nil
	}
	if d.data == nil {
		return d.lacks(streamData)
	}
	w := 8
	if d.t.Kind == Float {
		w = 4
	}
	// Taken as the stream's chunks hold them, not made contiguous first
	// (fill(nn*w)): that moved the rest of one chunk in front of the next.
	c.Floats = slices.Grow(c.Floats, nn)
	for taken := 0; taken < nn; {
		if len(d.data.buf) < w {
			if err := d.data.fill(w); err != nil {
				return err
			}
			if len(d.data.buf) < w {
				// The stream ended: as many bytes as it had for the call.
				return fmt.Errorf("%w: %d values need %d bytes, stream has %d", ErrCorrupt, nn, nn*w, taken*w+len(d.data.buf))
			}
		}
		k := min(nn-taken, len(d.data.buf)/w)
		c.Floats = appendFloats(c.Floats, d.data.buf[:k*w], w)
		d.data.buf = d.data.buf[k*w:]
		taken += k
	}
	return nil
}

func (d *colDec) strings(nn int) error {
	c := d.c
	if d.enc == encDictionary || d.enc == encDictionaryV2 {
		c.dictIdx = c.dictIdx[:0]
		if c.dictIdx == nil {
			// Non-nil even for a chunk of nulls: a nil dictIdx is what
			// tells BytesAt and DirectBytes the column is direct.
			c.dictIdx = make([]uint32, 0, nn)
		}
		var err error
		if d.tmp, err = d.intsOf(d.ints, streamData, nn); err != nil {
			return fmt.Errorf("dictionary indexes: %w", err)
		}
		size := int64(len(c.strOffs) - 1)
		for _, k := range d.tmp {
			if k < 0 || k >= size {
				return fmt.Errorf("%w: dictionary index %d of %d", ErrCorrupt, k, size)
			}
			c.dictIdx = append(c.dictIdx, uint32(k))
		}
		return nil
	}
	c.strData, c.strOffs = nil, c.strOffs[:0]
	if nn == 0 {
		return nil
	}
	var err error
	if d.tmp, err = d.intsOf(d.lens, streamLength, nn); err != nil {
		return fmt.Errorf("lengths: %w", err)
	}
	total := int64(0)
	for _, l := range d.tmp {
		if l < 0 || l > maxStreamDecoded || total+l > maxStreamDecoded {
			return fmt.Errorf("%w: string values of %d bytes", ErrCorrupt, total+l)
		}
		total += l
	}
	var data []byte
	if d.data != nil {
		if err := d.data.fill(int(total)); err != nil {
			return err
		}
		data = d.data.buf[:min(int(total), len(d.data.buf))]
	}
	if c.strOffs, err = appendOffsets(c.strOffs, data, d.tmp); err != nil {
		return err
	}
	// The values alias the stream's buffer until the next chunk.
	c.strData = data
	if d.data != nil {
		d.data.buf = d.data.buf[len(data):]
	}
	if d.t.Kind == Char {
		c.trimTrailingSpaces()
	}
	return nil
}

func (d *colDec) decimals(nn int) error {
	c := d.c
	c.Dec64, c.Decimals = c.Dec64[:0], c.Decimals[:0]
	if nn == 0 {
		return nil
	}
	if d.data == nil {
		return d.lacks(streamData)
	}
	var err error
	if d.tmp, err = d.intsOf(d.sec, streamSecondary, nn); err != nil {
		return fmt.Errorf("scales: %w", err)
	}
	small := d.t.Precision > 0 && d.t.Precision <= 18
	if small {
		c.Dec64 = slices.Grow(c.Dec64, nn)
	}
	// The stream's bytes in a local, refilled only when fewer than a
	// value's may be left: a fill call and a store to d.data per value
	// were a fifth of a decimal column's cost.
	buf := d.data.buf
	for _, s := range d.tmp {
		// A varint of DECIMAL(38) has at most 20 bytes (bigVarint).
		if len(buf) < 21 {
			d.data.buf = buf
			if err := d.data.fill(21); err != nil {
				return err
			}
			buf = d.data.buf
		}
		if small {
			var v int64
			if v, buf, err = decimal64(buf, s, d.t); err != nil {
				return err
			}
			c.Dec64 = append(c.Dec64, v)
		} else {
			v, r, err := bigDecimal(buf, s, d.t)
			if err != nil {
				return err
			}
			c.Decimals, buf = append(c.Decimals, v), r
		}
	}
	d.data.buf = buf
	return nil
}

func (d *colDec) timestamps(nn int) error {
	c := d.c
	c.Secs, c.Nanos = c.Secs[:0], c.Nanos[:0]
	if nn == 0 {
		return nil
	}
	var err error
	if c.Secs, err = d.intsInto(c.Secs, d.ints, streamData, nn); err != nil {
		return fmt.Errorf("seconds: %w", err)
	}
	if d.tmp, err = d.intsOf(d.sec, streamSecondary, nn); err != nil {
		return fmt.Errorf("nanoseconds: %w", err)
	}
	if !d.tsDone {
		// Loaded at the first value, as ReadStripe does: a column of
		// nulls reads in any zone.
		if d.tsLoc, d.tsBase, err = timestampBase(d.t, d.zone); err != nil {
			return err
		}
		d.tsDone = true
	}
	c.Nanos = slices.Grow(c.Nanos, nn)[:nn]
	return convertTimestamps(c.Secs, d.tmp, c.Nanos, d.tsBase, d.tsLoc)
}
