package reach_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
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
	v := reach.Vanish{FS: fileio.NewLocal(), Grace: 2 * time.Second}
	snap := func(id int64) string { return table.SnapshotPath(root, id) }

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
