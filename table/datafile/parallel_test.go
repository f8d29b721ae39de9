package datafile

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
)

// Columns encoded on several goroutines give the very bytes one goroutine
// writes: each column's pages depend only on its own values.
func TestParallelColumnEncodingWritesTheSameBytes(t *testing.T) {
	// Not parallel: it sets encodeWorkers, which every writer of the
	// package reads.
	fields := table.RowType{{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}}}
	types := []table.DataType{
		{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true},
		{Root: table.TypeInt, Nullable: true},
		{Root: table.TypeDouble, Nullable: true},
		{Root: table.TypeDecimal, Precision: 10, Scale: 2, Nullable: true},
	}
	for i := 1; i <= 16; i++ {
		fields = append(fields, table.DataField{ID: i, Name: fmt.Sprintf("c%d", i), Type: types[i%len(types)]})
	}
	s := Schema{Fields: fields, KeyNames: []string{"k"}}
	r := rand.New(rand.NewPCG(3, 4))
	var recs []table.KeyValue
	for k := range 20_000 {
		v := table.Row{int64(k)}
		for i := 1; i <= 16; i++ {
			switch {
			case r.IntN(10) == 0:
				v = append(v, nil)
			case i%4 == 0:
				v = append(v, fmt.Sprintf("v%d", r.IntN(500)))
			case i%4 == 1:
				v = append(v, int32(r.IntN(1000)))
			case i%4 == 2:
				v = append(v, r.Float64())
			default:
				v = append(v, table.Decimal{Unscaled: big.NewInt(int64(r.IntN(1_000_000))), Precision: 10, Scale: 2})
			}
		}
		recs = append(recs, table.KeyValue{Key: table.Row{int64(k)}, Seq: int64(k), Value: v})
	}
	const batchRows = 1024
	if batchRows < minParallelRows || len(fields)+3 < 2*minColumnsPerWorker {
		t.Fatal("the batches below would not reach the parallel path")
	}
	write := func(workers int) []byte {
		saved := encodeWorkers
		encodeWorkers = workers
		defer func() { encodeWorkers = saved }()
		path := filepath.Join(t.TempDir(), "data.parquet")
		codec, err := NewKVCodec(s)
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewKeyValueWriter(context.Background(), fileio.NewLocal(), path, s, map[string]string{"page-size": "4 kb"})
		if err != nil {
			t.Fatal(err)
		}
		b := codec.NewBatch()
		// Whole batches of batchRows rows: every one takes the parallel
		// path when workers > 1 (the last, shorter one need not).
		for i := 0; i < len(recs); i += batchRows {
			b.Reset()
			for _, kv := range recs[i:min(i+batchRows, len(recs))] {
				if err := codec.Append(b, kv); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.WriteBatch(b, 0, b.N); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		out, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	serial, parallel := write(1), write(4)
	if !bytes.Equal(serial, parallel) {
		t.Fatalf("files differ: serial %d bytes, parallel %d bytes", len(serial), len(parallel))
	}
}

// Parallel workers take byte-array columns first, then the 8- and 12-byte
// kinds, then the rest, each group in file order: the last columns left
// when a worker finishes are the cheap ones.
func TestEncodeOrderTakesTheCostliestKindsFirst(t *testing.T) {
	kinds := []parquet.Kind{
		parquet.Int64, parquet.Int32, parquet.ByteArray, parquet.Boolean,
		parquet.Double, parquet.FixedLenByteArray, parquet.Int96, parquet.ByteArray,
	}
	want := []int{2, 5, 7, 0, 4, 6, 1, 3}
	if got := encodeOrder(kinds); !slices.Equal(got, want) {
		t.Fatalf("encode order %v, want %v", got, want)
	}
}
