package orc

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/writer_golden.txt from the current writer")

// goldenFiles writes a fixed set of files: every type, nulls from the
// first row or only after the first row groups, dictionary and direct
// strings (and a stripe of each after the other), several stripes and row
// groups, every codec, small and fitted blocks, no row index, and the Put
// methods. Their sha256 were taken from the writer that buffered a whole
// stripe of raw values (ab33c85): the streaming writer must write the same
// bytes. The zstd files' were retaken when zstd chunks lost their frame
// checksum, the only change then (every other file kept its sum).
func goldenFiles(t *testing.T) map[string][]byte {
	schema := testSchema()
	// mixed: no nulls in the first 700 rows, then nulls; low-cardinality
	// strings (dictionary) then high-cardinality ones (direct) and back.
	mixed := append(genRows(11, schema, 700, 2), genRows(12, schema, 900, 0)...)
	mixed = append(mixed, genRows(13, schema, 1200, 1)...)
	mixed = append(mixed, genRows(14, schema, 800, 0)...)
	cases := []struct {
		name string
		opts WriterOptions
		data [][]any
	}{
		{"none", WriterOptions{Compression: CompressionNone, RowIndexStride: 100}, genRows(0, schema, 1000, 0)},
		{"zlib-small-stripes", WriterOptions{Compression: CompressionZlib, StripeSize: 20000, RowIndexStride: 64}, genRows(1, schema, 1500, 0)},
		{"snappy-monotone", WriterOptions{Compression: CompressionSnappy, BlockSize: 1000}, genRows(2, schema, 3000, 1)},
		{"lz4-noindex", WriterOptions{Compression: CompressionLZ4, RowIndexStride: -1}, genRows(3, schema, 700, 0)},
		{"zstd-dict", WriterOptions{Compression: CompressionZstd, CompressionLevel: 3, DictionaryKeyRatio: ptr(1.0), RowIndexStride: 150}, genRows(4, schema, 2000, 1)},
		{"zstd-direct", WriterOptions{Compression: CompressionZstd, DictionaryKeyRatio: ptr(0.0), BlockSize: 4096, RowIndexStride: 333}, genRows(5, schema, 2000, 0)},
		{"empty", WriterOptions{Compression: CompressionZstd}, nil},
		{"mixed-zlib", WriterOptions{Compression: CompressionZlib, BlockSize: 777, RowIndexStride: 100, StripeSize: 60000}, mixed},
		{"mixed-snappy-fit", WriterOptions{Compression: CompressionSnappy, FitBlockSize: true, RowIndexStride: 250}, mixed},
		{"mixed-none-noindex", WriterOptions{Compression: CompressionNone, RowIndexStride: -1, StripeSize: 50000}, mixed},
		{"mixed-lz4-exact", WriterOptions{Compression: CompressionLZ4, RowIndexStride: 100, BlockSize: 512}, mixed[:1000]},
		{"mixed-zstd-nodict", WriterOptions{Compression: CompressionZstd, RowIndexStride: 64, StripeSize: 30000, DictionaryKeyRatio: ptr(0.0)}, mixed},
	}
	out := map[string][]byte{}
	for _, tc := range cases {
		out[tc.name] = writeFile(t, schema, tc.opts, tc.data)
	}
	out["put-methods"] = writePut(t)
	return out
}

// writePut writes through BeginRow/Put*/EndRow, the compaction path.
func writePut(t *testing.T) []byte {
	schema := &TypeDesc{Kind: Struct, Fields: []string{"b", "i", "f", "s", "d", "dbig"}, Children: []*TypeDesc{
		{Kind: Boolean}, {Kind: Long}, {Kind: Double}, {Kind: String}, {Kind: Decimal, Precision: 10, Scale: 2},
		{Kind: Decimal, Precision: 30, Scale: 3}}}
	var buf strings.Builder
	w, err := NewWriter(&buf, schema, WriterOptions{Compression: CompressionZstd, RowIndexStride: 128, StripeSize: 40000, BlockSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		if err := w.BeginRow(); err != nil {
			t.Fatal(err)
		}
		if i%7 == 3 && i > 300 {
			w.PutNull(0)
		} else {
			w.PutBool(0, i%3 == 0)
		}
		if err := w.PutInt(1, int64(i*i)); err != nil {
			t.Fatal(err)
		}
		w.PutFloat(2, float64(i)/3)
		if i%11 == 0 && i > 1000 {
			w.PutNull(3)
		} else {
			w.PutBytes(3, []byte(fmt.Sprintf("k%d", (i/900)*i%50+(i/2000)*i)))
		}
		if err := w.PutDecimal64(4, int64(i*37-9000)); err != nil {
			t.Fatal(err)
		}
		if err := w.PutDecimal(5, new(big.Int).Lsh(big.NewInt(int64(i)), 40)); err != nil {
			t.Fatal(err)
		}
		if err := w.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(buf.String())
}

func TestWriterGolden(t *testing.T) {
	files := goldenFiles(t)
	const path = "testdata/writer_golden.txt"
	if *updateGolden {
		var b strings.Builder
		for _, name := range sortedKeys(files) {
			s := sha256.Sum256(files[name])
			fmt.Fprintf(&b, "%s %s\n", name, hex.EncodeToString(s[:]))
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		name, sum, _ := strings.Cut(line, " ")
		f, ok := files[name]
		if !ok {
			t.Errorf("%s: no such file written", name)
			continue
		}
		seen++
		s := sha256.Sum256(f)
		if got := hex.EncodeToString(s[:]); got != sum {
			t.Errorf("%s: sha256 %s, want %s (the writer's bytes changed)", name, got, sum)
		}
	}
	if seen != len(files) {
		t.Errorf("%d files written, %d in %s", len(files), seen, path)
	}
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
