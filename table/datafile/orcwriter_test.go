package datafile

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/table"
)

// TestORCRoundTripEveryTypeAppendFile writes every type Paimon maps to
// ORC (nested ones, MULTISET, BINARY(n) as Paimon's refineDataType does)
// into an ORC data file of several stripes and row groups, reads it back
// through the data file reader and checks the value statistics and the
// paimon.id attributes Java's OrcTypeUtil sets.
func TestORCRoundTripEveryTypeAppendFile(t *testing.T) {
	t.Parallel()
	fields := allTypesSchema(t)
	r := rand.New(rand.NewPCG(3, 4))
	var rows []table.Row
	for range 3000 {
		row := make(table.Row, len(fields))
		for i, f := range fields {
			row[i] = randValue(r, f.Type)
		}
		rows = append(rows, row)
	}
	opts := map[string]string{"file.format": "orc", "orc.stripe.size": "65536", "orc.row.index.stride": "1000", "file.compression": "lz4"}
	path := filepath.Join(t.TempDir(), "data-x-0.orc")
	ctx := context.Background()
	w, err := NewRowWriter(ctx, fileio.NewLocal(), path, fields, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	info, err := fileio.NewLocal().Stat(ctx, path)
	if err != nil || info.Size != st.FileSize || st.RowCount != int64(len(rows)) {
		t.Fatalf("file size %d, stats say %d, rows %d (%v)", info.Size, st.FileSize, st.RowCount, err)
	}
	got := readAllRows(t, path, fields, fields)
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
	}
	for i := range rows {
		for j := range fields {
			if !valuesEqual(rows[i][j], got[i][j]) {
				t.Fatalf("row %d column %s (%s): wrote %#v, read %#v", i, fields[j].Name, fields[j].Type, rows[i][j], got[i][j])
			}
		}
	}
	checkStats(t, fields, rows, st.ValueStats)
	f, err := fileio.NewLocal().Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	of, err := orc.Open(f, f.Size())
	if err != nil {
		t.Fatal(err)
	}
	if len(of.Stripes) < 2 || of.Compression != orc.CompressionLZ4 || of.RowIndexStep != 1000 {
		t.Fatalf("%d stripes, %s, stride %d", len(of.Stripes), of.Compression, of.RowIndexStep)
	}
	root := of.Types[0]
	for k, id := range root.Subtypes {
		if want := fields[k].ID; of.Types[id].Attributes["paimon.id"] != itoa(want) {
			t.Fatalf("column %s: paimon.id %q, want %d", fields[k].Name, of.Types[id].Attributes["paimon.id"], want)
		}
	}
	// An array's element: STRUCTURED_TYPE_FIELD_ID_BASE + id * 1024 + depth.
	arr := of.Types[root.Subtypes[25]]
	if got, want := of.Types[arr.Subtypes[0]].Attributes["paimon.id"], itoa(536870911+25*1024+1); got != want {
		t.Fatalf("array element paimon.id %s, want %s", got, want)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestORCKeyValueFile writes a KeyValue ORC file and reads its records
// back with the key statistics.
func TestORCKeyValueFile(t *testing.T) {
	t.Parallel()
	fields := table.RowType{
		{ID: 0, Name: "id", Type: mustType(t, "BIGINT NOT NULL")},
		{ID: 1, Name: "name", Type: mustType(t, "STRING")},
	}
	schema := Schema{Fields: fields, KeyNames: []string{"id"}}
	path := filepath.Join(t.TempDir(), "data-kv-0.orc")
	w, err := NewKeyValueWriter(context.Background(), fileio.NewLocal(), path, schema, map[string]string{"file.format": "orc"})
	if err != nil {
		t.Fatal(err)
	}
	var want []table.KeyValue
	for i := range 500 {
		kv := table.KeyValue{Key: table.Row{int64(i)}, Seq: int64(i + 10), Kind: table.RowKind(i % 4), Value: table.Row{int64(i), nil}}
		if i%2 == 0 {
			kv.Value[1] = "n"
		}
		want = append(want, kv)
		if err := w.Write(kv); err != nil {
			t.Fatal(err)
		}
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := readAllKV(t, path, schema, schema); !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs; first read %+v", got[0])
	}
	if st.MinSeq != 10 || st.MaxSeq != 509 || st.DeleteRowCount != 250 || st.KeyStats.Max[0] != int64(499) {
		t.Fatalf("stats %+v", st)
	}
}

// TestORCChunkSizeFitsTheColumnCountAsJava: Java's ORC writer shrinks the
// compression chunk with the column count (64 MiB stripes / (20 x 41
// columns) -> 128 KiB, as in the 40-column manifests Java 1.4 writes)
// unless orc.buffer.size.enforce is set.
func TestORCChunkSizeFitsTheColumnCountAsJava(t *testing.T) {
	t.Parallel()
	var fields table.RowType
	for i := range 40 {
		fields = append(fields, table.DataField{ID: i, Name: "c" + strconv.Itoa(i), Type: table.DataType{Root: table.TypeBigInt, Nullable: true}})
	}
	for _, c := range []struct {
		opts  map[string]string
		chunk uint64
	}{
		{map[string]string{}, 128 << 10},
		{map[string]string{"orc.buffer.size.enforce": "true"}, 256 << 10},
		{map[string]string{"orc.stripe.size": "1048576"}, 4 << 10},
	} {
		c.opts["file.format"] = "orc"
		path := filepath.Join(t.TempDir(), "data-x-0.orc")
		ctx := context.Background()
		w, err := NewRowWriter(ctx, fileio.NewLocal(), path, fields, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		row := make(table.Row, len(fields))
		for i := range row {
			row[i] = int64(i)
		}
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := fileio.NewLocal().Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		of, err := orc.Open(f, f.Size())
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if of.BlockSize != c.chunk {
			t.Errorf("%v: chunk size %d, want %d", c.opts, of.BlockSize, c.chunk)
		}
	}
}
