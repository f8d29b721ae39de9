package datafile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
)

func guardSchema(t *testing.T) Schema {
	return Schema{Fields: table.RowType{
		{ID: 0, Name: "k", Type: mustType(t, "INT NOT NULL")},
		{ID: 1, Name: "t", Type: mustType(t, "TINYINT")},
		{ID: 2, Name: "s", Type: mustType(t, "STRING")},
	}, KeyNames: []string{"k"}}
}

// writeRawKV writes rows of the KeyValue layout with the append writer, so
// _VALUE_KIND and narrow integers can hold what no KeyValueWriter writes.
func writeRawKV(t *testing.T, path string, s Schema, rows []table.Row) {
	t.Helper()
	fields, err := s.KeyValueFields()
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewRowWriter(context.Background(), fileio.NewLocal(), path, fields, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBatchReaderRefusesWhatTheRowReaderRefuses(t *testing.T) {
	s := guardSchema(t)
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "data-bad-kind-0.parquet")
	writeRawKV(t, path, s, []table.Row{
		{int32(1), int64(1), int8(0), int32(1), int8(1), "a"},
		{int32(2), int64(2), int8(9), int32(2), int8(2), "b"},
	})
	ctx := context.Background()
	rr, err := OpenKeyValue(ctx, fileio.NewLocal(), path, s, s)
	if err != nil {
		t.Fatal(err)
	}
	var rowErr error
	for rowErr == nil {
		_, rowErr = rr.Next()
	}
	rr.Close()
	if !strings.Contains(rowErr.Error(), "invalid _VALUE_KIND") {
		t.Fatalf("row reader: %v, want an invalid _VALUE_KIND error", rowErr)
	}
	br, err := OpenKeyValueBatches(ctx, fileio.NewLocal(), path, s, s, codec)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	err = br.Next(codec.NewBatch(), 16)
	if err == nil || !strings.Contains(err.Error(), "invalid _VALUE_KIND 9") || !strings.Contains(err.Error(), path) {
		t.Fatalf("batch reader: %v, want an invalid _VALUE_KIND 9 error naming %s", err, path)
	}
}

func TestBatchReaderWrapsNarrowIntegersLikeTheRowReader(t *testing.T) {
	s := guardSchema(t)
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	// A TINYINT column (INT32 annotated INT(8)) holding 300, as a foreign or
	// corrupt writer could: the row path reads int8(300) = 44.
	kvFields, _ := s.KeyValueFields()
	layout, err := parquetSchema(kvFields)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "data-wide-tinyint-0.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	pw := parquet.NewWriter(f, layout.schema)
	row := parquet.Row{
		parquet.Int32Value(1).Level(0, 0, 0), parquet.Int64Value(1).Level(0, 0, 1), parquet.Int32Value(0).Level(0, 0, 2),
		parquet.Int32Value(1).Level(0, 0, 3), parquet.Int32Value(300).Level(0, 1, 4), parquet.ByteArrayValue([]byte("a")).Level(0, 1, 5),
	}
	if _, err := pw.WriteRows([]parquet.Row{row}); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rr, err := OpenKeyValue(ctx, fileio.NewLocal(), path, s, s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rr.Next()
	rr.Close()
	if err != nil {
		t.Fatal(err)
	}
	br, err := OpenKeyValueBatches(ctx, fileio.NewLocal(), path, s, s, codec)
	if err != nil {
		t.Fatalf("the file's layout is the schema's (INT32 leaf): %v", err)
	}
	defer br.Close()
	b := codec.NewBatch()
	if err := br.Next(b, 4); err != nil {
		t.Fatal(err)
	}
	got, err := codec.Record(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Value[1] != want.Value[1] || want.Value[1] != int8(44) {
		t.Fatalf("TINYINT read as %v by batches and %v by rows, want 44 both", got.Value[1], want.Value[1])
	}
	// The batch value is what a compaction copies to its output as is.
	if raw := b.Cols[4].I32[0]; raw != 44 {
		t.Fatalf("batch holds %d for the TINYINT, want it wrapped to 44", raw)
	}
}

func TestWriteBatchRefusesABatchOfAnotherLayout(t *testing.T) {
	s := guardSchema(t)
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	good := codec.NewBatch()
	if err := codec.Append(good, table.KeyValue{Key: table.Row{int32(1)}, Seq: 1, Value: table.Row{int32(1), int8(1), "x"}}); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(b *Batch){
		"a column of another physical type": func(b *Batch) {
			b.Cols[5] = newVec(parquet.Int64, true)
			b.Cols[5].appendZero(false)
		},
		"a NOT NULL column where the file's is nullable": func(b *Batch) {
			b.Cols[4].Null = nil
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			b := &Batch{N: good.N, Cols: append([]Vec(nil), good.Cols...)}
			mutate(b)
			w, err := NewKeyValueWriter(context.Background(), fileio.NewLocal(), filepath.Join(t.TempDir(), "data-x-0.parquet"), s, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			if err := w.WriteBatch(b, 0, b.N); err == nil || !strings.Contains(err.Error(), "batch column") {
				t.Fatalf("WriteBatch = %v, want a layout error", err)
			}
		})
	}
}

// A batch of large values stops at the byte budget, not at the row count
// asked for: a merge holds one batch per sorted run.
func TestBatchReaderBoundsBatchesByBytes(t *testing.T) {
	s := guardSchema(t)
	codec, err := NewKVCodec(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "data-big-values-0.parquet")
	ctx := context.Background()
	w, err := NewKeyValueWriter(ctx, fileio.NewLocal(), path, s, map[string]string{"file.compression": "none"})
	if err != nil {
		t.Fatal(err)
	}
	const rows, size = 600, 64 << 10
	val := make([]byte, size)
	for i := range rows {
		for j := range val {
			val[j] = byte('a' + (i+j)%26)
		}
		kv := table.KeyValue{Key: table.Row{int32(i)}, Seq: int64(i), Value: table.Row{int32(i), int8(1), string(val)}}
		if err := w.Write(kv); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenKeyValueBatches(ctx, fileio.NewLocal(), path, s, s, codec)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := codec.NewBatch()
	total, batches := 0, 0
	for {
		err := r.Next(b, 1024)
		if err != nil {
			break
		}
		batches++
		if b.ByteSize() > batchByteBudget+size {
			t.Fatalf("batch %d holds %d value bytes in %d rows, budget %d", batches, b.ByteSize(), b.N, batchByteBudget)
		}
		for i := range b.N {
			got, err := codec.Record(b, i)
			if err != nil {
				t.Fatal(err)
			}
			if got.Key[0] != int32(total+i) || len(got.Value[2].(string)) != size {
				t.Fatalf("row %d: key %v, value of %d bytes", total+i, got.Key[0], len(got.Value[2].(string)))
			}
		}
		total += b.N
	}
	if total != rows || batches < 2 {
		t.Fatalf("read %d rows in %d batches, want %d rows in several", total, batches, rows)
	}
}
