package e2e

import (
	"context"
	"github.com/compactd/compactd/expire/expiretest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
)

// fixturesRoot is ../shared/fixtures beside the repository, read in place.
func fixturesRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "shared", "fixtures", "paimon-cpp"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("shared fixtures not found at %s: %v", root, err)
	}
	return root
}

// copyDir copies a directory tree (fixtures are read-only; Java's catalog may
// create directories).
func copyDir(t *testing.T, src, dst string) { expiretest.CopyDir(t, src, dst) }

// compactdRows scans a table with compactd and returns canonical rows.
func compactdRows(t *testing.T, warehouse, name string) []interop.Row {
	t.Helper()
	rows, err := scanRows(warehouse, name)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func scanRows(warehouse, name string) ([]interop.Row, error) {
	ctx := context.Background()
	db, tbl, _ := strings.Cut(name, ".")
	tb, err := table.Open(ctx, fileio.NewLocal(), warehouse, db, tbl)
	if err != nil {
		return nil, err
	}
	return scanTable(ctx, tb, nil)
}

// canon renders rows as sorted JSON texts (interop.CanonStrings).
func canon(t *testing.T, rows []interop.Row) []string { return interop.CanonStrings(t, rows) }

// diffRows fails t when two sorted row sets differ (interop.DiffRows).
func diffRows(t *testing.T, what string, want, got []string) { interop.DiffRows(t, what, want, got) }

func head(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

func tableFIO() fileio.FileIO { return fileio.NewLocal() }
