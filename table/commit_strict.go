package table

// The strict-mode check of a commit (CommitRequest.LastSafeSnapshot):
// after Java's commit.strict-mode.last-safe-snapshot, which Paimon's
// rescale sets to the snapshot it read, scoped to the partitions the
// commit touches.

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/table/manifest"
)

// checkStrict fails with a ConflictError when a snapshot after
// req.LastSafeSnapshot up to latest, committed by another user, added or
// deleted a data file in a real bucket (bucket >= 0) of a partition the
// delta touches: the commit was computed from the safe snapshot and would
// otherwise overwrite (lose) what that snapshot wrote there.
//
// Java's StrictModeChecker fails on any COMPACT or OVERWRITE snapshot of
// another user anywhere in the table and, for an OVERWRITE, on any APPEND
// with files in real buckets; this check looks at what each snapshot
// changed rather than at its kind, in the touched partitions only, so a
// compaction or a write of another partition, and files written to
// bucket-postpone, do not fail it. A snapshot that cannot be read (expired
// meanwhile, damaged) fails the commit: what it changed is unknown.
func (t *Table) checkStrict(ctx context.Context, latest *Snapshot, req *CommitRequest) error {
	if req.LastSafeSnapshot <= 0 || latest == nil || latest.ID <= req.LastSafeSnapshot {
		return nil
	}
	touched := map[string]bool{}
	for i := range req.Entries {
		touched[string(req.Entries[i].Partition)] = true
	}
	for i := range req.IndexChanges {
		touched[string(req.IndexChanges[i].Partition)] = true
	}
	for id := req.LastSafeSnapshot + 1; id <= latest.ID; id++ {
		s := latest
		if id != latest.ID {
			var err error
			if s, err = t.Snapshot(ctx, id); err != nil {
				return fmt.Errorf("commit to %s: strict mode since snapshot %d: cannot read snapshot %d: %w", t.FullName(), req.LastSafeSnapshot, id, err)
			}
		}
		if s.CommitUser == req.CommitUser {
			continue
		}
		delta, err := manifest.ReadList(ctx, t.fio, t.paths.ManifestPath(s.DeltaManifestList))
		if err != nil {
			return fmt.Errorf("commit to %s: strict mode since snapshot %d: snapshot %d: %w", t.FullName(), req.LastSafeSnapshot, id, err)
		}
		entries, err := t.ReadManifests(ctx, delta)
		if err != nil {
			return fmt.Errorf("commit to %s: strict mode since snapshot %d: snapshot %d: %w", t.FullName(), req.LastSafeSnapshot, id, err)
		}
		for i := range entries {
			e := &entries[i]
			if e.Bucket >= 0 && touched[string(e.Partition)] {
				return &ConflictError{Table: t.FullName(), Snapshot: latest.ID, Reason: fmt.Sprintf(
					"snapshot %d (%s by %s), committed after snapshot %d this commit was computed from, changed file %s in bucket %d of a partition this commit overwrites; giving up so that its rows are not lost",
					id, s.CommitKind, s.CommitUser, req.LastSafeSnapshot, e.File.FileName, e.Bucket)}
			}
		}
	}
	return nil
}
