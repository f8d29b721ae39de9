package sched_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// metricValue sums the samples of family name whose labels include want.
func metricValue(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	found := false
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue metric
				}
			}
			found = true
			sum += sampleValue(m)
		}
	}
	return sum, found
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// eventsFIO injects what the metrics must see: a concurrent writer that
// takes the id of the daemon's first snapshot of db.r (a rebase), and
// store failures under db.eio.
type eventsFIO struct {
	fileio.FileIO
	mu    sync.Mutex
	stole bool
	steal func()
}

var errInjectedEIO = &os.PathError{Op: "read", Path: "injected", Err: syscall.EIO}

// broken: reads of db.eio's snapshots fail (its jobs fail; discovery,
// which reads schemas, does not).
func (f *eventsFIO) broken(p string) bool {
	return strings.Contains(p, "/db.db/eio/snapshot/snapshot-")
}

func (f *eventsFIO) Open(ctx context.Context, p string) (fileio.Reader, error) {
	if f.broken(p) {
		return nil, errInjectedEIO
	}
	return f.FileIO.Open(ctx, p)
}

func (f *eventsFIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	f.mu.Lock()
	steal := !f.stole && strings.Contains(p, "/db.db/r/snapshot/snapshot-")
	f.stole = f.stole || steal
	f.mu.Unlock()
	if steal {
		f.steal()
	}
	return f.FileIO.WriteExclusive(ctx, p, data)
}

