package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table/datafile"
)

// TestJavaDeletionVectorsReencodeToJavasBytes: Java writes deletion-vector
// tables (32-bit and deletion-vectors.bitmap64) whose vectors hold array,
// bitmap and run containers; every vector compactd decodes from Java's
// index files encodes back to the same bytes.
func TestJavaDeletionVectorsReencodeToJavasBytes(t *testing.T) {
	j := interop.Java(t)
	const rows = 140000
	var script []byte
	add := func(row map[string]any) {
		line, err := json.Marshal(row)
		if err != nil {
			t.Fatal(err)
		}
		script = append(append(script, line...), '\n')
	}
	for k := range rows {
		add(map[string]any{"k": k, "v": k, "_commit": 1})
	}
	deleted := func(k int) bool {
		switch {
		case k < 10000: // one run
			return true
		case k < 65536: // scattered: an array
			return k%997 == 0
		case k < 2*65536: // three of four: a bitmap container
			return k%4 != 0
		default: // pairs: 2048 runs of two would lose to a bitmap, 1500 win
			return k%4 < 2 && k < 2*65536+6000
		}
	}
	for k := range rows {
		if deleted(k) {
			add(map[string]any{"k": k, "_kind": "-D", "_commit": 2})
		}
	}
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	rowsFile := filepath.Join(dir, "rows.jsonl")
	if err := writeFile(rowsFile, script); err != nil {
		t.Fatal(err)
	}
	var reqs []interop.BatchRequest
	for _, b64 := range []bool{false, true} {
		spec := fixtures.Spec{
			Columns:     []fixtures.Column{{Name: "k", Type: "INT NOT NULL"}, {Name: "v", Type: "INT"}},
			PrimaryKeys: []string{"k"},
			Bucket:      1,
			// write-only: the oracle's writer has no IOManager for lookup;
			// its compact verb lifts write-only for its own writer.
			Options: map[string]string{"deletion-vectors.enabled": "true",
				"deletion-vectors.bitmap64": fmt.Sprint(b64), "write-only": "true"},
		}
		name := fmt.Sprintf("db.dv%v", b64)
		specFile := filepath.Join(dir, name+".spec.json")
		if err := writeFile(specFile, spec.JSON()); err != nil {
			t.Fatal(err)
		}
		f := flags(wh, name)
		f["spec"] = specFile
		// Commit 1 then a full compaction puts every row in one top-level
		// file; commit 2's deletes become its deletion vector.
		reqs = append(reqs, interop.BatchRequest{Verb: "create", Flags: f})
	}
	if res := batch(t, j, reqs); res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("Java create: %v %v", res[0].Err, res[1].Err)
	}
	first, second := splitCommits(script)
	firstFile, secondFile := filepath.Join(dir, "c1.jsonl"), filepath.Join(dir, "c2.jsonl")
	if err := writeFile(firstFile, first); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(secondFile, second); err != nil {
		t.Fatal(err)
	}
	reqs = reqs[:0]
	for _, name := range []string{"db.dvfalse", "db.dvtrue"} {
		w1, w2 := flags(wh, name), flags(wh, name)
		w1["rows"], w2["rows"] = firstFile, secondFile
		reqs = append(reqs,
			interop.BatchRequest{Verb: "write", Flags: w1},
			interop.BatchRequest{Verb: "compact", Flags: flags(wh, name)},
			interop.BatchRequest{Verb: "write", Flags: w2},
			interop.BatchRequest{Verb: "compact", Flags: withOpt(flags(wh, name), "full", "false")})
	}
	for i, r := range batch(t, j, reqs) {
		if r.Err != nil {
			t.Fatalf("Java step %d: %v", i, r.Err)
		}
	}
	want := 0
	for k := range rows {
		if deleted(k) {
			want++
		}
	}
	for _, name := range []string{"dvfalse", "dvtrue"} {
		files, _ := filepath.Glob(filepath.Join(wh, "db.db", name, "index", "index-*"))
		vectors, positions := 0, int64(0)
		kinds := map[byte]bool{}
		for _, path := range files {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) == 0 || b[0] != 1 {
				continue // not a deletion-vector file
			}
			for p := 1; p < len(b); {
				dv, n, err := datafile.DecodeDeletionVector(b[p:])
				if err != nil {
					t.Fatalf("%s at %d: %v", path, p, err)
				}
				if dv.Bitmap64 != (name == "dvtrue") {
					t.Fatalf("%s at %d: 64-bit vector %v", path, p, dv.Bitmap64)
				}
				if got := dv.Encode(nil); !bytes.Equal(got, b[p:p+n]) {
					t.Errorf("%s at %d: re-encoded vector (%d bytes) differs from Java's (%d bytes)", path, p, len(got), n)
				}
				recordKinds(b[p:p+n], dv.Bitmap64, kinds)
				positions = max(positions, dv.Cardinality())
				vectors++
				p += n
			}
		}
		if vectors == 0 {
			t.Fatalf("%s: Java wrote no deletion vector", name)
		}
		if positions != int64(want) {
			t.Errorf("%s: largest vector has %d positions, %d rows were deleted", name, positions, want)
		}
		for _, k := range []byte{'a', 'b', 'r'} {
			if !kinds[k] {
				t.Errorf("%s: Java's vectors hold no %q container; the test data no longer covers it", name, k)
			}
		}
		t.Logf("%s: %d vectors in %d files checked (containers %s)", name, vectors, len(files), slices.Sorted(mapKeys(kinds)))
	}
}

func withOpt(f map[string]string, k, v string) map[string]string { f[k] = v; return f }

func mapKeys(m map[byte]bool) func(func(byte) bool) {
	return func(yield func(byte) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// splitCommits splits a write script into the lines of commit 1 and the rest.
func splitCommits(script []byte) (first, rest []byte) {
	for _, line := range bytes.SplitAfter(script, []byte("\n")) {
		if bytes.Contains(line, []byte(`"_commit":1`)) {
			first = append(first, line...)
		} else {
			rest = append(rest, line...)
		}
	}
	return first, rest
}

// recordKinds notes the container kinds ('a', 'b', 'r') of the first
// bitmap of a stored vector (length, magic[, count, key], bitmap, CRC).
func recordKinds(v []byte, b64 bool, kinds map[byte]bool) {
	p := 8
	if b64 {
		p += 8 + 4
	}
	b := v[p:]
	cookie := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	var n, hdr int
	var flags []byte
	if cookie&0xffff == 12347 {
		n = int(cookie>>16) + 1
		flags = b[4 : 4+(n+7)/8]
		hdr = 4 + len(flags)
	} else {
		n = int(uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24)
		hdr = 8
	}
	for i := range n {
		card := int(uint16(b[hdr+4*i+2])|uint16(b[hdr+4*i+3])<<8) + 1
		switch {
		case flags != nil && flags[i/8]&(1<<(i%8)) != 0:
			kinds['r'] = true
		case card > 4096:
			kinds['b'] = true
		default:
			kinds['a'] = true
		}
	}
}
