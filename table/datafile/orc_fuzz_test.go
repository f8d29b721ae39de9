package datafile

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// FuzzReadORCRows mutates ORC files Java Paimon wrote (the oracle's small
// samples in internal/orc/testdata/java, one column of every Paimon type)
// and reads them as Paimon rows of their row type: the ORC-to-Paimon
// mapping (orcTypeFits, fromORC) must return errors on whatever the ORC
// reader decodes, never panic. The batch path (orcbatch.go) reads them
// too.
func FuzzReadORCRows(f *testing.F) {
	dir := "../../internal/orc/testdata/java"
	data, err := os.ReadFile(filepath.Join(dir, "fields.json"))
	if err != nil {
		f.Fatal(err)
	}
	var fields table.RowType
	if err := json.Unmarshal(data, &fields); err != nil {
		f.Fatal(err)
	}
	seeds, err := filepath.Glob(filepath.Join(dir, "*.orc"))
	if err != nil || len(seeds) < 5 {
		f.Fatalf("seeds: %v %v", seeds, err)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// The batch path reads the columns of types a batch holds.
	var flat table.RowType
	for _, fl := range fields {
		if _, err := NewCodec(table.RowType{fl}); err == nil {
			flat = append(flat, fl)
		}
	}
	codec, err := NewCodec(flat)
	if err != nil || len(flat) < 10 {
		f.Fatalf("batch codec of %d of %d columns: %v", len(flat), len(fields), err)
	}
	path := filepath.Join(f.TempDir(), "data-0.orc")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		readORCBatches(t, path, flat, codec)
		r, err := OpenRows(context.Background(), fileio.NewLocal(), path, fields, fields)
		if err != nil {
			return
		}
		defer r.Close()
		for {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.EOF) && err.Error() == "" {
					t.Fatal("empty error")
				}
				return
			}
		}
	})
}

// readORCBatches reads the file at path through the batch path
// (orc.StripeRows), the flat columns only: errors, never a panic.
func readORCBatches(t *testing.T, path string, flat table.RowType, codec *Codec) {
	r, err := openBatches(context.Background(), fileio.NewLocal(), path, flat, codec, -1, true)
	if err != nil {
		return
	}
	defer r.Close()
	b := codec.NewBatch()
	for {
		if err := r.Next(b, 1000); err != nil {
			if !errors.Is(err, io.EOF) && err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
	}
}
