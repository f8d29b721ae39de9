package datafile

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/avro"
	"github.com/compactd/compactd/table"
)

type avroFixtureFile struct {
	path   string
	schema testSchema
}

// avroFixtureDataFiles lists every Avro data file of the fixtures with the
// newest schema of its table.
func avroFixtureDataFiles(tb testing.TB) []avroFixtureFile {
	dbs, _ := filepath.Glob(filepath.Join(fixtureRoot, "avro", "*.db", "*", "schema"))
	var out []avroFixtureFile
	for _, sd := range dbs {
		names, _ := filepath.Glob(filepath.Join(sd, "schema-*"))
		var schemas []testSchema
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				tb.Fatal(err)
			}
			var s testSchema
			if err := json.Unmarshal(b, &s); err != nil {
				tb.Fatalf("%s: %v", n, err)
			}
			schemas = append(schemas, s)
		}
		sort.Slice(schemas, func(i, j int) bool { return schemas[i].ID < schemas[j].ID })
		filepath.Walk(filepath.Dir(sd), func(p string, info os.FileInfo, err error) error {
			if err == nil && filepath.Ext(p) == ".avro" {
				out = append(out, avroFixtureFile{p, schemas[len(schemas)-1]})
			}
			return nil
		})
	}
	if len(out) < 10 {
		tb.Fatalf("found only %d Avro fixture data files", len(out))
	}
	return out
}

// readAvroFixture reads every record of one fixture data file.
func readAvroFixture(fio fileio.FileIO, f avroFixtureFile) (int, error) {
	ctx := context.Background()
	n := 0
	if len(f.schema.PrimaryKeys) > 0 {
		r, err := OpenKeyValue(ctx, fio, f.path, f.schema.schema(), f.schema.schema())
		if err != nil {
			return 0, err
		}
		defer r.Close()
		for {
			if _, err := r.Next(); errors.Is(err, io.EOF) {
				return n, nil
			} else if err != nil {
				return n, err
			}
			n++
		}
	}
	r, err := OpenRows(ctx, fio, f.path, f.schema.Fields, f.schema.Fields)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	for {
		if _, err := r.Next(); errors.Is(err, io.EOF) {
			return n, nil
		} else if err != nil {
			return n, err
		}
		n++
	}
}

// BenchmarkReadAvroFixtureDataFiles reads every Avro data file of the
// fixtures (the measurement for the Avro stack of data files).
func BenchmarkReadAvroFixtureDataFiles(b *testing.B) {
	files := avroFixtureDataFiles(b)
	fio := fileio.NewLocal()
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			if _, err := readAvroFixture(fio, f); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// A data file whose block header claims 2 GiB (or 2^62 bytes) must fail
// with an error naming the file, without allocating what it claims:
// compaction input is read while other jobs run.
func TestAvroDataFileHugeBlockIsBounded(t *testing.T) {
	files := avroFixtureDataFiles(t)
	var src avroFixtureFile
	for _, f := range files {
		if len(f.schema.PrimaryKeys) == 0 {
			src = f
			break
		}
	}
	good, err := os.ReadFile(src.path)
	if err != nil {
		t.Fatal(err)
	}
	sync := good[len(good)-16:]
	hdrEnd := bytes.Index(good[4:], sync) + 4 + 16
	zz := func(v int64) []byte { return binary.AppendUvarint(nil, uint64(v<<1)^uint64(v>>63)) }
	for _, size := range []int64{1 << 31, 1 << 62} {
		data := append([]byte(nil), good[:hdrEnd]...)
		data = append(data, zz(1)...)
		data = append(data, zz(size)...)
		data = append(data, make([]byte, 64)...)
		data = append(data, sync...)
		p := filepath.Join(t.TempDir(), "data-huge-0.avro")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := readAvroFixture(fileio.NewLocal(), avroFixtureFile{p, src.schema})
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(p)) {
			t.Errorf("block of %d bytes: err %v, want an error naming %s", size, err, p)
		}
		if alloc > 64<<20 {
			t.Errorf("block of %d bytes: %d bytes allocated", size, alloc)
		}
	}
}

// A row holding a 3 MiB string reads (hamba/avro's default
// MaxByteSliceSize refused strings over 1 MiB); the file comes from
// internal/avro's writer with Paimon's schema mapping.
func TestAvroDataFileWithLargeString(t *testing.T) {
	schema := `{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[` +
		`{"name":"id","type":"int"},{"name":"s","type":["null","string"],"default":null}]}`
	big := strings.Repeat("x", 3<<20)
	data, err := avro.WriteFile(schema, "zstandard", 2, func(buf []byte, i int) ([]byte, error) {
		buf = avro.AppendInt(buf, int32(i))
		if i == 0 {
			return avro.AppendLong(buf, 0), nil
		}
		return avro.AppendString(avro.AppendLong(buf, 1), big), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "data-big-0.avro")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fields := table.RowType{
		{ID: 0, Name: "id", Type: mustType(t, "INT NOT NULL")},
		{ID: 1, Name: "s", Type: mustType(t, "STRING")},
	}
	rows := readAllRows(t, p, fields, fields)
	if len(rows) != 2 || rows[0][1] != nil || rows[1][0] != int32(1) || rows[1][1] != big {
		t.Errorf("read %d rows, want [0 <nil>] and [1 <3 MiB string>]", len(rows))
	}
}
