package sched

import (
	"testing"
	"time"

	"github.com/compactd/compactd/policy"
)

func TestDueJobsAreOrderedByBacklogWithoutStarvation(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	mk := func(key string, over int, pending int64, lastAgo time.Duration) *tableState {
		ts := &tableState{key: key, backlog: Backlog{RunsOverTrigger: over, PendingBytes: pending}, last: map[policy.Kind]time.Time{}}
		if lastAgo > 0 {
			ts.last[policy.Compact] = now.Add(-lastAgo)
		}
		return ts
	}
	cases := []struct {
		name  string
		cands []candidate
		want  []string
	}{
		{"postponed rows (invisible to readers) go before any sorted runs", []candidate{
			{mk("runs", 9, 1<<30, time.Hour), policy.Compact, now},
			{func() *tableState { ts := mk("postponed", 0, 0, time.Minute); ts.backlog.PostponedRows = 10; return ts }(), policy.Compact, now},
		}, []string{"postponed", "runs"}},
		{"more runs over the trigger go first", []candidate{
			{mk("small", 1, 1<<30, time.Hour), policy.Compact, now},
			{mk("big", 4, 10, time.Minute), policy.Compact, now},
		}, []string{"big", "small"}},
		{"equal runs: more bytes pending first", []candidate{
			{mk("light", 2, 100, time.Hour), policy.Compact, now},
			{mk("heavy", 2, 1000, time.Minute), policy.Compact, now},
		}, []string{"heavy", "light"}},
		{"equal backlog: the oldest success first, never-succeeded before all", []candidate{
			{mk("recent", 0, 0, time.Minute), policy.Compact, now},
			{mk("never", 0, 0, 0), policy.Compact, now},
			{mk("stale", 0, 0, time.Hour), policy.Compact, now},
		}, []string{"never", "stale", "recent"}},
		{"a job waiting past starveAfter beats any backlog", []candidate{
			{mk("busy", 9, 1<<40, 0), policy.Compact, now},
			{mk("starved", 0, 0, time.Hour), policy.Compact, now.Add(-2 * starveAfter)},
			{mk("starved-longer", 0, 0, time.Hour), policy.Compact, now.Add(-3 * starveAfter)},
		}, []string{"starved-longer", "starved", "busy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orderCandidates(c.cands, now)
			for i, w := range c.want {
				if c.cands[i].t.key != w {
					var got []string
					for _, x := range c.cands {
						got = append(got, x.t.key)
					}
					t.Fatalf("order %v, want %v", got, c.want)
				}
			}
		})
	}
}
