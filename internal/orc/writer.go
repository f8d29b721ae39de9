package orc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"sort"
)

// Defaults of Java's ORC writer (OrcConf).
const (
	DefaultBlockSize          = 256 << 10 // orc.compress.size
	DefaultStripeSize         = 64 << 20  // orc.stripe.size
	DefaultRowIndexStride     = 10000     // orc.row.index.stride
	DefaultDictionaryKeyRatio = 0.8       // orc.dictionary.key.threshold
	// writerVersion is the postscript's writerVersion Java 1.9 writes
	// (ORC_14): readers apply no workaround for older writers' bugs.
	writerVersion = 9
	// maxWriteStripeRows caps the rows of a stripe whatever its size.
	maxWriteStripeRows = 1 << 24
)

// TypeDesc describes a column to write: Kind and, by kind, Fields and
// Children (STRUCT: one child per field; LIST: the element; MAP: key and
// value), Precision and Scale (DECIMAL), MaxLength (CHAR, VARCHAR).
// Attributes are the type attributes Java stores (Paimon's paimon.id).
type TypeDesc struct {
	Kind       Kind
	Fields     []string
	Children   []*TypeDesc
	Precision  int
	Scale      int
	MaxLength  int
	Attributes map[string]string
}

// WriterOptions are the ORC writer settings; zero values take Java's
// defaults.
type WriterOptions struct {
	Compression      Compression
	CompressionLevel int // zstd level (Java's orc.compression.zstd.level), zlib level
	BlockSize        int // compression chunk size
	StripeSize       int64
	RowIndexStride   int // rows per row index entry; negative: no row index
	// DictionaryKeyRatio: a string column of a stripe is dictionary
	// encoded when distinct values / non-null values <= this ratio
	// (orc.dictionary.key.threshold; 0 never, 1 always).
	DictionaryKeyRatio *float64
	Metadata           map[string][]byte
	Software           string
	// FitBlockSize shrinks BlockSize with the column count as Java's
	// WriterImpl does unless orc.buffer.size.enforce is set (a 40-column
	// manifest gets 128 KiB chunks; ApplyConf sets it).
	FitBlockSize bool
}

// Writer writes one ORC file, row by row. Values are the generic values
// Column.Value returns: nil, bool, int64, float64, []byte or string, Dec,
// Time (TIMESTAMP: wall-clock seconds as if UTC; TIMESTAMP_INSTANT: UTC),
// []any (STRUCT fields, LIST elements) and []KV (MAP).
type Writer struct {
	w        io.Writer
	opts     WriterOptions
	ratio    float64
	types    []Type
	cols     []*colWriter // by column id
	root     *colWriter
	comp     *compressor
	off      uint64
	rows     uint64 // rows of the current stripe
	total    uint64
	stripes  []StripeInfo
	stripeSt [][]*colStats
	buffered int64
	err      error
	closed   bool
}

// NewWriter starts an ORC file on w with the root struct schema.
func NewWriter(w io.Writer, schema *TypeDesc, opts WriterOptions) (*Writer, error) {
	if schema == nil || schema.Kind != Struct {
		return nil, errors.New("orc writer: the schema must be a struct")
	}
	if opts.BlockSize <= 0 {
		opts.BlockSize = DefaultBlockSize
	}
	if opts.BlockSize >= 1<<23 {
		return nil, fmt.Errorf("orc writer: compression block size %d exceeds the 3-byte chunk header", opts.BlockSize)
	}
	if opts.StripeSize <= 0 {
		opts.StripeSize = DefaultStripeSize
	}
	if opts.RowIndexStride == 0 {
		opts.RowIndexStride = DefaultRowIndexStride
	}
	ratio := DefaultDictionaryKeyRatio
	if opts.DictionaryKeyRatio != nil {
		ratio = *opts.DictionaryKeyRatio
	}
	wr := &Writer{w: w, ratio: ratio}
	if err := wr.flatten(schema); err != nil {
		return nil, err
	}
	if opts.FitBlockSize {
		opts.BlockSize = fitBlockSize(opts.StripeSize, len(wr.types), opts.BlockSize)
	}
	comp, err := newCompressor(opts.Compression, opts.BlockSize, opts.CompressionLevel)
	if err != nil {
		return nil, fmt.Errorf("orc writer: %w", err)
	}
	wr.opts, wr.comp = opts, comp
	for i := range wr.types {
		wr.cols = append(wr.cols, &colWriter{id: i, t: &wr.types[i]})
	}
	for _, c := range wr.cols {
		for _, s := range c.t.Subtypes {
			c.children = append(c.children, wr.cols[s])
		}
		c.file = newColStats(c.t)
		c.groups = []*colStats{newColStats(c.t)}
	}
	wr.root = wr.cols[0]
	if _, err := w.Write([]byte("ORC")); err != nil {
		return nil, fmt.Errorf("orc writer: %w", err)
	}
	wr.off = 3
	return wr, nil
}

