package sched_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// full-compaction.partition-idle-time reaches the compaction: a table
// written just now is left alone by a full compaction that wants an hour
// of idleness, one idle longer than its setting is fully compacted.
func TestFullCompactionHonoursPartitionIdleTime(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	models := map[string]*model{}
	for _, n := range []string{"busy", "quiet"} {
		models[n] = newModel(t, createTable(t, wh, n, nil))
		for range 4 {
			models[n].commit(t, rng, 20)
		}
	}
	time.Sleep(300 * time.Millisecond) // quiet is idle for its 200ms
	cfg := config(t, wh, map[string]string{"compact.enabled": "false", "expire.enabled": "false", "orphan.enabled": "false",
		"full-compaction.enabled": "true", "full-compaction.schedule": "@every 1s"})
	for n, idle := range map[string]string{"busy": "1h", "quiet": "200ms"} {
		if _, err := policy.Update(cfg.PolicyPath(), "db."+n, map[string]string{"full-compaction.partition-idle-time": idle}, nil); err != nil {
			t.Fatal(err)
		}
	}
	s, stop := start(t, cfg, sched.Options{})
	waitFor(t, "a full compaction of each table", 20*time.Second, func() bool {
		for _, n := range []string{"db.busy", "db.quiet"} {
			if ts, _ := tableStatus(s, n); successes(ts, policy.FullCompaction) == 0 {
				return false
			}
		}
		return true
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	kind := func(tb *table.Table) string {
		fresh, err := table.OpenPath(context.Background(), tb.FileIO(), tb.Path())
		if err != nil {
			t.Fatal(err)
		}
		snap, err := fresh.LatestSnapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return string(snap.CommitKind)
	}
	if k := kind(models["busy"].tb); k != "APPEND" {
		t.Errorf("busy (written within its idle time): latest snapshot %s, want no compaction", k)
	}
	if k := kind(models["quiet"].tb); k != "COMPACT" {
		t.Errorf("quiet (idle): latest snapshot %s, want its full compaction", k)
	}
	for _, m := range models {
		m.check(t)
	}
}
