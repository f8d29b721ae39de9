package table_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

func newTableWithOptions(t *testing.T, options map[string]string) *table.Table {
	t.Helper()
	fields := table.RowType{
		{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
	}
	options["bucket"] = "1"
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, options, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(context.Background(), fileio.NewLocal(), t.TempDir(), "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestORCManifestTablesAreWrittenInORC: with manifest.format=orc every
// metadata file a commit writes (manifests, manifest lists) is ORC, in the
// compression manifest.compression or orc.compress names, and reads back.
func TestORCManifestTablesAreWrittenInORC(t *testing.T) {
	t.Parallel()
	for _, opts := range []map[string]string{
		{"manifest.format": "orc"},
		{"manifest.format": "orc", "manifest.compression": "lz4"},
		{"manifest.format": "orc", "orc.compress": "SNAPPY", "manifest.compression": "brotli"},
	} {
		tb := newTableWithOptions(t, opts)
		ctx := context.Background()
		if err := tb.Writable(); err != nil {
			t.Fatalf("%v: %v", opts, err)
		}
		w, err := write.NewWriter(ctx, tb, "writer")
		if err != nil {
			t.Fatal(err)
		}
		for i := int64(0); i < 3; i++ {
			if err := w.Write(table.RowKindInsert, table.Row{i, i}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Commit(ctx); err != nil {
				t.Fatalf("%v: %v", opts, err)
			}
		}
		names, err := filepath.Glob(filepath.Join(tb.Path(), "manifest", "*"))
		if err != nil || len(names) < 6 {
			t.Fatalf("%v: manifests %v %v", opts, names, err)
		}
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(data, []byte("ORC")) {
				t.Errorf("%v: %s is not ORC", opts, filepath.Base(n))
			}
		}
		s, err := tb.LatestSnapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := tb.FileSet(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if n := fs.NumFiles(); n != 3 {
			t.Errorf("%v: %d live files, want 3", opts, n)
		}
	}
}

// TestMetadataCompactdCannotWriteAsJavaWouldIsRefused: a table whose
// metadata Java writes in a codec compactd has no encoder for opens
// read-only, naming the option and the schema file, and a commit is
// refused before anything is written.
func TestMetadataCompactdCannotWriteAsJavaWouldIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		opts map[string]string
		key  string
	}{
		{map[string]string{"manifest.compression": "bzip2"}, "manifest.compression=bzip2"},
		{map[string]string{"avro.codec": "xz"}, "avro.codec=xz"},
		{map[string]string{"manifest.format": "orc", "manifest.compression": "brotli"}, "manifest.compression=brotli"},
		{map[string]string{"manifest.format": "orc", "orc.compress": "LZO"}, "orc.compress"},
		{map[string]string{"manifest.format": "orc", "orc.row.index.stride": "10"}, "orc.row.index.stride"},
	} {
		tb := newTableWithOptions(t, c.opts)
		err := tb.Writable()
		if !errors.Is(err, table.ErrReadOnly) || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), "schema-0") {
			t.Errorf("%v: Writable() = %v", c.opts, err)
			continue
		}
		before, _ := filepath.Glob(filepath.Join(tb.Path(), "*", "*"))
		w, err := write.NewWriter(context.Background(), tb, "writer")
		if err == nil {
			if err = w.Write(table.RowKindInsert, table.Row{int64(1), int64(1)}); err == nil {
				_, err = w.Commit(context.Background())
			}
		}
		if !errors.Is(err, table.ErrReadOnly) {
			t.Errorf("%v: write: %v, want the refusal", c.opts, err)
		}
		after, _ := filepath.Glob(filepath.Join(tb.Path(), "*", "*"))
		if len(after) != len(before) {
			t.Errorf("%v: files %v became %v", c.opts, before, after)
		}
	}
}

// TestORCWriterOptionsFollowPaimon: Paimon's OrcFileFormat passes every
// orc.* option to Java's writer, takes orc.compress over the format's
// compression, and sets file.block-size as the stripe size last, so it
// wins over orc.stripe.size.
func TestORCWriterOptionsFollowPaimon(t *testing.T) {
	raw := map[string]string{"file.block-size": "8mb", "orc.stripe.size": "1048576", "ORC.compress": "lz4", "manifest.compression": "snappy", "file.compression.zstd-level": "3"}
	o, err := table.ParseOptions(raw)
	if err != nil {
		t.Fatal(err)
	}
	w, err := table.ORCWriterOptions(raw, o, table.OptManifestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if w.StripeSize != 8<<20 || w.Compression != orc.CompressionLZ4 || w.CompressionLevel != 3 || !w.FitBlockSize {
		t.Fatalf("%+v", w)
	}
	delete(raw, "ORC.compress")
	if w, err = table.ORCWriterOptions(raw, o, table.OptManifestCompression); err != nil || w.Compression != orc.CompressionSnappy {
		t.Fatalf("%+v %v", w, err)
	}
}
