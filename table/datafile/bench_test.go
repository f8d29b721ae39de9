package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

const benchRows = 1_000_000

func benchSchema(t testing.TB) Schema {
	return Schema{
		Fields: table.RowType{
			{ID: 0, Name: "id", Type: mustType(t, "BIGINT NOT NULL")},
			{ID: 1, Name: "name", Type: mustType(t, "STRING")},
			{ID: 2, Name: "qty", Type: mustType(t, "INT")},
			{ID: 3, Name: "price", Type: mustType(t, "DOUBLE")},
		},
		KeyNames: []string{"id"},
	}
}

func benchRecord(i int) table.KeyValue {
	v := table.Row{int64(i), fmt.Sprintf("name-%d", i%1000), int32(i % 77), float64(i) * 0.5}
	if i%3 == 0 {
		v[1] = nil
	}
	return table.KeyValue{Key: table.Row{int64(i)}, Seq: int64(i), Kind: table.RowKindInsert, Value: v}
}

func writeBenchFile(b *testing.B, path string, n int) { writeBenchFileWith(b, path, n, nil) }

func writeBenchFileWith(b *testing.B, path string, n int, opts map[string]string) {
	w, err := NewKeyValueWriter(context.Background(), fileio.NewLocal(), path, benchSchema(b), opts)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := w.Write(benchRecord(i)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWriteKeyValue writes 1M records (BIGINT key, a string with 1/3
// nulls, INT, DOUBLE) per iteration with the default zstd level 1.
func BenchmarkWriteKeyValue(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		writeBenchFile(b, filepath.Join(dir, fmt.Sprintf("data-w-%d.parquet", i)), benchRows)
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkWriteKeyValueORC is BenchmarkWriteKeyValue with file.format=orc
// (zstd level 1, Java's ORC defaults).
func BenchmarkWriteKeyValueORC(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		writeBenchFileWith(b, filepath.Join(dir, fmt.Sprintf("data-w-%d.orc", i)), benchRows, map[string]string{"file.format": "orc"})
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadKeyValueORC reads a 1M-record ORC file per iteration.
func BenchmarkReadKeyValueORC(b *testing.B) {
	path := filepath.Join(b.TempDir(), "data-r-0.orc")
	writeBenchFileWith(b, path, benchRows, map[string]string{"file.format": "orc"})
	s := benchSchema(b)
	b.ReportAllocs()
	for b.Loop() {
		r, err := OpenKeyValue(context.Background(), fileio.NewLocal(), path, s, s)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		r.Close()
		if n != benchRows {
			b.Fatalf("read %d rows", n)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadKeyValue reads a 1M-record file per iteration.
func BenchmarkReadKeyValue(b *testing.B) {
	path := filepath.Join(b.TempDir(), "data-r-0.parquet")
	writeBenchFile(b, path, benchRows)
	s := benchSchema(b)
	b.ReportAllocs()
	for b.Loop() {
		r, err := OpenKeyValue(context.Background(), fileio.NewLocal(), path, s, s)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		r.Close()
		if n != benchRows {
			b.Fatalf("read %d rows", n)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
