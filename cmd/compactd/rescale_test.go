package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// TestRescaleCommand runs `compactd rescale` in process: a --bucket-num
// that differs from a fixed table's bucket and a dry run leave the table
// directory exactly as it was; a real run commits one OVERWRITE.
func TestRescaleCommand(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	fields := table.RowType{
		{ID: 0, Name: "dt", Type: table.DataType{Root: table.TypeVarChar, Length: table.MaxLength}},
		{ID: 1, Name: "id", Type: table.DataType{Root: table.TypeBigInt}},
	}
	s, err := table.NewTableSchema(0, fields, 1, []string{"dt"}, []string{"dt", "id"}, map[string]string{"bucket": "3"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(ctx, fileio.NewLocal(), wh, "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	w, err := write.NewWriter(ctx, tb, "w")
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 20; i++ {
		if err := w.Write(table.RowKindInsert, table.Row{"x", i}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wh, "db.db", "t")
	before := treeState(t, root)
	if err := run(ctx, "rescale", wh, "db.t", "--bucket-num", "5"); err == nil || !strings.Contains(err.Error(), "ALTER TABLE") {
		t.Fatalf("--bucket-num 5 on a bucket=3 table: %v", err)
	}
	if err := run(ctx, "rescale", wh, "db.t"); err == nil || !strings.Contains(err.Error(), "--bucket-num is required") {
		t.Fatalf("without --bucket-num: %v", err)
	}
	if err := run(ctx, "rescale", wh, "db.t", "--bucket-num", "3", "--partition", "dt=x", "--dry-run", "--json"); err != nil {
		t.Fatal(err)
	}
	after := treeState(t, root)
	if len(after) != len(before) {
		t.Fatalf("a refused or dry-run rescale changed the table: %d entries, was %d", len(after), len(before))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("a refused or dry-run rescale changed %s", k)
		}
	}
	if err := run(ctx, "rescale", wh, "db.t", "--bucket-num", "3", "--partition", "dt=x"); err != nil {
		t.Fatal(err)
	}
	latest, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if latest.ID != 2 || latest.CommitKind != table.CommitOverwrite {
		t.Fatalf("latest snapshot %d %s, want 2 OVERWRITE", latest.ID, latest.CommitKind)
	}
}
