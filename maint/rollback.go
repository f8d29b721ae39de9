package maint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// RollbackResult says what a rollback changed.
type RollbackResult struct {
	// Snapshot is the snapshot the table was rolled back to (now the latest).
	Snapshot int64
	// DeletedSnapshots are the snapshot files removed, newest first.
	DeletedSnapshots []int64
	// DeletedChangelogs are the long-lived changelog files removed.
	DeletedChangelogs []int64
	// DeletedTags are the tags of newer snapshots that were removed.
	DeletedTags []string
	// Recreated is set when the target snapshot had expired and its file was
	// written back from the tag.
	Recreated bool
}

// RollbackToSnapshot rolls the table back to snapshot id as Paimon's
// rollback_to does on a filesystem catalog (FileStoreTable.rollbackTo and
// RollbackHelper): the LATEST hint is set to id, every snapshot file newer
// than id is deleted newest first, long-lived changelogs newer than id are
// deleted and the changelog LATEST hint fixed, and tags of newer snapshots
// are deleted. A snapshot that expired but is held by a tag is restored
// through that tag (RollbackToTag). It is metadata only: data files and
// manifests only the removed snapshots used become orphans, for orphan
// cleanup.
//
// As in Paimon, writers must be stopped: a commit racing the rollback can
// publish a snapshot on top of the one being removed.
func RollbackToSnapshot(ctx context.Context, t *table.Table, id int64) (RollbackResult, error) {
	s, err := t.Snapshot(ctx, id)
	if errors.Is(err, fileio.ErrNotExist) {
		tags, terr := ListTags(ctx, t)
		if terr != nil {
			return RollbackResult{}, fmt.Errorf("rollback %s: %w", t.FullName(), terr)
		}
		for _, tg := range tags {
			if tg.ID == id {
				return RollbackToTag(ctx, t, tg.Name)
			}
		}
		return RollbackResult{}, fmt.Errorf("rollback %s: snapshot %d does not exist and no tag holds it: %w", t.FullName(), id, err)
	}
	if err != nil {
		return RollbackResult{}, fmt.Errorf("rollback %s: %w", t.FullName(), err)
	}
	return rollback(ctx, t, s, false)
}

// RollbackToTimestamp rolls the table back to the newest snapshot committed
// at or before ts, found as Java's rollback_to_timestamp finds it
// (SnapshotManager.earlierOrEqualTimeMills: a binary search over the
// snapshots by commit time).
func RollbackToTimestamp(ctx context.Context, t *table.Table, ts time.Time) (RollbackResult, error) {
	id, err := snapshotAtOrBefore(ctx, t, ts.UnixMilli())
	if err != nil {
		return RollbackResult{}, fmt.Errorf("rollback %s to %s: %w", t.FullName(), ts.Format(time.RFC3339Nano), err)
	}
	return RollbackToSnapshot(ctx, t, id)
}

func snapshotAtOrBefore(ctx context.Context, t *table.Table, millis int64) (int64, error) {
	ids, err := t.SnapshotIDs(ctx)
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, table.ErrNoSnapshot
	}
	first, err := t.Snapshot(ctx, ids[0])
	if err != nil {
		return 0, err
	}
	if first.TimeMillis > millis {
		return 0, fmt.Errorf("no snapshot was committed at or before it (the earliest, %d, was committed at %s)",
			first.ID, time.UnixMilli(first.TimeMillis).UTC().Format(time.RFC3339Nano))
	}
	lo, hi, found := 0, len(ids)-1, ids[0]
	for lo <= hi {
		mid := lo + (hi-lo)/2
		s, err := t.Snapshot(ctx, ids[mid])
		if err != nil {
			return 0, err
		}
		switch {
		case s.TimeMillis > millis:
			hi = mid - 1
		case s.TimeMillis < millis:
			lo, found = mid+1, s.ID
		default:
			return s.ID, nil
		}
	}
	return found, nil
}

