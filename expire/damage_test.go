package expire_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// The statistics file of a retained snapshot must decode (Paimon writes
// JSON) before expiration deletes anything.
func TestExpireRefusesATornStatisticsFileOfARetainedSnapshot(t *testing.T) {
	ctx := context.Background()
	fs := fileio.NewLocal()
	root := t.TempDir()
	sim := history(t, fs, root, 11, 20, false, false)
	latest := sim.Latest()
	var id int64
	var stat string
	for i := latest; i > 0 && stat == ""; i-- {
		s, err := table.ReadSnapshotFile(ctx, fs, table.SnapshotPath(root, i))
		if err != nil {
			t.Fatal(err)
		}
		id, stat = i, reach.Opt(s.Statistics)
	}
	if stat == "" || latest-id > 8 {
		t.Fatalf("no statistics file in the last snapshots (latest %d)", latest)
	}
	if err := os.WriteFile(filepath.Join(root, "statistics", stat), []byte(`{"snapshotId":`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := expiretest.Tree(t, root)
	_, err := expire.Run(ctx, sim.Source(), opts(sim, int(latest-id)+1, 1<<30, 50, 0))
	var de *table.DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), stat) {
		t.Fatalf("want a DamagedError naming %s, got %v", stat, err)
	}
	if diff := expiretest.DiffTrees(before, expiretest.Tree(t, root)); diff != "" {
		t.Fatalf("the table changed:\n%s", diff)
	}
}
