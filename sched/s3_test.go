package sched_test

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

// The daemon on an S3 warehouse (needs COMPACTD_TEST_S3_ENDPOINT, like the
// fileio S3 tests; a failure without it under COMPACTD_REQUIRE_S3=1).
func TestDaemonCompactsAnS3Warehouse(t *testing.T) {
	ctx := context.Background()
	fio, wh := sched.S3TestWarehouse(t, "daemon-")
	m := newModel(t, createTableIn(t, fio, wh, "a", nil))
	rng := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 7; i++ {
		m.commit(t, rng, 20)
	}
	cfg := config(t, wh, compactOnly(nil))
	cfg.Warehouses[0].S3 = &policy.S3{Endpoint: os.Getenv("COMPACTD_TEST_S3_ENDPOINT")}
	s, stop := start(t, cfg, sched.Options{})
	waitFor(t, "compaction on S3", 20*time.Second, func() bool {
		ts, _ := tableStatus(s, "db.a")
		return successes(ts, policy.Compact) > 0 && ts.Backlog.SortedRunsMax <= 5
	})
	ts, _ := tableStatus(s, "db.a")
	committed := false
	for _, j := range ts.LastJobs {
		committed = committed || (j.Outcome == "success" && j.Snapshot > 0 && j.RowsIn > 0)
	}
	if !committed {
		t.Fatalf("no committed compaction: %+v", ts.LastJobs)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	m.check(t)
	if ok, _ := fileio.Exists(ctx, fio, fileio.Join(wh, sched.LockFile)); ok {
		t.Fatal("lock left on S3")
	}
}
