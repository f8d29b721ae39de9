package sched_test

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

func treeHash(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		st := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		out[p] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The daemon builds table paths from directory listings: a directory whose
// name compactd cannot address is skipped (a.b.db/t would be addressed as
// a.b.t, which splits as database a, table b.t), and a symlinked table or
// database directory leading out of the warehouse is never maintained
// (listings do not report symlinks as directories, and Open refuses them,
// which halts the table naming the reason), while the ordinary table next
// to them is. Neither the skipped table nor the one the symlinks lead to is
// touched.
func TestTheDaemonNeverFollowsADirectoryOutOfTheWarehouse(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	outside := filepath.Join(dir, "outside")
	rng := rand.New(rand.NewPCG(1, 2))
	good := newModel(t, createTable(t, wh, "good", nil))
	victim := newModel(t, createTable(t, outside, "victim", nil))
	odd := newModel(t, createTable(t, wh, "odd", nil))
	for i := 0; i < 6; i++ {
		good.commit(t, rng, 20)
		victim.commit(t, rng, 20)
		odd.commit(t, rng, 20)
	}
	// db.db/link -> outside/db.db/victim, evil.db -> outside/db.db, and
	// a.b.db/t, a table whose database name has a '.' (it would be
	// addressed as a.b.t, which splits as database a, table b.t).
	if err := os.Symlink(victim.tb.Path(), filepath.Join(wh, "db.db", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "db.db"), filepath.Join(wh, "evil.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(wh, "a.b.db"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(odd.tb.Path(), filepath.Join(wh, "a.b.db", "t")); err != nil {
		t.Fatal(err)
	}
	oddBefore := treeHash(t, filepath.Join(wh, "a.b.db"))
	victimBefore := treeHash(t, outside)

	cfg := config(t, wh, map[string]string{
		"compact.schedule":          "@every 1s",
		"full-compaction.enabled":   "true",
		"full-compaction.schedule":  "@every 1s",
		"expire.schedule":           "@every 1s",
		"orphan.schedule":           "@every 1s",
		"snapshot.num-retained.min": "1",
		"snapshot.num-retained.max": "1",
		"snapshot.time-retained":    "1ms",
	})
	s, stop := start(t, cfg, sched.Options{})
	waitFor(t, "the ordinary table to be compacted and expired", 30*time.Second, func() bool {
		g, ok := tableStatus(s, "db.good")
		return ok && successes(g, policy.FullCompaction)+successes(g, policy.Compact) > 0 && successes(g, policy.Expire) > 0
	})
	// A few more ticks in which a daemon that followed the links would act.
	time.Sleep(2500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"db.link", "evil.victim"} {
		ts, ok := tableStatus(s, n)
		if !ok {
			continue
		}
		if ts.Halted != "" && !strings.Contains(ts.Halted, "outside") {
			t.Errorf("%s halted for %q; want the reason to say it lies outside the warehouse", n, ts.Halted)
		}
		for _, j := range ts.LastJobs {
			if j.Outcome == "success" {
				t.Errorf("%s: a %s job succeeded", n, j.Kind)
			}
		}
	}
	for _, ts := range s.Status().Tables {
		if strings.HasPrefix(ts.Table, "a.") {
			t.Errorf("the daemon watches %s, a table in a database named with a '.'", ts.Table)
		}
	}
	for what, c := range map[string][2]map[string]string{
		"the table outside the warehouse":  {victimBefore, treeHash(t, outside)},
		"the table under a.b.db (skipped)": {oddBefore, treeHash(t, filepath.Join(wh, "a.b.db"))},
	} {
		before, after := c[0], c[1]
		for p, st := range after {
			if before[p] != st {
				t.Errorf("%s: %s was written", what, p)
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok {
				t.Errorf("%s: %s was deleted", what, p)
			}
		}
	}
}
