package expire_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
)

// A missing file counts as gone with its snapshot only if the snapshot file
// disappears within the grace period (a concurrent expiration deletes it
// last), or lies below a trusted EARLIEST hint.
func TestVanishWaitsForTheSnapshotToGo(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, id := range []string{"1", "2", "3"} {
		if err := os.MkdirAll(root+"/snapshot", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(root+"/snapshot/snapshot-"+id, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := expire.Vanish{FS: fileio.NewLocal(), Grace: 2 * time.Second}
	snap := func(id int64) string { return expire.SnapshotPath(root, id) }

	go func() {
		time.Sleep(300 * time.Millisecond)
		os.Remove(snap(1))
	}()
	start := time.Now()
	if ok, err := v.MayBeMissing(ctx, snap(1), root, 1); err != nil || !ok {
		t.Fatalf("snapshot deleted during the grace period: %v %v", ok, err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 1500*time.Millisecond {
		t.Fatalf("returned after %s; want soon after the deletion", d)
	}
	v.Grace = 300 * time.Millisecond
	if ok, err := v.MayBeMissing(ctx, snap(2), root, 2); err != nil || ok {
		t.Fatalf("a snapshot that stays: %v %v; want damage", ok, err)
	}
	if err := os.WriteFile(filepath.Join(root, "snapshot", "EARLIEST"), []byte("3"), 0o644); err != nil {
		t.Fatal(err)
	}
	v.Grace = -1
	if ok, err := v.MayBeMissing(ctx, snap(2), root, 2); err != nil || !ok {
		t.Fatalf("a snapshot below a trusted EARLIEST: %v %v", ok, err)
	}
	if ok, _ := v.MayBeMissing(ctx, snap(3), root, 3); ok {
		t.Fatal("the EARLIEST snapshot itself was condemned")
	}
	if ok, _ := v.MayBeMissing(ctx, filepath.Join(root, "tag", "tag-x"), root, -1); !ok {
		t.Fatal("a tag whose file is gone")
	}
	if err := os.WriteFile(filepath.Join(root, "snapshot", "EARLIEST"), []byte("9"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, _ := v.MayBeMissing(ctx, snap(2), root, 2); ok {
		t.Fatal("an EARLIEST naming no snapshot is not trusted")
	}
}

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
		s, err := expire.ReadSnapshotFile(ctx, fs, expire.SnapshotPath(root, i))
		if err != nil {
			t.Fatal(err)
		}
		id, stat = i, s.Statistics
	}
	if stat == "" || latest-id > 8 {
		t.Fatalf("no statistics file in the last snapshots (latest %d)", latest)
	}
	if err := os.WriteFile(filepath.Join(root, "statistics", stat), []byte(`{"snapshotId":`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := expiretest.Tree(t, root)
	_, err := expire.Run(ctx, sim.Source(), opts(sim, int(latest-id)+1, 1<<30, 50, 0))
	var de *expire.DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), stat) {
		t.Fatalf("want a DamagedError naming %s, got %v", stat, err)
	}
	if diff := expiretest.DiffTrees(before, expiretest.Tree(t, root)); diff != "" {
		t.Fatalf("the table changed:\n%s", diff)
	}
}
