package orc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sync"
	"time"
	// Zone rules for TIMESTAMP columns of writers outside UTC, also where
	// the system has no zoneinfo (distroless images).
	_ "time/tzdata"
)

// Stream kinds of orc_proto.Stream.Kind.
const (
	streamPresent    = 0
	streamData       = 1
	streamLength     = 2
	streamDictData   = 3
	streamDictCount  = 4
	streamSecondary  = 5
	streamRowIndex   = 6
	streamBloom      = 7
	streamBloomUTF8  = 8
	encDirect        = 0
	encDictionary    = 1
	encDirectV2      = 2
	encDictionaryV2  = 3
	maxStripeRows    = 1 << 26
	maxStreamDecoded = 1 << 30
)

// Column holds the decoded values of one column of a stripe. It has N
// entries (for a nested column: one per non-null entry of its parent);
// Present says which are non-null (nil: all), and the value slices hold
// the non-null entries only, in order.
type Column struct {
	ID      int
	Type    *Type
	N       int
	Present []bool
	// rank[i] is the index of entry i among the values (valid where
	// present); built by the first Index.
	rank []int32

	// Integer values (Int reads any of them): BOOLEAN in Bools; BYTE,
	// SHORT, INT and DATE in Ints32 (half the memory of int64); LONG in
	// Ints.
	Bools  []bool
	Ints32 []int32
	Ints   []int64
	Floats []float64 // FLOAT, DOUBLE
	// STRING, VARCHAR, CHAR, BINARY (BytesAt): value j is entry k = j
	// (direct) or k = dictIdx[j] (dictionary) of the run in strData
	// delimited by strOffs[k:k+2]. Offsets instead of a slice per value
	// take 4 bytes a value instead of 24.
	strData  []byte
	strOffs  []uint32
	dictIdx  []uint32
	Decimals []*big.Int // DECIMAL of precision > 18 (or unknown): unscaled, at Type.Scale
	// Dec64 holds DECIMAL values of precision 1..18 (unscaled, at
	// Type.Scale) instead of Decimals: they fit an int64, and a math/big
	// value per entry cost more memory than the rest of the stripe.
	Dec64    []int64
	Secs     []int64   // TIMESTAMP*: seconds since 1970 (see Stripe)
	Nanos    []int32   // TIMESTAMP*: nanoseconds of the second, 0..999999999
	Offsets  []int     // LIST, MAP: entries of value i are children[Offsets[i]:Offsets[i+1]]
	Children []*Column // STRUCT fields; LIST element; MAP key, value
}

// Int is value j (an index among the values, Index(i)) of a BOOLEAN (0 or
// 1), BYTE, SHORT, INT, DATE or LONG column.
func (c *Column) Int(j int) int64 {
	switch {
	case c.Ints32 != nil:
		return int64(c.Ints32[j])
	case c.Bools != nil:
		if c.Bools[j] {
			return 1
		}
		return 0
	}
	return c.Ints[j]
}

// trimTrailingSpaces drops the trailing spaces of every string entry
// (direct values or dictionary entries), rebuilding the offsets: they are
// shared between neighbours, so an entry cannot shrink in place.
func (c *Column) trimTrailingSpaces() {
	n := len(c.strOffs) - 1
	if n <= 0 {
		return
	}
	data := make([]byte, 0, len(c.strData))
	offs := make([]uint32, n+1)
	for k := 0; k < n; k++ {
		data = append(data, bytes.TrimRight(c.strData[c.strOffs[k]:c.strOffs[k+1]], " ")...)
		offs[k+1] = uint32(len(data))
	}
	c.strData, c.strOffs = data, offs
}

// BytesAt is value j (an index among the values, Index(i)) of a string or
// binary column; it aliases the decoded stripe.
func (c *Column) BytesAt(j int) []byte {
	k := j
	if c.dictIdx != nil {
		k = int(c.dictIdx[j])
	}
	lo, hi := c.strOffs[k], c.strOffs[k+1]
	return c.strData[lo:hi:hi]
}

