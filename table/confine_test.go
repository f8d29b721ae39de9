package table_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// The check made before each deletion: a file whose real path is not its
// own place inside the table (a directory on its way was replaced by a link
// after the listing, or the file is a link) is refused; a table root that is
// itself reached through a link is fine.
func TestConfineRefusesPathsThatResolveElsewhere(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	realTable, outside := filepath.Join(base, "real", "t"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(realTable, "bucket-0"), filepath.Join(outside, "bucket-0")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(realTable, "bucket-0", "data-a"), filepath.Join(outside, "bucket-0", "data-b"), filepath.Join(outside, "victim")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The table is reached through a link to its parent: allowed.
	if err := os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "wh")); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "wh", "t")
	cf, err := table.NewConfine(ctx, fileio.NewLocal(), root)
	if err != nil {
		t.Fatal(err)
	}
	if err := cf.Check(ctx, filepath.Join(root, "bucket-0", "data-a")); err != nil {
		t.Fatalf("a plain file inside a linked-to table: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(realTable, "bucket-0", "data-c")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "bucket-0"), filepath.Join(realTable, "bucket-1")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(root, "bucket-0", "data-c"), filepath.Join(root, "bucket-1", "data-b"), filepath.Join(base, "outside", "victim")} {
		var de *table.DamagedError
		if err := cf.Check(ctx, p); !errors.As(err, &de) {
			t.Errorf("%s: want a DamagedError, got %v", p, err)
		}
	}
	if err := cf.Check(ctx, filepath.Join(root, "bucket-0", "gone")); !errors.Is(err, fileio.ErrNotExist) {
		t.Errorf("a missing file: want ErrNotExist, got %v", err)
	}
}
