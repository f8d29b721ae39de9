package orphan_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/table"
)

// After decoupled expiry (long-lived changelogs whose base and delta
// manifest lists, index manifests and statistics files Paimon's snapshot
// expiry already deleted), orphan cleanup runs without calling the table
// damaged and keeps every file a long-lived changelog's read needs (its
// changelog manifests and files, or with changelog-producer none its delta
// manifests and APPEND data files), while still deleting planted orphans.
func TestRunKeepsWhatLongLivedChangelogsNeed(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 16; seed++ {
		produce := seed%2 == 0
		t.Run(fmt.Sprintf("seed%d_produce%v", seed, produce), func(t *testing.T) {
			fs := expiretest.NewMemFS()
			clock := t0
			fs.Clock = func() time.Time { return clock }
			if err := fileio.WriteFile(ctx, fs, root+"/schema/schema-0", []byte(`{"id":0,"partitionKeys":["p"],"options":{"bucket":"2"}}`)); err != nil {
				t.Fatal(err)
			}
			sim := expiretest.New(fs, root, seed)
			sim.NoChangelog = !produce
			r := rand.New(rand.NewPCG(seed, 11))
			o := expire.DefaultOptions()
			o.RetainMin, o.RetainMax, o.TimeRetained = 2, 3, 0
			o = o.SetChangelogRetention(6, 6, 0)
			o.ProduceChangelog = produce
			for round := 0; round < 4; round++ {
				for range 3 + r.IntN(4) {
					if _, err := sim.Commit(ctx, 60_000); err != nil {
						t.Fatal(err)
					}
				}
				if r.IntN(3) == 0 {
					if err := sim.Tag(ctx, fmt.Sprint("t", sim.Latest()), sim.Latest()); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := expire.Run(ctx, sim.Source(), expire.RunOptions{Options: o, Now: time.UnixMilli(sim.TimeMillis() + 1)}); err != nil {
					t.Fatal(err)
				}
			}
			cls, err := table.ListIDs(ctx, fs, root+"/changelog", "changelog-")
			if err != nil || len(cls) == 0 {
				t.Fatalf("no long-lived changelog (%v)", err)
			}
			orphanPath := root + "/p=0/bucket-0/data-orphan-0.parquet"
			if err := fileio.WriteFile(ctx, fs, orphanPath, []byte("x")); err != nil {
				t.Fatal(err)
			}
			clock = t0.Add(48 * time.Hour)
			if _, err := orphan.Run(ctx, sim.Source(), orphan.RunOptions{Now: clock.Add(time.Hour), OlderThan: time.Hour}); err != nil {
				t.Fatalf("orphan cleanup after decoupled expiry: %v", err)
			}
			if ok, _ := fileio.Exists(ctx, fs, orphanPath); ok {
				t.Fatal("the planted orphan survived")
			}
			if err := sim.CheckReadable(ctx); err != nil {
				t.Fatal(err)
			}
			for _, id := range cls {
				for _, p := range sim.ChangelogFiles(sim.Snapshots[id]) {
					if ok, _ := fileio.Exists(ctx, fs, p); !ok {
						t.Fatalf("changelog %d lost %s", id, p)
					}
				}
			}
		})
	}
}
