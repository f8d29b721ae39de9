package orc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// javaSeeds are the files Java Paimon wrote: the ORC data files and ORC
// manifests of the shared fixtures (Paimon 0.9 to 2.0, ORC Java 1.9) and
// small files of the interop oracle (orc-write-samples: every Paimon type,
// RLE v1, zlib/snappy/lz4, one row, no rows) in testdata/java.
func javaSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	add := func(p string) {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		if bytes.HasPrefix(b, []byte("ORC")) {
			out = append(out, b)
		}
	}
	java, err := filepath.Glob("testdata/java/*.orc")
	if err != nil || len(java) < 5 {
		tb.Fatalf("testdata/java: %v %v", java, err)
	}
	for _, p := range java {
		add(p)
	}
	root := "../../../shared/fixtures/paimon-cpp"
	fixtures := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || (filepath.Ext(p) != ".orc" && filepath.Base(filepath.Dir(p)) != "manifest") {
			return nil
		}
		n := len(out)
		add(p)
		fixtures += len(out) - n
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if fixtures < 40 {
		tb.Fatalf("found %d ORC fixture files under %s, expected the data files and manifests", fixtures, root)
	}
	return out
}

// errStreamingDiffers marks a stripe StripeRows decodes otherwise than
// ReadStripe.
var errStreamingDiffers = errors.New("streaming decode differs")

// readAll opens b and decodes every stripe and value, as the table
// readers do. Errors are the expected outcome for damaged input.
func readAll(b []byte) error { return readAllWith(b, -1) }

// readAllWith is readAll checking the streaming reader with
// rowsConfigs[config] only (-1: all of them).
func readAllWith(b []byte, config int) error {
	f, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	for s := range f.Stripes {
		st, err := f.ReadStripe(s, nil)
		if err != nil {
			// The streaming reader must fail alike or not at all, never
			// panic.
			_ = checkStripeRowsWith(f, s, nil, config)
			return err
		}
		// What ReadStripe decodes the streaming reader decodes the same.
		if err := checkStripeRowsWith(f, s, st, config); err != nil {
			return fmt.Errorf("%w: StripeRows differs from ReadStripe: %w", errStreamingDiffers, err)
		}
		for _, c := range st.Columns {
			if c == nil {
				continue
			}
			for r := 0; r < c.N; r++ {
				c.Value(r)
			}
		}
	}
	return nil
}

// TestJavaSeedsRead: every seed decodes whole (the fuzz target starts from
// valid files), and every truncation or single damaged byte of the small
// seeds gives an error wrapping ErrCorrupt or ErrUnsupported, or decodes,
// but never panics.
func TestJavaSeedsRead(t *testing.T) {
	t.Parallel()
	seeds := javaSeeds(t)
	for i, b := range seeds {
		if err := readAll(b); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
	b, err := os.ReadFile("testdata/java/small_zlib_direct.orc")
	if err != nil {
		t.Fatal(err)
	}
	for cut := 1; cut < len(b); cut += 97 {
		if err := readAllWith(b[:len(b)-cut], cut%len(rowsConfigs)); err == nil || !(errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported)) {
			t.Errorf("without its last %d bytes: %v", cut, err)
		}
	}
	for i := 0; i < len(b); i += 13 {
		x := bytes.Clone(b)
		x[i] ^= 0x5a
		if err := readAllWith(x, i%len(rowsConfigs)); errors.Is(err, errStreamingDiffers) { // must not panic
			t.Errorf("byte %d damaged: %v", i, err)
		}
	}
}

// FuzzReadJavaFiles mutates files Java wrote (javaSeeds): Open,
// ReadStripe and Value must return errors, never panic, and never
// allocate far beyond what the input can hold (a forged length or row
// count must be checked against the bytes present before allocating).
func FuzzReadJavaFiles(f *testing.F) {
	for _, b := range javaSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		// One streaming configuration per input (TestJavaSeedsRead runs
		// every one on the seeds): four would quarter the fuzzer's speed.
		err := readAllWith(b, len(b)%len(rowsConfigs))
		runtime.ReadMemStats(&after)
		if errors.Is(err, errStreamingDiffers) {
			t.Fatal(err)
		}
		// Decoding legitimately expands compressed, run-length encoded
		// input a lot; 1 GiB is far above any seed's own decoding.
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<30 {
			t.Fatalf("%d bytes of input allocated %d bytes", len(b), n)
		}
	})
}

// A chunk of a few bytes under a postscript naming a 1 GiB compression
// block must not allocate anywhere near that: snappy's claimed length and
// lz4's output buffer are bounded by the chunk's size.
func TestTinyChunksDoNotAllocateTheBlockSize(t *testing.T) {
	snappyClaim := []byte{0x80, 0x80, 0x80, 0x80, 0x02, 0x00} // decoded length 512 MiB
	lz4Chunk := []byte{0x10, 'a'}                             // one literal
	for _, c := range []struct {
		codec Compression
		chunk []byte
	}{{CompressionSnappy, snappyClaim}, {CompressionLZ4, lz4Chunk}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = decompressChunk(c.codec, 1<<30, c.chunk, nil)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%s: a %d-byte chunk allocated %d bytes", c.codec, len(c.chunk), n)
		}
	}
}

func TestWriterZones(t *testing.T) {
	for _, c := range []struct {
		name string
		off  int // seconds east of UTC on 2015-01-01
		ok   bool
	}{{"America/Los_Angeles", -8 * 3600, true}, {"Asia/Kolkata", 19800, true}, {"GMT+08:00", 8 * 3600, true}, {"GMT-03:30", -12600, true}, {"Mars/Olympus", 0, false}} {
		l, err := loadZone(c.name)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrUnsupported)) {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if err == nil {
			if _, off := time.Date(2015, 1, 1, 0, 0, 0, 0, l).Zone(); off != c.off {
				t.Errorf("%s: offset %d, want %d", c.name, off, c.off)
			}
		}
	}
}
