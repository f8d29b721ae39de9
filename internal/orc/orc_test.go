package orc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func openFile(t testing.TB, path string) *File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// rows decodes every row of f as generic values (Column.Value).
func rows(t testing.TB, f *File) [][]any {
	t.Helper()
	var out [][]any
	root := f.Types[0]
	for s := range f.Stripes {
		st, err := f.ReadStripe(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkAllStripeRows(f, s, st); err != nil {
			t.Fatal(err)
		}
		for r := 0; r < st.NumRows; r++ {
			row := make([]any, len(root.Subtypes))
			for k, id := range root.Subtypes {
				row[k] = st.Columns[id].Value(r)
			}
			out = append(out, row)
		}
	}
	if uint64(len(out)) != f.NumRows {
		t.Fatalf("read %d rows, footer says %d", len(out), f.NumRows)
	}
	return out
}

// asJSON renders a decoded value the way testdata/gen.py renders pyarrow's.
func asJSON(v any, kind Kind) any {
	switch x := v.(type) {
	case nil, bool:
		return x
	case int64:
		if kind == Long {
			return fmt.Sprint(x)
		}
		return float64(x)
	case float64:
		if kind == Float {
			return float64(float32(x))
		}
		return x
	case []byte:
		if kind == Binary {
			return hex.EncodeToString(x)
		}
		return string(x)
	case Dec:
		return new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil)).FloatString(x.Scale)
	case Time:
		return new(big.Int).Add(new(big.Int).Mul(big.NewInt(x.Secs), big.NewInt(1e9)), big.NewInt(int64(x.Nanos))).String()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = asJSON(e, -1)
		}
		return out
	case []KV:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = []any{asJSON(e.Key, -1), asJSON(e.Value, -1)}
		}
		return out
	}
	return fmt.Sprintf("unexpected %T", v)
}

// TestAgainstPyarrow reads the C++-written files of testdata (every codec,
// RLE v1 and v2, direct and dictionary strings, all scalar and nested
// types, nulls everywhere) and compares every value with pyarrow's read.
func TestAgainstPyarrow(t *testing.T) {
	t.Parallel()
	var exp map[string][]any
	b, err := os.ReadFile("testdata/expect.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/*.orc")
	if len(files) != 6 {
		t.Fatalf("want 6 testdata files, have %d", len(files))
	}
	codecs := map[Compression]bool{}
	for _, p := range files {
		f := openFile(t, p)
		codecs[f.Compression] = true
		root := f.Types[0]
		for r, row := range rows(t, f) {
			for k, id := range root.Subtypes {
				name := root.FieldNames[k]
				got := asJSON(row[k], f.Types[id].Kind)
				want := exp[name][r]
				if f.Types[id].Kind == Decimal && want != nil {
					var a, b big.Rat
					a.SetString(want.(string))
					b.SetString(got.(string))
					if a.Cmp(&b) == 0 {
						continue
					}
				}
				if f.Types[id].Kind == Float && want != nil {
					want = float64(float32(want.(float64)))
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s row %d column %s: got %#v, want %#v", filepath.Base(p), r, name, got, want)
				}
			}
		}
	}
	if len(codecs) != 5 {
		t.Fatalf("codecs covered: %v", codecs)
	}
}

const fixtures = "../../../shared/fixtures/paimon-cpp/orc"