// Each metric added for issue 18 moves when its event happens, in a real
// daemon run: a commit rebased past a concurrent writer, a commit refused
// by a concurrent compaction (its jobs abandoned), a job retried, store
// operations and their failures, lock renewals and the lock held, config
// and policy-store reloads, the build, and the backlog against the stop
// trigger. Prometheus' linter passes the exposition with all of them set.
func TestMetricsMoveWithTheirEvents(t *testing.T) {
	wh := t.TempDir()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	models := map[string]*model{}
	for _, n := range []string{"r", "c", "flaky", "eio"} {
		models[n] = newModel(t, createTable(t, wh, n, nil))
		for i := 0; i < 7; i++ {
			models[n].commit(t, rng, 10)
		}
	}
	// The writer of db.r commits once more, from the daemon's goroutine,
	// while the test's waits.
	fio := &eventsFIO{FileIO: fileio.NewLocal(), steal: func() { models["r"].commit(t, rng, 5) }}
	var conflictOnce sync.Once
	r := &hookRunner{compact: func(ctx context.Context, tb *table.Table, o *compact.Options) error {
		switch tb.Name() {
		case "flaky":
			return &table.ConflictError{Table: tb.FullName(), Reason: "test"}
		case "c":
			o.BeforeCommit = func() {
				conflictOnce.Do(func() {
					other, err := table.OpenPath(ctx, fileio.NewLocal(), tb.Path())
					if err == nil {
						_, err = compact.Run(ctx, other, compact.Options{Full: true})
					}
					if err != nil {
						t.Error(err)
					}
				})
			}
		}
		return nil
	}}
	reg := prometheus.NewRegistry()
	cfg := config(t, wh, compactOnly(nil))
	cfg.LockLease = policy.Duration(time.Second) // renewals every 250ms
	s, stop := start(t, cfg, sched.Options{Runner: r, Registerer: reg,
		Build:  sched.BuildInfo{Version: "v9.9.9", Commit: "abc123"},
		FileIO: func(context.Context, policy.Warehouse, string) (fileio.FileIO, error) { return fio, nil }})
	value := func(name string, labels map[string]string) float64 {
		v, _ := metricValue(t, reg, name, labels)
		return v
	}
	tbl := func(name string) map[string]string { return map[string]string{"warehouse": wh, "table": name} }
	kind := func(name string) map[string]string {
		return map[string]string{"warehouse": wh, "table": name, "kind": string(policy.Compact)}
	}
	waitFor(t, "a rebase, a conflict, retries, renewals", 20*time.Second, func() bool {
		return value("compactd_commit_rebases_total", kind("db.r")) >= 1 &&
			value("compactd_commit_conflicts_total", kind("db.c")) >= 1 &&
			value("compactd_job_retries_total", kind("db.flaky")) >= 2 &&
			value("compactd_warehouse_lock_renewals_total", map[string]string{"warehouse": wh, "outcome": "success"}) >= 2
	})
	if v := value("compactd_compaction_bucket_jobs_abandoned_total", kind("db.c")); v < 1 {
		t.Errorf("abandoned bucket jobs of db.c: %v, want the jobs the conflict dropped", v)
	}
	if v := value("compactd_commit_rebases_total", kind("db.c")) + value("compactd_commit_conflicts_total", kind("db.r")); v != 0 {
		t.Errorf("rebases of db.c plus conflicts of db.r: %v, want 0", v)
	}
	if v := value("compactd_job_retries_total", map[string]string{"table": "db.flaky", "class": "transient"}); v < 2 {
		t.Errorf("transient retries of db.flaky: %v", v)
	}
	for _, op := range []string{fileio.OpList, fileio.OpOpen, fileio.OpWriteExclusive, fileio.OpCreate} {
		if v := value("compactd_storage_operations_total", map[string]string{"warehouse": wh, "op": op, "outcome": "ok"}); v < 1 {
			t.Errorf("storage operations %s ok: %v", op, v)
		}
	}
	if v := value("compactd_storage_operations_total", map[string]string{"warehouse": wh, "outcome": "error"}); v < 1 {
		t.Errorf("storage operations failed: %v, want the injected failures under db.eio", v)
	}
	if v := value("compactd_storage_operations_total", map[string]string{"warehouse": wh, "op": fileio.OpOpen, "outcome": "error"}); v < 1 {
		t.Errorf("opens failed: %v, want the injected failures of db.eio's snapshots", v)
	}
	if v := value("compactd_warehouse_lock_held", map[string]string{"warehouse": wh}); v != 1 {
		t.Errorf("lock held: %v, want 1", v)
	}
	if v, ok := metricValue(t, reg, "compactd_build_info", map[string]string{"version": "v9.9.9", "commit": "abc123"}); !ok || v != 1 {
		t.Errorf("compactd_build_info{version=v9.9.9,commit=abc123} = %v (present %v)", v, ok)
	}
	// The default stop trigger is the compaction trigger (5) + 3; the
	// ratio is the most runs of a bucket over it, as last observed.
	if v := value("compactd_table_sorted_runs_stop_trigger", tbl("db.r")); v != 8 {
		t.Errorf("stop trigger of db.r: %v, want 8", v)
	}
	st, _ := tableStatus(s, "db.r")
	ratio := value("compactd_table_sorted_runs_stop_trigger_ratio", tbl("db.r"))
	if want := float64(st.Backlog.SortedRunsMax) / 8; ratio != want || st.Backlog.StopTrigger != 8 {
		t.Errorf("stop-trigger ratio of db.r: %v, want %v (backlog %+v)", ratio, want, st.Backlog)
	}

	// Reloads: of the config (a good one, a refused one, one the caller
	// could not load) and of the policy store (unreadable, then good).
	reloads := func(file, outcome string) float64 {
		return value("compactd_config_reloads_total", map[string]string{"file": file, "outcome": outcome})
	}
	if err := s.Reload(ctx, config(t, wh, compactOnly(nil))); err != nil {
		t.Fatal(err)
	}
	bad := config(t, wh, compactOnly(nil))
	bad.Warehouses = nil
	if err := s.Reload(ctx, bad); err == nil {
		t.Fatal("a config without warehouses was accepted")
	}
	s.ReloadFailed(os.ErrNotExist)
	if ok, failed := reloads("config", "success"), reloads("config", "failure"); ok != 1 || failed != 2 {
		t.Errorf("config reloads: %v succeeded, %v failed; want 1 and 2", ok, failed)
	}
	store := s.Config().PolicyPath()
	if err := os.WriteFile(store, []byte("tables: [not a map"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the unreadable policy store counted", 5*time.Second, func() bool { return reloads("policy-store", "failure") >= 1 })
	later := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(store, []byte("tables: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(store, later, later)
	waitFor(t, "the policy store reload counted", 5*time.Second, func() bool { return reloads("policy-store", "success") >= 1 })

	metrics := get(t, s.Handler(), "/metrics")
	problems, err := promlint.New(strings.NewReader(metrics)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if v := value("compactd_warehouse_lock_held", map[string]string{"warehouse": wh}); v != 0 {
		t.Errorf("lock held after shutdown: %v, want 0", v)
	}
	for _, n := range []string{"r", "c"} {
		models[n].check(t)
	}
}
