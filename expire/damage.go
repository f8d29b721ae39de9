package expire

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"

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

// ErrCorrupt is wrapped by Metadata implementations (and this package)
// around every error caused by the content of a file, as opposed to the
// store failing to deliver it.
var ErrCorrupt = errors.New("corrupt metadata file")

// isDamage reports whether err says something about the table rather than
// about the store's availability: the file is missing, is not a file, may
// not be read, or holds what cannot be decoded. Other errors (network,
// throttling) are returned as they are: the run still stops before
// deleting, and a retry may succeed.
func isDamage(err error) bool {
	return errors.Is(err, ErrCorrupt) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, syscall.EISDIR)
}

// damaged wraps err as a DamagedError when it is damage (isDamage), and
// otherwise with the same context as a plain error.
func damaged(table, file, by string, err error) error {
	var d *DamagedError
	if errors.As(err, &d) {
		if d.Table == "" {
			d.Table = table
		}
		return err
	}
	if !isDamage(err) {
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

// fillTable sets the table of a DamagedError inside err that has none.
func fillTable(err error, table string) error {
	var d *DamagedError
	if errors.As(err, &d) && d.Table == "" {
		d.Table = table
	}
	return err
}

// DefaultVanishGrace is how long a run waits, when a file a snapshot or tag
// reaches is missing, for that snapshot or tag to disappear too. Paimon's
// expiration deletes manifests before the snapshot files, and tag deletion
// the tag file before the rest: a concurrent one explains a missing file
// only if the snapshot or tag that named it goes away.
const DefaultVanishGrace = 10 * time.Second

// Vanish decides whether a missing file reached from one snapshot or tag
// may be treated as gone with it.
type Vanish struct {
	FS    fileio.FileIO
	Grace time.Duration // 0: DefaultVanishGrace; negative: do not wait
}

// MayBeMissing reports whether something reached from the snapshot or tag
// file at path may be missing: true when that file no longer exists (a
// concurrent expiration or tag deletion is removing it), or, for a snapshot
// (id >= 0) of the branch at branchRoot, when its id lies below a trusted
// EARLIEST hint (an expiration condemned it and may have deleted part of
// it). It polls for up to the grace period. Any other answer means the
// table is damaged.
func (v Vanish) MayBeMissing(ctx context.Context, path, branchRoot string, id int64) (bool, error) {
	grace := v.Grace
	if grace == 0 {
		grace = DefaultVanishGrace
	}
	deadline := time.Now().Add(grace)
	for {
		ok, err := fileio.Exists(ctx, v.FS, path)
		if err != nil {
			return false, err
		}
		if !ok {
			return true, nil
		}
		if id >= 0 {
			if hint, trusted := TrustedEarliest(ctx, v.FS, branchRoot); trusted && id < hint {
				return true, nil
			}
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		t := time.NewTimer(min(left, 200*time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

// TrustedEarliest reads the EARLIEST hint of a branch and reports whether
// it names an existing snapshot. compactd writes it before deleting any
// part of the range below it, so everything below a trusted hint is
// condemned.
func TrustedEarliest(ctx context.Context, fsys fileio.FileIO, branchRoot string) (int64, bool) {
	hint, ok := readHint(ctx, fsys, fileio.Join(branchRoot, "snapshot", "EARLIEST"))
	if !ok {
		return 0, false
	}
	exists, err := fileio.Exists(ctx, fsys, SnapshotPath(branchRoot, hint))
	return hint, err == nil && exists
}

func isMissing(err error) bool { return errors.Is(err, fs.ErrNotExist) }
