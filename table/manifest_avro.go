package table

// A small Avro object-container reader and writer for Paimon's manifest
// files. hamba/avro's ocf decoder allocates block buffers of whatever size a
// file claims (make([]byte, size) on an unchecked varint), so a corrupt or
// hostile manifest can panic or exhaust memory; manifests are read whole, so
// this reader bounds every length by the bytes actually present. Records are
// decoded generically under the file's own (writer) schema and then matched
// to Paimon fields by name, which is how Java reads every layout from 0.8 on.

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/golang/snappy"

	"github.com/compactd/compactd/fileio"
	"github.com/klauspost/compress/zstd"
)

// ErrUnsupportedManifestFormat is returned for manifest files that are not
// Avro (Paimon's manifest.format=orc or parquet).
var ErrUnsupportedManifestFormat = errors.New("unsupported manifest format")

// ErrCorruptManifest is wrapped by every error caused by the bytes of a
// manifest, manifest list or index manifest (as opposed to I/O errors), so
// callers can stop touching a table whose metadata is damaged.
var ErrCorruptManifest = errors.New("corrupt avro file")

const (
	avroMagic = "Obj\x01"
	// avroMaxBlock caps the decompressed size of one block. Java flushes a
	// block once it holds 64000 bytes of records, so a real block exceeds
	// that only by its last record.
	avroMaxBlock = 16 << 20
	// avroMaxDepth caps nesting while decoding (schemas can be recursive).
	avroMaxDepth = 64
	// avroSyncInterval is Java's DataFileWriter default block size.
	avroSyncInterval = 64000
)

type avroKind int

const (
	avroNull avroKind = iota
	avroBoolean
	avroInt
	avroLong
	avroFloat
	avroDouble
	avroBytes
	avroString
	avroRecord
	avroEnum
	avroArray
	avroMap
	avroUnion
	avroFixed
)

type avroSchema struct {
	kind     avroKind
	name     string // full name of named types
	fields   []avroField
	index    map[string]int
	items    *avroSchema // array items, map values
	branches []*avroSchema
	size     int // fixed
	nsymbols int // enum
	minSize  int // smallest encoding in bytes, for allocation bounds
}

type avroField struct {
	name   string
	schema *avroSchema
}

// avroRec is a decoded record: values in writer-schema field order.
type avroRec struct {
	s    *avroSchema
	vals []any
}

// get returns the named field's value and whether the writer schema has it.
func (r *avroRec) get(name string) (any, bool) {
	i, ok := r.s.index[name]
	if !ok {
		return nil, false
	}
	return r.vals[i], true
}

// parseAvroSchema parses a writer schema from a container header.
func parseAvroSchema(text []byte) (*avroSchema, error) {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("avro schema: %w", err)
	}
	p := &avroSchemaParser{named: map[string]*avroSchema{}}
	s, err := p.parse(raw, "", 0)
	if err != nil {
		return nil, fmt.Errorf("avro schema: %w", err)
	}
	computeMinSize(s, map[*avroSchema]bool{})
	return s, nil
}

type avroSchemaParser struct {
	named map[string]*avroSchema
}

