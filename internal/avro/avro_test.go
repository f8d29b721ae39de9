package avro

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

const testSchema = `{"type":"record","name":"r","fields":[
 {"name":"a","type":"int"},
 {"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-micros"}]},
 {"name":"tags","type":{"type":"array","items":"null"}}]}`

func writeTest(t *testing.T, codec string, n int) []byte {
	t.Helper()
	data, err := WriteFile(testSchema, codec, n, func(buf []byte, i int) ([]byte, error) {
		buf = AppendInt(buf, int32(i))
		buf = AppendLong(buf, 1)
		buf = AppendLong(buf, int64(i)*1000)
		return AppendLong(buf, 0), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRoundTripEveryCodecAndLogicalType(t *testing.T) {
	for _, codec := range []string{"null", "deflate", "snappy", "zstandard"} {
		f, err := ReadFile(writeTest(t, codec, 20000), MaxMetadataBlock)
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		if f.Codec != codec || len(f.Values) != 20000 {
			t.Fatalf("%s: codec %s, %d records", codec, f.Codec, len(f.Values))
		}
		rec := f.Values[7].(*Record)
		if a, _ := rec.Get("a"); a != int32(7) {
			t.Errorf("%s: a = %v", codec, a)
		}
		if ts, _ := rec.Get("ts"); ts != int64(7000) {
			t.Errorf("%s: ts = %v", codec, ts)
		}
		i, _ := f.Schema.FieldIndex("ts")
		if l := f.Schema.Fields[i].Schema.Branches[1].Logical; l != "timestamp-micros" {
			t.Errorf("logical type %q", l)
		}
	}
}

// A store that serves fewer bytes than the file's size is not damage.
func TestFileShorterThanItsSizeIsAnIOError(t *testing.T) {
	data := writeTest(t, "null", 10)
	r, err := NewReader(bytes.NewReader(data[:len(data)-8]), int64(len(data)), MaxMetadataBlock)
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = r.Next()
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrCorrupt) {
		t.Errorf("err %v, want an I/O error (unexpected EOF), not corruption", err)
	}
}

// Null items take no bytes: a few bytes may not claim a billion of them.
func TestZeroSizeItemsAreCapped(t *testing.T) {
	data, err := WriteFile(testSchema, "null", 1, func(buf []byte, i int) ([]byte, error) {
		buf = AppendInt(buf, 0)
		buf = AppendLong(buf, 0)
		return AppendLong(AppendLong(buf, 1<<40), 0), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = ReadFile(data, MaxMetadataBlock)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("err %v, want ErrCorrupt", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 16<<20 {
		t.Errorf("%d bytes allocated", a)
	}
}

// A block larger than the cap is refused before it is read, even when
// the file is that large.
func TestBlockCap(t *testing.T) {
	data := writeTest(t, "null", 20000) // blocks of ~64000 bytes
	if _, err := ReadFile(data, 1000); !errors.Is(err, ErrCorrupt) {
		t.Errorf("err %v, want ErrCorrupt for a block over the cap", err)
	}
	if _, err := ReadFile(data, 1<<20); err != nil {
		t.Errorf("under the cap: %v", err)
	}
}

func TestUnknownCodec(t *testing.T) {
	data, err := WriteFile(testSchema, "null", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Replace the codec name "null" by "lz4x" (same length) and add a block.
	i := bytes.LastIndex(data, []byte("null"))
	copy(data[i:], "lz4x")
	sync := append([]byte(nil), data[len(data)-16:]...)
	data = AppendLong(data, 1)
	data = AppendBytes(data, []byte{0, 0})
	data = append(data, sync...)
	if _, err := ReadFile(data, MaxMetadataBlock); !errors.Is(err, ErrUnsupportedCodec) {
		t.Errorf("err %v, want ErrUnsupportedCodec", err)
	}
}

// FuzzReadFile: no input may panic the reader, and a file that decodes
// decodes the same through a one-byte-at-a-time stream.
func FuzzReadFile(f *testing.F) {
	for _, codec := range []string{"null", "deflate", "snappy", "zstandard"} {
		data, err := WriteFile(testSchema, codec, 3, func(buf []byte, i int) ([]byte, error) {
			buf = AppendInt(buf, int32(i))
			buf = AppendLong(buf, 0)
			return AppendLong(AppendLong(buf, 2), 0), nil
		})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, err := ReadFile(data, 1<<20)
		r, serr := NewReader(iotest1(data), int64(len(data)), 1<<20)
		n := 0
		for serr == nil {
			if _, serr = r.Next(); serr == nil {
				n++
			}
		}
		if err == nil && (!errors.Is(serr, io.EOF) || n != len(whole.Values)) {
			t.Fatalf("whole file: %d records; streamed: %d, %v", len(whole.Values), n, serr)
		}
	})
}

func iotest1(b []byte) io.Reader { return &oneByteReader{b} }

type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}
