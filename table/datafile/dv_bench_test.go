package datafile

import (
	"os"
	"testing"
)

// BenchmarkDecodeFixtureDeletionVectors decodes every vector of the
// fixtures' deletion-vector index files (Java-written, 1 to 3 positions
// each) per iteration.
func BenchmarkDecodeFixtureDeletionVectors(b *testing.B) {
	var vectors [][]byte
	for _, path := range fixtureDVFiles(b) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		for p := 1; p < len(data); {
			_, n, err := DecodeDeletionVector(data[p:])
			if err != nil {
				b.Fatal(err)
			}
			vectors = append(vectors, data[p:p+n])
			p += n
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, v := range vectors {
			if _, _, err := DecodeDeletionVector(v); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDecodeLargeDeletionVector decodes a vector of 59,000 positions
// of 140,000 rows (a run of 10,000, scattered ones, three of every four in
// the second 65,536, pairs) as the code under test writes it.
func BenchmarkDecodeLargeDeletionVector(b *testing.B) {
	dv := &DeletionVector{}
	for k := range int64(140000) {
		switch {
		case k < 10000, k < 65536 && k%997 == 0, k >= 65536 && k < 2*65536 && k%4 != 0, k >= 2*65536 && k%4 < 2 && k < 2*65536+6000:
			dv.Delete(k)
		}
	}
	data := dv.Encode(nil)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeDeletionVector(data); err != nil {
			b.Fatal(err)
		}
	}
}
