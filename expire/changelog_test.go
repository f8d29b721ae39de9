package expire_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// decoupledOpts retains snapshots by count (min..max) and changelogs by a
// larger count (cmin..cmax), time-retained 0 for both.
func decoupledOpts(sim *expiretest.Table, min, max, cmin, cmax int, produce bool) expire.RunOptions {
	o := opts(sim, min, max, 50, 0)
	o.Options = o.Options.SetChangelogRetention(cmin, cmax, 0)
	o.ProduceChangelog = produce
	o.VanishGrace = -1 // nothing runs concurrently: a missing file is never explained by waiting
	return o
}

func ids(t *testing.T, sim *expiretest.Table, dir, prefix string) []int64 {
	t.Helper()
	out, err := table.ListIDs(context.Background(), sim.FS, fileio.Join(sim.Root, dir), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkChangelogs verifies that every long-lived changelog is the
// snapshot it was (ids, lists, time) and that everything reading its
// changelog needs is there.
func checkChangelogs(t *testing.T, sim *expiretest.Table) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids(t, sim, "changelog", "changelog-") {
		c, err := table.ReadSnapshotFile(ctx, sim.FS, table.ChangelogFilePath(sim.Root, id))
		if err != nil {
			t.Fatal(err)
		}
		s := sim.Snapshots[id]
		if c.ID != id || c.BaseManifestList != s.BaseManifestList || c.DeltaManifestList != s.DeltaManifestList ||
			!slices.Equal(optList(c.ChangelogManifestList), optList(s.ChangelogManifestList)) || c.TimeMillis != s.TimeMillis {
			t.Fatalf("changelog-%d is not snapshot %d: %+v", id, id, c)
		}
		for _, p := range sim.ChangelogFiles(s) {
			if ok, err := fileio.Exists(ctx, sim.FS, p); err != nil || !ok {
				t.Fatalf("changelog %d needs %s, which is gone (%v)", id, p, err)
			}
		}
	}
}

func optList(p *string) []string {
	if p == nil {
		return nil
	}
	return []string{*p}
}

// On random histories, with and without a changelog producer, rounds of
// commits and decoupled expiry keep: every retained snapshot and tag
// readable; a long-lived changelog for every expired snapshot, with what
// its changelog read needs, until changelog expiry removes it; exactly
// the changelog window ExpireChangelogImpl keeps (counted from the latest
// snapshot, the latest long-lived changelog always kept); and the
// changelog hints.
func TestDecoupledExpiryKeepsTheChangelogWindow(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 12; seed++ {
		produce := seed%2 == 0
		t.Run(fmt.Sprintf("seed%d_produce%v", seed, produce), func(t *testing.T) {
			sim := expiretest.New(expiretest.NewMemFS(), "/wh/db.db/t", seed)
			sim.NoChangelog = !produce
			r := rand.New(rand.NewPCG(seed, 5))
			const smin, smax, cmin, cmax = 2, 4, 3, 9
			expiredSnapshots := 0
			for round := 0; round < 7; round++ {
				for range 1 + r.IntN(5) {
					if _, err := sim.Commit(ctx, 60_000); err != nil {
						t.Fatal(err)
					}
					if r.IntN(7) == 0 {
						if err := sim.Tag(ctx, fmt.Sprintf("t%d", sim.Latest()), sim.Latest()); err != nil {
							t.Fatal(err)
						}
					}
				}
				before := ids(t, sim, "changelog", "changelog-")
				o := decoupledOpts(sim, smin, smax, cmin, cmax, produce)
				rep, err := expire.Run(ctx, sim.Source(), o)
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				expiredSnapshots += len(rep.Snapshots)
				if len(rep.Protected)+len(rep.Changelog.Protected) > 0 {
					// Without branches, Java's rules alone keep everything kept roots need.
					t.Fatalf("round %d: protected %v %v", round, rep.Protected, rep.Changelog.Protected)
				}
				if !slices.Equal(rep.ChangelogsWritten, rep.Snapshots) {
					t.Fatalf("round %d: changelogs written %v for expired snapshots %v", round, rep.ChangelogsWritten, rep.Snapshots)
				}
				if err := sim.CheckReadable(ctx); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				checkChangelogs(t, sim)
				snaps := ids(t, sim, "snapshot", "snapshot-")
				latest, earliestSnap := snaps[len(snaps)-1], snaps[0]
				cls := ids(t, sim, "changelog", "changelog-")
				all := append(slices.Clone(before), rep.Snapshots...)
				slices.Sort(all)
				if len(all) == 0 {
					if len(cls) != 0 {
						t.Fatalf("round %d: changelogs %v from nowhere", round, cls)
					}
					continue
				}
				// The window (time-retained 0, so the count to keep is
				// the minimum): ids from latest-cmin+1 stay, the latest
				// changelog stays, never below what was there.
				wantEarliest := max(all[0], min(all[len(all)-1], latest-cmin+1))
				var want []int64
				for _, id := range all {
					if id >= wantEarliest {
						want = append(want, id)
					}
				}
				if !slices.Equal(cls, want) {
					t.Fatalf("round %d: latest snapshot %d: changelogs %v, want %v (had %v, expired snapshots %v)", round, latest, cls, want, before, rep.Snapshots)
				}
				if cls[len(cls)-1] != earliestSnap-1 {
					t.Fatalf("round %d: latest changelog %d, earliest snapshot %d", round, cls[len(cls)-1], earliestSnap)
				}
				for name, wantHint := range map[string]int64{"LATEST": cls[len(cls)-1], "EARLIEST": cls[0]} {
					b, err := fileio.ReadFile(ctx, sim.FS, fileio.Join(sim.Root, "changelog", name))
					if err != nil || string(b) != fmt.Sprint(wantHint) {
						t.Fatalf("round %d: changelog %s hint %q (%v), want %d", round, name, b, err, wantHint)
					}
				}
			}
			if expiredSnapshots < 5 {
				t.Fatalf("only %d snapshots expired: the test proves little", expiredSnapshots)
			}
		})
	}
}

// SelectChangelogs on hand-made inputs: each bound of ExpireChangelogImpl.
func TestSelectChangelogsWindow(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	base := expire.DefaultOptions()
	base.Limit = 50
	type tc struct {
		name             string
		changelogs       []int64 // ids; time = id*1000 ms
		latestSnapshot   int64
		cmin, cmax       int
		timeRetained     time.Duration
		limit            int
		consumers        []int64
		changelogOnly    bool
		wantEnd          int64
		wantExpireLength int
		below            bool
	}
	seq := func(a, b int64) []int64 {
		var out []int64
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, c := range []tc{
		{name: "max", changelogs: seq(1, 10), latestSnapshot: 14, cmin: 1, cmax: 8, timeRetained: 1000 * time.Second, wantEnd: 7, wantExpireLength: 6},
		{name: "latest changelog stays", changelogs: seq(1, 10), latestSnapshot: 14, cmin: 1, cmax: 2, wantEnd: 10, wantExpireLength: 9},
		{name: "min", changelogs: seq(1, 10), latestSnapshot: 14, cmin: 10, cmax: 12, wantEnd: 5, wantExpireLength: 4},
		{name: "consumer", changelogs: seq(1, 10), latestSnapshot: 14, cmin: 1, cmax: 2, consumers: []int64{4, 9}, wantEnd: 4, wantExpireLength: 3},
		{name: "consumer with changelog-only", changelogs: seq(1, 10), latestSnapshot: 14, cmin: 1, cmax: 2, consumers: []int64{4}, changelogOnly: true, wantEnd: 4, wantExpireLength: 3},
		{name: "limit", changelogs: seq(3, 10), latestSnapshot: 14, cmin: 1, cmax: 2, limit: 3, wantEnd: 6, wantExpireLength: 3},
		// olderThan = 1_000_000-995_000 = 5000 ms: changelog 5 is the first young one.
		{name: "time", changelogs: seq(1, 10), latestSnapshot: 14, cmin: 1, cmax: 20, timeRetained: 995 * time.Second, wantEnd: 5, wantExpireLength: 4},
		{name: "nothing", changelogs: seq(5, 10), latestSnapshot: 14, cmin: 1, cmax: 20, timeRetained: 1000 * time.Second, wantEnd: 5},
		{name: "gap lowers end", changelogs: []int64{1, 2, 3, 7, 8, 9}, latestSnapshot: 14, cmin: 1, cmax: 9, consumers: []int64{5}, wantEnd: 3, wantExpireLength: 2},
		{name: "no snapshot", changelogs: seq(1, 10), latestSnapshot: 0, cmin: 1, cmax: 2, wantEnd: 1},
		{name: "consumer below the earliest", changelogs: seq(5, 10), latestSnapshot: 14, cmin: 1, cmax: 2, consumers: []int64{3}, wantEnd: 5, below: true},
		{name: "min keeps more than there is", changelogs: seq(5, 10), latestSnapshot: 14, cmin: 12, cmax: 12, wantEnd: 5, below: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := base
			if c.limit > 0 {
				o.Limit = c.limit
			}
			o = o.SetChangelogRetention(c.cmin, c.cmax, c.timeRetained)
			o.ConsumerChangelogOnly = c.changelogOnly
			in := expire.ChangelogSelectInput{LatestSnapshot: c.latestSnapshot, Options: o, Now: now}
			for _, id := range c.changelogs {
				in.Changelogs = append(in.Changelogs, expire.SnapshotTime{ID: id, TimeMillis: id * 1000})
			}
			for i, n := range c.consumers {
				in.Consumers = append(in.Consumers, table.Consumer{ID: fmt.Sprint("c", i), NextSnapshot: n})
			}
			sel, err := expire.SelectChangelogs(in)
			if err != nil {
				t.Fatal(err)
			}
			if sel.BelowEarliest != c.below {
				t.Fatalf("BelowEarliest %v, want %v", sel.BelowEarliest, c.below)
			}
			if sel.End != c.wantEnd || len(sel.Expire) != c.wantExpireLength {
				t.Fatalf("End %d expire %v; want End %d and %d expired", sel.End, sel.Expire, c.wantEnd, c.wantExpireLength)
			}
			for _, id := range sel.Expire {
				if id >= sel.End {
					t.Fatalf("expired %d at or after End %d", id, sel.End)
				}
			}
		})
	}
	o := base.SetChangelogRetention(5, 4, 0)
	if _, err := expire.SelectChangelogs(expire.ChangelogSelectInput{Options: o, Changelogs: []expire.SnapshotTime{{ID: 1}}, LatestSnapshot: 3}); err == nil {
		t.Fatal("changelog max below min: want an error")
	}
}

// For every crash point of a decoupled run (snapshot expiry writing
// long-lived changelogs, then changelog expiry), the table stays readable
// from its earliest snapshot, every changelog from the changelog EARLIEST
// hint on keeps what its read needs, and a rerun ends with exactly the
// files of a run that never crashed.
func TestDecoupledRunCrashAtEveryStepConverges(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		seed    uint64
		produce bool
	}{{3, true}, {8, false}} {
		build := func(t *testing.T) (*expiretest.Table, expire.RunOptions) {
			sim := expiretest.New(expiretest.NewMemFS(), "/wh/db.db/t", c.seed)
			sim.NoChangelog = !c.produce
			for i := range 16 {
				if _, err := sim.Commit(ctx, 60_000); err != nil {
					t.Fatal(err)
				}
				if i%5 == 1 {
					if err := sim.Tag(ctx, fmt.Sprint("t", i), sim.Latest()); err != nil {
						t.Fatal(err)
					}
				}
			}
			o := decoupledOpts(sim, 2, 2, 6, 6, c.produce)
			if _, err := expire.Run(ctx, sim.Source(), o); err != nil {
				t.Fatal(err)
			}
			for range 6 {
				if _, err := sim.Commit(ctx, 60_000); err != nil {
					t.Fatal(err)
				}
			}
			o = decoupledOpts(sim, 2, 2, 6, 6, c.produce)
			o.CleanEmptyDirectories = true
			return sim, o
		}
		ref, o := build(t)
		rep, err := expire.Run(ctx, ref.Source(), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Snapshots) == 0 || len(rep.Changelog.Changelogs) == 0 {
			t.Fatalf("seed %d: the run expires snapshots %v and changelogs %v; want both", c.seed, rep.Snapshots, rep.Changelog.Changelogs)
		}
		want, _ := expiretest.AllFiles(ctx, ref.FS, ref.Root)
		for k := 1; ; k++ {
			sim, o := build(t)
			src := sim.Source()
			src.FS = &expiretest.FailingFS{FileIO: sim.FS, FailAt: k}
			_, err := expire.Run(ctx, src, o)
			if err == nil {
				if k < 10 {
					t.Fatalf("seed %d: run finished with only %d operations", c.seed, k)
				}
				break
			}
			if !errors.Is(err, expiretest.ErrInjected) {
				t.Fatalf("seed %d k %d: %v", c.seed, k, err)
			}
			if err := sim.CheckReadable(ctx); err != nil {
				t.Fatalf("seed %d: crash at op %d left the table unreadable: %v", c.seed, k, err)
			}
			hint, _ := table.TrustedChangelogEarliest(ctx, sim.FS, sim.Root)
			for _, id := range ids(t, sim, "changelog", "changelog-") {
				if id < hint {
					continue // condemned
				}
				for _, p := range sim.ChangelogFiles(sim.Snapshots[id]) {
					if ok, _ := fileio.Exists(ctx, sim.FS, p); !ok {
						t.Fatalf("seed %d: crash at op %d: changelog %d lost %s", c.seed, k, id, p)
					}
				}
			}
			if _, err := expire.Run(ctx, sim.Source(), o); err != nil {
				t.Fatalf("seed %d k %d: rerun: %v", c.seed, k, err)
			}
			got, _ := expiretest.AllFiles(ctx, sim.FS, sim.Root)
			if !slices.Equal(rel(got, sim.Root), rel(want, ref.Root)) {
				t.Fatalf("seed %d: crash at op %d then rerun: files differ from an uninterrupted run:\n got %v\nwant %v", c.seed, k, rel(got, sim.Root), rel(want, ref.Root))
			}
		}
	}
}
