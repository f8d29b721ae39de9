package datafile

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/jroaring"
	"github.com/hamba/avro/v2/ocf"
)

// TestFixtureDeletionVectors reads every deletion vector the fixtures'
// index manifests reference, at the recorded offset and length, and checks
// its cardinality against the manifest.
func TestFixtureDeletionVectors(t *testing.T) {
	manifests, _ := filepath.Glob(filepath.Join(fixtureRoot, "parquet", "*.db", "*", "manifest", "index-manifest-*"))
	checked := 0
	for _, m := range manifests {
		f, err := os.Open(m)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := ocf.NewDecoder(f)
		if err != nil {
			f.Close()
			t.Fatalf("%s: %v", m, err)
		}
		tableDir := filepath.Dir(filepath.Dir(m))
		for dec.HasNext() {
			var e map[string]any
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			if e["_INDEX_TYPE"] != "DELETION_VECTORS" {
				continue
			}
			ranges, _ := e["_DELETIONS_VECTORS_RANGES"].([]any)
			if u, ok := e["_DELETIONS_VECTORS_RANGES"].(map[string]any); ok {
				ranges, _ = u["array"].([]any)
			}
			path := findFile(t, filepath.Dir(tableDir), e["_FILE_NAME"].(string))
			if path == "" {
				// Some fixture tables reference index files outside the
				// copied tree (external paths); they cannot be checked.
				t.Logf("%s: index file %s not in the fixture", m, e["_FILE_NAME"])
				continue
			}
			for _, r := range ranges {
				rec, _ := r.(map[string]any)
				if inner, ok := rec["org.apache.paimon.avro.generated.record__DELETIONS_VECTORS_RANGES"].(map[string]any); ok {
					rec = inner
				}
				for _, v := range rec {
					if inner, ok := v.(map[string]any); ok && len(rec) == 1 {
						rec = inner
					}
				}
				off, length := toI64(rec["f1"]), toI64(rec["f2"])
				dv, err := ReadDeletionVector(context.Background(), fileio.NewLocal(), path, off, length)
				if err != nil {
					t.Fatalf("%s: %v", m, err)
				}
				if c, ok := rec["_CARDINALITY"]; ok && c != nil {
					want := toI64(c)
					if u, ok := c.(map[string]any); ok {
						want = toI64(u["long"])
					}
					if dv.Cardinality() != want {
						t.Errorf("%s %s: cardinality %d, manifest says %d", path, rec["f0"], dv.Cardinality(), want)
					}
				}
				if dv.Cardinality() == 0 {
					t.Errorf("%s %s: empty vector", path, rec["f0"])
				}
				// Re-encoding gives a vector Java reads the same way.
				again, _, err := DecodeDeletionVector(dv.Encode(nil))
				if err != nil || !slices.Equal(again.Positions(), dv.Positions()) {
					t.Errorf("%s: re-encode differs: %v", path, err)
				}
				checked++
			}
		}
		f.Close()
	}
	if checked == 0 {
		t.Fatal("no deletion vectors found in the fixtures")
	}
	t.Logf("checked %d deletion vectors", checked)
}

func TestDeletionVectorRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name     string
		bitmap64 bool
		gen      func() []int64
	}{
		{"sparse positions in an array container", false, func() []int64 { return []int64{0, 5, 65535, 65536, 1 << 20} }},
		{"dense positions become a bitmap container", false, func() []int64 {
			var out []int64
			for i := range int64(10000) {
				out = append(out, i*3)
			}
			return out
		}},
		{"random positions", false, func() []int64 {
			var out []int64
			for range 5000 {
				out = append(out, r.Int64N(1<<31))
			}
			return out
		}},
		{"64-bit positions beyond 2^32", true, func() []int64 { return []int64{1, 1 << 32, 1<<33 + 7, 3} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dv := &DeletionVector{Bitmap64: c.bitmap64}
			pos := c.gen()
			for _, p := range pos {
				dv.Delete(p)
			}
			slices.Sort(pos)
			pos = slices.Compact(pos)
			file, ranges := EncodeDeletionVectorsIndexFile(map[string]*DeletionVector{"data-a-0.parquet": dv, "data-b-0.parquet": {}})
			path := filepath.Join(t.TempDir(), "index-x-0")
			if err := os.WriteFile(path, file, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadDeletionVector(context.Background(), fileio.NewLocal(), path, int64(ranges[0].Offset), int64(ranges[0].Length))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Positions(), pos) || ranges[0].Cardinality != int64(len(pos)) {
				t.Fatalf("positions differ after round trip (%d vs %d)", len(got.Positions()), len(pos))
			}
			for _, p := range pos {
				if !got.IsDeleted(p) || got.IsDeleted(p+1) != slices.Contains(pos, p+1) {
					t.Fatalf("IsDeleted wrong around %d", p)
				}
			}
			// A flipped byte is caught by the CRC.
			bad := bytes.Clone(file)
			bad[ranges[0].Offset+9] ^= 0xff
			if _, _, err := DecodeDeletionVector(bad[ranges[0].Offset:]); err == nil {
				t.Fatal("corrupt vector accepted")
			}
		})
	}
}

func toI64(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return -1
}

