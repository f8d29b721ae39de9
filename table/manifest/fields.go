package manifest

import (
	"fmt"
)

// Helpers that read Paimon fields by name from generically decoded Avro
// records. A field missing from the writer schema, or null, reads as absent;
// NOT NULL Paimon fields turn absence into an error naming the field.

type avroFieldReader struct {
	rec  *avroRec
	path string // for error messages, e.g. "_FILE"
	err  error
	// slab, when set, holds copies of the bytes and optional numbers
	// read, so that nothing read aliases the decoded block (data
	// manifests; see slab). Nil: bytes alias the block.
	slab *slab
}

func (f *avroFieldReader) failf(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("%s: "+format, append([]any{f.path}, args...)...)
	}
}

func (f *avroFieldReader) raw(name string) (any, bool) {
	v, ok := f.rec.Get(name)
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

func (f *avroFieldReader) required(name string) any {
	v, ok := f.raw(name)
	if !ok {
		f.failf("missing required field %s", name)
	}
	return v
}

// fileKind reads an entry's _KIND: ADD or DELETE; any other value fails.
func (f *avroFieldReader) fileKind() FileKind {
	kind := f.int32("_KIND")
	if kind != int32(FileKindAdd) && kind != int32(FileKindDelete) {
		f.failf("unknown _KIND %d", kind)
		return FileKindAdd
	}
	return FileKind(kind)
}

func (f *avroFieldReader) int32(name string) int32 {
	v := f.required(name)
	if v == nil {
		return 0
	}
	x, ok := asInt32(v)
	if !ok {
		f.failf("field %s: want int, have %T %v", name, v, v)
	}
	return x
}

// asInt32 accepts an Avro int, or a long in int range from writers that
// widened the type.
func asInt32(v any) (int32, bool) {
	switch x := v.(type) {
	case int32:
		return x, true
	case int64:
		if x >= -1<<31 && x < 1<<31 {
			return int32(x), true
		}
	}
	return 0, false
}

func (f *avroFieldReader) int64(name string) int64 {
	v := f.required(name)
	if v == nil {
		return 0
	}
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	}
	f.failf("field %s: want long, have %T", name, v)
	return 0
}

func (f *avroFieldReader) string(name string) string {
	v := f.required(name)
	if v == nil {
		return ""
	}
	x, ok := v.(string)
	if !ok {
		f.failf("field %s: want string, have %T", name, v)
	}
	return x
}

func (f *avroFieldReader) bytes(name string) []byte {
	v := f.required(name)
	if v == nil {
		return nil
	}
	x, ok := v.([]byte)
	if !ok {
		f.failf("field %s: want bytes, have %T", name, v)
	}
	if f.slab != nil {
		return f.slab.copyBytes(x)
	}
	// Decoded bytes alias a decompressed block owned by this decode; the
	// capacity is clipped so an append by the caller cannot overwrite a
	// neighbouring value.
	return x[:len(x):len(x)]
}

// sharedBytes is bytes for a value that repeats across a file's records:
// with a slab, equal values share one copy.
func (f *avroFieldReader) sharedBytes(name string) []byte {
	s := f.slab
	if s == nil {
		return f.bytes(name)
	}
	f.slab = nil
	b := f.bytes(name)
	f.slab = s
	return s.intern(b)
}

func (f *avroFieldReader) optInt32(name string) *int32 {
	v, ok := f.raw(name)
	if !ok {
		return nil
	}
	x, ok := asInt32(v)
	if !ok {
		f.failf("field %s: want int, have %T %v", name, v, v)
		return nil
	}
	return &x
}

func (f *avroFieldReader) optInt64(name string) *int64 {
	v, ok := f.raw(name)
	if !ok {
		return nil
	}
	var x int64
	switch y := v.(type) {
	case int64:
		x = y
	case int32:
		x = int64(y)
	default:
		f.failf("field %s: want long, have %T", name, v)
		return nil
	}
	if f.slab != nil {
		return f.slab.int64(x)
	}
	return newInt64(x)
}

// newInt64 allocates x on its own; kept out of optInt64 so that the slab
// path does not allocate too (a local whose address is taken escapes on
// every path).
func newInt64(x int64) *int64 { return &x }

func (f *avroFieldReader) optString(name string) *string {
	v, ok := f.raw(name)
	if !ok {
		return nil
	}
	x, ok := v.(string)
	if !ok {
		f.failf("field %s: want string, have %T", name, v)
		return nil
	}
	return &x
}

