package datafile

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// OpenKeyBatches reads the keys OpenKeyValue reads, in file order, and
// refuses (ErrNoBatchPath) files whose key columns are not compactd's
// layout for the read schema, so callers fall back to the row reader.
func TestKeyBatchesReadTheKeysTheRowReaderReads(t *testing.T) {
	ctx := context.Background()
	s := batchTestSchema(t)
	recs := batchTestRecords(t, rand.New(rand.NewPCG(3, 3)), s, 3000)
	path := filepath.Join(t.TempDir(), "data-0.parquet")
	writeKVRows(t, path, s, map[string]string{"parquet.block.size": "65536"}, recs)

	codec, err := NewKeyCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	br, err := OpenKeyBatches(ctx, fileio.NewLocal(), path, s, s, codec)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	var got []table.Row
	b := codec.NewBatch()
	for {
		err := br.Next(b, 100)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Cols) != len(s.KeyNames) {
			t.Fatalf("batch has %d columns, want the %d key columns", len(b.Cols), len(s.KeyNames))
		}
		for i := range b.N {
			row, err := codec.RowAt(b, i)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, row)
		}
	}
	if len(got) != len(recs) {
		t.Fatalf("%d keys, want %d", len(got), len(recs))
	}
	for i, kv := range recs {
		if !flatEqual(got[i], kv.Key) {
			t.Fatalf("key %d = %v, want %v", i, got[i], kv.Key)
		}
	}

	// A read schema whose key differs (here a renamed key column) is not
	// compactd's layout for the file: refused before reading.
	other := Schema{Fields: slices.Clone(s.Fields), KeyNames: s.KeyNames}
	for i := range other.Fields {
		if other.Fields[i].Name == "cd0" {
			other.Fields[i].Name = "renamed"
		}
	}
	other.KeyNames = []string{"renamed", "cn0", "cq0"}
	oc, err := NewKeyCodec(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenKeyBatches(ctx, fileio.NewLocal(), path, s, other, oc); !errors.Is(err, ErrNoBatchPath) {
		t.Errorf("another key schema: %v, want ErrNoBatchPath", err)
	}
}
