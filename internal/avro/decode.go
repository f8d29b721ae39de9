package avro

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrCorrupt is wrapped by every error caused by the bytes of an Avro file
// (as opposed to I/O errors).
var ErrCorrupt = errors.New("corrupt avro file")

// ErrUnsupportedCodec is wrapped when a file names a codec compactd cannot
// decompress.
var ErrUnsupportedCodec = errors.New("unsupported avro codec")

const (
	// maxDepth caps nesting while decoding (schemas can be recursive).
	maxDepth = 64
	// maxZeroItems caps values whose encoding may take no bytes (nulls,
	// empty records) per file; without it a few input bytes could claim
	// billions of them.
	maxZeroItems = 1 << 20
)

// decoder decodes Avro binary values from one block.
type decoder struct {
	buf       []byte
	pos       int
	err       error
	zeroItems *int64 // shared by every block of a file
}

func (r *decoder) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
	}
}

func (r *decoder) long() int64 {
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

func (r *decoder) int() int32 {
	v := r.long()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail("int out of range: %d", v)
		return 0
	}
	return int32(v)
}

func (r *decoder) take(n int64) []byte {
	if n < 0 || n > int64(len(r.buf)-r.pos) {
		r.fail("length %d exceeds the %d bytes left", n, len(r.buf)-r.pos)
		return nil
	}
	b := r.buf[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	return b
}

// countZero charges n zero-size items against the file's cap.
func (r *decoder) countZero(n int64) bool {
	*r.zeroItems += n
	if *r.zeroItems > maxZeroItems {
		r.fail("more than %d zero-size items", maxZeroItems)
		return false
	}
	return true
}

// count reads an array/map block count and bounds it by the bytes left.
func (r *decoder) count(minItemSize int) int64 {
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
	if minItemSize == 0 && !r.countZero(n) {
		return 0
	}
	return n
}

// value decodes one value of schema s.
func (r *decoder) value(s *Schema, depth int) any {
	if r.err != nil {
		return nil
	}
	if depth > maxDepth {
		r.fail("value nested too deeply")
		return nil
	}
	switch s.Kind {
	case Null:
		return nil
	case Boolean:
		b := r.take(1)
		if b == nil {
			return nil
		}
		return b[0] != 0
	case Int:
		return r.int()
	case Long:
		return r.long()
	case Float:
		b := r.take(4)
		if b == nil {
			return nil
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case Double:
		b := r.take(8)
		if b == nil {
			return nil
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case Bytes:
		return r.take(r.long())
	case String:
		return string(r.take(r.long()))
	case Fixed:
		return r.take(int64(s.Size))
	case Enum:
		i := r.int()
		if i < 0 || int(i) >= s.Symbols {
			r.fail("enum index %d out of range", i)
		}
		return i
	case Union:
		i := r.long()
		if i < 0 || i >= int64(len(s.Branches)) {
			r.fail("union branch %d out of range", i)
			return nil
		}
		return r.value(s.Branches[i], depth+1)
	case RecordKind:
		rec := &Record{Schema: s, Values: make([]any, len(s.Fields))}
		for i, f := range s.Fields {
			rec.Values[i] = r.value(f.Schema, depth+1)
			if r.err != nil {
				return nil
			}
		}
		return rec
	case Array:
		out := []any{}
		for {
			n := r.count(s.Items.minSize)
			if r.err != nil || n == 0 {
				return out
			}
			for ; n > 0; n-- {
				out = append(out, r.value(s.Items, depth+1))
				if r.err != nil {
					return nil
				}
			}
		}
	case Map:
		out := map[string]any{}
		for {
			n := r.count(1 + s.Items.minSize)
			if r.err != nil || n == 0 {
				return out
			}
			for ; n > 0; n-- {
				k := string(r.take(r.long()))
				out[k] = r.value(s.Items, depth+1)
				if r.err != nil {
					return nil
				}
			}
		}
	}
	r.fail("unknown schema kind %d", s.Kind)
	return nil
}
