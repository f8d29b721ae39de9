package expiretest

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/compactd/compactd/fileio"
)

// MemFS is an in-memory fileio.FileIO with directories implied by file
// paths (like an object store) plus explicitly created empty directories,
// so tests run without fsync costs. Modification times come from Clock.
type MemFS struct {
	mu    sync.Mutex
	files map[string]memFile
	dirs  map[string]time.Time // explicit (possibly empty) directories
	Clock func() time.Time
}

type memFile struct {
	data    []byte
	modTime time.Time
}

// NewMemFS returns an empty store whose clock is time.Now.
func NewMemFS() *MemFS {
	return &MemFS{files: map[string]memFile{}, dirs: map[string]time.Time{}, Clock: time.Now}
}

func clean(p string) string { return strings.TrimRight(p, "/") }

// SetModTime changes a file's or directory's modification time.
func (m *MemFS) SetModTime(path string, t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.files[clean(path)]; ok {
		f.modTime = t
		m.files[clean(path)] = f
	}
	if _, ok := m.dirs[clean(path)]; ok {
		m.dirs[clean(path)] = t
	}
}

// MkdirAll records an explicit directory and its parents.
func (m *MemFS) MkdirAll(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := clean(path); p != "" && p != "/"; p = fileio.Dir(p) {
		if _, ok := m.dirs[p]; !ok {
			m.dirs[p] = m.Clock()
		}
	}
}

type memReader struct{ *bytes.Reader }

func (memReader) Close() error { return nil }

func (m *MemFS) Open(ctx context.Context, path string) (fileio.Reader, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[clean(path)]
	if !ok {
		return nil, fmt.Errorf("open %s: %w", path, fileio.ErrNotExist)
	}
	return memReader{bytes.NewReader(f.data)}, nil
}

type memWriter struct {
	m    *MemFS
	path string
	buf  bytes.Buffer
	done bool
}

func (w *memWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (w *memWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	w.m.put(w.path, w.buf.Bytes())
	return nil
}
func (w *memWriter) Abort() error { w.done = true; return nil }

func (m *MemFS) put(path string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[clean(path)] = memFile{data: bytes.Clone(data), modTime: m.Clock()}
}

func (m *MemFS) Create(ctx context.Context, path string) (fileio.Writer, error) {
	return &memWriter{m: m, path: path}, nil
}

func (m *MemFS) WriteExclusive(ctx context.Context, path string, data []byte) error {
	m.mu.Lock()
	if _, ok := m.files[clean(path)]; ok {
		m.mu.Unlock()
		return fmt.Errorf("create %s: %w", path, fileio.ErrExist)
	}
	m.mu.Unlock()
	m.put(path, data)
	return nil
}

func (m *MemFS) List(ctx context.Context, dir string) ([]fileio.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := clean(dir) + "/"
	seen := map[string]fileio.FileInfo{}
	for p, f := range m.files {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				name := rest[:i]
				if _, ok := seen[name]; !ok {
					seen[name] = fileio.FileInfo{Path: prefix + name, Name: name, IsDir: true, ModTime: m.dirs[prefix+name]}
				}
			} else {
				seen[rest] = fileio.FileInfo{Path: p, Name: rest, Size: int64(len(f.data)), ModTime: f.modTime}
			}
		}
	}
	for p, t := range m.dirs {
		if rest, ok := strings.CutPrefix(p, prefix); ok && !strings.Contains(rest, "/") {
			if _, ok := seen[rest]; !ok {
				seen[rest] = fileio.FileInfo{Path: p, Name: rest, IsDir: true, ModTime: t}
			}
		}
	}
	out := make([]fileio.FileInfo, 0, len(seen))
	for _, fi := range seen {
		out = append(out, fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (m *MemFS) Stat(ctx context.Context, path string) (fileio.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(path)
	if f, ok := m.files[p]; ok {
		return fileio.FileInfo{Path: p, Name: fileio.Base(p), Size: int64(len(f.data)), ModTime: f.modTime}, nil
	}
	if t, ok := m.dirs[p]; ok {
		return fileio.FileInfo{Path: p, Name: fileio.Base(p), IsDir: true, ModTime: t}, nil
	}
	for q := range m.files {
		if strings.HasPrefix(q, p+"/") {
			return fileio.FileInfo{Path: p, Name: fileio.Base(p), IsDir: true}, nil
		}
	}
	return fileio.FileInfo{}, fmt.Errorf("stat %s: %w", path, fileio.ErrNotExist)
}

// RealPath returns path unchanged: MemFS has no symbolic links.
func (m *MemFS) RealPath(ctx context.Context, path string) (string, error) { return path, ctx.Err() }

func (m *MemFS) Delete(ctx context.Context, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, clean(path))
	return nil
}

func (m *MemFS) DeleteDir(ctx context.Context, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := clean(path)
	for q := range m.files {
		if strings.HasPrefix(q, p+"/") {
			return nil
		}
	}
	for q := range m.dirs {
		if strings.HasPrefix(q, p+"/") {
			return nil
		}
	}
	delete(m.dirs, p)
	return nil
}

// Dirs returns the explicit directories, sorted.
func (m *MemFS) Dirs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for d := range m.dirs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
