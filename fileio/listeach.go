package fileio

import "context"

// Lister is implemented by stores that list a directory without building
// the whole listing: a directory of a million files is a few hundred MB as
// []FileInfo (orphan cleanup lists every data directory of a table).
type Lister interface {
	// ListEach calls fn with each child of dir, in the order and with the
	// fields List gives them, and returns fn's first error unchanged.
	ListEach(ctx context.Context, dir string, fn func(FileInfo) error) error
}

// ListEach lists dir one entry at a time through the store's ListEach, or
// through List when the store (or a wrapper around it) has none: the
// entries, their order and the errors are List's either way.
func ListEach(ctx context.Context, fio FileIO, dir string, fn func(FileInfo) error) error {
	if l, ok := fio.(Lister); ok {
		return l.ListEach(ctx, dir, fn)
	}
	ents, err := fio.List(ctx, dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
