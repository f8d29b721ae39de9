package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table/manifest"
)

// fixtureTables lists db.table names of a fixture warehouse directory.
func fixtureTables(t *testing.T, warehouse string) []string {
	t.Helper()
	dbs, err := os.ReadDir(warehouse)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, db := range dbs {
		if !db.IsDir() || !strings.HasSuffix(db.Name(), ".db") {
			continue
		}
		tables, err := os.ReadDir(filepath.Join(warehouse, db.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			if _, err := os.Stat(filepath.Join(warehouse, db.Name(), tb.Name(), "schema")); err == nil {
				out = append(out, strings.TrimSuffix(db.Name(), ".db")+"."+tb.Name())
			}
		}
	}
	return out
}

// TestScanOfEveryFixtureTableEqualsJavaRead reads each shared fixture table
// (written by Java Paimon 0.9–2.0) with compactd and with Java Paimon and
// compares the rows.
func TestScanOfEveryFixtureTableEqualsJavaRead(t *testing.T) {
	java := interop.Java(t)
	for _, format := range []string{"parquet", "avro", "orc"} {
		src := filepath.Join(fixturesRoot(t), format)
		for _, name := range fixtureTables(t, src) {
			t.Run(format+"/"+name, func(t *testing.T) {
				wh := t.TempDir()
				db, tbl, _ := strings.Cut(name, ".")
				copyDir(t, filepath.Join(src, db+".db", tbl), filepath.Join(wh, db+".db", tbl))
				want, werr := javaRead(java, wh, name)
				got, gerr := scanRows(wh, name)
				switch {
				case werr != nil && gerr != nil:
					t.Logf("both refuse: java: %v; compactd: %v", firstLine(werr), firstLine(gerr))
					return
				case werr != nil:
					// Some fixtures use features newer than the oracle's Paimon;
					// compactd reading them is checked by the fixture READMEs' tests.
					t.Logf("Java Paimon cannot read this table (%v); compactd read %d rows", firstLine(werr), len(got))
					return
				case errors.Is(gerr, scan.ErrUnsupported) || errors.Is(gerr, manifest.ErrUnsupportedFormat):
					// A clear refusal is the required behaviour for these.
					t.Logf("compactd refuses: %v (Java reads %d rows)", gerr, len(want))
					return
				case gerr != nil:
					t.Fatalf("compactd cannot read a table Java reads (%d rows): %v", len(want), gerr)
				}
				diffRows(t, name, canon(t, want), canon(t, got))
			})
		}
	}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func javaRead(j *interop.JavaOracle, wh, name string) ([]interop.Row, error) {
	out, err := j.Run(context.Background(), nil, "read", "--warehouse", wh, "--table", name)
	if err != nil {
		return nil, err
	}
	return interop.ParseRows(out)
}

// TestORCDataFixtureScanEqualsJavaRead pins what the loop above tolerates
// as a refusal: the ORC-data fixture with Avro manifests (pk_btree_e2e,
// Paimon 2.0, deletion vectors, ORC Java 1.9.8) must scan, and equal
// Java's read row for row.
func TestORCDataFixtureScanEqualsJavaRead(t *testing.T) {
	java := interop.Java(t)
	const name = "pk_btree_e2e.pk_btree_e2e"
	wh := t.TempDir()
	copyDir(t, filepath.Join(fixturesRoot(t), "orc", "pk_btree_e2e.db", "pk_btree_e2e"), filepath.Join(wh, "pk_btree_e2e.db", "pk_btree_e2e"))
	want, err := javaRead(java, wh, name)
	if err != nil {
		t.Fatalf("Java read: %v", err)
	}
	got, err := scanRows(wh, name)
	if err != nil {
		t.Fatalf("compactd scan: %v", err)
	}
	if len(want) != 2001 {
		t.Fatalf("Java reads %d rows, the README says 2001", len(want))
	}
	diffRows(t, name, canon(t, want), canon(t, got))
}
