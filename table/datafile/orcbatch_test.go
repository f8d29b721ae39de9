package datafile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/table"
)

// TestORCBatchesEqualRowPath: batches read from a flat ORC file of every
// atomic type, with nulls, over several stripes, are exactly the batches
// the row path gives for the same rows (Codec.AppendRow of OpenRows), so
// merging ORC input on the batch path writes the same output. Stripes are
// read in chunks (orc.StripeRows) of the default size, and of 333 rows in
// one stripe of all rows, so chunks end inside runs, row groups and
// batches.
func TestORCBatchesEqualRowPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		stripeSize string
		chunk      int
	}{{"32768", orcChunkRows}, {"67108864", 333}} {
		t.Run(c.stripeSize, func(t *testing.T) {
			t.Parallel()
			testORCBatchesEqualRowPath(t, c.stripeSize, c.chunk)
		})
	}
}

func testORCBatchesEqualRowPath(t *testing.T, stripeSize string, chunk int) {
	var fields table.RowType
	for _, f := range allTypesSchema(t) {
		switch f.Type.Root {
		case table.TypeArray, table.TypeMap, table.TypeMultiset, table.TypeRow:
			continue
		}
		fields = append(fields, f)
	}
	r := rand.New(rand.NewPCG(5, 6))
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data-b-0.orc")
	w, err := NewRowWriter(ctx, fileio.NewLocal(), path, fields, map[string]string{"file.format": "orc", "orc.stripe.size": stripeSize, "orc.row.index.stride": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	for range 4000 {
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
	codec, err := NewCodec(fields)
	if err != nil {
		t.Fatal(err)
	}
	br, err := OpenRowBatches(ctx, fileio.NewLocal(), path, fields, fields, codec)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	if br.orc == nil {
		t.Fatal("ORC file not read on the ORC batch path")
	}
	br.orc.chunk = chunk
	if stripes := len(br.orc.of.Stripes); (chunk < orcChunkRows) != (stripes == 1) {
		t.Fatalf("%d stripes of %d rows, chunks of %d", stripes, br.orc.of.NumRows, chunk)
	}
	rows := readAllRows(t, path, fields, fields)
	got, want := codec.NewBatch(), codec.NewBatch()
	n, batches := 0, 0
	for {
		err := br.Next(got, 700)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want.Reset()
		for _, row := range rows[n : n+got.N] {
			if err := codec.AppendRow(want, row); err != nil {
				t.Fatal(err)
			}
		}
		for c := range fields {
			if !reflect.DeepEqual(got.Cols[c], want.Cols[c]) {
				t.Fatalf("rows %d..%d column %s (%s): batch path %+v, row path %+v", n, n+got.N, fields[c].Name, fields[c].Type, got.Cols[c], want.Cols[c])
			}
		}
		n += got.N
		batches++
	}
	if n != len(rows) || batches < 7 {
		t.Fatalf("read %d rows in %d batches, file has %d", n, batches, len(rows))
	}
}

// TestORCKeyValueBatches reads a KeyValue ORC file (with an int64 DECIMAL
// and nulls) as batches holding the records the row path reads.
func TestORCKeyValueBatches(t *testing.T) {
	t.Parallel()
	fields := table.RowType{
		{ID: 0, Name: "id", Type: mustType(t, "BIGINT NOT NULL")},
		{ID: 1, Name: "name", Type: mustType(t, "STRING")},
		{ID: 2, Name: "d", Type: mustType(t, "DECIMAL(12, 3)")},
	}
	schema := Schema{Fields: fields, KeyNames: []string{"id"}}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data-kv-0.orc")
	w, err := NewKeyValueWriter(ctx, fileio.NewLocal(), path, schema, map[string]string{"file.format": "orc"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		kv := table.KeyValue{Key: table.Row{int64(i)}, Seq: int64(i + 10), Kind: table.RowKind(i % 4), Value: table.Row{int64(i), nil, nil}}
		if i%3 == 0 {
			kv.Value[1] = "n"
			kv.Value[2] = table.Decimal{Unscaled: big.NewInt(int64(i*1000 - 77777)), Precision: 12, Scale: 3}
		}
		if err := w.Write(kv); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	codec, err := NewKVCodec(schema)
	if err != nil {
		t.Fatal(err)
	}
	br, err := OpenKeyValueBatches(ctx, fileio.NewLocal(), path, schema, schema, codec)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	want := readAllKV(t, path, schema, schema)
	b := codec.NewBatch()
	n := 0
	for {
		err := br.Next(b, 1024)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.N {
			kv, err := codec.Record(b, i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(kv, want[n]) {
				t.Fatalf("record %d: batch path %+v, row path %+v", n, kv, want[n])
			}
			n++
		}
	}
	if n != len(want) {
		t.Fatalf("read %d records, want %d", n, len(want))
	}
}

// TestORCWriteBatchSameBytes: a file written from batches (every atomic
// type, nulls, several stripes and row groups) is byte for byte the file
// the row path writes for the same rows, with the same statistics.
func TestORCWriteBatchSameBytes(t *testing.T) {
	t.Parallel()
	var fields table.RowType
	for _, f := range allTypesSchema(t) {
		switch f.Type.Root {
		case table.TypeArray, table.TypeMap, table.TypeMultiset, table.TypeRow:
			continue
		}
		fields = append(fields, f)
	}
	r := rand.New(rand.NewPCG(7, 8))
	codec, err := NewCodec(fields)
	if err != nil {
		t.Fatal(err)
	}
	var rows []table.Row
	b := codec.NewBatch()
	for range 3000 {
		row := make(table.Row, len(fields))
		for i, f := range fields {
			row[i] = randValue(r, f.Type)
		}
		rows = append(rows, row)
		if err := codec.AppendRow(b, row); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string, batches bool, stripe string) ([]byte, Stats) {
		opts := map[string]string{"file.format": "orc", "orc.stripe.size": stripe, "orc.row.index.stride": "1000", "file.compression": "zstd"}
		path := filepath.Join(dir, name)
		w, err := NewRowWriter(ctx, fileio.NewLocal(), path, fields, opts)
		if err != nil {
			t.Fatal(err)
		}
		if batches {
			for from := 0; from < b.N; from += 700 {
				if err := w.WriteBatch(b, from, min(from+700, b.N)); err != nil {
					t.Fatal(err)
				}
			}
		} else {
			for _, row := range rows {
				if err := w.Write(row); err != nil {
					t.Fatal(err)
				}
			}
		}
		st, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data, st.ValueStats
	}
	// One stripe, three row groups (runs end at the groups' ends): the
	// same bytes.
	rowBytes, rowStats := write("data-r-0.orc", false, "67108864")
	batchBytes, batchStats := write("data-b-0.orc", true, "67108864")
	if !bytes.Equal(rowBytes, batchBytes) {
		t.Fatalf("batch-written file (%d bytes) differs from the row-written one (%d bytes)", len(batchBytes), len(rowBytes))
	}
	if !reflect.DeepEqual(rowStats, batchStats) {
		t.Fatalf("statistics differ: batches %+v, rows %+v", batchStats, rowStats)
	}
	// Small stripes: the batch path checks the stripe size per run, not
	// per row, so stripes may end elsewhere; the rows and statistics are
	// the same, and there are still several stripes.
	rowBytes, rowStats = write("data-r-1.orc", false, "65536")
	batchBytes, batchStats = write("data-b-1.orc", true, "65536")
	if !reflect.DeepEqual(rowStats, batchStats) {
		t.Fatalf("small stripes: statistics differ: batches %+v, rows %+v", batchStats, rowStats)
	}
	got := readAllRows(t, filepath.Join(dir, "data-b-1.orc"), fields, fields)
	if want := readAllRows(t, filepath.Join(dir, "data-r-1.orc"), fields, fields); !reflect.DeepEqual(got, want) {
		t.Fatalf("small stripes: the batch-written file reads %d rows unlike the row-written one's %d", len(got), len(want))
	}
	f, err := orc.Open(bytes.NewReader(batchBytes), int64(len(batchBytes)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Stripes) < 3 {
		t.Fatalf("small stripes: the batch-written file has %d stripes (row-written: %d bytes)", len(f.Stripes), len(rowBytes))
	}
}
