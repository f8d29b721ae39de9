package manifest_test

// The measurement behind "one Avro stack" (issue 13 item 6): compactd's own
// object-container decoder ("own": internal/avro, through the codec's readAvroFile)
// against hamba/avro's ocf decoder, both decoding generically (no typed
// structs), on the same inputs. Run with
//
//	go test ./table/manifest -run '^$' -bench BenchmarkAvroStack -benchmem -count=5
//	go test ./table/manifest -run '^$' -bench BenchmarkAvroStackCorruptInput -benchmem -benchtime 3x -v
//
// The benchmark numbers and the corrupt-input table are in the commit that
// chose the stack.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/compactd/compactd/table/manifest"
	"github.com/hamba/avro/v2/ocf"
)

// avroFixtureFiles reads every Avro file in a manifest/ directory of the
// shared fixtures (manifests, manifest lists, index manifests).
func avroFixtureFiles(tb testing.TB) [][]byte {
	var out [][]byte
	err := filepath.WalkDir(fixturesRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || filepath.Base(filepath.Dir(p)) != "manifest" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(data, []byte("Obj\x01")) {
			out = append(out, data)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("fixtures at %s: %v", fixturesRoot, err)
	}
	if len(out) < 300 {
		tb.Fatalf("only %d Avro metadata fixtures", len(out))
	}
	return out
}

func hambaDecodeAll(data []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	d, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	for d.HasNext() {
		var v map[string]any
		if err := d.Decode(&v); err != nil {
			return n, err
		}
		n++
	}
	return n, d.Error()
}

func ownDecodeAll(data []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	f, err := manifest.ReadAvroFile(data)
	if err != nil {
		return 0, err
	}
	return len(f.Values), nil
}

var avroStacks = []struct {
	name   string
	decode func([]byte) (int, error)
}{{"own", ownDecodeAll}, {"hamba", hambaDecodeAll}}

func BenchmarkAvroStackFixtures(b *testing.B) {
	files := avroFixtureFiles(b)
	total := 0
	for _, f := range files {
		total += len(f)
	}
	for _, st := range avroStacks {
		b.Run(st.name, func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for _, f := range files {
					if _, err := st.decode(f); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func BenchmarkAvroStackManifest100k(b *testing.B) {
	data, err := manifest.Encode(benchEntries(b, 100000), manifest.Avro("zstd"))
	if err != nil {
		b.Fatal(err)
	}
	for _, st := range avroStacks {
		b.Run(st.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				n, err := st.decode(data)
				if err != nil || n != 100000 {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// corruptAvroInputs derives damaged files from a valid uncompressed manifest.
func corruptAvroInputs(t testing.TB) map[string][]byte {
	good, err := manifest.Encode(mfSampleEntries(t), manifest.Avro("none"))
	if err != nil {
		t.Fatal(err)
	}
	// The header ends with the sync marker; the first block follows.
	hdrEnd := bytes.Index(good[4:], good[len(good)-16:]) + 4 + 16
	sync := good[len(good)-16:]
	zz := func(v int64) []byte { return binary.AppendUvarint(nil, uint64(v<<1)^uint64(v>>63)) }
	block := func(count, size int64, body []byte) []byte {
		out := append([]byte(nil), good[:hdrEnd]...)
		out = append(out, zz(count)...)
		out = append(out, zz(size)...)
		out = append(out, body...)
		return append(out, sync...)
	}
	in := map[string][]byte{}
	in["truncated half"] = good[:len(good)/2]
	in["truncated in header"] = good[:hdrEnd-5]
	flipped := append([]byte(nil), good...)
	for i := hdrEnd; i < len(flipped); i += 7 {
		flipped[i] ^= 0xff
	}
	in["flipped bytes in block"] = flipped
	in["block size 2^31"] = block(1, 1<<31, nil)
	in["block size 2^62"] = block(1, 1<<62, nil)
	in["block count 2^31 of 1 byte"] = block(1<<31, 1, []byte{0})
	// A record whose _VERSION and _KIND are followed by _PARTITION
	// (bytes) claiming 4 GiB; padded past the smallest record size.
	str4g := append(append(zz(2), zz(0)...), zz(4<<30)...)
	str4g = append(str4g, make([]byte, 256)...)
	in["bytes length 4 GiB"] = block(1, int64(len(str4g)), str4g)
	hdr := append([]byte("Obj\x01"), zz(1<<31)...)
	in["header map count 2^31"] = append(hdr, zz(3)...)
	hdr2 := append([]byte("Obj\x01"), zz(1)...)
	hdr2 = append(hdr2, zz(11)...)
	hdr2 = append(hdr2, "avro.schema"...)
	in["header value 4 GiB"] = append(hdr2, zz(4<<30)...)
	return in
}

// TestAvroDecoderBoundsCorruptInput: compactd's decoder fails every
// damaged input with ErrCorrupt within 64 MiB of allocation.
func TestAvroDecoderBoundsCorruptInput(t *testing.T) {
	for name, data := range corruptAvroInputs(t) {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := manifest.ReadAvroFile(data)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; !errors.Is(err, manifest.ErrCorrupt) || alloc > 64<<20 {
			t.Errorf("%s: err=%v after %d bytes allocated", name, err, alloc)
		}
	}
}

// BenchmarkAvroStackCorruptInput records, for each damaged input, what
// each stack returns and costs (B/op, ns/op). A benchmark, not a test:
// hamba allocates 2 GiB on one of these inputs.
func BenchmarkAvroStackCorruptInput(b *testing.B) {
	inputs := corruptAvroInputs(b)
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, st := range avroStacks {
			b.Run(strings.ReplaceAll(name, " ", "_")+"/"+st.name, func(b *testing.B) {
				b.ReportAllocs()
				var err error
				for b.Loop() {
					_, err = st.decode(inputs[name])
				}
				b.Logf("err=%v", err)
			})
		}
	}
}
