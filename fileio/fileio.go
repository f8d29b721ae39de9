package fileio

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"time"
)

// ErrNotExist and ErrExist are the sentinel errors every implementation wraps,
// so callers test them with errors.Is regardless of the store.
var (
	ErrNotExist = fs.ErrNotExist
	ErrExist    = fs.ErrExist
)

// FileInfo describes one entry of a listing or a Stat.
type FileInfo struct {
	Path    string // full path, as accepted by the other methods
	Name    string // last path element
	Size    int64
	ModTime time.Time // from the store, never the local clock
	IsDir   bool
	// IsSymlink is set on a listed entry that is a symbolic link. List never
	// follows one: such an entry has IsDir false, and Size and ModTime of
	// the link itself. Stores without symbolic links (S3) never set it.
	IsSymlink bool
}

// Reader reads a file with random access; Parquet footers and Avro blocks are
// read by offset, which on object stores becomes a range request.
type Reader interface {
	io.ReaderAt
	io.Reader
	io.Closer
	Size() int64
}

// Writer writes a new file. Nothing is visible under the target path until
// Close returns nil; Abort (or a crash) leaves no file at the target path.
type Writer interface {
	io.Writer
	Close() error
	Abort() error
}

// FileIO is what compactd needs from a store.
type FileIO interface {
	// Open opens a file for reading.
	Open(ctx context.Context, path string) (Reader, error)
	// Create starts writing a new file that replaces any file at path when
	// the writer is closed.
	Create(ctx context.Context, path string) (Writer, error)
	// WriteExclusive creates path with data atomically, failing with an error
	// wrapping ErrExist if it already exists. This is the commit point of a
	// snapshot: of two racing callers exactly one succeeds.
	WriteExclusive(ctx context.Context, path string, data []byte) error
	// List returns the direct children of dir (files and directories), sorted
	// by name. A missing directory gives an empty listing, not an error.
	//
	// Symbolic links among the children are reported, never followed: an
	// entry that is a link has IsSymlink set and IsDir false, whatever it
	// points to, so a caller walking a tree through List never descends
	// into a linked directory. dir itself is resolved as the OS resolves
	// any path (a link in dir or above it is followed); a caller that must
	// stay inside a directory tree checks RealPath.
	List(ctx context.Context, dir string) ([]FileInfo, error)
	// Stat describes one file; a missing file gives an error wrapping ErrNotExist.
	Stat(ctx context.Context, path string) (FileInfo, error)
	// Delete removes a file; deleting a missing file is not an error.
	Delete(ctx context.Context, path string) error
	// DeleteDir removes an empty directory (a no-op on stores without
	// directories); a non-empty directory is left in place without error.
	DeleteDir(ctx context.Context, path string) error
	// RealPath returns path with every symbolic link in it resolved, in the
	// form the other methods accept (local: filepath.EvalSymlinks). Stores
	// without symbolic links return path unchanged. On a store with links,
	// a missing path gives an error wrapping ErrNotExist, and a dangling
	// link an error that does not.
	RealPath(ctx context.Context, path string) (string, error)
}

// ReadFile reads a whole file.
func ReadFile(ctx context.Context, fio FileIO, path string) ([]byte, error) {
	r, err := fio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := make([]byte, r.Size())
	if _, err := r.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf, nil
}

// WriteFile writes a whole file, replacing any file at path atomically.
func WriteFile(ctx context.Context, fio FileIO, path string, data []byte) error {
	w, err := fio.Create(ctx, path)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Abort()
		return err
	}
	return w.Close()
}

// Exists reports whether path exists.
func Exists(ctx context.Context, fio FileIO, path string) (bool, error) {
	_, err := fio.Stat(ctx, path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	return false, err
}

// Join joins path elements with '/', keeping a URL scheme intact.
func Join(elem ...string) string {
	var b strings.Builder
	for _, e := range elem {
		if e == "" {
			continue
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "/") {
			b.WriteByte('/')
		}
		if b.Len() > 0 {
			e = strings.TrimLeft(e, "/")
		}
		b.WriteString(e)
	}
	return b.String()
}

// Base returns the last element of path.
func Base(path string) string {
	path = strings.TrimRight(path, "/")
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// Dir returns all but the last element of path.
func Dir(path string) string {
	path = strings.TrimRight(path, "/")
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return ""
}

// ExclusivePreparer is a store whose WriteExclusive may first have to learn
// something about the store (S3: whether it honours conditional writes);
// PrepareExclusive starts that in the background.
type ExclusivePreparer interface {
	PrepareExclusive(ctx context.Context, dir string)
}

// PrepareExclusive tells the store under fio (through wrappers, Unwrap)
// that a WriteExclusive into dir is coming, so that what it must learn
// first overlaps the caller's other work. It returns at once and never
// fails: WriteExclusive still waits for the answer and reports it. The
// caller decides whether it may write at all (a read-only table must not:
// the S3 probe writes a file).
func PrepareExclusive(ctx context.Context, fio FileIO, dir string) {
	if p, ok := Unwrap(fio).(ExclusivePreparer); ok {
		p.PrepareExclusive(ctx, dir)
	}
}
