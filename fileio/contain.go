package fileio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideRoot is wrapped by CheckInside when a path does not lie inside
// the directory it was built from (a table path outside its warehouse).
var ErrOutsideRoot = errors.New("path lies outside its root")

// RealPather is implemented by stores whose paths can go through symbolic
// links (local disks). RealPath resolves every link in path and returns the
// absolute local path it denotes; a path that does not exist (and is not a
// dangling link) gives an error wrapping ErrNotExist.
type RealPather interface {
	RealPath(path string) (string, error)
}

// RealPath is filepath.EvalSymlinks made absolute. A dangling symbolic link
// is an error, not ErrNotExist: something would be created at its target.
func (Local) RealPath(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, lerr := os.Lstat(path); lerr == nil {
				return "", fmt.Errorf("resolve %s: dangling symbolic link", path)
			}
		}
		return "", err
	}
	return filepath.Abs(real)
}

// RealPath resolves the local path of a file:// path.
func (f fileURLStore) RealPath(path string) (string, error) {
	return f.Local.RealPath(stripFile(path))
}

// LexicallyInside reports whether p names an entry strictly below root
// without resolving anything: p has root's scheme, starts with root's path
// followed by '/', and the rest is one or more path elements none of which
// is empty, "." or "..".
func LexicallyInside(root, p string) bool {
	rs, rr, rok := cutScheme(root)
	ps, pr, pok := cutScheme(p)
	if rok != pok || !strings.EqualFold(rs, ps) {
		return false
	}
	rr = strings.TrimRight(rr, "/")
	rest, ok := strings.CutPrefix(pr, rr+"/")
	if !ok || rest == "" {
		return false
	}
	for _, e := range strings.Split(rest, "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}

// CheckInside returns nil when p lies strictly inside root, and otherwise an
// error wrapping ErrOutsideRoot. Every store gets the lexical check
// (LexicallyInside); stores with symbolic links (RealPather) also get the
// real one: the deepest existing one of p and its ancestors below root must
// resolve strictly inside root's resolved path, so a symlinked database or
// table directory cannot lead elsewhere. A missing root passes the real
// check (nothing below it exists); failures to resolve are errors.
func CheckInside(fio FileIO, root, p string) error {
	if !LexicallyInside(root, p) {
		return fmt.Errorf("%s: %w %s", p, ErrOutsideRoot, root)
	}
	rp, ok := fio.(RealPather)
	if !ok {
		return nil
	}
	realRoot, err := rp.RealPath(root)
	if err != nil {
		if errors.Is(err, ErrNotExist) {
			return nil
		}
		return fmt.Errorf("resolve %s: %w", root, err)
	}
	for q := p; LexicallyInside(root, q); q = Dir(q) {
		real, err := rp.RealPath(q)
		if errors.Is(err, ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("resolve %s: %w", q, err)
		}
		if !localStrictlyInside(realRoot, real) {
			return fmt.Errorf("%s resolves to %s: %w %s (%s)", q, real, ErrOutsideRoot, root, realRoot)
		}
		return nil
	}
	return nil
}

// localStrictlyInside compares two clean absolute local paths.
func localStrictlyInside(root, p string) bool {
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return len(p) > len(prefix) && strings.HasPrefix(p, prefix)
}
