package sched_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// concurrency counts the compactions a hookRunner runs at once.
type concurrency struct{ now, most atomic.Int32 }

func (c *concurrency) hook(context.Context, *table.Table, *compact.Options) error {
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	time.Sleep(150 * time.Millisecond) // long enough for the others to be due
	return nil
}

// The single daemon honours max-compactions (and so the memory budget,
// which admits through the same check): three tables due at once on four
// workers compact one at a time under max-compactions 1, while
// expiration still gets a worker; without the cap they compact together
// (what makes the first half able to fail).
func TestMaxCompactionsCapsTheDaemonsCompactionsAtOnce(t *testing.T) {
	t.Parallel()
	run := func(maxCompactions int) (most int32, expired bool) {
		wh := t.TempDir()
		rng := rand.New(rand.NewPCG(5, 6))
		for _, n := range []string{"a", "b", "c"} {
			m := newModel(t, createTable(t, wh, n, nil))
			for range 7 {
				m.commit(t, rng, 10)
			}
		}
		var c concurrency
		r := &hookRunner{compact: c.hook}
		cfg := config(t, wh, map[string]string{"compact.schedule": "@every 1s", "orphan.enabled": "false",
			"expire.schedule": "@every 1s", "snapshot.num-retained.max": "2", "snapshot.num-retained.min": "1", "snapshot.time-retained": "1ms"})
		cfg.Workers, cfg.MaxCompactions = 4, maxCompactions
		s, stop := start(t, cfg, sched.Options{Runner: r})
		waitFor(t, "every table compacted", 20*time.Second, func() bool {
			for _, n := range []string{"db.a", "db.b", "db.c"} {
				if ts, _ := tableStatus(s, n); successes(ts, policy.Compact) == 0 {
					return false
				}
			}
			return true
		})
		for _, n := range []string{"db.a", "db.b", "db.c"} {
			if ts, _ := tableStatus(s, n); successes(ts, policy.Expire) > 0 {
				expired = true
			}
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		return c.most.Load(), expired
	}
	if most, expired := run(1); most != 1 || !expired {
		t.Fatalf("max-compactions 1: %d compactions at once, expiration ran: %v", most, expired)
	}
	if most, _ := run(0); most < 2 {
		t.Fatalf("without a cap: at most %d compaction at once, want the tables together", most)
	}
}
