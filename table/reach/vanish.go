package reach

import (
	"context"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

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
			if hint, trusted := table.TrustedEarliest(ctx, v.FS, branchRoot); trusted && id < hint {
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