func (p *avroSchemaParser) parse(v any, ns string, depth int) (*avroSchema, error) {
	if depth > 100 {
		return nil, errors.New("schema nested too deeply")
	}
	switch x := v.(type) {
	case string:
		return p.primitiveOrRef(x, ns)
	case []any:
		u := &avroSchema{kind: avroUnion}
		for _, b := range x {
			s, err := p.parse(b, ns, depth+1)
			if err != nil {
				return nil, err
			}
			u.branches = append(u.branches, s)
		}
		if len(u.branches) == 0 {
			return nil, errors.New("empty union")
		}
		return u, nil
	case map[string]any:
		t, _ := x["type"].(string)
		switch t {
		case "record", "error":
			name, full, ns2, err := avroName(x, ns)
			if err != nil {
				return nil, err
			}
			s := &avroSchema{kind: avroRecord, name: full, index: map[string]int{}}
			p.named[full] = s
			p.named[name] = s
			fs, ok := x["fields"].([]any)
			if !ok {
				return nil, fmt.Errorf("record %s without fields", full)
			}
			for _, f := range fs {
				fm, ok := f.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("record %s: bad field", full)
				}
				fname, _ := fm["name"].(string)
				ft, ok := fm["type"]
				if fname == "" || !ok {
					return nil, fmt.Errorf("record %s: field without name or type", full)
				}
				fsch, err := p.parse(ft, ns2, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := s.index[fname]; dup {
					return nil, fmt.Errorf("record %s: duplicate field %s", full, fname)
				}
				s.index[fname] = len(s.fields)
				s.fields = append(s.fields, avroField{name: fname, schema: fsch})
			}
			return s, nil
		case "enum":
			name, full, _, err := avroName(x, ns)
			if err != nil {
				return nil, err
			}
			syms, _ := x["symbols"].([]any)
			s := &avroSchema{kind: avroEnum, name: full, nsymbols: len(syms)}
			p.named[full], p.named[name] = s, s
			return s, nil
		case "fixed":
			name, full, _, err := avroName(x, ns)
			if err != nil {
				return nil, err
			}
			n, ok := x["size"].(json.Number)
			size, err := n.Int64()
			if !ok || err != nil || size < 0 || size > math.MaxInt32 {
				return nil, fmt.Errorf("fixed %s: bad size", full)
			}
			s := &avroSchema{kind: avroFixed, name: full, size: int(size)}
			p.named[full], p.named[name] = s, s
			return s, nil
		case "array":
			it, ok := x["items"]
			if !ok {
				return nil, errors.New("array without items")
			}
			items, err := p.parse(it, ns, depth+1)
			if err != nil {
				return nil, err
			}
			return &avroSchema{kind: avroArray, items: items}, nil
		case "map":
			vs, ok := x["values"]
			if !ok {
				return nil, errors.New("map without values")
			}
			values, err := p.parse(vs, ns, depth+1)
			if err != nil {
				return nil, err
			}
			return &avroSchema{kind: avroMap, items: values}, nil
		case "":
			// {"type": {...}} wraps a nested definition.
			if inner, ok := x["type"]; ok {
				return p.parse(inner, ns, depth+1)
			}
			return nil, errors.New("schema object without type")
		default:
			// A primitive with attributes, e.g. {"type":"long","logicalType":...}.
			return p.primitiveOrRef(t, ns)
		}
	}
	return nil, fmt.Errorf("unexpected schema element %T", v)
}

func (p *avroSchemaParser) primitiveOrRef(t, ns string) (*avroSchema, error) {
	kinds := map[string]avroKind{
		"null": avroNull, "boolean": avroBoolean, "int": avroInt, "long": avroLong,
		"float": avroFloat, "double": avroDouble, "bytes": avroBytes, "string": avroString,
	}
	if k, ok := kinds[t]; ok {
		return &avroSchema{kind: k}, nil
	}
	if s, ok := p.named[t]; ok {
		return s, nil
	}
	if ns != "" {
		if s, ok := p.named[ns+"."+t]; ok {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown type %q", t)
}

// avroName returns the short name, full name and namespace for children.
func avroName(x map[string]any, ns string) (string, string, string, error) {
	name, _ := x["name"].(string)
	if name == "" {
		return "", "", "", errors.New("named type without name")
	}
	if n, ok := x["namespace"].(string); ok {
		ns = n
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:], name, name[:i], nil
	}
	full := name
	if ns != "" {
		full = ns + "." + name
	}
	return name, full, ns, nil
}

// computeMinSize fills minSize; a record reached again while being computed
// (recursive schema) counts as 0, which only makes the bound looser.
func computeMinSize(s *avroSchema, busy map[*avroSchema]bool) int {
	if busy[s] {
		return s.minSize
	}
	busy[s] = true
	switch s.kind {
	case avroNull:
		s.minSize = 0
	case avroBoolean, avroInt, avroLong, avroBytes, avroString, avroEnum, avroArray, avroMap, avroUnion:
		s.minSize = 1
	case avroFloat:
		s.minSize = 4
	case avroDouble:
		s.minSize = 8
	case avroFixed:
		s.minSize = s.size
	case avroRecord:
		n := 0
		for _, f := range s.fields {
			n += computeMinSize(f.schema, busy)
		}
		s.minSize = n
	}
	if s.items != nil {
		computeMinSize(s.items, busy)
	}
	for _, b := range s.branches {
		computeMinSize(b, busy)
	}
	for _, f := range s.fields {
		computeMinSize(f.schema, busy)
	}
	return s.minSize
}

// avroReader decodes Avro binary values from a byte slice.
type avroReader struct {
	buf []byte
	pos int
	err error
	// zeroItems counts decoded values whose encoding may take no bytes
	// (nulls, empty records); without a cap a few input bytes could claim
	// billions of them.
	zeroItems int64
}

// avroMaxZeroItems caps zero-byte values per file.
const avroMaxZeroItems = 1 << 20

func (r *avroReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{ErrCorruptManifest}, args...)...)
	}
}