// DirectBytes is, for a directly encoded string or binary column, its
// values laid end to end: value j is data[offs[j]:offs[j+1]], so a run of
// values is one slice to copy. ok is false for a dictionary-encoded
// column, whose values are in dictionary order (use BytesAt).
func (c *Column) DirectBytes() (data []byte, offs []uint32, ok bool) {
	if c.dictIdx != nil {
		return nil, nil, false
	}
	return c.strData, c.strOffs, true
}

// Null reports whether entry i is null.
func (c *Column) Null(i int) bool { return c.Present != nil && !c.Present[i] }

// Index is the position of entry i among the column's values; entry i
// must not be null.
func (c *Column) Index(i int) int {
	if c.Present == nil {
		return i
	}
	if c.rank == nil {
		c.buildRank()
	}
	return int(c.rank[i])
}

// buildRank fills rank on the first Index: readers that walk a column in
// order (the data file batch path) count values themselves, and the ranks
// of a stripe's columns were the largest part of its decoded size.
func (c *Column) buildRank() {
	c.rank = make([]int32, len(c.Present))
	nn := int32(0)
	for i, ok := range c.Present {
		c.rank[i] = nn
		if ok {
			nn++
		}
	}
}

// Stripe is one decoded stripe.
type Stripe struct {
	NumRows        int
	WriterTimezone string
	// Columns are indexed by column id; only the read columns (and their
	// descendants) are set.
	Columns []*Column
}

type streamKey struct{ column, kind int }

type stripeReader struct {
	f       *File
	streams map[streamKey][]byte
	encs    []uint64
	dicts   []uint64
	out     []*Column
	zone    string // the stripe footer's writer time zone
}

// stripeStream is one stream of a stripe, off bytes from the stripe's
// start.
type stripeStream struct {
	kind, column int
	off, length  uint64
}

// stripeFooter is the decoded footer of a stripe.
type stripeFooter struct {
	streams     []stripeStream
	encs, dicts []uint64 // per column id: encoding kind, dictionary size
	zone        string   // the writer's time zone
}

// stripeInfo is stripe i, refused when its row count is beyond what this
// reader decodes.
func (f *File) stripeInfo(i int) (StripeInfo, error) {
	if i < 0 || i >= len(f.Stripes) {
		return StripeInfo{}, fmt.Errorf("stripe %d of %d", i, len(f.Stripes))
	}
	si := f.Stripes[i]
	if si.NumRows > maxStripeRows {
		return StripeInfo{}, fmt.Errorf("%w: stripe %d has %d rows", ErrUnsupported, i, si.NumRows)
	}
	return si, nil
}