func (w *Writer) flatten(t *TypeDesc) error {
	id := len(w.types)
	w.types = append(w.types, Type{Kind: t.Kind, FieldNames: t.Fields, MaxLength: t.MaxLength,
		Precision: t.Precision, Scale: t.Scale, Attributes: t.Attributes})
	want := 0
	switch t.Kind {
	case Struct:
		want = len(t.Fields)
	case List:
		want = 1
	case Map:
		want = 2
	case Union:
		return fmt.Errorf("orc writer: %w: UNION columns", ErrUnsupported)
	case Decimal:
		if t.Precision < 1 || t.Precision > 38 || t.Scale < 0 || t.Scale > t.Precision {
			return fmt.Errorf("orc writer: DECIMAL(%d, %d)", t.Precision, t.Scale)
		}
	}
	if t.Kind < Boolean || t.Kind > TimestampInstant {
		return fmt.Errorf("orc writer: type kind %d", int(t.Kind))
	}
	if len(t.Children) != want {
		return fmt.Errorf("orc writer: %s type with %d children", t.Kind, len(t.Children))
	}
	for _, c := range t.Children {
		w.types[id].Subtypes = append(w.types[id].Subtypes, len(w.types))
		if err := w.flatten(c); err != nil {
			return err
		}
	}
	return nil
}

// colWriter buffers one column's entries of the current stripe.
type colWriter struct {
	id       int
	t        *Type
	children []*colWriter
	present  []bool // one per entry; all true unless hasNull
	hasNull  bool
	n        int     // entries
	ints     []int64 // BOOLEAN (0/1), BYTE..LONG, DATE; LIST/MAP lengths
	floats   []float64
	arena    []byte // STRING/BINARY bytes, back to back
	lens     []int64
	decs     []*big.Int
	secs     []int64
	nanos    []int32
	marks    []int // entries at the start of each row group after the first
	file     *colStats
	groups   []*colStats
	// A column whose encoding is known at the end of the stripe's first
	// row group (all but dictionary-candidate strings) is encoded group by
	// group as the groups end (streaming), its raw values dropped: the
	// stripe is then held as RLE bytes, not values. The others stay
	// buffered and are encoded whole at the stripe's end.
	decided   bool
	streaming bool
	base      int   // entries of the stripe already encoded
	encN      []int // entries of each encoded group
	ps        *stream
	pe, be    boolEncoder // PRESENT and BOOLEAN data, partial bytes carried across groups
	streams   []*stream   // data streams in Java's order
	enc       pb
	// spare holds the previous stripe's streams, their buffers reused
	// by the next stripe's (popped in the order they were created):
	// growing every stream's compressed bytes from empty each stripe was
	// a thirtieth of an ORC compaction's CPU in copies.
	spare []*stream
}

func (w *Writer) groupStats(c *colWriter) *colStats { return c.groups[len(c.groups)-1] }

// Write appends one row: one value per field of the root struct.
func (w *Writer) Write(row []any) error {
	if w.err == nil && !w.closed && len(row) != len(w.root.children) {
		return fmt.Errorf("orc writer: row of %d values for %d columns", len(row), len(w.root.children))
	}
	if err := w.BeginRow(); err != nil {
		return err
	}
	for k, c := range w.root.children {
		if err := w.add(c, row[k]); err != nil {
			return w.fail(k, err)
		}
	}
	return w.EndRow()
}

// BeginRow starts a row written field by field with the Put methods (one
// call per top-level field, in order) and ended with EndRow: the same file
// as Write, without a Go value per field.
func (w *Writer) BeginRow() error {
	_, err := w.BeginRows(1)
	return err
}

// EndRow ends a row begun with BeginRow, flushing the stripe when full.
func (w *Writer) EndRow() error { return w.EndRows(1) }

// fail records the error of top-level field k: a half-added row leaves
// columns of different lengths, so the writer is unusable after it.
func (w *Writer) fail(k int, err error) error {
	w.err = fmt.Errorf("orc writer: column %s: %w", w.root.t.FieldNames[k], err)
	return w.err
}

// PutNull sets top-level field k of the current row to null.
func (w *Writer) PutNull(k int) { w.addNull(w.root.children[k]) }

// PutBool sets BOOLEAN field k of the current row.
func (w *Writer) PutBool(k int, b bool) {
	c := w.root.children[k]
	w.present(c)
	w.addBool(c, b)
}

// PutInt sets integer or DATE field k of the current row.
func (w *Writer) PutInt(k int, x int64) error {
	c := w.root.children[k]
	w.present(c)
	if err := w.addInt(c, x); err != nil {
		return w.fail(k, err)
	}
	return nil
}

// PutFloat sets FLOAT or DOUBLE field k of the current row.
func (w *Writer) PutFloat(k int, x float64) {
	c := w.root.children[k]
	w.present(c)
	w.addFloat(c, x)
}

// PutBytes sets string or binary field k of the current row (b is copied).
func (w *Writer) PutBytes(k int, b []byte) {
	c := w.root.children[k]
	w.present(c)
	addBytes(w, c, b)
}