func findFile(t *testing.T, root, name string) string {
	var found string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			found = p
		}
		return nil
	})
	return found
}

// TestRoaringRunContainer decodes a hand-built portable bitmap with a run
// container (Java's 64-bit vectors are run-length encoded before writing).
func TestRoaringRunContainer(t *testing.T) {
	b := []byte{
		0x3b, 0x30, 0x00, 0x00, // cookie 12347, one container
		0x01,                   // container 0 is a run container
		0x02, 0x00, 0x09, 0x00, // key 2, cardinality 10
		0x01, 0x00, // one run
		0x64, 0x00, 0x09, 0x00, // start 100, length 10
	}
	bm, n, err := jroaring.Decode(b)
	if err != nil || n != len(b) {
		t.Fatalf("decode: n=%d err=%v", n, err)
	}
	dv := &DeletionVector{highs: []*jroaring.Bitmap{bm}}
	for p := int64(2<<16 + 99); p <= 2<<16+110; p++ {
		want := p >= 2<<16+100 && p <= 2<<16+109
		if dv.IsDeleted(p) != want {
			t.Fatalf("IsDeleted(%d) = %v", p, !want)
		}
	}
	if dv.Cardinality() != 10 {
		t.Fatalf("cardinality %d", dv.Cardinality())
	}
}

// TestRoaringOffsetsAreRelative checks the offset header of an encoded
// bitmap against the portable format: container offsets count from the
// bitmap's first byte (readers that map the bytes use them).
func TestRoaringOffsetsAreRelative(t *testing.T) {
	bm := jroaring.New()
	for _, v := range []uint32{1, 2, 70000, 70001, 70002, 1 << 20} {
		bm.Add(v)
	}
	prefix := []byte{9, 9, 9, 9, 9}
	out := bm.AppendTo(append([]byte(nil), prefix...))
	b := out[len(prefix):]
	n := 3
	header := 8 + 4*n
	offs := header + 4*n
	for i := range n {
		got := int(binary.LittleEndian.Uint32(b[header+4*i:]))
		if got != offs {
			t.Fatalf("container %d offset %d, want %d", i, got, offs)
		}
		offs += 2 * (int(binary.LittleEndian.Uint16(b[8+4*i+2:])) + 1)
	}
	if offs != len(b) {
		t.Fatalf("containers end at %d, bitmap has %d bytes", offs, len(b))
	}
}

// fixtureDVFiles lists every DELETION_VECTORS index file that an index
// manifest of a fixture table (any format directory) names and that the
// fixture holds.
func fixtureDVFiles(tb testing.TB) []string {
	tb.Helper()
	manifests, _ := filepath.Glob(filepath.Join(fixtureRoot, "*", "*.db", "*", "manifest", "index-manifest-*"))
	seen := map[string]bool{}
	var files []string
	for _, m := range manifests {
		f, err := os.Open(m)
		if err != nil {
			tb.Fatal(err)
		}
		dec, err := ocf.NewDecoder(f)
		if err != nil {
			f.Close()
			tb.Fatalf("%s: %v", m, err)
		}
		tableDir := filepath.Dir(filepath.Dir(m))
		for dec.HasNext() {
			var e map[string]any
			if err := dec.Decode(&e); err != nil {
				tb.Fatalf("%s: %v", m, err)
			}
			if u, ok := e["org.apache.paimon.avro.generated.record"].(map[string]any); ok && len(e) == 1 {
				e = u // 0.9 and older: a nullable top-level union
			}
			if e["_INDEX_TYPE"] != "DELETION_VECTORS" {
				continue
			}
			p := filepath.Join(tableDir, "index", e["_FILE_NAME"].(string))
			if _, err := os.Stat(p); err != nil {
				continue // external index path, not in the fixture
			}
			if !seen[p] {
				seen[p] = true
				files = append(files, p)
			}
		}
		f.Close()
	}
	if len(files) == 0 {
		tb.Fatal("no deletion-vector index files found in the fixtures")
	}
	return files
}

// TestFixtureDeletionVectorsReencodeToJavasBytes decodes every vector of
// every deletion-vector index file Java wrote in the fixtures and checks
// that encoding it again gives the very bytes of the file (length, payload,
// CRC), and that the vectors cover the file.
func TestFixtureDeletionVectorsReencodeToJavasBytes(t *testing.T) {
	vectors := 0
	for _, path := range fixtureDVFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 || b[0] != dvIndexVersion {
			t.Fatalf("%s: not a version-1 deletion-vector file", path)
		}
		for p := 1; p < len(b); {
			dv, n, err := DecodeDeletionVector(b[p:])
			if err != nil {
				t.Fatalf("%s at %d: %v", path, p, err)
			}
			if got := dv.Encode(nil); !bytes.Equal(got, b[p:p+n]) {
				t.Errorf("%s at %d: re-encoded vector (%d bytes) differs from Java's (%d bytes)\n got %x\nwant %x", path, p, len(got), n, head(got), head(b[p:p+n]))
			}
			p += n
			vectors++
		}
	}
	if vectors == 0 {
		t.Fatal("the deletion-vector files hold no vector")
	}
	t.Logf("%d vectors re-encoded byte for byte", vectors)
}

func head(b []byte) []byte { return b[:min(len(b), 64)] }
