package fileio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/google/uuid"
)

// Local is the local-filesystem store.
type Local struct{}

// NewLocal returns the local-filesystem store.
func NewLocal() *Local { return &Local{} }

type localReader struct {
	*os.File
	size int64
}

func (r *localReader) Size() int64 { return r.size }

func (Local) Open(ctx context.Context, path string) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", path, syscall.EISDIR)
	}
	return &localReader{File: f, size: st.Size()}, nil
}

// tmpName is a hidden sibling of the target so that a crash leaves only a
// file that orphan cleanup recognises as a temporary and never a
// half-written file under a real Paimon name.
func tmpName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+uuid.NewString()+".tmp")
}

type localWriter struct {
	f      *os.File
	target string
	done   bool
}

func (w *localWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *localWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		os.Remove(w.f.Name())
		return err
	}
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return err
	}
	if err := os.Rename(w.f.Name(), w.target); err != nil {
		os.Remove(w.f.Name())
		return err
	}
	return nil
}

func (w *localWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.f.Close()
	return os.Remove(w.f.Name())
}

func (Local) Create(ctx context.Context, path string) (Writer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(tmpName(path), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &localWriter{f: f, target: path}, nil
}

func (Local) WriteExclusive(ctx context.Context, path string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := tmpName(path)
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	defer os.Remove(tmp)
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err != nil {
		return err
	}
	// link(2) fails if the target exists: an atomic, exclusive publish of a
	// complete file.
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", path, ErrExist)
		}
		return err
	}
	return nil
}

func (Local) List(ctx context.Context, dir string) ([]FileInfo, error) {
	var out []FileInfo
	n, err := listEach(ctx, dir, func(fi FileInfo) error {
		out = append(out, fi)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if out == nil && n >= 0 {
		out = []FileInfo{} // an existing, empty directory
	}
	return out, nil
}

// ListEach is List one entry at a time: it holds the sorted names of dir,
// not a FileInfo (with its path) for each, and describes each entry only
// when it comes to it.
func (Local) ListEach(ctx context.Context, dir string, fn func(FileInfo) error) error {
	_, err := listEach(ctx, dir, fn)
	return err
}

// listEach is ListEach; it also returns the number of names read, -1 when
// dir does not exist.
func listEach(ctx context.Context, dir string, fn func(FileInfo) error) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return -1, nil
		}
		return 0, err
	}
	names, err := d.Readdirnames(-1)
	_ = d.Close() // read-only: nothing to lose
	if err != nil {
		return 0, err
	}
	sort.Strings(names)
	for i, name := range names {
		if i%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		p := filepath.Join(dir, name)
		// Lstat: a link is described, not followed.
		info, err := os.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted while listing
			}
			return 0, err
		}
		link := info.Mode()&fs.ModeSymlink != 0
		if err := fn(FileInfo{
			Path:      p,
			Name:      name,
			Size:      info.Size(),
			ModTime:   info.ModTime(),
			IsDir:     !link && info.IsDir(),
			IsSymlink: link,
		}); err != nil {
			return 0, err
		}
	}
	return len(names), nil
}

func (Local) Stat(ctx context.Context, path string) (FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return FileInfo{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Path: path, Name: st.Name(), Size: st.Size(), ModTime: st.ModTime(), IsDir: st.IsDir()}, nil
}

// RealPath resolves every symbolic link of path (filepath.EvalSymlinks) and
// returns an absolute path. A dangling symbolic link is an error, not
// ErrNotExist: something created at path would land at its target.
func (Local) RealPath(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
				return "", fmt.Errorf("resolve %s: dangling symbolic link", path)
			}
		}
		return "", err
	}
	return filepath.Abs(p)
}

func (Local) Delete(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := os.Remove(path)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func (Local) DeleteDir(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if len(ents) > 0 {
		return nil
	}
	err = os.Remove(path)
	if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist)) {
		return nil
	}
	return err
}

// For returns the store for a warehouse path: local unless it has a scheme
// served by another implementation.
//
// s3://, s3a:// and s3n:// paths get an S3 store configured from the standard
// AWS chain (use ForWithS3Config for explicit settings); file:// paths get a
// local store that accepts and returns file:// paths.
func For(ctx context.Context, path string) (FileIO, error) {
	scheme, _, ok := cutScheme(path)
	switch {
	case !ok:
		return NewLocal(), nil
	case scheme == "file":
		return fileURLStore{}, nil
	case isS3Scheme(scheme):
		return NewS3(ctx, S3Config{})
	}
	return nil, fmt.Errorf("warehouse %s: storage scheme %q not supported", path, scheme)
}

// fileURLStore is the local store for "file://" paths: it strips the scheme
// on the way in and restores it on listed paths, so that paths joined from a
// file:// warehouse round-trip.
type fileURLStore struct{ Local }

func stripFile(path string) string {
	if rest, ok := strings.CutPrefix(path, "file://"); ok {
		return rest
	}
	return path
}

func (f fileURLStore) Open(ctx context.Context, path string) (Reader, error) {
	return f.Local.Open(ctx, stripFile(path))
}

func (f fileURLStore) Create(ctx context.Context, path string) (Writer, error) {
	return f.Local.Create(ctx, stripFile(path))
}

func (f fileURLStore) WriteExclusive(ctx context.Context, path string, data []byte) error {
	return f.Local.WriteExclusive(ctx, stripFile(path), data)
}

func (f fileURLStore) List(ctx context.Context, dir string) ([]FileInfo, error) {
	infos, err := f.Local.List(ctx, stripFile(dir))
	if strings.HasPrefix(dir, "file://") {
		for i := range infos {
			infos[i].Path = "file://" + infos[i].Path
		}
	}
	return infos, err
}

func (f fileURLStore) ListEach(ctx context.Context, dir string, fn func(FileInfo) error) error {
	url := strings.HasPrefix(dir, "file://")
	return f.Local.ListEach(ctx, stripFile(dir), func(fi FileInfo) error {
		if url {
			fi.Path = "file://" + fi.Path
		}
		return fn(fi)
	})
}

func (f fileURLStore) Stat(ctx context.Context, path string) (FileInfo, error) {
	info, err := f.Local.Stat(ctx, stripFile(path))
	if err == nil {
		info.Path = path
	}
	return info, err
}

func (f fileURLStore) RealPath(ctx context.Context, path string) (string, error) {
	p, err := f.Local.RealPath(ctx, stripFile(path))
	if err == nil && strings.HasPrefix(path, "file://") {
		p = "file://" + p
	}
	return p, err
}

func (f fileURLStore) Delete(ctx context.Context, path string) error {
	return f.Local.Delete(ctx, stripFile(path))
}

func (f fileURLStore) DeleteDir(ctx context.Context, path string) error {
	return f.Local.DeleteDir(ctx, stripFile(path))
}

func cutScheme(path string) (scheme, rest string, ok bool) {
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == ':' {
			if i > 0 && len(path) > i+2 && path[i+1:i+3] == "//" {
				return path[:i], path[i+3:], true
			}
			return "", path, false
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return "", path, false
		}
	}
	return "", path, false
}
