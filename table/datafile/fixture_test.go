package datafile

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/cast"
	"github.com/parquet-go/parquet-go"
)

const fixtureRoot = "../../../shared/fixtures/paimon-cpp"

// testSchema is the minimal part of a schema file the tests need.
type testSchema struct {
	ID            int               `json:"id"`
	Fields        table.RowType     `json:"fields"`
	PartitionKeys []string          `json:"partitionKeys"`
	PrimaryKeys   []string          `json:"primaryKeys"`
	Options       map[string]string `json:"options"`
}

func (s testSchema) schema() Schema {
	out := Schema{Fields: s.Fields}
	if len(s.PrimaryKeys) > 0 {
		out.KeyNames = TrimmedPrimaryKeys(s.PrimaryKeys, s.PartitionKeys)
	}
	return out
}

func loadSchemas(t *testing.T, tableDir string) []testSchema {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(tableDir, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	var out []testSchema
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(tableDir, "schema", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var s testSchema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// fileSchemaOf picks the newest schema that has every column of the file
// and reads it as itself (the tests have no manifest reader to learn
// _SCHEMA_ID; data-evolution files hold a subset of the columns).
func fileSchemaOf(t *testing.T, path string, schemas []testSchema) testSchema {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	for _, fl := range pf.Schema().Fields() {
		if !isSystemField(fl.Name()) && !strings.HasPrefix(fl.Name(), "_") {
			names = append(names, fl.Name())
		}
	}
	for i := len(schemas) - 1; i >= 0; i-- {
		all := true
		for _, n := range names {
			all = all && schemas[i].Fields.Index(n) >= 0
		}
		if all && readsAsItself(path, schemas[i]) == nil {
			return schemas[i]
		}
	}
	t.Fatalf("%s: no schema matches columns %v", path, names)
	return testSchema{}
}

type fixtureFile struct {
	table, path string
}

func fixtureParquetFiles(t *testing.T) []fixtureFile {
	t.Helper()
	var out []fixtureFile
	dbs, err := filepath.Glob(filepath.Join(fixtureRoot, "parquet", "*.db", "*", "schema"))
	if err != nil || len(dbs) == 0 {
		t.Fatalf("no fixture tables under %s: %v", fixtureRoot, err)
	}
	for _, sd := range dbs {
		tableDir := filepath.Dir(sd)
		root := filepath.Dir(tableDir) // the .db dir: external paths live beside the table
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "data-") && strings.HasSuffix(d.Name(), ".parquet") && !strings.Contains(p, "/branch/") {
				out = append(out, fixtureFile{table: tableDir, path: p})
			}
			return nil
		})
	}
	return out
}

func readsAsItself(path string, s testSchema) error {
	ctx := context.Background()
	if len(s.PrimaryKeys) > 0 {
		r, err := OpenKeyValue(ctx, fileio.NewLocal(), path, s.schema(), s.schema())
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
	r, err := OpenRows(ctx, fileio.NewLocal(), path, s.Fields, s.Fields)
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

func readAllKV(t *testing.T, path string, fileSchema, readSchema Schema) []table.KeyValue {
	t.Helper()
	r, err := OpenKeyValue(context.Background(), fileio.NewLocal(), path, fileSchema, readSchema)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	var out []table.KeyValue
	for {
		kv, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		out = append(out, kv)
	}
}

func readAllRows(t *testing.T, path string, fileFields, readFields table.RowType) []table.Row {
	t.Helper()
	r, err := OpenRows(context.Background(), fileio.NewLocal(), path, fileFields, readFields)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	var out []table.Row
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		out = append(out, row)
	}
}

func TestEveryFixtureParquetFileReads(t *testing.T) {
	files := fixtureParquetFiles(t)
	if len(files) < 100 {
		t.Fatalf("found only %d fixture data files", len(files))
	}
	for _, ff := range files {
		name, _ := filepath.Rel(fixtureRoot, ff.path)
		t.Run(name, func(t *testing.T) {
			schemas := loadSchemas(t, ff.table)
			fs := fileSchemaOf(t, ff.path, schemas)
			latest := schemas[len(schemas)-1]
			f, _ := os.Open(ff.path)
			st, _ := f.Stat()
			pf, err := parquet.OpenFile(f, st.Size())
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := pf.NumRows()
			var got int
			if len(fs.PrimaryKeys) > 0 {
				kvs := readAllKV(t, ff.path, fs.schema(), fs.schema())
				got = len(kvs)
				for _, kv := range kvs {
					if len(kv.Value) != len(fs.Fields) {
						t.Fatalf("value arity %d", len(kv.Value))
					}
				}
			} else {
				got = len(readAllRows(t, ff.path, fs.Fields, fs.Fields))
			}
			if int64(got) != want {
				t.Fatalf("read %d rows, footer says %d", got, want)
			}
			// Through the latest schema: either it reads or the cast is
			// refused with ErrUnsupportedEvolution, never another failure.
			var err2 error
			if len(fs.PrimaryKeys) > 0 {
				r, err := OpenKeyValue(context.Background(), fileio.NewLocal(), ff.path, fs.schema(), latest.schema())
				if err == nil {
					for err == nil {
						_, err = r.Next()
					}
					r.Close()
				}
				err2 = err
			} else {
				r, err := OpenRows(context.Background(), fileio.NewLocal(), ff.path, fs.Fields, latest.Fields)
				if err == nil {
					for err == nil {
						_, err = r.Next()
					}
					r.Close()
				}
				err2 = err
			}
			if !errors.Is(err2, io.EOF) && !errors.Is(err2, cast.ErrUnsupportedEvolution) {
				t.Fatalf("read through latest schema %d: %v", latest.ID, err2)
			}
		})
	}
}