// PutDecimal sets DECIMAL field k of the current row to unscaled at the
// column's scale (kept: the caller must not change it).
func (w *Writer) PutDecimal(k int, unscaled *big.Int) error {
	c := w.root.children[k]
	w.present(c)
	if err := w.addDec(c, unscaled); err != nil {
		return w.fail(k, err)
	}
	return nil
}

// PutDecimal64 sets DECIMAL field k of the current row to unscaled at the
// column's scale, without a big.Int where the column's precision is at
// most 18 (every such value fits an int64).
func (w *Writer) PutDecimal64(k int, unscaled int64) error {
	if err := w.putDecimal64(w.root.children[k], unscaled); err != nil {
		return w.fail(k, err)
	}
	return nil
}

// dec64 reports whether a DECIMAL column keeps its values as int64
// (colWriter.ints) rather than big.Int: precision <= 18.
func dec64(t *Type) bool { return t.Precision <= maxDec64Precision }

const maxDec64Precision = 18

// pow10s are 10^0..10^18, the digit bounds of DECIMAL(p <= 18).
var pow10s = func() (p [maxDec64Precision + 1]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

func (w *Writer) addDec64(c *colWriter, x int64) error {
	if b := pow10s[max(c.t.Precision, 0)]; x >= b || x <= -b {
		return fmt.Errorf("decimal %s does not fit DECIMAL(%d, %d)", decString(big.NewInt(x), c.t.Scale), c.t.Precision, c.t.Scale)
	}
	c.ints = append(c.ints, x)
	w.groupStats(c).addDec64(x)
	w.buffered += 8
	return nil
}

// PutValue sets field k of the current row from a Go value, as Write takes
// it.
func (w *Writer) PutValue(k int, v any) error {
	if err := w.add(w.root.children[k], v); err != nil {
		return w.fail(k, err)
	}
	return nil
}

func (w *Writer) addNull(c *colWriter) {
	st := w.groupStats(c)
	c.n++
	if !c.hasNull {
		c.hasNull = true
		c.present = slices.Grow(c.present, c.n)
		if len(c.encN) > 0 {
			// Groups already encoded had no null: their PRESENT bits are
			// all set, marked per group as encodeGroups would have.
			c.ps = c.newStream(streamPresent)
			for _, n := range c.encN {
				u, bitsUsed := c.pe.mark()
				c.ps.marks = append(c.ps.marks, []uint64{u, 0, bitsUsed})
				for range n {
					c.pe.add(true)
				}
			}
		}
		for len(c.present) < c.n-c.base-1 {
			c.present = append(c.present, true)
		}
	}
	c.present = append(c.present, false)
	st.null()
	w.buffered++
}

// present counts a non-null entry of c.
func (w *Writer) present(c *colWriter) {
	c.n++
	if c.hasNull {
		c.present = append(c.present, true)
	}
}

func (w *Writer) addBool(c *colWriter, b bool) {
	var x int64
	if b {
		x = 1
	}
	c.ints = append(c.ints, x)
	w.groupStats(c).addBool(b)
	w.buffered++
}

func (w *Writer) addInt(c *colWriter, x int64) error {
	if lo, hi := intRange(c.t.Kind); x < lo || x > hi {
		return fmt.Errorf("value %d out of range for a %s", x, c.t.Kind)
	}
	c.ints = append(c.ints, x)
	w.groupStats(c).addInt(x)
	w.buffered += 8
	return nil
}

func (w *Writer) addFloat(c *colWriter, x float64) {
	if c.t.Kind == Float {
		x = float64(float32(x))
	}
	c.floats = append(c.floats, x)
	w.groupStats(c).addFloat(x)
	w.buffered += 8
}

func addBytes[T []byte | string](w *Writer, c *colWriter, b T) {
	start := len(c.arena)
	c.arena = append(c.arena, b...)
	c.lens = append(c.lens, int64(len(b)))
	w.groupStats(c).addBytes(c.arena[start:len(c.arena):len(c.arena)])
	w.buffered += int64(len(b)) + 4
}

func (w *Writer) addDec(c *colWriter, u *big.Int) error {
	if u.Sign() != 0 && u.CmpAbs(bigPow10(c.t.Precision)) >= 0 { // more than Precision digits
		return fmt.Errorf("decimal %s does not fit DECIMAL(%d, %d)", decString(u, c.t.Scale), c.t.Precision, c.t.Scale)
	}
	if dec64(c.t) {
		return w.addDec64(c, u.Int64()) // fits: fewer than 19 digits
	}
	c.decs = append(c.decs, u)
	w.groupStats(c).addDec(u)
	w.buffered += 16
	return nil
}

func (w *Writer) add(c *colWriter, v any) error {
	if v == nil {
		w.addNull(c)
		return nil
	}
	st := w.groupStats(c)
	w.present(c)
	switch c.t.Kind {
	case Boolean:
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("value %T for a boolean", v)
		}
		w.addBool(c, b)
	case Byte, Short, Int, Long, Date:
		x, ok := toInt64(v)
		if !ok {
			return fmt.Errorf("value %T for a %s", v, c.t.Kind)
		}
		return w.addInt(c, x)
	case Float, Double:
		x, ok := v.(float64)
		if !ok {
			f32, ok32 := v.(float32)
			if !ok32 {
				return fmt.Errorf("value %T for a %s", v, c.t.Kind)
			}
			x = float64(f32)
		}
		w.addFloat(c, x)
	case String, Varchar, Char, Binary:
		switch x := v.(type) {
		case []byte:
			addBytes(w, c, x)
		case string:
			addBytes(w, c, x)
		default:
			return fmt.Errorf("value %T for a %s", v, c.t.Kind)
		}
	case Decimal:
		d, ok := v.(Dec)
		if !ok || d.Unscaled == nil {
			return fmt.Errorf("value %T for a decimal", v)
		}
		u, err := rescale(d, c.t.Scale)
		if err != nil {
			return err
		}
		return w.addDec(c, u)
	case Timestamp, TimestampInstant:
		t, ok := v.(Time)
		if !ok || t.Nanos < 0 || t.Nanos > 999999999 {
			return fmt.Errorf("value %#v for a timestamp", v)
		}
		c.secs = append(c.secs, t.Secs)
		c.nanos = append(c.nanos, t.Nanos)
		st.addTime(t)
		w.buffered += 12
	case Struct:
		fs, ok := v.([]any)
		if !ok || len(fs) != len(c.children) {
			return fmt.Errorf("value %T for a struct of %d fields", v, len(c.children))
		}
		st.n++
		for k, ch := range c.children {
			if err := w.add(ch, fs[k]); err != nil {
				return fmt.Errorf("field %s: %w", c.t.FieldNames[k], err)
			}
		}
	case List:
		es, ok := v.([]any)
		if !ok {
			return fmt.Errorf("value %T for a list", v)
		}
		c.ints = append(c.ints, int64(len(es)))
		st.addCollection(uint64(len(es)))
		w.buffered += 4
		for _, e := range es {
			if err := w.add(c.children[0], e); err != nil {
				return err
			}
		}
	case Map:
		kvs, ok := v.([]KV)
		if !ok {
			return fmt.Errorf("value %T for a map", v)
		}
		c.ints = append(c.ints, int64(len(kvs)))
		st.addCollection(uint64(len(kvs)))
		w.buffered += 4
		for _, kv := range kvs {
			if err := w.add(c.children[0], kv.Key); err != nil {
				return fmt.Errorf("key: %w", err)
			}
			if err := w.add(c.children[1], kv.Value); err != nil {
				return fmt.Errorf("value: %w", err)
			}
		}
	default:
		return fmt.Errorf("%w: writing %s", ErrUnsupported, c.t.Kind)
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case int:
		return int64(x), true
	}
	return 0, false
}

