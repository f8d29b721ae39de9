package table

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/compactd/compactd/fileio"
)

// errSymlink is the reason a symbolic link inside a table stops a run.
var errSymlink = errors.New("a symbolic link inside the table directory; Paimon never creates one, and deletion must not follow it out of the table")

// Confine keeps deletions inside a table directory. Paimon never creates
// symbolic links, so one inside a table is something compactd does not
// understand: orphan cleanup and expiration fail closed (a *DamagedError
// naming the link) rather than skip it, since a linked data directory could
// hold files the table references, and a followed one could lead anywhere.
type Confine struct {
	FS             fileio.FileIO
	Root, RealRoot string
}

// NewConfine resolves the table root (a table reached through a linked
// warehouse is fine: only what lies below the root must not be linked).
func NewConfine(ctx context.Context, fsys fileio.FileIO, root string) (*Confine, error) {
	root = strings.TrimRight(root, "/")
	real, err := fsys.RealPath(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("resolve the table directory %s: %w", root, err)
	}
	return &Confine{FS: fsys, Root: root, RealRoot: strings.TrimRight(real, "/")}, nil
}

// List lists dir, refusing a symbolic link among its entries and a dir
// that does not resolve to its own place under the table root.
func (c *Confine) List(ctx context.Context, dir string) ([]fileio.FileInfo, error) {
	ents, err := c.FS.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	if len(ents) == 0 {
		return nil, nil
	}
	if err := c.Check(ctx, dir); err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.IsSymlink {
			return nil, &DamagedError{Table: c.Root, File: e.Path, Err: errSymlink}
		}
	}
	return ents, nil
}

// ListEach is List one entry at a time (fileio.ListEach): fn sees the
// entries of dir in order, dir is checked before the first of them, and a
// symbolic link stops the listing with a *DamagedError before fn sees it.
// Unlike List, fn may have seen earlier entries when the listing fails: a
// caller acts on none of them before ListEach returned nil. fn's error is
// returned unchanged.
func (c *Confine) ListEach(ctx context.Context, dir string, fn func(fileio.FileInfo) error) error {
	checked, inner := false, false
	err := fileio.ListEach(ctx, c.FS, dir, func(e fileio.FileInfo) error {
		inner = true
		if !checked {
			if err := c.Check(ctx, dir); err != nil {
				return err
			}
			checked = true
		}
		if e.IsSymlink {
			return &DamagedError{Table: c.Root, File: e.Path, Err: errSymlink}
		}
		if err := fn(e); err != nil {
			return err
		}
		inner = false
		return nil
	})
	if err != nil && !inner {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	return err
}

// Check verifies that p, a path under the table root, resolves to the same
// place under the root's real path: no component between the root and p
// (p included) is a symbolic link. A missing p gives an error wrapping
// fileio.ErrNotExist.
func (c *Confine) Check(ctx context.Context, p string) error {
	rel, ok := strings.CutPrefix(p, c.Root)
	if !ok || (rel != "" && rel[0] != '/') {
		return &DamagedError{Table: c.Root, File: p, Err: errors.New("outside the table directory")}
	}
	real, err := c.FS.RealPath(ctx, p)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", p, err)
	}
	if real != c.RealRoot+rel {
		return &DamagedError{Table: c.Root, File: p, Err: fmt.Errorf("resolves to %s, not %s: %w", real, c.RealRoot+rel, errSymlink)}
	}
	return nil
}
