package fileio_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/fileio"
)

func TestLexicallyInsideNeedsAtLeastOneCleanElementBelowTheRoot(t *testing.T) {
	for _, c := range []struct {
		root, p string
		want    bool
	}{
		{"/wh", "/wh/db.db/t", true},
		{"/wh/", "/wh/db.db/t", true},
		{"s3://b/wh", "s3://b/wh/db.db/t", true},
		{"s3://b", "s3://b/db.db/t", true},
		{"file:///wh", "file:///wh/db.db/t", true},
		{"wh", "wh/db.db/t", true},
		{"/wh", "/wh", false},
		{"/wh", "/wh/", false},
		{"/wh", "/wh2/db.db/t", false},
		{"/wh", "/wh/db.db/t/../../../victim/t", false},
		{"/wh", "/wh/./t", false},
		{"/wh", "/wh//t", false},
		{"s3://b/wh", "s3://b/wh/../x", false},
		{"s3://b/wh", "s3://other/wh/db.db/t", false},
		{"s3://b/wh", "/b/wh/db.db/t", false},
		{"/b/wh", "s3://b/wh/db.db/t", false},
		{"s3://b/wh", "gs://b/wh/db.db/t", false},
	} {
		if got := fileio.LexicallyInside(c.root, c.p); got != c.want {
			t.Errorf("LexicallyInside(%q, %q) = %v, want %v", c.root, c.p, got, c.want)
		}
	}
}

func TestCheckInsideResolvesSymlinksOnLocalDisks(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(wh, "a"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "out"), 0o755))
	must(os.Symlink(filepath.Join(dir, "out"), filepath.Join(wh, "link")))
	// The warehouse itself behind a symlink is fine: both sides resolve.
	must(os.Symlink(wh, filepath.Join(dir, "whlink")))
	local := fileio.NewLocal()
	for _, p := range []string{filepath.Join(wh, "a"), filepath.Join(wh, "a", "missing", "deeper")} {
		if err := fileio.CheckInside(context.Background(), local, wh, p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := fileio.CheckInside(context.Background(), local, filepath.Join(dir, "whlink"), filepath.Join(dir, "whlink", "a")); err != nil {
		t.Errorf("symlinked warehouse: %v", err)
	}
	for _, p := range []string{filepath.Join(wh, "link"), filepath.Join(wh, "link", "t"), filepath.Join(wh, "link", "missing", "t")} {
		if err := fileio.CheckInside(context.Background(), local, wh, p); !errors.Is(err, fileio.ErrOutsideRoot) {
			t.Errorf("%s: want ErrOutsideRoot, got %v", p, err)
		}
		// file:// paths are local paths too.
		if err := fileio.CheckInside(context.Background(), must2(t, "file://"+wh), "file://"+wh, "file://"+p); !errors.Is(err, fileio.ErrOutsideRoot) {
			t.Errorf("file://%s: want ErrOutsideRoot, got %v", p, err)
		}
	}
	must(os.Symlink(filepath.Join(dir, "nothing"), filepath.Join(wh, "dangling")))
	if err := fileio.CheckInside(context.Background(), local, wh, filepath.Join(wh, "dangling", "t")); err == nil {
		t.Error("a dangling symlink was accepted")
	}
}

func must2(t *testing.T, root string) fileio.FileIO {
	t.Helper()
	fio, err := fileio.For(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	return fio
}