// RollbackToTag rolls the table back to the snapshot of tag name (see
// RollbackToSnapshot). When that snapshot has expired, its file is written
// back from the tag and EARLIEST points at it; compactd writes it before
// deleting the newer snapshots (Java writes it after), so a crash midway
// never leaves the table without a snapshot.
func RollbackToTag(ctx context.Context, t *table.Table, name string) (RollbackResult, error) {
	tag, err := t.Tag(ctx, name)
	if errors.Is(err, fileio.ErrNotExist) {
		return RollbackResult{}, fmt.Errorf("rollback %s to tag %s: %w", t.FullName(), name, ErrTagNotFound)
	}
	if err != nil {
		return RollbackResult{}, fmt.Errorf("rollback %s: %w", t.FullName(), err)
	}
	// Java writes the restored snapshot with its own Snapshot class.
	s := tag.Snapshot.WithoutLegacy()
	return rollback(ctx, t, &s, true)
}

func rollback(ctx context.Context, t *table.Table, target *table.Snapshot, fromTag bool) (RollbackResult, error) {
	res := RollbackResult{Snapshot: target.ID}
	fail := func(err error) (RollbackResult, error) {
		return res, fmt.Errorf("rollback %s to snapshot %d: %w", t.FullName(), target.ID, err)
	}
	ids, err := t.SnapshotIDs(ctx)
	if err != nil {
		return fail(err)
	}
	if fromTag {
		exists, err := fileio.Exists(ctx, t.FileIO(), t.Paths().SnapshotPath(target.ID))
		if err != nil {
			return fail(err)
		}
		if !exists {
			if err := t.WriteSnapshot(ctx, target); err != nil && !errors.Is(err, fileio.ErrExist) {
				return fail(err)
			}
			res.Recreated = true
		}
	}
	if err := t.WriteLatestHint(ctx, target.ID); err != nil {
		return fail(err)
	}
	// Newest first, so a crash leaves a contiguous range ending at a
	// snapshot that is still whole.
	for _, id := range slices.Backward(ids) {
		if id <= target.ID {
			break
		}
		if err := t.FileIO().Delete(ctx, t.Paths().SnapshotPath(id)); err != nil && !errors.Is(err, fileio.ErrNotExist) {
			return fail(err)
		}
		res.DeletedSnapshots = append(res.DeletedSnapshots, id)
	}
	if res.DeletedChangelogs, err = rollbackChangelogs(ctx, t, target.ID); err != nil {
		return fail(err)
	}
	tags, err := ListTags(ctx, t)
	if err != nil {
		return fail(err)
	}
	for _, tg := range slices.Backward(tags) {
		if tg.ID <= target.ID {
			break
		}
		if err := t.FileIO().Delete(ctx, t.Paths().TagPath(tg.Name)); err != nil && !errors.Is(err, fileio.ErrNotExist) {
			return fail(err)
		}
		res.DeletedTags = append(res.DeletedTags, tg.Name)
	}
	if res.Recreated {
		if err := t.WriteEarliestHint(ctx, target.ID); err != nil {
			return fail(err)
		}
	}
	return res, nil
}

// rollbackChangelogs deletes long-lived changelog files newer than id and
// points changelog/LATEST at id (-1 when none is left), as
// RollbackHelper.cleanLongLivedChangelogs does.
func rollbackChangelogs(ctx context.Context, t *table.Table, id int64) ([]int64, error) {
	ids, err := t.ChangelogIDs(ctx)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var doomed []int64
	for _, n := range slices.Backward(ids) {
		if n <= id {
			break
		}
		doomed = append(doomed, n)
	}
	if len(doomed) == 0 {
		return nil, nil
	}
	// Java: the target when older changelogs remain, else -1 ("unknown").
	hint := int64(-1)
	if len(doomed) < len(ids) {
		hint = id
	}
	if err := t.WriteChangelogLatestHint(ctx, hint); err != nil {
		return nil, fmt.Errorf("changelog LATEST: %w", err)
	}
	for _, n := range doomed {
		if err := t.FileIO().Delete(ctx, t.Paths().ChangelogPath(n)); err != nil && !errors.Is(err, fileio.ErrNotExist) {
			return nil, err
		}
	}
	return doomed, nil
}
