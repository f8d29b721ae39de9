package compact_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// cancelAfterPublish cancels the run's context right after a snapshot file
// was created: the moment a SIGTERM grace period may run out.
type cancelAfterPublish struct {
	fileio.FileIO
	cancel context.CancelFunc
}

func (f *cancelAfterPublish) WriteExclusive(ctx context.Context, path string, data []byte) error {
	err := f.FileIO.WriteExclusive(ctx, path, data)
	if strings.Contains(path, "/snapshot/snapshot-") {
		f.cancel()
	}
	return err
}

func TestACompactionCancelledRightAfterItsSnapshotWasPublishedKeepsEveryFileTheSnapshotReferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tb := newTable(t, map[string]string{})
	writeRandom(t, tb, rng, "writer", 6, 30, 50, true)
	before := scanRows(t, tb)
	idBefore, _ := reopen(t, tb).LatestSnapshotID(context.Background())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	faulty, err := table.OpenPath(ctx, &cancelAfterPublish{FileIO: tb.FileIO(), cancel: cancel}, tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	sum, err := compact.Run(ctx, faulty, compact.Options{Full: true})
	idAfter, _ := reopen(t, tb).LatestSnapshotID(context.Background())
	if idAfter != idBefore+1 {
		t.Fatalf("the compaction snapshot was not published: latest %d, before %d", idAfter, idBefore)
	}
	if err != nil {
		t.Logf("compaction reported %v", err)
	} else if sum.Snapshot != idAfter {
		t.Fatalf("compaction reports snapshot %d, the table has %d", sum.Snapshot, idAfter)
	}
	live, disk := liveAndOnDisk(t, tb)
	for _, f := range live {
		if !slices.Contains(disk, f) {
			t.Fatalf("live file %s of snapshot %d was deleted", f, idAfter)
		}
	}
	if got := scanRows(t, tb); !slices.Equal(got, before) {
		t.Fatal("rows changed")
	}
}
