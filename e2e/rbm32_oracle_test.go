package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/internal/jroaring"
	"github.com/compactd/compactd/interop"
)

// rbmInputs are the bitmaps written for one key, one per commit (nil: a
// null value).
type rbmInputs [][]byte

func bitmapOf(vals ...uint32) *jroaring.Bitmap {
	b := jroaring.New()
	for _, v := range vals {
		b.Add(v)
	}
	return b
}

func rbmBytes(b *jroaring.Bitmap) []byte { return b.AppendTo(nil) }

// runsOf3 holds, in container key, n runs of three values four apart whose
// index is first mod step.
func runsOf3(key uint32, n, first, step int) *jroaring.Bitmap {
	b := jroaring.New()
	for i := first; i < n; i += step {
		for d := range uint32(3) {
			b.Add(key<<16 | 4*uint32(i) + d)
		}
	}
	return b
}

// rbm32Cases are the merges whose serialized result depends on Java's
// runOptimize rules where the Go library's differ, and random ones.
func rbm32Cases(rng *rand.Rand) map[int]rbmInputs {
	le := func(vals ...any) []byte {
		var b []byte
		for _, v := range vals {
			switch x := v.(type) {
			case uint16:
				b = append(b, byte(x), byte(x>>8))
			case uint32:
				b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
			case byte:
				b = append(b, x)
			}
		}
		return b
	}
	run10To12 := le(uint32(12347), byte(1), uint16(0), uint16(2), uint16(1), uint16(10), uint16(2))
	cases := map[int]rbmInputs{
		// A union at a tie between run and array: Java keeps a run
		// container that one side held, and an array otherwise.
		0: {run10To12, rbmBytes(bitmapOf(11))},
		1: {rbmBytes(bitmapOf(10, 12)), rbmBytes(bitmapOf(11))},
		2: {rbmBytes(bitmapOf(11)), run10To12},
		// More than 4096 values in 2047, 2048 and 2055 runs: Java writes a
		// run container for 2047 runs only.
		3: {rbmBytes(runsOf3(0, 2047, 0, 2)), rbmBytes(runsOf3(0, 2047, 1, 2))},
		4: {rbmBytes(runsOf3(0, 2048, 0, 2)), rbmBytes(runsOf3(0, 2048, 1, 2))},
		5: {rbmBytes(runsOf3(3, 2055, 0, 2)), rbmBytes(runsOf3(3, 2055, 1, 2)), nil},
		// Two halves of one long run, a run and a bitmap container, nulls.
		6: {rbmBytes(runsOf3(1, 1, 0, 1)), rbmBytes(bitmapOf(1<<16 | 3))},
		7: {nil, rbmBytes(bitmapOf(1, 5, 70000)), nil},
		8: {rbmBytes(runsOf3(2, 3000, 0, 1)), rbmBytes(runsOf3(2, 3000, 0, 3))},
	}
	for k := 9; k < 60; k++ {
		var in rbmInputs
		for range 1 + rng.IntN(3) {
			b := jroaring.New()
			for range rng.IntN(6) {
				key := uint32(rng.IntN(4))
				switch rng.IntN(3) {
				case 0: // a range
					start := uint32(rng.IntN(60000))
					for v := start; v < start+uint32(rng.IntN(5000)); v++ {
						b.Add(key<<16 | v)
					}
				case 1: // scattered values
					for range rng.IntN(6000) {
						b.Add(key<<16 | uint32(rng.IntN(1<<16)))
					}
				default: // short runs
					for i := range uint32(rng.IntN(3000)) {
						b.Add(key<<16 | 3*i)
						b.Add(key<<16 | 3*i + 1)
					}
				}
			}
			if rng.IntN(8) == 0 {
				in = append(in, nil)
			} else {
				in = append(in, rbmBytes(b))
			}
		}
		cases[k] = in
	}
	return cases
}

// TestRbm32AggregationMergesToJavasBytes: an aggregation table with an rbm32
// column gets, per key, bitmaps in up to three commits (the cases where
// the Go library's container choice differs from Java's, and random ones).
// compactd's full compaction must leave exactly the bytes Java's own full
// compaction of a copy leaves, value by value.
func TestRbm32AggregationMergesToJavasBytes(t *testing.T) {
	j := interop.Java(t)
	rng := rand.New(rand.NewPCG(13, 6))
	cases := rbm32Cases(rng)
	var script []byte
	for k := range len(cases) {
		for c, v := range cases[k] {
			row := map[string]any{"k": k, "_commit": c + 1}
			if v != nil {
				row["v"] = base64.StdEncoding.EncodeToString(v)
			}
			line, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			script = append(append(script, line...), '\n')
		}
	}
	spec := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "k", Type: "INT NOT NULL"}, {Name: "v", Type: "BYTES"}},
		PrimaryKeys: []string{"k"},
		Bucket:      1,
		Options: map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "rbm32",
			"write-only": "true"},
	}
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	specFile, rowsFile := filepath.Join(dir, "spec.json"), filepath.Join(dir, "rows.jsonl")
	if err := writeFile(specFile, spec.JSON()); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(rowsFile, script); err != nil {
		t.Fatal(err)
	}
	f := flags(wh, "db.rbm")
	f["spec"], f["rows"] = specFile, rowsFile
	if res := batch(t, j, []interop.BatchRequest{{Verb: "create", Flags: f}}); res[0].Err != nil {
		t.Fatalf("Java create: %v", res[0].Err)
	}
	ref := filepath.Join(dir, "ref")
	copyDir(t, wh, ref)
	sum, err := compact.Run(context.Background(), openLocal(t, wh, "db.rbm"), compact.Options{Full: true})
	if err != nil {
		t.Fatalf("compactd compact --full: %v", err)
	}
	if sum.Snapshot == 0 {
		t.Fatal("compactd committed nothing")
	}
	res := batch(t, j, []interop.BatchRequest{
		{Verb: "compact", Flags: flags(ref, "db.rbm")},
		{Verb: "read", Flags: flags(ref, "db.rbm")},
		{Verb: "read", Flags: flags(wh, "db.rbm")},
	})
	if res[0].Err != nil {
		t.Fatalf("Java compact: %v", res[0].Err)
	}
	javaRows, ourRows := rowsOf(t, res[1]), rowsOf(t, res[2])
	if len(javaRows) != len(cases) || len(ourRows) != len(cases) {
		t.Fatalf("%d rows after Java's compaction, %d after compactd's, want %d", len(javaRows), len(ourRows), len(cases))
	}
	for i := range javaRows {
		jb, _ := javaRows[i]["v"].(string)
		ob, _ := ourRows[i]["v"].(string)
		k := javaRows[i]["k"]
		if fmt.Sprint(ourRows[i]["k"]) != fmt.Sprint(k) {
			t.Fatalf("row %d: key %v after compactd's compaction, %v after Java's", i, ourRows[i]["k"], k)
		}
		if jb != ob {
			jv, _ := base64.StdEncoding.DecodeString(jb)
			ov, _ := base64.StdEncoding.DecodeString(ob)
			t.Errorf("key %v: compactd merged to %d bytes %x..., Java to %d bytes %x...", k, len(ov), ov[:min(len(ov), 24)], len(jv), jv[:min(len(jv), 24)])
		}
	}
}