func (r *avroReader) long() int64 {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		if r.pos >= len(r.buf) {
			r.fail("truncated varint at byte %d", r.pos)
			return 0
		}
		b := r.buf[r.pos]
		r.pos++
		u |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return int64(u>>1) ^ -int64(u&1)
		}
	}
	r.fail("varint too long at byte %d", r.pos)
	return 0
}

func (r *avroReader) int() int32 {
	v := r.long()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail("int out of range: %d", v)
		return 0
	}
	return int32(v)
}

func (r *avroReader) take(n int64) []byte {
	if n < 0 || n > int64(len(r.buf)-r.pos) {
		r.fail("length %d exceeds the %d bytes left", n, len(r.buf)-r.pos)
		return nil
	}
	b := r.buf[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	return b
}

// count reads an array/map block count and bounds it by the bytes left.
func (r *avroReader) count(minItemSize int) int64 {
	n := r.long()
	if n < 0 {
		if n == math.MinInt64 {
			r.fail("bad block count")
			return 0
		}
		n = -n
		r.long() // block size in bytes, not needed
	}
	left := int64(len(r.buf) - r.pos)
	if minItemSize > 0 && n > left/int64(minItemSize) {
		r.fail("block count %d exceeds the %d bytes left", n, left)
		return 0
	}
	if minItemSize == 0 {
		r.zeroItems += n
		if r.zeroItems > avroMaxZeroItems {
			r.fail("more than %d zero-size items", avroMaxZeroItems)
			return 0
		}
	}
	return n
}

// value decodes one value of schema s. Logical types are decoded as their
// underlying type.
func (r *avroReader) value(s *avroSchema, depth int) any {
	if r.err != nil {
		return nil
	}
	if depth > avroMaxDepth {
		r.fail("value nested too deeply")
		return nil
	}
	switch s.kind {
	case avroNull:
		return nil
	case avroBoolean:
		b := r.take(1)
		if b == nil {
			return nil
		}
		return b[0] != 0
	case avroInt:
		return r.int()
	case avroLong:
		return r.long()
	case avroFloat:
		b := r.take(4)
		if b == nil {
			return nil
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case avroDouble:
		b := r.take(8)
		if b == nil {
			return nil
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case avroBytes:
		return r.take(r.long())
	case avroString:
		return string(r.take(r.long()))
	case avroFixed:
		return r.take(int64(s.size))
	case avroEnum:
		i := r.int()
		if i < 0 || int(i) >= s.nsymbols {
			r.fail("enum index %d out of range", i)
		}
		return i
	case avroUnion:
		i := r.long()
		if i < 0 || i >= int64(len(s.branches)) {
			r.fail("union branch %d out of range", i)
			return nil
		}
		return r.value(s.branches[i], depth+1)
	case avroRecord:
		rec := &avroRec{s: s, vals: make([]any, len(s.fields))}
		for i, f := range s.fields {
			rec.vals[i] = r.value(f.schema, depth+1)
			if r.err != nil {
				return nil
			}
		}
		return rec
	case avroArray:
		out := []any{}
		for {
			n := r.count(s.items.minSize)
			if r.err != nil || n == 0 {
				return out
			}
			for ; n > 0; n-- {
				out = append(out, r.value(s.items, depth+1))
				if r.err != nil {
					return nil
				}
			}
		}
	case avroMap:
		out := map[string]any{}
		for {
			n := r.count(1 + s.items.minSize)
			if r.err != nil || n == 0 {
				return out
			}
			for ; n > 0; n-- {
				k := string(r.take(r.long()))
				out[k] = r.value(s.items, depth+1)
				if r.err != nil {
					return nil
				}
			}
		}
	}
	r.fail("unknown schema kind %d", s.kind)
	return nil
}

// avroFile is a parsed object container: its writer schema, codec and the
// decoded records.
type avroFile struct {
	schema *avroSchema
	codec  string
	meta   map[string][]byte
	values []any
}

// readAvroFile parses and decodes a whole object-container file.
func readAvroFile(data []byte) (*avroFile, error) {
	if len(data) < 4 || string(data[:4]) != avroMagic {
		switch {
		case bytes.HasPrefix(data, []byte("ORC")):
			return nil, fmt.Errorf("%w: file is ORC (manifest.format=orc); only avro manifests are supported", ErrUnsupportedManifestFormat)
		case bytes.HasPrefix(data, []byte("PAR1")):
			return nil, fmt.Errorf("%w: file is Parquet (manifest.format=parquet); only avro manifests are supported", ErrUnsupportedManifestFormat)
		}
		return nil, fmt.Errorf("%w: not an avro object container (bad magic)", ErrCorruptManifest)
	}
	r := &avroReader{buf: data, pos: 4}
	meta := map[string][]byte{}
	for {
		n := r.count(2)
		if r.err != nil {
			return nil, r.err
		}
		if n == 0 {
			break
		}
		for ; n > 0; n-- {
			k := string(r.take(r.long()))
			v := r.take(r.long())
			if r.err != nil {
				return nil, r.err
			}
			meta[k] = v
		}
	}
	sync := r.take(16)
	if r.err != nil {
		return nil, r.err
	}
	f := &avroFile{meta: meta, codec: "null"}
	if c, ok := meta["avro.codec"]; ok && len(c) > 0 {
		f.codec = string(c)
	}
	st, ok := meta["avro.schema"]
	if !ok {
		return nil, fmt.Errorf("%w: header without avro.schema", ErrCorruptManifest)
	}
	s, err := parseAvroSchema(st)
	if err != nil {
		return nil, err
	}
	f.schema = s
	var zeroItems int64
	for r.pos < len(data) {
		count := r.long()
		size := r.long()
		block := r.take(size)
		bsync := r.take(16)
		if r.err != nil {
			return nil, r.err
		}
		if !bytes.Equal(bsync, sync) {
			return nil, fmt.Errorf("%w: sync marker mismatch after block at byte %d", ErrCorruptManifest, r.pos-16)
		}
		if count < 0 {
			return nil, fmt.Errorf("%w: negative block count %d", ErrCorruptManifest, count)
		}
		if count == 0 {
			continue
		}
		raw, err := avroDecompress(f.codec, block)
		if err != nil {
			return nil, err
		}
		br := &avroReader{buf: raw, zeroItems: zeroItems}
		if s.minSize > 0 && count > int64(len(raw)/s.minSize) {
			return nil, fmt.Errorf("%w: block claims %d records in %d bytes", ErrCorruptManifest, count, len(raw))
		}
		if s.minSize == 0 {
			br.zeroItems += count
			if br.zeroItems > avroMaxZeroItems {
				return nil, fmt.Errorf("%w: more than %d zero-size records", ErrCorruptManifest, avroMaxZeroItems)
			}
		}
		for ; count > 0; count-- {
			v := br.value(s, 0)
			if br.err != nil {
				return nil, br.err
			}
			f.values = append(f.values, v)
		}
		zeroItems = br.zeroItems
	}
	return f, nil
}

var (
	zstdDecoderOnce sync.Once
	zstdDecoder     *zstd.Decoder
	zstdDecoderErr  error
)

func avroDecompress(codec string, block []byte) ([]byte, error) {
	switch codec {
	case "null":
		// Copied so that decoded values, which alias the block, never
		// alias the caller's buffer.
		return append([]byte(nil), block...), nil
	case "deflate":
		fr := flate.NewReader(bytes.NewReader(block))
		defer fr.Close()
		out, err := io.ReadAll(io.LimitReader(fr, avroMaxBlock+1))
		if err != nil {
			return nil, fmt.Errorf("%w: deflate block: %v", ErrCorruptManifest, err)
		}
		if len(out) > avroMaxBlock {
			return nil, fmt.Errorf("%w: deflate block larger than %d bytes", ErrCorruptManifest, avroMaxBlock)
		}
		return out, nil
	case "snappy":
		// Avro's snappy blocks end with the big-endian CRC32 of the
		// uncompressed data.
		if len(block) < 4 {
			return nil, fmt.Errorf("%w: snappy block too short", ErrCorruptManifest)
		}
		body, sum := block[:len(block)-4], binary.BigEndian.Uint32(block[len(block)-4:])
		n, err := snappy.DecodedLen(body)
		if err != nil || n > avroMaxBlock {
			return nil, fmt.Errorf("%w: snappy block: bad length", ErrCorruptManifest)
		}
		out, err := snappy.Decode(nil, body)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy block: %v", ErrCorruptManifest, err)
		}
		if crc32.ChecksumIEEE(out) != sum {
			return nil, fmt.Errorf("%w: snappy block checksum mismatch", ErrCorruptManifest)
		}
		return out, nil
	case "zstandard":
		zstdDecoderOnce.Do(func() {
			// DecodeAll is safe for concurrent use; the default concurrency
			// (GOMAXPROCS) lets that many decodes run in parallel.
			zstdDecoder, zstdDecoderErr = zstd.NewReader(nil,
				zstd.WithDecoderMaxMemory(avroMaxBlock),
				zstd.WithDecoderMaxWindow(avroMaxBlock))
		})
		if zstdDecoderErr != nil {
			return nil, zstdDecoderErr
		}
		out, err := zstdDecoder.DecodeAll(block, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: zstandard block: %v", ErrCorruptManifest, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: avro codec %q is not supported", ErrUnsupportedManifestFormat, codec)
}

// avroCodecName maps Paimon's manifest.compression option to an Avro codec.
// The empty string means the default, zstd.
func avroCodecName(compression string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(compression)) {
	case "", "zstd", "zstandard":
		return "zstandard", nil
	case "snappy":
		return "snappy", nil
	case "deflate":
		return "deflate", nil
	case "null", "none", "uncompressed":
		return "null", nil
	}
	return "", fmt.Errorf("manifest compression %q is not supported (zstd, snappy, deflate, none)", compression)
}

var (
	zstdEncoderOnce sync.Once
	zstdEncoder     *zstd.Encoder
	zstdEncoderErr  error
)

func avroCompress(codec string, block []byte) ([]byte, error) {
	switch codec {
	case "null":
		return block, nil
	case "deflate":
		var b bytes.Buffer
		fw, err := flate.NewWriter(&b, flate.DefaultCompression)
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write(block); err != nil {
			return nil, err
		}
		if err := fw.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	case "snappy":
		out := snappy.Encode(nil, block)
		return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(block)), nil
	case "zstandard":
		// Paimon writes level 1 (file.compression.zstd-level default).
		zstdEncoderOnce.Do(func() {
			zstdEncoder, zstdEncoderErr = zstd.NewWriter(nil,
				zstd.WithEncoderLevel(zstd.SpeedFastest))
		})
		if zstdEncoderErr != nil {
			return nil, zstdEncoderErr
		}
		return zstdEncoder.EncodeAll(block, nil), nil
	}
	return nil, fmt.Errorf("avro codec %q is not supported", codec)
}

// avroWriter appends Avro binary values to a buffer.
type avroWriter struct {
	buf []byte
}

func (w *avroWriter) long(v int64) {
	u := uint64(v<<1) ^ uint64(v>>63)
	w.buf = binary.AppendUvarint(w.buf, u)
}

func (w *avroWriter) int(v int32)    { w.long(int64(v)) }
func (w *avroWriter) bytes(b []byte) { w.long(int64(len(b))); w.buf = append(w.buf, b...) }
func (w *avroWriter) string(s string) {
	w.long(int64(len(s)))
	w.buf = append(w.buf, s...)
}

// Nullable unions are always ["null", T]: branch 0 null, branch 1 value.
func (w *avroWriter) null()    { w.long(0) }
func (w *avroWriter) present() { w.long(1) }

func (w *avroWriter) optLong(v *int64) {
	if v == nil {
		w.null()
		return
	}
	w.present()
	w.long(*v)
}

func (w *avroWriter) optInt(v *int32) {
	if v == nil {
		w.null()
		return
	}
	w.present()
	w.int(*v)
}

func (w *avroWriter) optString(v *string) {
	if v == nil {
		w.null()
		return
	}
	w.present()
	w.string(*v)
}

func (w *avroWriter) optBytes(v []byte) {
	if v == nil {
		w.null()
		return
	}
	w.present()
	w.bytes(v)
}

func (w *avroWriter) stringArray(a []string) {
	if len(a) > 0 {
		w.long(int64(len(a)))
		for _, s := range a {
			w.string(s)
		}
	}
	w.long(0)
}

func (w *avroWriter) optStringArray(a []string) {
	if a == nil {
		w.null()
		return
	}
	w.present()
	w.stringArray(a)
}

// writeAvroFile builds an object-container file. encode appends record i to
// the writer; blocks are cut at Java's sync interval.
func writeAvroFile(schema, codec string, n int, encode func(w *avroWriter, i int) error) ([]byte, error) {
	var sync [16]byte
	if _, err := rand.Read(sync[:]); err != nil {
		return nil, err
	}
	out := &avroWriter{buf: []byte(avroMagic)}
	// Java writes the two metadata keys in one map block.
	out.long(2)
	out.string("avro.schema")
	out.bytes([]byte(schema))
	out.string("avro.codec")
	out.bytes([]byte(codec))
	out.long(0)
	out.buf = append(out.buf, sync[:]...)

	rec := &avroWriter{}
	count := 0
	flush := func() error {
		if count == 0 {
			return nil
		}
		block, err := avroCompress(codec, rec.buf)
		if err != nil {
			return err
		}
		out.long(int64(count))
		out.bytes(block)
		out.buf = append(out.buf, sync[:]...)
		rec.buf = rec.buf[:0]
		count = 0
		return nil
	}
	for i := 0; i < n; i++ {
		if err := encode(rec, i); err != nil {
			return nil, err
		}
		count++
		if len(rec.buf) >= avroSyncInterval {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out.buf, nil
}

// readMetadataFile reads and decodes one Avro metadata file, naming it in
// every error.
func readMetadataFile[T any](ctx context.Context, fio fileio.FileIO, path, what string, decode func([]byte) ([]T, error)) ([]T, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	data, err := fileio.ReadFile(ctx, fio, path)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	out, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return out, nil
}

// decodeEntries decodes every record of an Avro container with decodeOne.
func decodeEntries[T any](data []byte, decodeOne func(any) (T, error)) ([]T, error) {
	f, err := readAvroFile(data)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(f.values))
	for i, v := range f.values {
		e, err := decodeOne(v)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrCorruptManifest, i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// writeMetadataFile encodes and writes one Avro metadata file, naming it in
// every error, and returns its size.
func writeMetadataFile(ctx context.Context, fio fileio.FileIO, path, what string, encode func() ([]byte, error)) (int64, error) {
	data, err := encode()
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = fileio.WriteFile(ctx, fio, path, data)
	}
	if err != nil {
		return 0, fmt.Errorf("write %s %s: %w", what, path, err)
	}
	return int64(len(data)), nil
}