func intRange(k Kind) (int64, int64) {
	switch k {
	case Byte:
		return math.MinInt8, math.MaxInt8
	case Short:
		return math.MinInt16, math.MaxInt16
	case Int, Date:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func rescale(d Dec, scale int) (*big.Int, error) {
	if d.Scale == scale {
		return d.Unscaled, nil
	}
	diff := scale - d.Scale
	if diff < -76 || diff > 76 {
		return nil, fmt.Errorf("decimal of scale %d for a column of scale %d", d.Scale, scale)
	}
	p := new(big.Int).Exp(bigTen, big.NewInt(abs(int64(diff))), nil)
	if diff > 0 {
		return new(big.Int).Mul(d.Unscaled, p), nil
	}
	q, r := new(big.Int).QuoRem(d.Unscaled, p, new(big.Int))
	if r.Sign() != 0 {
		return nil, fmt.Errorf("decimal of scale %d loses digits at scale %d", d.Scale, scale)
	}
	return q, nil
}

// Rows is the number of rows written so far.
func (w *Writer) Rows() uint64 { return w.total }

// EstimatedSize is the bytes written plus the (uncompressed) estimate of
// the buffered stripe.
func (w *Writer) EstimatedSize() int64 { return int64(w.off) + w.buffered }

// stream is one stream of a stripe being encoded: its uncompressed bytes
// and, per row group, the uncompressed offset and extra RLE positions at
// the group's start.
type stream struct {
	col, kind int
	data      []byte     // uncompressed bytes not compressed yet
	off       uint64     // uncompressed bytes before data
	z         segments   // compressed chunks (spill)
	starts    []uint64   // compressed offset of each chunk
	marks     [][]uint64 // per group: [uncompressed offset, RLE positions...]
}

// at is the uncompressed offset of the next byte appended to s.data.
func (s *stream) at() uint64 { return s.off + uint64(len(s.data)) }

type stripeEnc struct {
	streams []*stream
	encs    []pb
}

// groupBounds returns, for a column, the entry index at the start of each
// row group and the end.
func (c *colWriter) groupBounds() []int {
	b := append([]int{0}, c.marks...)
	return append(b, c.n)
}

func (w *Writer) flushStripe() error {
	if w.rows == 0 {
		return nil
	}
	se := &stripeEnc{encs: make([]pb, len(w.cols))}
	positions := make([][][]uint64, len(w.cols)) // col -> group -> positions
	for _, c := range w.cols {
		bounds := c.groupBounds()
		if c.streaming {
			bounds = []int{0, c.n - c.base}
		}
		if err := w.encodeGroups(c, bounds, true); err != nil {
			return fmt.Errorf("orc writer: column %d: %w", c.id, err)
		}
		for len(c.groups) < len(c.encN)+len(bounds)-1 {
			c.groups = append(c.groups, newColStats(c.t))
		}
		positions[c.id] = make([][]uint64, len(c.encN)+len(bounds)-1)
		if c.ps != nil {
			se.streams = append(se.streams, c.ps)
		}
		se.streams = append(se.streams, c.streams...)
		for _, s := range se.streams[len(se.streams)-len(c.streams)-btoi(c.ps != nil):] {
			if err := w.comp.spill(s, true); err != nil {
				return fmt.Errorf("orc writer: %w", err)
			}
		}
		se.encs[c.id] = c.enc
	}
	// Compress every stream and translate its marks into positions.
	type out struct {
		s    *stream
		data [][]byte
		n    int
	}
	outs := make([]out, len(se.streams))
	for i, s := range se.streams {
		outs[i] = out{s, s.z.bufs, s.z.n}
		for g, m := range s.marks {
			p := w.comp.position(nil, s.starts, s.z.n, m[0])
			positions[s.col][g] = append(append(positions[s.col][g], p...), m[1:]...)
		}
	}
	// Row indexes: one per column, with each group's statistics.
	var index []out
	if w.opts.RowIndexStride > 0 {
		for _, c := range w.cols {
			var ri pb
			for g, st := range c.groups {
				var e pb
				if g < len(positions[c.id]) {
					e = e.packed(1, positions[c.id][g])
				}
				e = e.bytes(2, st.proto())
				ri = ri.bytes(1, e)
			}
			z, _, err := w.comp.compress(ri)
			if err != nil {
				return fmt.Errorf("orc writer: %w", err)
			}
			index = append(index, out{&stream{col: c.id, kind: streamRowIndex}, [][]byte{z}, len(z)})
		}
	}
	var footer pb
	var indexLen, dataLen uint64
	for _, o := range index {
		footer = footer.bytes(1, pb(nil).uint(1, uint64(o.s.kind)).uint(2, uint64(o.s.col)).uint(3, uint64(o.n)))
		indexLen += uint64(o.n)
	}
	for _, o := range outs {
		footer = footer.bytes(1, pb(nil).uint(1, uint64(o.s.kind)).uint(2, uint64(o.s.col)).uint(3, uint64(o.n)))
		dataLen += uint64(o.n)
	}
	for _, e := range se.encs {
		footer = footer.bytes(2, e)
	}
	footer = footer.str(3, "UTC")
	zf, _, err := w.comp.compress(footer)
	if err != nil {
		return fmt.Errorf("orc writer: %w", err)
	}
	info := StripeInfo{Offset: w.off, IndexLength: indexLen, DataLength: dataLen, FooterLength: uint64(len(zf)), NumRows: w.rows}
	for _, o := range index {
		for _, b := range o.data {
			if err := w.put(b); err != nil {
				return err
			}
		}
	}
	for _, o := range outs {
		for _, b := range o.data {
			if err := w.put(b); err != nil {
				return err
			}
		}
	}
	if err := w.put(zf); err != nil {
		return err
	}
	w.stripes = append(w.stripes, info)
	sst := make([]*colStats, len(w.cols))
	for _, c := range w.cols {
		s := newColStats(c.t)
		for _, g := range c.groups {
			s.merge(g)
		}
		// String bounds point into the arena, which the next stripe reuses.
		s.smin, s.smax = bytes.Clone(s.smin), bytes.Clone(s.smax)
		sst[c.id] = s
		c.file.merge(s)
		// The buffers are kept for the next stripe: regrowing them from
		// empty every stripe was a seventh of a compaction's CPU in copies.
		spare := c.spare[:0]
		for i := len(c.streams) - 1; i >= 0; i-- {
			spare = append(spare, c.streams[i])
		}
		if c.ps != nil {
			spare = append(spare, c.ps)
		}
		*c = colWriter{id: c.id, t: c.t, children: c.children, file: c.file, groups: []*colStats{newColStats(c.t)}, spare: spare,
			present: c.present[:0], ints: c.ints[:0], floats: c.floats[:0], arena: c.arena[:0], lens: c.lens[:0],
			decs: clearDecs(c.decs), secs: c.secs[:0], nanos: c.nanos[:0], marks: c.marks[:0], encN: c.encN[:0]}
	}
	w.stripeSt = append(w.stripeSt, sst)
	w.rows, w.buffered = 0, 0
	return nil
}

// bigPow10s caches 10^0..10^38, the digit bounds of DECIMAL precisions:
// formatting each value to count its digits was most of writing one.
var bigPow10s = func() (p [39]*big.Int) {
	for i := range p {
		p[i] = new(big.Int).Exp(bigTen, big.NewInt(int64(i)), nil)
	}
	return p
}()

func bigPow10(n int) *big.Int {
	if n >= 0 && n < len(bigPow10s) {
		return bigPow10s[n]
	}
	return new(big.Int).Exp(bigTen, big.NewInt(int64(max(n, 0))), nil)
}

// clearDecs empties a stripe's decimals, dropping the values so that a
// kept buffer does not keep them alive.
func clearDecs(d []*big.Int) []*big.Int {
	clear(d)
	return d[:0]
}

func (w *Writer) put(b []byte) error {
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("orc writer: %w", err)
		return w.err
	}
	w.off += uint64(len(b))
	return nil
}

// endGroup is called as a row group of the stripe ends: at the first,
// it decides which columns stream (see colWriter); a streaming column's
// group is encoded and its values dropped.
func (w *Writer) endGroup(c *colWriter) error {
	if !c.decided {
		c.decided = true
		c.streaming = w.knownEncoding(c)
	}
	if !c.streaming {
		return nil
	}
	if err := w.encodeGroups(c, []int{0, c.n - c.base}, false); err != nil {
		return err
	}
	for _, s := range c.streams {
		if err := w.comp.spill(s, false); err != nil {
			return err
		}
	}
	// String bounds of the group point into the arena, reused below.
	st := w.groupStats(c)
	st.smin, st.smax = bytes.Clone(st.smin), bytes.Clone(st.smax)
	c.encN = append(c.encN, c.n-c.base)
	c.base = c.n
	c.present, c.ints, c.floats, c.arena, c.lens = c.present[:0], c.ints[:0], c.floats[:0], c.arena[:0], c.lens[:0]
	c.decs, c.secs, c.nanos = clearDecs(c.decs), c.secs[:0], c.nanos[:0]
	return nil
}

// knownEncoding reports, at the end of the stripe's first row group,
// whether c's encoding is already what the stripe's end would choose:
// every column but a string one that Java's rule (dictionary(), decided
// on the first row group) keeps a dictionary candidate.
func (w *Writer) knownEncoding(c *colWriter) bool {
	switch c.t.Kind {
	case String, Varchar, Char:
	default:
		return true
	}
	if w.ratio <= 0 {
		return true
	}
	early := len(c.lens)
	if early == 0 {
		return false
	}
	seen := make(map[string]struct{}, min(early, 1<<12))
	off := 0
	for _, l := range c.lens {
		seen[string(c.arena[off:off+int(l)])] = struct{}{}
		off += int(l)
	}
	return float64(float32(len(seen))/float32(early)) > w.ratio
}

// newStream starts a stream of c, on a spare one's buffers if any.
func (c *colWriter) newStream(kind int) *stream {
	n := len(c.spare)
	if n == 0 {
		return &stream{col: c.id, kind: kind}
	}
	s := c.spare[n-1]
	c.spare = c.spare[:n-1]
	clear(s.marks)
	*s = stream{col: c.id, kind: kind, data: s.data[:0], z: s.z.recycled(), starts: s.starts[:0], marks: s.marks[:0]}
	return s
}

// stream returns c's i-th data stream, added with kind if new.
func (c *colWriter) stream(i, kind int) *stream {
	for len(c.streams) <= i {
		c.streams = append(c.streams, c.newStream(kind))
	}
	return c.streams[i]
}

// encodeGroups appends the buffered groups of c (bounds: entry index in
// the buffered values at each group's start, and the end) to c's streams,
// marking each group's start in every stream that has row index
// positions; final ends the stripe (boolean streams flush their partial
// byte). flushStripe turns the marks into positions in stream order, which
// is the order Java's readers seek in: PRESENT, then the data streams as
// added here.
func (w *Writer) encodeGroups(c *colWriter, bounds []int, final bool) error {
	ng := len(bounds) - 1
	enc := pb(nil).uint(1, encDirect)
	// vb[g]: the number of non-null entries before group g.
	vb := make([]int, len(bounds))
	if c.hasNull {
		if c.ps == nil {
			c.ps = c.newStream(streamPresent)
		}
		ps, be := c.ps, &c.pe
		k, v := 0, 0
		for g := 0; g < ng; g++ {
			u, bitsUsed := be.mark()
			ps.marks = append(ps.marks, []uint64{u, 0, bitsUsed})
			vb[g] = v
			seg := c.present[k:bounds[g+1]]
			be.addAll(seg)
			for _, p := range seg {
				if p {
					v++
				}
			}
			k = bounds[g+1]
		}
		vb[ng] = v
	} else {
		copy(vb, bounds)
	}
	switch c.t.Kind {
	case Struct:
	case Boolean:
		s, be := c.stream(0, streamData), &c.be
		for g := 0; g < ng; g++ {
			be.mark()
			s.marks = append(s.marks, []uint64{uint64(len(be.buf)), 0, uint64(be.nbits)})
			for _, x := range c.ints[vb[g]:vb[g+1]] {
				be.add(x != 0)
			}
		}
		if final {
			s.data = be.finish()
		}
	case Byte:
		s := c.stream(0, streamData)
		for g := 0; g < ng; g++ {
			s.marks = append(s.marks, []uint64{s.at(), 0})
			vals := make([]byte, 0, vb[g+1]-vb[g])
			for _, x := range c.ints[vb[g]:vb[g+1]] {
				vals = append(vals, byte(int8(x)))
			}
			s.data = encodeByteRLE(s.data, vals)
		}
	case Short, Int, Long, Date:
		enc = pb(nil).uint(1, encDirectV2)
		s := c.stream(0, streamData)
		intGroups(s, c.ints, vb, true)
	case Float, Double:
		s := c.stream(0, streamData)
		for g := 0; g < ng; g++ {
			s.marks = append(s.marks, []uint64{s.at()})
			for _, x := range c.floats[vb[g]:vb[g+1]] {
				if c.t.Kind == Float {
					s.data = binary.LittleEndian.AppendUint32(s.data, math.Float32bits(float32(x)))
				} else {
					s.data = binary.LittleEndian.AppendUint64(s.data, math.Float64bits(x))
				}
			}
		}
	case String, Varchar, Char, Binary:
		offs := make([]int, len(c.lens)+1)
		for i, l := range c.lens {
			offs[i+1] = offs[i] + int(l)
		}
		val := func(i int) []byte { return c.arena[offs[i]:offs[i+1]] }
		if c.t.Kind != Binary && w.ratio > 0 && !c.streaming {
			// Java decides at the first row index entry when the stripe
			// has more than one row group (orc.dictionary.early.check).
			early := len(c.lens)
			if ng > 1 && w.opts.RowIndexStride > 0 {
				early = vb[1]
			}
			if dict, idx, ok := w.dictionary(c, val, early); ok {
				enc = pb(nil).uint(1, encDictionaryV2).uint(2, uint64(len(dict)))
				s := c.stream(0, streamData)
				intGroups(s, idx, vb, false)
				var dd []byte
				dl := make([]int64, len(dict))
				for i, d := range dict {
					dd = append(dd, d...)
					dl[i] = int64(len(d))
				}
				c.stream(1, streamDictData).data = dd
				c.stream(2, streamLength).data = encodeIntV2(nil, dl, false)
				break
			}
		}
		enc = pb(nil).uint(1, encDirectV2)
		ds := c.stream(0, streamData)
		for g := 0; g < ng; g++ {
			ds.marks = append(ds.marks, []uint64{ds.at() + uint64(offs[vb[g]])})
		}
		ds.data = append(ds.data, c.arena...)
		intGroups(c.stream(1, streamLength), c.lens, vb, false)
	case Decimal:
		enc = pb(nil).uint(1, encDirectV2)
		ds := c.stream(0, streamData)
		n := len(c.decs)
		if dec64(c.t) {
			n = len(c.ints)
		}
		for g := 0; g < ng; g++ {
			ds.marks = append(ds.marks, []uint64{ds.at()})
			if dec64(c.t) {
				// |x| < 10^18 < 2^62: zigzag cannot overflow.
				for _, x := range c.ints[vb[g]:vb[g+1]] {
					ds.data = putUvarint(ds.data, zigzag(x))
				}
				continue
			}
			for _, d := range c.decs[vb[g]:vb[g+1]] {
				ds.data = appendBigVarint(ds.data, d)
			}
		}
		scales := make([]int64, n)
		for i := range scales {
			scales[i] = int64(c.t.Scale)
		}
		intGroups(c.stream(1, streamSecondary), scales, vb, true)
	case Timestamp, TimestampInstant:
		enc = pb(nil).uint(1, encDirectV2)
		secs := make([]int64, len(c.secs))
		nanos := make([]int64, len(c.secs))
		for i, s := range c.secs {
			ns := c.nanos[i]
			// Java's writer truncates pre-1970 seconds with a fraction of at
			// least a millisecond towards zero (its reader undoes it).
			if s < 0 && ns > 999999 {
				s++
			}
			secs[i] = s - orcEpoch
			nanos[i] = formatNanos(ns)
		}
		intGroups(c.stream(0, streamData), secs, vb, true)
		intGroups(c.stream(1, streamSecondary), nanos, vb, false)
	case List, Map:
		enc = pb(nil).uint(1, encDirectV2)
		intGroups(c.stream(0, streamLength), c.ints, vb, false)
	default:
		return fmt.Errorf("%w: writing %s", ErrUnsupported, c.t.Kind)
	}
	if final && c.ps != nil {
		c.ps.data = c.pe.finish()
	}
	c.enc = enc
	return nil
}

// intGroups RLE-v2-encodes vals group by group into s, marking each
// group's start.
func intGroups(s *stream, vals []int64, vb []int, signed bool) {
	for g := 0; g+1 < len(vb); g++ {
		s.marks = append(s.marks, []uint64{s.at(), 0})
		s.data = encodeIntV2(s.data, vals[vb[g]:vb[g+1]], signed)
	}
}

// dictionary decides, as Java does per stripe, whether column c is
// dictionary encoded: distinct values / non-null values at most the
// ratio. It returns the sorted dictionary and each value's index.
func (w *Writer) dictionary(c *colWriter, val func(int) []byte, early int) ([][]byte, []int64, bool) {
	n := len(c.lens)
	if n == 0 {
		return nil, nil, false
	}
	// Java's StringBaseTreeWriter decides once, on the values seen at
	// its first check (the first row group, or the whole stripe), in
	// float arithmetic: dictionary size / values <= the threshold; then
	// keeps that encoding for the stripe. Only those values are looked
	// at before a high-cardinality column is known to be direct.
	ids := make(map[string]int32, min(n, 1<<12))
	var keys [][]byte
	idx := make([]int64, n)
	add := func(i int) {
		v := val(i)
		id, ok := ids[string(v)]
		if !ok {
			id = int32(len(keys))
			ids[string(v)] = id
			keys = append(keys, v)
		}
		idx[i] = int64(id)
	}
	for i := 0; i < early; i++ {
		add(i)
	}
	// The ratio is a Java float, compared with the double threshold
	// (4/5 of the values distinct is above 0.8 there).
	if early > 0 && float64(float32(len(keys))/float32(early)) > w.ratio {
		return nil, nil, false
	}
	for i := early; i < n; i++ {
		add(i)
	}
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return bytes.Compare(keys[a], keys[b]) })
	remap := make([]int64, len(keys))
	sorted := make([][]byte, len(keys))
	for r, o := range order {
		remap[o] = int64(r)
		sorted[r] = keys[o]
	}
	for i := range idx {
		idx[i] = remap[idx[i]]
	}
	return sorted, idx, true
}

