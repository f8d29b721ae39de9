package expire_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
// other than the earliest
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
				// Not the earliest: that one may be half expired by Paimon.
				for _, id := range rep.Changelogs[1:] {
					if l := reach.Opt(sim.Snapshots[id].ChangelogManifestList); l != "" {
						return man(sim, l)
					}
				}
				return ""
			}, expiretest.Missing})
		} else {
			ts = append(ts, target{"delta list", func(sim *expiretest.Table, rep expire.ChangelogReport) string {
				if len(rep.Changelogs) < 2 {
					return ""
				}
				return man(sim, sim.Snapshots[rep.Changelogs[1]].DeltaManifestList)
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

// Paimon's changelog expiry removes one changelog at a time from the
// earliest (its data files, then its manifests and lists, then the
// changelog file) and writes its hint last: killed midway, it leaves the
// earliest long-lived changelog with its files partly deleted. compactd's
// next run (snapshot expiry walking the changelogs, then changelog expiry)
// accepts that state and ends with the files of a run on the intact table.
func TestDecoupledRunFinishesAChangelogPaimonHalfExpired(t *testing.T) {
	for _, produce := range []bool{true, false} {
		for _, upTo := range []string{"data", "lists"} {
			t.Run(fmt.Sprintf("produce%v/%s", produce, upTo), func(t *testing.T) {
				for seed := uint64(1); seed < 20; seed++ {
					if halfExpired(t, produce, upTo, seed) {
						return
					}
				}
				t.Fatal("no seed has an earliest changelog with files to delete")
			})
		}
	}
}

// halfExpired runs the test of TestDecoupledRunFinishesAChangelogPaimonHalfExpired
// on one seed; false when the earliest changelog has nothing to delete.
func halfExpired(t *testing.T, produce bool, upTo string, seed uint64) bool {
	ctx := context.Background()
	ref, o, rep := decoupledState(t, produce, seed)
	sim, _, _ := decoupledState(t, produce, seed)
	// What Paimon deletes for the earliest changelog alone.
	var tags []table.Snapshot
	tl, err := table.ReadTags(ctx, sim.FS, sim.Root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range tl {
		tags = append(tags, tg.Snapshot)
	}
	snaps := ids(t, sim, "snapshot", "snapshot-")
	next := rep.End
	if len(rep.Changelogs) > 1 {
		next = rep.Changelogs[1]
	}
	plan, err := expire.PlanChangelogs(ctx, sim.Source().Meta, produce, []table.Snapshot{sim.Snapshots[rep.Changelogs[0]]},
		sim.Snapshots[next], sim.Snapshots[snaps[0]], tags, nil)
	if err != nil {
		t.Fatal(err)
	}
	doomed, err := plan.DataFiles.Strings()
	if err != nil {
		t.Fatal(err)
	}
	if upTo == "lists" {
		for _, n := range slices.Concat(plan.Manifests, plan.ManifestLists) {
			doomed = append(doomed, filepath.Join(sim.Root, "manifest", n))
		}
	}
	if plan.DataFiles.Len() == 0 {
		return false
	}
	for _, p := range doomed {
		if err := sim.FS.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := expire.Run(ctx, ref.Source(), o); err != nil {
		t.Fatal(err)
	}
	o.Now = time.UnixMilli(sim.TimeMillis()).Add(time.Minute)
	if _, err := expire.Run(ctx, sim.Source(), o); err != nil {
		t.Fatalf("after a half-finished Paimon changelog expiry: %v", err)
	}
	want, _ := expiretest.AllFiles(ctx, ref.FS, ref.Root)
	got, _ := expiretest.AllFiles(ctx, sim.FS, sim.Root)
	if !slices.Equal(rel(got, sim.Root), rel(want, ref.Root)) {
		t.Fatalf("seed %d: files differ from a run on the intact table:\n got %v\nwant %v", seed, rel(got, sim.Root), rel(want, ref.Root))
	}
	return true
}
