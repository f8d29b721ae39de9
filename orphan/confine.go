package orphan

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/fileio"
)

// errSymlink is the reason a symbolic link inside a table stops cleanup.
var errSymlink = errors.New("a symbolic link inside the table directory; Paimon never creates one, and cleanup must not follow it out of the table")

// confine keeps orphan cleanup inside the table directory. Paimon never
// creates symbolic links, so one inside a table is something cleanup does
// not understand: it fails closed (an *expire.DamagedError naming the link)
// rather than skip it, since a linked data directory could hold files the
// table references, and a followed one could lead anywhere.
type confine struct {
	fs             fileio.FileIO
	root, realRoot string
}

func newConfine(ctx context.Context, fsys fileio.FileIO, root string) (*confine, error) {
	real, err := fsys.RealPath(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("orphan %s: resolve the table directory: %w", root, err)
	}
	return &confine{fs: fsys, root: root, realRoot: strings.TrimRight(real, "/")}, nil
}

// list lists dir, refusing a symbolic link among its entries and a dir
// that does not resolve to its own place under the table root.
func (c *confine) list(ctx context.Context, dir string) ([]fileio.FileInfo, error) {
	ents, err := c.fs.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	if len(ents) == 0 {
		return nil, nil
	}
	if err := c.check(ctx, dir); err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.IsSymlink {
			return nil, &expire.DamagedError{Table: c.root, File: e.Path, Err: errSymlink}
		}
	}
	return ents, nil
}

// check verifies that p, a path under the table root, resolves to the same
// place under the root's real path: no component between the root and p
// (p included) is a symbolic link. A missing p gives an error wrapping
// fileio.ErrNotExist.
func (c *confine) check(ctx context.Context, p string) error {
	rel, ok := strings.CutPrefix(p, c.root)
	if !ok || (rel != "" && rel[0] != '/') {
		return &expire.DamagedError{Table: c.root, File: p, Err: errors.New("outside the table directory")}
	}
	real, err := c.fs.RealPath(ctx, p)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", p, err)
	}
	if real != c.realRoot+rel {
		return &expire.DamagedError{Table: c.root, File: p, Err: fmt.Errorf("resolves to %s, not %s: %w", real, c.realRoot+rel, errSymlink)}
	}
	return nil
}