// formatNanos is ORC's nanosecond encoding: trailing decimal zeros are
// dropped and their count (minus one) kept in the low 3 bits.
func formatNanos(ns int32) int64 {
	if ns == 0 {
		return 0
	}
	v := int64(ns)
	if v%100 != 0 {
		return v << 3
	}
	v /= 100
	z := int64(1)
	for v%10 == 0 && z < 7 {
		v /= 10
		z++
	}
	return v<<3 | z
}

// Close flushes the last stripe and writes the metadata, footer and
// postscript. The underlying writer is not closed.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("orc writer: closed twice")
	}
	if err := w.flushStripe(); err != nil {
		return err
	}
	w.closed = true
	var meta pb
	for _, sst := range w.stripeSt {
		var ss pb
		for _, s := range sst {
			ss = ss.bytes(1, s.proto())
		}
		meta = meta.bytes(1, ss)
	}
	zm, _, err := w.comp.compress(meta)
	if err != nil {
		return fmt.Errorf("orc writer: %w", err)
	}
	var footer pb
	footer = footer.uint(1, 3).uint(2, w.off)
	for _, s := range w.stripes {
		footer = footer.bytes(3, pb(nil).uint(1, s.Offset).uint(2, s.IndexLength).uint(3, s.DataLength).
			uint(4, s.FooterLength).uint(5, s.NumRows))
	}
	for _, t := range w.types {
		var m pb
		m = m.uint(1, uint64(t.Kind))
		subs := make([]uint64, len(t.Subtypes))
		for i, s := range t.Subtypes {
			subs[i] = uint64(s)
		}
		m = m.packed(2, subs)
		for _, n := range t.FieldNames {
			m = m.str(3, n)
		}
		if t.Kind == Char || t.Kind == Varchar {
			m = m.uint(4, uint64(t.MaxLength))
		}
		if t.Kind == Decimal {
			m = m.uint(5, uint64(t.Precision)).uint(6, uint64(t.Scale))
		}
		keys := make([]string, 0, len(t.Attributes))
		for k := range t.Attributes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			m = m.bytes(7, pb(nil).str(1, k).str(2, t.Attributes[k]))
		}
		footer = footer.bytes(4, m)
	}
	keys := make([]string, 0, len(w.opts.Metadata))
	for k := range w.opts.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		footer = footer.bytes(5, pb(nil).str(1, k).bytes(2, w.opts.Metadata[k]))
	}
	footer = footer.uint(6, w.total)
	for _, c := range w.cols {
		footer = footer.bytes(7, c.file.proto())
	}
	if w.opts.RowIndexStride > 0 {
		footer = footer.uint(8, uint64(w.opts.RowIndexStride))
	} else {
		footer = footer.uint(8, 0)
	}
	footer = footer.uint(9, 0) // ORC_JAVA: the format Java writes, read by its rules
	sw := w.opts.Software
	if sw == "" {
		sw = "compactd"
	}
	footer = footer.str(12, sw)
	zf, _, err := w.comp.compress(footer)
	if err != nil {
		return fmt.Errorf("orc writer: %w", err)
	}
	var ps pb
	ps = ps.uint(1, uint64(len(zf))).uint(2, uint64(w.opts.Compression)).uint(3, uint64(w.opts.BlockSize))
	ps = ps.packed(4, []uint64{0, 12}).uint(5, uint64(len(zm))).uint(6, writerVersion).str(8000, "ORC")
	if len(ps) > 255 {
		return errors.New("orc writer: postscript longer than 255 bytes")
	}
	for _, b := range [][]byte{zm, zf, ps, {byte(len(ps))}} {
		if err := w.put(b); err != nil {
			return err
		}
	}
	return nil
}
