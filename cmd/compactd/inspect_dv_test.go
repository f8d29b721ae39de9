package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/deletionvector"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// TestInspectShowsDeletionVectorCardinalitiesPerFile: on a copy of Java's
// pk_09 whose vectors compactd then grows, inspect reports per data file
// the deleted rows its vector marks (and the index file), in JSON and in
// the table, and nothing for files without a vector.
func TestInspectShowsDeletionVectorCardinalitiesPerFile(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	expiretest.CopyDir(t, filepath.Join("..", "..", "..", "shared", "fixtures", "paimon-cpp", "parquet", "pk_09.db", "pk_09"), filepath.Join(wh, "pk_09.db", "pk_09"))
	tb, err := table.Open(ctx, fileio.NewLocal(), wh, "pk_09", "pk_09")
	if err != nil {
		t.Fatal(err)
	}
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tb.FileSet(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	var changes []table.IndexChange
	for _, b := range fs.Buckets() {
		m, err := deletionvector.Load(ctx, tb, b)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.IndexFiles) > 0 {
			// Delete the last row not yet deleted of the bucket's first file.
			f := b.Files[0].File
			pos := f.RowCount - 1
			for m.DeletionVectorOf(f.FileName).IsDeleted(pos) {
				pos--
			}
			if err := m.NotifyNewDeletion(f.FileName, pos); err != nil {
				t.Fatal(err)
			}
			ch, _, err := m.Write(ctx)
			if err != nil {
				t.Fatal(err)
			}
			changes = append(changes, *ch)
		}
		for f, n := range m.Cardinalities() {
			want[f] = n
		}
	}
	if _, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "test", CommitIdentifier: table.BatchCommitIdentifier, IndexChanges: changes}); err != nil {
		t.Fatal(err)
	}
	tb, err = table.Open(ctx, fileio.NewLocal(), wh, "pk_09", "pk_09")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := buildInspect(ctx, tb)
	if err != nil {
		t.Fatal(err)
	}
	seen, without := 0, 0
	for _, b := range rep.Buckets {
		for _, r := range b.Runs {
			for _, f := range r.Files {
				n, ok := want[f.Name]
				switch {
				case !ok && f.DVDeleted == nil:
					without++
				case !ok || f.DVDeleted == nil || *f.DVDeleted != n || !strings.HasPrefix(f.DVFile, "index-") || f.DVError != "":
					t.Errorf("%s: inspect says %v deleted in %q (%s), the vector has %d (%v)", f.Name, f.DVDeleted, f.DVFile, f.DVError, n, ok)
				default:
					seen++
				}
			}
		}
	}
	if seen != len(want) || seen < 2 || without == 0 {
		t.Fatalf("%d files with vectors shown of %d; %d without", seen, len(want), without)
	}
	var out bytes.Buffer
	printInspect(&out, rep)
	if !strings.Contains(out.String(), "DV DELETED") {
		t.Fatalf("no DV column:\n%s", out.String())
	}
}