// TestJavaFixtures reads every ORC file Java Paimon wrote into the shared
// fixtures (data files and ORC manifests, ORC Java 1.9.2 and 1.9.8, zstd).
func TestJavaFixtures(t *testing.T) {
	t.Parallel()
	var n int
	err := filepath.Walk(fixtures, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte("ORC")) {
			return err
		}
		n++
		rows(t, openFile(t, p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 30 {
		t.Fatalf("found %d ORC files under %s", n, fixtures)
	}
	// A data file of pk_btree_e2e: the first rows are (id, seq, kind, id,
	// score, tag), field ids in the paimon.id attribute.
	f := openFile(t, fixtures+"/pk_btree_e2e.db/pk_btree_e2e/bucket-0/data-c0e6caa4-c74e-4a9f-88b1-9170afaae1aa-0.orc")
	rs := rows(t, f)
	if got, want := rs[1], []any{int64(2), int64(1), int64(0), int64(2), int64(2), []byte("keep")}; !reflect.DeepEqual(got, want) {
		t.Fatalf("row 1: got %v, want %v", got, want)
	}
	if id := f.Types[f.Types[0].Subtypes[5]].Attributes["paimon.id"]; id != "2" {
		t.Fatalf("paimon.id of tag = %q", id)
	}
	// An ORC manifest: nested struct, list and timestamp of _FILE.
	m := rows(t, openFile(t, fixtures+"/append_09.db/append_09/manifest/manifest-3ea5ee21-d399-4f1c-a749-2fc63dbf0852-1"))
	file := m[0][5].([]any)
	if name := string(file[0].([]byte)); name != "data-4e30d6c0-f109-4300-a010-4ba03047dd9d-0.orc" {
		t.Fatalf("_FILE_NAME = %s", name)
	}
	if ct := file[12].(Time); ct != (Time{Secs: 1721643142, Nanos: 456000000}) {
		t.Fatalf("_CREATION_TIME = %+v", ct)
	}
}

// TestTimestampJavaTruncation checks the pre-1970 rule of Java's writer.
func TestTimestampJavaTruncation(t *testing.T) {
	t.Parallel()
	// -1.5 s: Java writes seconds -1 (truncated) and nanos 5e8.
	sr := &stripeReader{f: &File{}, streams: map[streamKey][]byte{}, encs: []uint64{encDirect}}
	enc := func(vals ...int64) []byte {
		var b []byte
		b = append(b, byte(256-len(vals)))
		for _, v := range vals {
			b = appendUvarint(b, uint64(v))
		}
		return b
	}
	zz := func(v int64) int64 { return (v << 1) ^ (v >> 63) }
	sr.streams[streamKey{0, streamData}] = enc(zz(-1 - orcEpoch))
	sr.streams[streamKey{0, streamSecondary}] = enc(5<<3 | 7) // 5 * 10^8
	c := &Column{ID: 0, Type: &Type{Kind: Timestamp}}
	if err := sr.timestamps(c, 1); err != nil {
		t.Fatal(err)
	}
	if c.Secs[0] != -2 || c.Nanos[0] != 500000000 {
		t.Fatalf("got %d s %d ns, want -2 s 500000000 ns", c.Secs[0], c.Nanos[0])
	}
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/zstd-dict.orc")
	if err != nil {
		t.Fatal(err)
	}
	// A file cut short loses its postscript.
	for _, cut := range []int{1, 3, 10, len(b) / 2, len(b) - 1} {
		x := b[:len(b)-cut]
		if _, err := Open(bytes.NewReader(x), int64(len(x))); !errors.Is(err, ErrCorrupt) {
			t.Errorf("file without its last %d bytes: %v", cut, err)
		}
	}
	// A stripe whose bytes are garbage fails to decode, without a panic.
	f, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	x := append([]byte(nil), b...)
	for i := 3; i < int(f.Stripes[0].Offset+f.Stripes[0].IndexLength+f.Stripes[0].DataLength); i++ {
		x[i] = 0xff
	}
	g, err := Open(bytes.NewReader(x), int64(len(x)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.ReadStripe(0, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("stripe of 0xff bytes: %v", err)
	}
}

// FuzzOpenRead feeds mutated files to Open and ReadStripe: errors are fine,
// panics and runaway allocations are not.
func FuzzOpenRead(f *testing.F) {
	for _, p := range []string{"testdata/zstd-v011.orc", "testdata/none-direct.orc", "testdata/zlib-direct.orc"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for s := range file.Stripes {
			st, err := file.ReadStripe(s, nil)
			if err != nil {
				continue
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
	})
}