// parseStripeFooter decodes the footer of stripe i (raw: its bytes as
// stored) and checks that every stream lies inside the stripe's index and
// data.
func (f *File) parseStripeFooter(i int, raw []byte) (*stripeFooter, error) {
	si := f.Stripes[i]
	footer, err := decompress(f.Compression, f.BlockSize, raw, maxTail)
	if err != nil {
		return nil, fmt.Errorf("stripe %d footer: %w", i, err)
	}
	sf := &stripeFooter{}
	err = pbWalk(footer, func(fl pbField) error {
		switch fl.num {
		case 1:
			var s stripeStream
			if err := pbWalk(fl.b, func(x pbField) error {
				switch x.num {
				case 1:
					s.kind = int(x.v)
				case 2:
					s.column = int(x.v)
				case 3:
					s.length = x.v
				}
				return nil
			}); err != nil {
				return err
			}
			sf.streams = append(sf.streams, s)
		case 2:
			var kind, dict uint64
			if err := pbWalk(fl.b, func(x pbField) error {
				switch x.num {
				case 1:
					kind = x.v
				case 2:
					dict = x.v
				}
				return nil
			}); err != nil {
				return err
			}
			sf.encs = append(sf.encs, kind)
			sf.dicts = append(sf.dicts, dict)
		case 3:
			sf.zone = string(fl.b)
		case 4:
			return fmt.Errorf("%w: encrypted stripe", ErrUnsupported)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("stripe %d footer: %w", i, err)
	}
	if len(sf.encs) != len(f.Types) {
		return nil, fmt.Errorf("%w: stripe %d has %d column encodings for %d columns", ErrCorrupt, i, len(sf.encs), len(f.Types))
	}
	// Streams lie back to back from the stripe's start, index streams first.
	off, size := uint64(0), si.IndexLength+si.DataLength
	for k := range sf.streams {
		s := &sf.streams[k]
		if s.length > size-off {
			return nil, fmt.Errorf("%w: stripe %d stream of column %d overruns the stripe", ErrCorrupt, i, s.column)
		}
		s.off = off
		off += s.length
	}
	return sf, nil
}

// readStream reports whether a stream of this kind is needed to read
// values (not an index, bloom filter or statistics).
func readStream(kind int) bool {
	switch kind {
	case streamPresent, streamData, streamLength, streamDictData, streamSecondary:
		return true
	}
	return false
}

// ReadStripe decodes stripe i; read[col] selects the top-level columns to
// decode (nil: all).
func (f *File) ReadStripe(i int, read func(col int) bool) (*Stripe, error) {
	si, err := f.stripeInfo(i)
	if err != nil {
		return nil, err
	}
	total := si.IndexLength + si.DataLength + si.FooterLength
	buf := make([]byte, total)
	if _, err := f.r.ReadAt(buf, int64(si.Offset)); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read stripe %d: %w", i, err)
	}
	sf, err := f.parseStripeFooter(i, buf[si.IndexLength+si.DataLength:])
	if err != nil {
		return nil, err
	}
	sr := &stripeReader{f: f, streams: map[streamKey][]byte{}, out: make([]*Column, len(f.Types)), encs: sf.encs, dicts: sf.dicts}
	st := &Stripe{NumRows: int(si.NumRows), WriterTimezone: sf.zone}
	for _, s := range sf.streams {
		if !readStream(s.kind) {
			continue // indexes, bloom filters, statistics: not needed to read
		}
		if s.column < 0 || s.column >= len(f.Types) {
			return nil, fmt.Errorf("%w: stripe %d has a stream of column %d", ErrCorrupt, i, s.column)
		}
		sr.streams[streamKey{s.column, s.kind}] = buf[s.off : s.off+s.length]
	}
	sr.zone = st.WriterTimezone
	root := f.Types[0]
	for k, id := range root.Subtypes {
		if read != nil && !read(k) {
			continue
		}
		if _, err := sr.column(id, int(si.NumRows)); err != nil {
			return nil, fmt.Errorf("stripe %d column %s: %w", i, root.FieldNames[k], err)
		}
	}
	st.Columns = sr.out
	return st, nil
}

func (sr *stripeReader) stream(col, kind int) ([]byte, error) {
	raw, ok := sr.streams[streamKey{col, kind}]
	if !ok {
		return nil, nil
	}
	return decompress(sr.f.Compression, sr.f.BlockSize, raw, maxStreamDecoded)
}

func (sr *stripeReader) need(col, kind int) ([]byte, error) {
	b, err := sr.stream(col, kind)
	if err != nil {
		return nil, err
	}
	if b == nil {
		if _, ok := sr.streams[streamKey{col, kind}]; !ok {
			return nil, fmt.Errorf("%w: column %d lacks stream kind %d", ErrCorrupt, col, kind)
		}
	}
	return b, nil
}

func (sr *stripeReader) ints(col, kind int, signed bool, n int) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	b, err := sr.need(col, kind)
	if err != nil {
		return nil, err
	}
	enc := sr.encs[col]
	r := intReader{in: b, signed: signed, v2: enc == encDirectV2 || enc == encDictionaryV2}
	return r.ints(n)
}

