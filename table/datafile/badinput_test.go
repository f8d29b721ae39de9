package datafile

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

func writeSmallFile(t *testing.T, dir string) (string, table.RowType) {
	t.Helper()
	fields := table.RowType{
		{ID: 0, Name: "id", Type: mustType(t, "BIGINT NOT NULL")},
		{ID: 1, Name: "s", Type: mustType(t, "STRING")},
		{ID: 2, Name: "arr", Type: table.DataType{Root: table.TypeArray, Nullable: true, Element: ptr(mustType(t, "INT"))}},
	}
	path := filepath.Join(dir, "data-good-0.parquet")
	w, err := NewRowWriter(context.Background(), fileio.NewLocal(), path, fields, map[string]string{"file.compression": "none"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if err := w.Write(table.Row{int64(i), strings.Repeat("v", i%50), []any{int32(i), nil}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, fields
}

// drain reads a file to the end and returns the first error that is not EOF.
func drain(path string, fields table.RowType) error {
	r, err := OpenRows(context.Background(), fileio.NewLocal(), path, fields, fields)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func TestBadInputGivesErrorsNamingTheFile(t *testing.T) {
	dir := t.TempDir()
	good, fields := writeSmallFile(t, dir)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func([]byte) []byte
	}{
		{"truncated to half", func(b []byte) []byte { return b[:len(b)/2] }},
		{"truncated footer", func(b []byte) []byte { return b[:len(b)-3] }},
		{"empty file", func(b []byte) []byte { return nil }},
		{"footer length too large", func(b []byte) []byte {
			b = append([]byte(nil), b...)
			b[len(b)-8], b[len(b)-7] = 0xff, 0xff
			return b
		}},
		{"garbage in the footer", func(b []byte) []byte {
			b = append([]byte(nil), b...)
			for i := len(b) - 60; i < len(b)-8; i++ {
				b[i] ^= 0x5a
			}
			return b
		}},
		{"garbage in the pages", func(b []byte) []byte {
			b = append([]byte(nil), b...)
			for i := 4; i < len(b)/2; i += 7 {
				b[i] ^= 0xa5
			}
			return b
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "data-bad-"+strings.ReplaceAll(c.name, " ", "_")+".parquet")
			if err := os.WriteFile(path, c.mutate(data), 0o644); err != nil {
				t.Fatal(err)
			}
			err := drain(path, fields)
			if err == nil {
				t.Fatal("corrupt file read without error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(dir, "data-missing-0.parquet")
		err := drain(path, fields)
		if !errors.Is(err, fileio.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a file named .orc that is not ORC is refused, naming it", func(t *testing.T) {
		path := filepath.Join(dir, "data-x-0.orc")
		if err := os.WriteFile(path, []byte("not an ORC file, padded to a few dozen bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenRows(context.Background(), fileio.NewLocal(), path, fields, fields)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "corrupt ORC file") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("null in a NOT NULL column is refused on write", func(t *testing.T) {
		w, err := NewRowWriter(context.Background(), fileio.NewLocal(), filepath.Join(dir, "data-nn-0.parquet"), fields, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		if err := w.Write(table.Row{nil, "x", nil}); err == nil {
			t.Fatal("null id accepted")
		}
	})
}

func TestCancelledContextStopsReading(t *testing.T) {
	path, fields := writeSmallFile(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	r, err := OpenRows(ctx, fileio.NewLocal(), path, fields, fields)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cancel()
	for {
		_, err := r.Next()
		if errors.Is(err, context.Canceled) {
			return
		}
		if err != nil {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	}
}

// TestRandomCorruptionNeverPanics flips random bytes of a compressed file
// with nested columns: every read ends in rows or an error naming the file.
func TestRandomCorruptionNeverPanics(t *testing.T) {
	dir := t.TempDir()
	fields := allTypesSchema(t)
	path := filepath.Join(dir, "data-src-0.parquet")
	w, err := NewRowWriter(context.Background(), fileio.NewLocal(), path, fields, map[string]string{"parquet.page.size": "4kb"})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 300 {
		row := make(table.Row, len(fields))
		for i, f := range fields {
			row[i] = randValue(r, f.Type)
		}
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for i := range 150 {
		b := append([]byte(nil), data...)
		for range 1 + r.IntN(4) {
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		}
		p := filepath.Join(dir, "data-mut-"+strconv.Itoa(i)+".parquet")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := drain(p, fields); err != nil && !strings.Contains(err.Error(), p) {
			t.Fatalf("mutation %d: error does not name the file: %v", i, err)
		}
	}
}
