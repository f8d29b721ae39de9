package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// TestORCAppendFixture reads every ORC data file of the append_09 ORC
// fixture (Paimon 0.9, ORC Java 1.9.2, no field ids) as rows and checks
// the union against the rows its README lists.
func TestORCAppendFixture(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(fixtureRoot, "orc", "append_09.db", "append_09")
	s := loadSchemas(t, dir)[0]
	files, err := filepath.Glob(filepath.Join(dir, "f1=*", "bucket-*", "*.orc"))
	if err != nil || len(files) != 8 {
		t.Fatalf("want 8 ORC files, have %d (%v)", len(files), err)
	}
	var got []string
	for _, p := range files {
		r, err := OpenRows(context.Background(), fileio.NewLocal(), p, s.Fields, s.Fields)
		if err != nil {
			t.Fatal(err)
		}
		for {
			row, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, strings.TrimSpace(fmt.Sprintln(row...)))
		}
		r.Close()
	}
	sort.Strings(got)
	// The README's adds in their commit files, plus the files the full
	// compaction wrote (rows of the same values again).
	if len(got) != 19 {
		t.Fatalf("read %d rows: %v", len(got), got)
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"Alice 10 1 11.1", "Paul 20 1 <nil>", "Lily 10 0 17.1"} {
		if !strings.Contains(joined, want) {
			t.Errorf("row %s not read; rows:\n%s", want, joined)
		}
	}
}

// TestORCKeyValueFixture reads a primary-key ORC data file of pk_btree_e2e
// (Paimon 2.0, ORC Java 1.9.8, paimon.id attributes) as KeyValues.
func TestORCKeyValueFixture(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(fixtureRoot, "orc", "pk_btree_e2e.db", "pk_btree_e2e")
	s := loadSchemas(t, dir)[0].schema()
	p := filepath.Join(dir, "bucket-0", "data-c0e6caa4-c74e-4a9f-88b1-9170afaae1aa-0.orc")
	r, err := OpenKeyValue(context.Background(), fileio.NewLocal(), p, s, s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		kv, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		id := int32(n + 1)
		tag := "drop"
		if id%2 == 0 {
			tag = "keep"
		}
		if kv.Key[0] != id || kv.Seq != int64(n) || kv.Kind != table.RowKindInsert ||
			kv.Value[0] != id || kv.Value[1] != id%10 || kv.Value[2] != tag {
			t.Fatalf("record %d: %+v", n, kv)
		}
		n++
	}
	if n != 1024 {
		t.Fatalf("read %d records, want 1024", n)
	}
}

// TestORCTypeMismatchRefused: a file whose column type does not fit the
// schema's is refused on open, naming the file and the column.
func TestORCTypeMismatchRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(fixtureRoot, "orc", "append_09.db", "append_09")
	files, _ := filepath.Glob(filepath.Join(dir, "f1=10", "bucket-0", "*.orc"))
	if len(files) == 0 {
		t.Fatal("no fixture file")
	}
	fields := table.RowType{{ID: 0, Name: "f0", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}}}
	_, err := OpenRows(context.Background(), fileio.NewLocal(), files[0], fields, fields)
	if err == nil || !strings.Contains(err.Error(), files[0]) || !strings.Contains(err.Error(), "f0") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(files[0]); err != nil {
		t.Fatal(err)
	}
}