// column decodes column id with n entries.
func (sr *stripeReader) column(id, n int) (*Column, error) {
	t := &sr.f.Types[id]
	c := &Column{ID: id, Type: t, N: n}
	sr.out[id] = c
	nn := n
	if p, err := sr.stream(id, streamPresent); err != nil {
		return nil, err
	} else if p != nil {
		if c.Present, err = boolRLE(p, n); err != nil {
			return nil, fmt.Errorf("present: %w", err)
		}
		nn = 0
		for _, ok := range c.Present {
			if ok {
				nn++
			}
		}
	}
	var err error
	switch t.Kind {
	case Boolean:
		var bs []bool
		if nn > 0 {
			var d []byte
			if d, err = sr.need(id, streamData); err == nil {
				bs, err = boolRLE(d, nn)
			}
		}
		c.Bools = bs
	case Byte:
		var bs []byte
		if nn > 0 {
			var d []byte
			if d, err = sr.need(id, streamData); err == nil {
				bs, err = byteRLE(d, nn)
			}
		}
		c.Ints32 = make([]int32, len(bs))
		for i, b := range bs {
			c.Ints32[i] = int32(int8(b))
		}
	case Short, Int, Date:
		var xs []int64
		if xs, err = sr.ints(id, streamData, true, nn); err == nil {
			c.Ints32 = make([]int32, len(xs))
			lo, hi := intRange(t.Kind)
			for i, x := range xs {
				if x < lo || x > hi {
					err = fmt.Errorf("%w: value %d out of range for a %s", ErrCorrupt, x, t.Kind)
					break
				}
				c.Ints32[i] = int32(x)
			}
		}
	case Long:
		c.Ints, err = sr.ints(id, streamData, true, nn)
	case Float, Double:
		err = sr.floats(c, nn)
	case String, Varchar, Char, Binary:
		err = sr.bytes(c, nn)
		if err == nil && t.Kind == Char {
			// Writers pad CHAR values to the column's length; Java's ORC
			// reader gives them back without the trailing spaces.
			c.trimTrailingSpaces()
		}
	case Decimal:
		err = sr.decimals(c, nn)
	case Timestamp, TimestampInstant:
		err = sr.timestamps(c, nn)
	case Struct:
		for _, s := range t.Subtypes {
			ch, err := sr.column(s, nn)
			if err != nil {
				return nil, err
			}
			c.Children = append(c.Children, ch)
		}
	case List, Map:
		var lens []int64
		if lens, err = sr.ints(id, streamLength, false, nn); err != nil {
			return nil, fmt.Errorf("lengths: %w", err)
		}
		c.Offsets = make([]int, len(lens)+1)
		for i, l := range lens {
			if l < 0 || l > maxStripeRows || c.Offsets[i]+int(l) > maxStripeRows {
				return nil, fmt.Errorf("%w: %s entry of %d elements", ErrCorrupt, t.Kind, l)
			}
			c.Offsets[i+1] = c.Offsets[i] + int(l)
		}
		for _, s := range t.Subtypes {
			ch, err := sr.column(s, c.Offsets[len(lens)])
			if err != nil {
				return nil, err
			}
			c.Children = append(c.Children, ch)
		}
	default:
		return nil, fmt.Errorf("%w: column type %s", ErrUnsupported, t.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("column %d (%s): %w", id, t.Kind, err)
	}
	return c, nil
}

func (sr *stripeReader) floats(c *Column, nn int) error {
	if nn == 0 {
		return nil
	}
	d, err := sr.need(c.ID, streamData)
	if err != nil {
		return err
	}
	w := 8
	if c.Type.Kind == Float {
		w = 4
	}
	if len(d) < nn*w {
		return fmt.Errorf("%w: %d values need %d bytes, stream has %d", ErrCorrupt, nn, nn*w, len(d))
	}
	c.Floats = appendFloats(make([]float64, 0, nn), d[:nn*w], w)
	return nil
}

// appendFloats appends the little-endian FLOAT (w = 4) or DOUBLE (w = 8)
// values of b to dst.
func appendFloats(dst []float64, b []byte, w int) []float64 {
	if w == 4 {
		for ; len(b) >= 4; b = b[4:] {
			dst = append(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
		}
		return dst
	}
	for ; len(b) >= 8; b = b[8:] {
		dst = append(dst, math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	return dst
}

func (sr *stripeReader) bytes(c *Column, nn int) error {
	if nn == 0 {
		return nil
	}
	enc := sr.encs[c.ID]
	data, err := sr.stream(c.ID, streamData)
	if err != nil {
		return err
	}
	switch enc {
	case encDirect, encDirectV2:
		lens, err := sr.ints(c.ID, streamLength, false, nn)
		if err != nil {
			return fmt.Errorf("lengths: %w", err)
		}
		c.strData = data
		c.strOffs, err = offsets(data, lens)
		return err
	case encDictionary, encDictionaryV2:
		size := sr.dicts[c.ID]
		dictData, err := sr.stream(c.ID, streamDictData)
		if err != nil {
			return err
		}
		if size > uint64(len(dictData))+uint64(maxStripeRows) {
			return fmt.Errorf("%w: dictionary of %d entries", ErrCorrupt, size)
		}
		lens, err := sr.ints(c.ID, streamLength, false, int(size))
		if err != nil {
			return fmt.Errorf("dictionary lengths: %w", err)
		}
		c.strData = dictData
		if c.strOffs, err = offsets(dictData, lens); err != nil {
			return err
		}
		idx, err := sr.ints(c.ID, streamData, false, nn)
		if err != nil {
			return fmt.Errorf("dictionary indexes: %w", err)
		}
		c.dictIdx = make([]uint32, nn)
		for i, k := range idx {
			if k < 0 || k >= int64(size) {
				return fmt.Errorf("%w: dictionary index %d of %d", ErrCorrupt, k, size)
			}
			c.dictIdx[i] = uint32(k)
		}
		return nil
	}
	return fmt.Errorf("%w: column encoding %d", ErrUnsupported, enc)
}

// offsets turns value lengths into len(lens)+1 offsets into data (a
// decoded stream, at most maxStreamDecoded bytes: they fit 32 bits).
func offsets(data []byte, lens []int64) ([]uint32, error) {
	return appendOffsets(make([]uint32, 0, len(lens)+1), data, lens)
}

// appendOffsets is offsets into dst (emptied first, its array reused).
func appendOffsets(dst []uint32, data []byte, lens []int64) ([]uint32, error) {
	if uint64(len(data)) > math.MaxUint32 {
		return nil, fmt.Errorf("%w: string stream of %d bytes", ErrUnsupported, len(data))
	}
	dst = append(dst[:0], 0)
	off := 0
	for _, l := range lens {
		if l < 0 || l > int64(len(data)-off) {
			return nil, fmt.Errorf("%w: value of %d bytes, %d left in the stream", ErrCorrupt, l, len(data)-off)
		}
		off += int(l)
		dst = append(dst, uint32(off))
	}
	return dst, nil
}

var bigTen = big.NewInt(10)

func (sr *stripeReader) decimals(c *Column, nn int) error {
	if nn == 0 {
		return nil
	}
	d, err := sr.need(c.ID, streamData)
	if err != nil {
		return err
	}
	scales, err := sr.ints(c.ID, streamSecondary, true, nn)
	if err != nil {
		return fmt.Errorf("scales: %w", err)
	}
	if p := c.Type.Precision; p > 0 && p <= 18 {
		return decimals64(c, d, scales, nn)
	}
	c.Decimals = make([]*big.Int, nn)
	for i := range c.Decimals {
		v, rest, err := bigDecimal(d, scales[i], c.Type)
		if err != nil {
			return err
		}
		d = rest
		c.Decimals[i] = v
	}
	return nil
}

// bigDecimal decodes the first value of d, written at scale s, at the
// scale of column type t; it returns the bytes after it.
func bigDecimal(d []byte, s int64, t *Type) (*big.Int, []byte, error) {
	v, rest, err := bigVarint(d)
	if err != nil {
		return nil, nil, err
	}
	// Java writes every value at the column's scale; rescale otherwise.
	if s != int64(t.Scale) {
		diff := int64(t.Scale) - s
		if diff > 76 || diff < -76 {
			return nil, nil, fmt.Errorf("%w: decimal scale %d for a column of scale %d", ErrCorrupt, s, t.Scale)
		}
		p := new(big.Int).Exp(bigTen, big.NewInt(abs(diff)), nil)
		if diff > 0 {
			v.Mul(v, p)
		} else {
			v.Quo(v, p)
		}
	}
	return v, rest, nil
}

// pow10 holds 10^0..10^18, the rescale factors of int64 decimals.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// decimals64 decodes DECIMAL values of precision <= 18 into c.Dec64,
// failing on a value that does not fit (a corrupt file: Java never writes
// one) rather than widening it.
func decimals64(c *Column, d []byte, scales []int64, nn int) error {
	c.Dec64 = make([]int64, nn)
	for i := range c.Dec64 {
		v, rest, err := decimal64(d, scales[i], c.Type)
		if err != nil {
			return err
		}
		d = rest
		c.Dec64[i] = v
	}
	return nil
}

// decimal64 decodes the first value of d, written at scale s, at the scale
// of column type t (precision 1..18); it returns the bytes after it.
func decimal64(d []byte, s int64, t *Type) (int64, []byte, error) {
	var u uint64
	k := 0
	for ; ; k++ {
		if k >= len(d) {
			return 0, nil, fmt.Errorf("%w: truncated decimal varint", ErrCorrupt)
		}
		if k > 8 {
			return 0, nil, fmt.Errorf("%w: decimal varint too long for DECIMAL(%d)", ErrCorrupt, t.Precision)
		}
		u |= uint64(d[k]&0x7f) << (7 * k)
		if d[k] < 0x80 {
			break
		}
	}
	d = d[k+1:]
	v := unzigzag(u)
	if s != int64(t.Scale) {
		diff := int64(t.Scale) - s
		switch {
		case diff > 18 || diff < -18:
			return 0, nil, fmt.Errorf("%w: decimal scale %d for a column of scale %d", ErrCorrupt, s, t.Scale)
		case diff > 0:
			f := pow10[diff]
			if v > math.MaxInt64/f || v < math.MinInt64/f {
				return 0, nil, fmt.Errorf("%w: decimal at scale %d overflows DECIMAL(%d,%d)", ErrCorrupt, s, t.Precision, t.Scale)
			}
			v *= f
		default:
			v /= pow10[-diff] // truncates towards zero, as big.Int.Quo
		}
	}
	if limit := pow10[t.Precision]; v >= limit || v <= -limit {
		return 0, nil, fmt.Errorf("%w: decimal %d overflows DECIMAL(%d,%d)", ErrCorrupt, v, t.Precision, t.Scale)
	}
	return v, d, nil
}

// Decimal is value j (an index among the column's values, Index(i)) of a
// DECIMAL column as a big.Int.
func (c *Column) Decimal(j int) *big.Int {
	if c.Dec64 != nil {
		return big.NewInt(c.Dec64[j])
	}
	return c.Decimals[j]
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// bigVarint reads a zigzag base-128 varint of any length (ORC decimals).
func bigVarint(b []byte) (*big.Int, []byte, error) {
	var small uint64
	for i := 0; i < len(b) && i < 9; i++ {
		small |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return big.NewInt(unzigzag(small)), b[i+1:], nil
		}
	}
	v := new(big.Int)
	for i := 0; i < len(b); i++ {
		if i > 20 { // 127 bits: more than DECIMAL(38) needs
			return nil, nil, fmt.Errorf("%w: decimal varint longer than 20 bytes", ErrCorrupt)
		}
		v.Or(v, new(big.Int).Lsh(big.NewInt(int64(b[i]&0x7f)), uint(7*i)))
		if b[i] < 0x80 {
			neg := v.Bit(0) == 1
			v.Rsh(v, 1)
			if neg {
				v.Add(v, big.NewInt(1)).Neg(v)
			}
			return v, b[i+1:], nil
		}
	}
	return nil, nil, fmt.Errorf("%w: truncated decimal varint", ErrCorrupt)
}

// orcEpoch is 2015-01-01 00:00:00 UTC, the base of ORC timestamp seconds.
const orcEpoch = 1420070400

// timestamps decodes TIMESTAMP columns to seconds since 1970-01-01 00:00:00
// and nanoseconds, read in the writer's wall-clock. Java's writer stores a
// TIMESTAMP as the instant its JVM's zone gives the wall-clock time (what
// java.sql.Timestamp holds), minus the instant of 2015-01-01 00:00:00 in
// that zone, and names the zone in the stripe footer; Java's reader gives
// back the wall-clock time in the writer's zone. So the value is the
// instant secs + base(zone) shown in that zone (for a UTC writer simply
// secs + orcEpoch), returned as if that wall-clock time were UTC. Zone
// rules come from Go's time zone database (time/tzdata embedded, so a
// minimal container reads these files too), including historical offsets
// (local mean time before 1900 and the like) as Java's tzdb has them.
// TIMESTAMP_INSTANT is stored in UTC and returned as the instant.
func (sr *stripeReader) timestamps(c *Column, nn int) error {
	if nn == 0 {
		return nil
	}
	secs, err := sr.ints(c.ID, streamData, true, nn)
	if err != nil {
		return fmt.Errorf("seconds: %w", err)
	}
	nanos, err := sr.ints(c.ID, streamSecondary, false, nn)
	// (read unsigned, as Java writes it; reinterpreted below)
	if err != nil {
		return fmt.Errorf("nanoseconds: %w", err)
	}
	loc, base, err := timestampBase(c.Type, sr.zone)
	if err != nil {
		return err
	}
	c.Secs, c.Nanos = secs, make([]int32, nn)
	return convertTimestamps(secs, nanos, c.Nanos, base, loc)
}

// timestampBase is the zone TIMESTAMP values of column type t written in
// zone are read in (nil: UTC) and the instant ORC's seconds count from.
func timestampBase(t *Type, zone string) (*time.Location, int64, error) {
	if t.Kind != Timestamp || UTCZone(zone) {
		return nil, orcEpoch, nil
	}
	loc, err := loadZone(zone)
	if err != nil {
		return nil, 0, err
	}
	return loc, time.Date(2015, 1, 1, 0, 0, 0, 0, loc).Unix(), nil
}

// convertTimestamps turns the SECONDARY stream's values and the DATA
// stream's seconds (secs, converted in place) into seconds since 1970 and
// nanoseconds (outNanos, len(secs) of them), as timestamps describes.
func convertTimestamps(secs, nanos []int64, outNanos []int32, base int64, loc *time.Location) error {
	for i := range secs {
		// The low 3 bits count removed trailing decimal zeros (minus one).
		// C++ writers store pre-1970 fractions as negative nanoseconds of
		// seconds truncated towards zero, hence the arithmetic shift.
		v := nanos[i]
		ns := v >> 3
		if z := v & 7; z != 0 {
			for k := int64(0); k <= z; k++ {
				ns *= 10
			}
		}
		if ns > 999999999 || ns < -999999999 {
			return fmt.Errorf("%w: timestamp nanoseconds %d", ErrCorrupt, ns)
		}
		if secs[i] > math.MaxInt64/2 || secs[i] < math.MinInt64/2 {
			return fmt.Errorf("%w: timestamp seconds %d", ErrCorrupt, secs[i])
		}
		s := secs[i] + base
		switch {
		case ns < 0:
			s, ns = s-1, ns+1e9
		case s < 0 && ns > 999999:
			// Java's writer truncates the seconds of pre-1970 instants with
			// at least a millisecond of fraction towards zero; its reader
			// takes one off again.
			s--
		}
		if loc != nil {
			_, off := time.Unix(s, 0).In(loc).Zone()
			s += int64(off)
		}
		secs[i], outNanos[i] = s, int32(ns)
	}
	return nil
}

// UTCZone reports whether a stripe's writer time zone is UTC (or absent,
// as in files of writers that record none).
func UTCZone(z string) bool {
	switch z {
	case "", "UTC", "GMT", "Etc/UTC", "Etc/GMT", "Z", "+00:00":
		return true
	}
	return false
}

var zones sync.Map // zone name → *time.Location

// loadZone is the named zone, loaded once.
func loadZone(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		// Java's custom zone ids (-Duser.timezone=GMT+8 is "GMT+08:00").
		var sign byte
		var h, m int
		if n, _ := fmt.Sscanf(name, "GMT%c%02d:%02d", &sign, &h, &m); n != 3 || (sign != '+' && sign != '-') || h > 23 || m > 59 {
			return nil, fmt.Errorf("%w: TIMESTAMP column written in time zone %q: %w", ErrUnsupported, name, err)
		}
		off := h*3600 + m*60
		if sign == '-' {
			off = -off
		}
		l = time.FixedZone(name, off)
	}
	zones.Store(name, l)
	return l, nil
}