func (f *avroFieldReader) optBytes(name string) []byte {
	v, ok := f.raw(name)
	if !ok {
		return nil
	}
	x, ok := v.([]byte)
	if !ok {
		f.failf("field %s: want bytes, have %T", name, v)
		return nil
	}
	if f.slab != nil {
		return f.slab.copyBytes(x)
	}
	return x[:len(x):len(x)]
}

// fileSource reads an optional _FILE_SOURCE.
func (f *avroFieldReader) fileSource(name string) *FileSource {
	v, ok := f.raw(name)
	if !ok {
		return nil
	}
	x, ok := asInt32(v)
	if !ok {
		f.failf("field %s: want int, have %T %v", name, v, v)
		return nil
	}
	if f.slab != nil {
		return f.slab.fileSource(FileSource(x))
	}
	fs := FileSource(x)
	return &fs
}

// array returns the elements of an array field; nil if absent or null.
func (f *avroFieldReader) array(name string) []any {
	v, ok := f.raw(name)
	if !ok {
		return nil
	}
	x, ok := v.([]any)
	if !ok {
		f.failf("field %s: want array, have %T", name, v)
		return nil
	}
	return x
}

func (f *avroFieldReader) stringArray(name string, required bool) []string {
	v, ok := f.raw(name)
	if !ok {
		if required {
			f.failf("missing required field %s", name)
		}
		return nil
	}
	a, ok := v.([]any)
	if !ok {
		f.failf("field %s: want array, have %T", name, v)
		return nil
	}
	out := make([]string, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			f.failf("field %s[%d]: want string, have %T", name, i, e)
			return nil
		}
		out[i] = s
	}
	return out
}

func (f *avroFieldReader) record(name string, required bool) *avroFieldReader {
	v, ok := f.raw(name)
	if !ok {
		if required {
			f.failf("missing required field %s", name)
		}
		return nil
	}
	r, ok := v.(*avroRec)
	if !ok {
		f.failf("field %s: want record, have %T", name, v)
		return nil
	}
	return &avroFieldReader{rec: r, path: f.path + "." + name, slab: f.slab}
}

// done propagates a nested reader's error.
func (f *avroFieldReader) done(child *avroFieldReader) {
	if child != nil && child.err != nil && f.err == nil {
		f.err = child.err
	}
}

func (f *avroFieldReader) simpleStats(name string) SimpleStats {
	r := f.record(name, true)
	if r == nil {
		return SimpleStats{}
	}
	s := SimpleStats{
		MinValues: r.bytes("_MIN_VALUES"),
		MaxValues: r.bytes("_MAX_VALUES"),
	}
	if a := r.array("_NULL_COUNTS"); a != nil {
		var counts []int64
		if r.slab != nil {
			s.NullCounts = r.slab.int64Ptrs(len(a))
			counts = r.slab.int64s(len(a))
		} else {
			s.NullCounts = make([]*int64, len(a))
			counts = make([]int64, len(a))
		}
		for i, e := range a {
			switch x := e.(type) {
			case nil:
			case int64:
				counts[i] = x
				s.NullCounts[i] = &counts[i]
			default:
				r.failf("field _NULL_COUNTS[%d]: want long, have %T", i, e)
			}
		}
	}
	f.done(r)
	return s
}

// topRecord unwraps the top-level value: ≤0.9 files declare the record as
// the value branch of a ["null", record] union.
func topRecord(v any, what string) (*avroFieldReader, error) {
	r, ok := v.(*avroRec)
	if !ok {
		if v == nil {
			return nil, fmt.Errorf("null %s record", what)
		}
		return nil, fmt.Errorf("%s record: want record, have %T", what, v)
	}
	return &avroFieldReader{rec: r, path: what}, nil
}

func (w *avroWriter) simpleStats(s SimpleStats) {
	w.bytes(orEmptyRow(s.MinValues))
	w.bytes(orEmptyRow(s.MaxValues))
	// Java always writes an array (its reader cannot take a null one).
	w.present()
	if len(s.NullCounts) > 0 {
		w.long(int64(len(s.NullCounts)))
		for _, n := range s.NullCounts {
			w.optLong(n)
		}
	}
	w.long(0)
}

// orEmptyRow substitutes the empty BinaryRow for a nil row so that a zero
// SimpleStats still encodes as valid empty stats.
func orEmptyRow(b []byte) []byte {
	if b == nil {
		return emptyRow[:]
	}
	return b
}
