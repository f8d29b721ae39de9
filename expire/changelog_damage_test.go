package expire_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// decoupledState builds, on local storage, a table with long-lived
// changelogs of which the next changelog expiry expires some, and a tag on
// snapshot 2. It returns the dry-run report of that expiry.
func decoupledState(t *testing.T, produce bool, seed uint64) (*expiretest.Table, expire.RunOptions, expire.ChangelogReport) {
	t.Helper()
	ctx := context.Background()
	sim := expiretest.New(fileio.NewLocal(), t.TempDir(), seed)
	sim.NoChangelog = !produce
	commit := func(n int) {
		for range n {
			if _, err := sim.Commit(ctx, 60_000); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit(3)
	if err := sim.Tag(ctx, "early", 2); err != nil {
		t.Fatal(err)
	}
	commit(7)
	o := decoupledOpts(sim, 2, 2, 5, 5, produce)
	o.VanishGrace = -1
	if _, err := expire.Run(ctx, sim.Source(), o); err != nil {
		t.Fatal(err)
	}
	commit(4)
	o = decoupledOpts(sim, 2, 2, 5, 5, produce)
	o.VanishGrace = -1
	if _, err := expire.Run(ctx, sim.Source(), o); err != nil {
		t.Fatal(err)
	}
	commit(3)
	o = decoupledOpts(sim, 2, 2, 5, 5, produce)
	o.VanishGrace = -1
	dry := o
	dry.DryRun = true
	rep, err := expire.ExpireChangelogs(ctx, sim.Source(), dry)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changelogs) == 0 {
		t.Fatalf("seed %d: the next changelog expiry expires nothing", seed)
	}
	return sim, o, rep
}

// Changelog expiry refuses, naming the table and the file and changing
// nothing, whenever it cannot read what it decides on: a long-lived
// changelog file; the changelog manifest list of an expiring changelog
// (Java reads it as empty and deletes the changelog, leaving its files
// behind); with changelog-producer none its delta list, the earliest
// snapshot's data manifest list (Java then leaves the earliest snapshot's
// manifests out of what it must keep, and deletes those the expiring
// changelogs share with it) and the tag's manifests (Java skips that
// changelog's data files silently).
func TestChangelogExpiryRefusesDamagedMetadata(t *testing.T) {
	ctx := context.Background()
	type target struct {
		name string
		path func(sim *expiretest.Table, rep expire.ChangelogReport) string
		d    expiretest.Damage
	}
	first := func(sim *expiretest.Table, rep expire.ChangelogReport) table.Snapshot {
		return sim.Snapshots[rep.Changelogs[0]]
	}
	man := func(sim *expiretest.Table, n string) string { return filepath.Join(sim.Root, "manifest", n) }
	var targets []target
	for _, d := range []expiretest.Damage{expiretest.Truncated, expiretest.Corrupt, expiretest.Unreadable} {
		targets = append(targets, target{"changelog file " + string(d), func(sim *expiretest.Table, rep expire.ChangelogReport) string {
			return table.ChangelogFilePath(sim.Root, rep.Changelogs[0])
		}, d})
	}
	targets = append(targets,
		target{"earliest snapshot's base list", func(sim *expiretest.Table, rep expire.ChangelogReport) string {
			ids, _ := table.ListIDs(ctx, sim.FS, filepath.Join(sim.Root, "snapshot"), "snapshot-")
			return man(sim, sim.Snapshots[ids[0]].BaseManifestList)
		}, expiretest.Missing},
		target{"the tag's base list", func(sim *expiretest.Table, rep expire.ChangelogReport) string {
			return man(sim, sim.Snapshots[2].BaseManifestList)
		}, expiretest.Missing},
	)
	for _, produce := range []bool{true, false} {
		ts := targets
		if produce {
			ts = append(ts, target{"changelog manifest list", func(sim *expiretest.Table, rep expire.ChangelogReport) string {
				for _, id := range rep.Changelogs {
					if l := reach.Opt(sim.Snapshots[id].ChangelogManifestList); l != "" {
						return man(sim, l)
					}
				}
				return ""
			}, expiretest.Missing})
		} else {
			ts = append(ts, target{"delta list", func(sim *expiretest.Table, rep expire.ChangelogReport) string {
				return man(sim, first(sim, rep).DeltaManifestList)
			}, expiretest.Missing})
		}
		for _, tg := range ts {
			t.Run(fmt.Sprintf("produce%v/%s", produce, tg.name), func(t *testing.T) {
				var sim *expiretest.Table
				var o expire.RunOptions
				var p string
				for seed := uint64(1); seed < 20 && p == ""; seed++ {
					var rep expire.ChangelogReport
					sim, o, rep = decoupledState(t, produce, seed)
					p = tg.path(sim, rep)
				}
				if p == "" {
					t.Fatal("no seed has such a file")
				}
				tg.d.Apply(t, p, t.TempDir())
				before := expiretest.Tree(t, sim.Root)
				_, err := expire.ExpireChangelogs(ctx, sim.Source(), o)
				var de *table.DamagedError
				if !errors.As(err, &de) || !strings.Contains(err.Error(), filepath.Base(p)) || !strings.Contains(err.Error(), sim.Root) {
					t.Fatalf("want a DamagedError naming the table and %s, got %v", filepath.Base(p), err)
				}
				if diff := expiretest.DiffTrees(before, expiretest.Tree(t, sim.Root)); diff != "" {
					t.Fatalf("the table changed:\n%s", diff)
				}
			})
		}
	}
}
