package manifest_test

import (
	"fmt"
	"testing"

	"github.com/compactd/compactd/table/manifest"
)

func benchEntries(b *testing.B, n int) []manifest.Entry {
	base := mfSampleEntries(b)
	out := make([]manifest.Entry, n)
	for i := range out {
		out[i] = base[i%2]
		out[i].File.FileName = fmt.Sprintf("data-%08d-0.parquet", i)
	}
	return out
}

func BenchmarkDecodeManifest10k(b *testing.B) {
	data, err := manifest.Encode(benchEntries(b, 10000), manifest.Avro("zstd"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := manifest.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeManifest10k(b *testing.B) {
	entries := benchEntries(b, 10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := manifest.Encode(entries, manifest.Avro("zstd")); err != nil {
			b.Fatal(err)
		}
	}
}
