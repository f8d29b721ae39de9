package fileio_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/fileio"
)

// The List contract on local storage: a symbolic link among the children is
// reported as a link, never as a directory and never followed, whether it
// points to a directory, a file or nowhere; RealPath resolves links.
func TestLocalListReportsSymlinksWithoutFollowingThem(t *testing.T) {
	ctx := context.Background()
	for _, store := range []struct {
		name   string
		fio    fileio.FileIO
		prefix string
	}{{"local", fileio.NewLocal(), ""}, {"file URL", mustFor(t, "file:///"), "file://"}} {
		t.Run(store.name, func(t *testing.T) {
			base := t.TempDir()
			outside := filepath.Join(base, "outside")
			dir := filepath.Join(base, "table")
			for _, d := range []string{outside, filepath.Join(dir, "realdir")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(outside, "victim"), []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			for link, target := range map[string]string{
				"linkdir":  outside,
				"linkfile": filepath.Join(outside, "victim"),
				"dangling": filepath.Join(outside, "nothing"),
			} {
				if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
					t.Fatal(err)
				}
			}
			ents, err := store.fio.List(ctx, store.prefix+dir)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]fileio.FileInfo{}
			for _, e := range ents {
				got[e.Name] = e
			}
			if len(got) != 5 {
				t.Fatalf("listed %v, want plain, realdir and three links", ents)
			}
			for _, n := range []string{"linkdir", "linkfile", "dangling"} {
				e := got[n]
				if !e.IsSymlink || e.IsDir {
					t.Errorf("%s: IsSymlink=%v IsDir=%v, want a link that is not a directory", n, e.IsSymlink, e.IsDir)
				}
				if e.Path != store.prefix+filepath.Join(dir, n) {
					t.Errorf("%s: path %s", n, e.Path)
				}
			}
			if got["linkfile"].Size == int64(len("precious")) {
				t.Error("linkfile: size is the target's, want the link's own")
			}
			if e := got["realdir"]; !e.IsDir || e.IsSymlink {
				t.Errorf("realdir: %+v", e)
			}
			if e := got["plain"]; e.IsDir || e.IsSymlink || e.Size != 1 {
				t.Errorf("plain: %+v", e)
			}

			realOutside, err := filepath.EvalSymlinks(outside)
			if err != nil {
				t.Fatal(err)
			}
			rp, err := store.fio.RealPath(ctx, store.prefix+filepath.Join(dir, "linkdir", "victim"))
			if err != nil || rp != store.prefix+filepath.Join(realOutside, "victim") {
				t.Fatalf("RealPath through a linked directory = %q, %v; want %s", rp, err, filepath.Join(realOutside, "victim"))
			}
			// A dangling link is not a missing file: something created at
			// its path would land at its target.
			if _, err := store.fio.RealPath(ctx, store.prefix+filepath.Join(dir, "dangling")); err == nil || errors.Is(err, fileio.ErrNotExist) {
				t.Fatalf("RealPath of a dangling link: %v, want an error other than ErrNotExist", err)
			}
			if _, err := store.fio.RealPath(ctx, store.prefix+filepath.Join(dir, "missing")); !errors.Is(err, fileio.ErrNotExist) {
				t.Fatalf("RealPath of a missing file: %v, want ErrNotExist", err)
			}
		})
	}
}

func mustFor(t *testing.T, path string) fileio.FileIO {
	fio, err := fileio.For(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return fio
}
