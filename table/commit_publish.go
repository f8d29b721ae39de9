package table

// The commit point of Table.Commit, pluggable as Java's SnapshotCommit is:
// a warehouse on a file system publishes the snapshot file itself
// (PublishSnapshotFile); a catalog may wrap that in its lock (the JDBC
// catalog's distributed lock) or publish through its own API (a REST
// catalog's commit endpoint). The catalog packages implement
// SnapshotCommit; table knows none of them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table/manifest"
)

// SnapshotCommit publishes a snapshot a commit prepared: the manifests it
// names are written, only the snapshot itself is not.
type SnapshotCommit interface {
	// CommitSnapshot publishes data, the JSON of s, as snapshot s.ID of t;
	// delta are the entries of the snapshot's delta manifest (nil for a
	// snapshot WriteSnapshot writes back), for catalogs that account for
	// them (a REST catalog's partition statistics).
	// An error wrapping fileio.ErrExist says the id is taken and nothing
	// was published (Commit rebases and tries the next id); one wrapping
	// ErrCommitOutcomeUnknown says the snapshot may have been published
	// (Commit keeps its files and looks for it). Any other error means
	// nothing was published. A nil error means snapshot s.ID is s.
	CommitSnapshot(ctx context.Context, t *Table, s *Snapshot, data []byte, delta []manifest.Entry) error
}

// SetSnapshotCommit makes c the commit point of every later Commit and
// WriteSnapshot of t; nil restores the file system's (PublishSnapshotFile).
// A catalog sets it on the tables it opens, before they are shared.
func (t *Table) SetSnapshotCommit(c SnapshotCommit) { t.snapshotCommit = c }

// HasCatalogCommit says whether t publishes through a catalog's
// SnapshotCommit rather than straight to the file system.
func (t *Table) HasCatalogCommit() bool { return t.snapshotCommit != nil }

// PrepareCommit lets the store start what its exclusive create must learn
// first (the S3 conditional-write probe, three round trips) in the
// background, so that a commit coming later does not wait for it. It does
// nothing for a read-only table or one whose catalog publishes through its
// own API (nothing may or need be written then), and never fails: the
// commit reports the probe's answer.
func (t *Table) PrepareCommit(ctx context.Context) {
	if t.readOnly != "" || t.snapshotCommit != nil {
		return
	}
	fileio.PrepareExclusive(ctx, t.fio, t.paths.SnapshotDir())
}

func (t *Table) publish(ctx context.Context, s *Snapshot, data []byte, delta []manifest.Entry) error {
	if t.readOnly != "" {
		// A catalog publishes through its own API, not the table's
		// FileIO, so the refusal of writes (writable.go) is checked here too.
		return t.refuse(t.paths.SnapshotPath(s.ID))
	}
	if t.snapshotCommit != nil {
		return t.snapshotCommit.CommitSnapshot(ctx, t, s, data, delta)
	}
	return t.PublishSnapshotFile(ctx, s, data)
}

// PublishSnapshotFile publishes data as snapshot/snapshot-<s.ID> with an
// exclusive create, reads it back, and then points the LATEST hint at it.
// It is the file system's commit point, and what a lock-holding catalog
// runs inside its lock (as Java's RenamingSnapshotCommit does).
func (t *Table) PublishSnapshotFile(ctx context.Context, s *Snapshot, data []byte) error {
	path := t.paths.SnapshotPath(s.ID)
	// From here on a cancellation of ctx no longer tells whether the
	// snapshot was published: the publish and its verification read back
	// with a context that outlives it.
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := t.fio.WriteExclusive(ctx, path, data); err != nil {
		if errors.Is(err, fileio.ErrExist) {
			return fmt.Errorf("commit to %s: publish snapshot %d: %w", t.FullName(), s.ID, err)
		}
		// An interrupted publish (cancellation, lost response) may have
		// landed: read back before calling it failed.
		if back, rerr := fileio.ReadFile(vctx, t.fio, path); rerr == nil && bytes.Equal(back, data) {
			t.hintLatest(vctx, s.ID)
			return nil
		}
		return fmt.Errorf("commit to %s: publish snapshot %d: %w: %w", t.FullName(), s.ID, err, ErrCommitOutcomeUnknown)
	}
	// Java's local and Hadoop file IO publish with check-then-rename, which
	// replaces an existing target: a Java writer racing us for the same id
	// can overwrite our snapshot after our exclusive create. Reading it back
	// tells whether we still hold the id; if not, nothing references our
	// files and the commit is retried on top of the winner.
	//
	// The LATEST hint is written while the snapshot is read back: it only
	// says that snapshot-<s.ID> exists, which holds from the exclusive
	// create on whoever's snapshot it turns out to be.
	hinted := make(chan struct{})
	go func() {
		defer close(hinted)
		t.hintLatest(vctx, s.ID)
	}()
	back, err := fileio.ReadFile(vctx, t.fio, path)
	<-hinted
	if err != nil {
		return fmt.Errorf("commit to %s: verify snapshot %d: %w: %w", t.FullName(), s.ID, err, ErrCommitOutcomeUnknown)
	}
	if !bytes.Equal(back, data) {
		return fmt.Errorf("commit to %s: snapshot %d was replaced by a concurrent writer: %w", t.FullName(), s.ID, fileio.ErrExist)
	}
	return nil
}

// hintLatest points LATEST at a snapshot just published. The hint is only
// a hint (readers list the directory when it is stale), so a failure is
// logged, not returned: the snapshot is published either way.
func (t *Table) hintLatest(ctx context.Context, id int64) {
	if err := t.WriteLatestHint(ctx, id); err != nil {
		slog.Warn("update LATEST hint", "table", t.FullName(), "snapshot", id, "err", err)
	}
}
