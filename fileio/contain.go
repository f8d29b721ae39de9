package fileio

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrOutsideRoot is wrapped by CheckInside when a path does not lie inside
// the directory it was built from (a table path outside its warehouse).
var ErrOutsideRoot = errors.New("path lies outside its root")

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
// (LexicallyInside); stores with symbolic links (local disks) also get the
// real one, through FileIO.RealPath: the deepest existing one of p and its ancestors below root must
// resolve strictly inside root's resolved path, so a symlinked database or
// table directory cannot lead elsewhere. A missing root passes the real
// check (nothing below it exists); failures to resolve are errors.
func CheckInside(ctx context.Context, fio FileIO, root, p string) error {
	if !LexicallyInside(root, p) {
		return fmt.Errorf("%s: %w %s", p, ErrOutsideRoot, root)
	}
	realRoot, err := fio.RealPath(ctx, root)
	if err != nil {
		if errors.Is(err, ErrNotExist) {
			return nil
		}
		return fmt.Errorf("resolve %s: %w", root, err)
	}
	for q := p; LexicallyInside(root, q); q = Dir(q) {
		real, err := fio.RealPath(ctx, q)
		if errors.Is(err, ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("resolve %s: %w", q, err)
		}
		if !strictlyInside(realRoot, real) {
			return fmt.Errorf("%s resolves to %s: %w %s (%s)", q, real, ErrOutsideRoot, root, realRoot)
		}
		return nil
	}
	return nil
}

// strictlyInside compares two resolved paths (clean absolute local paths,
// or the unchanged paths of a store without links).
func strictlyInside(root, p string) bool {
	prefix := root
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return len(p) > len(prefix) && strings.HasPrefix(p, prefix)
}
