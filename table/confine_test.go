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

// ListEach refuses what List refuses: a link among the entries (before fn
// sees it) and a listed directory that is itself reached through a link;
// otherwise it gives List's entries, and fn's error unchanged.
func TestConfineListEachRefusesLinksAsListDoes(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	root, outside := filepath.Join(base, "t"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "bucket-0"), filepath.Join(root, "bucket-1"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"bucket-0/data-a", "bucket-0/data-b", "bucket-1/data-a", "bucket-1/data-c"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside), filepath.Join(root, "bucket-1", "data-b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "bucket-0"), filepath.Join(root, "bucket-2")); err != nil {
		t.Fatal(err)
	}
	cf, err := table.NewConfine(ctx, fileio.NewLocal(), root)
	if err != nil {
		t.Fatal(err)
	}
	names := func(dir string) ([]string, error) {
		var out []string
		err := cf.ListEach(ctx, filepath.Join(root, dir), func(e fileio.FileInfo) error {
			out = append(out, e.Name)
			return nil
		})
		return out, err
	}
	got, err := names("bucket-0")
	if err != nil || len(got) != 2 || got[0] != "data-a" || got[1] != "data-b" {
		t.Fatalf("bucket-0: %v, %v", got, err)
	}
	for _, dir := range []string{"bucket-1", "bucket-2"} {
		_, lerr := cf.List(ctx, filepath.Join(root, dir))
		got, err := names(dir)
		var de *table.DamagedError
		if !errors.As(err, &de) || !errors.As(lerr, &de) {
			t.Errorf("%s: ListEach %v, List %v; want DamagedErrors", dir, err, lerr)
		}
		if dir == "bucket-1" && (len(got) != 1 || got[0] != "data-a") {
			t.Errorf("bucket-1: fn saw %v, want only the entry before the link", got)
		}
	}
	stop := errors.New("stop")
	if err := cf.ListEach(ctx, filepath.Join(root, "bucket-0"), func(fileio.FileInfo) error { return stop }); err != stop { //nolint:errorlint // unchanged, not wrapped
		t.Fatalf("fn's error came back as %v", err)
	}
	if err := cf.ListEach(ctx, filepath.Join(root, "none"), func(fileio.FileInfo) error { return stop }); err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
}
