package table

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/compactd/compactd/fileio"
)

// DamagedError reports a metadata file that expiration or orphan cleanup
// had to read before deleting anything and could not: missing, unreadable
// or corrupt, and reached from a snapshot, tag, branch or consumer the run
// keeps (or from an expiring snapshot no earlier run condemned); or an
// entry of the table directory Paimon never writes (a symbolic link, a
// directory where a metadata file belongs). Deleting on the strength of
// what such a table seems to reference could destroy live data, so the run
// stops before its first deletion. Retrying does not help; the scheduler
// halts the table with this error.
type DamagedError struct {
	Table string // table root
	File  string // the file: a path, or a name in the table's manifest/ directory
	By    string // what reaches it: "snapshot 8", "tag t1", "branch b snapshot 2", ...
	Err   error
}

func (e *DamagedError) Error() string {
	by := ""
	if e.By != "" {
		by = " (reached from " + e.By + ")"
	}
	return fmt.Sprintf("table %s: refusing to delete anything: %s%s: %v", e.Table, e.File, by, e.Err)
}

func (e *DamagedError) Unwrap() error { return e.Err }

// ErrCorrupt is wrapped around every error caused by the content of a
// metadata file (by the fail-closed readers of this package and by every
// reach.Metadata implementation), as opposed to the store failing to
// deliver it.
var ErrCorrupt = errors.New("corrupt metadata file")

// IsDamage reports whether err says something about the table rather than
// about the store's availability: the file is missing, is not a file, may
// not be read, or holds what cannot be decoded. Other errors (network,
// throttling) are not damage: a run still stops before deleting, and a
// retry may succeed.
func IsDamage(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, syscall.EISDIR)
}

// Damaged wraps err as a *DamagedError naming the table root, the file and
// what reaches it (by, may be empty) when it is damage (IsDamage), and
// otherwise with the same context as a plain error. A *DamagedError already
// inside err is kept as it is (its table filled in when empty).
func Damaged(table, file, by string, err error) error {
	var d *DamagedError
	if errors.As(err, &d) {
		if d.Table == "" {
			d.Table = table
		}
		return err
	}
	if !IsDamage(err) {
		msg := "read " + file
		if by != "" {
			msg += " (reached from " + by + ")"
		}
		if table != "" {
			msg = "table " + table + ": " + msg
		}
		return fmt.Errorf("%s: %w", msg, err)
	}
	return &DamagedError{Table: table, File: file, By: by, Err: err}
}

// WithTable sets the table of a *DamagedError inside err that has none and
// returns err.
func WithTable(err error, table string) error {
	var d *DamagedError
	if errors.As(err, &d) && d.Table == "" {
		d.Table = table
	}
	return err
}

// notAFile refuses a listed metadata entry that is a directory or a
// symbolic link: Paimon writes neither.
func notAFile(e fileio.FileInfo) error {
	switch {
	case e.IsSymlink:
		return &DamagedError{File: e.Path, Err: errors.New("a symbolic link where Paimon writes a metadata file")}
	case e.IsDir:
		return &DamagedError{File: e.Path, Err: fmt.Errorf("a directory where Paimon writes a metadata file: %w", syscall.EISDIR)}
	}
	return nil
}
