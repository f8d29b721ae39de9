package sched_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// createTable makes db.<name> (k BIGINT primary key, v BIGINT), 2 buckets.
func createTable(t *testing.T, wh, name string, opts map[string]string) *table.Table {
	t.Helper()
	return createTableIn(t, fileio.NewLocal(), wh, name, opts)
}

func createTableIn(t *testing.T, fio fileio.FileIO, wh, name string, opts map[string]string) *table.Table {
	t.Helper()
	fields := table.RowType{
		{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
	}
	o := map[string]string{"bucket": "2", "write-only": "true"}
	for k, v := range opts {
		o[k] = v
	}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, o, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(context.Background(), fio, wh, "db", name, s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// model is a table and the rows it must hold.
type model struct {
	tb   *table.Table
	w    *write.Writer
	want map[int64]int64
}

func newModel(t *testing.T, tb *table.Table) *model {
	w, err := write.NewWriter(context.Background(), tb, "writer-"+tb.Name())
	if err != nil {
		t.Fatal(err)
	}
	return &model{tb: tb, w: w, want: map[int64]int64{}}
}

func (m *model) commit(t *testing.T, rng *rand.Rand, rows int) {
	for i := 0; i < rows; i++ {
		k, v := rng.Int64N(200), rng.Int64()
		if err := m.w.Write(table.RowKindInsert, table.Row{k, v}); err != nil {
			t.Error(err)
			return
		}
		m.want[k] = v
	}
	if _, err := m.w.Commit(context.Background()); err != nil {
		t.Error(err)
	}
}

func (m *model) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	tb, err := table.OpenPath(ctx, m.tb.FileIO(), m.tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scan.New(ctx, tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	if err := sc.Each(ctx, func(r table.Row) error {
		got[r[0].(int64)] = r[1].(int64)
		return nil
	}); err != nil {
		t.Fatalf("%s unreadable: %v", tb.FullName(), err)
	}
	if len(got) != len(m.want) {
		t.Fatalf("%s: %d rows, want %d", tb.FullName(), len(got), len(m.want))
	}
	for k, v := range m.want {
		if got[k] != v {
			t.Fatalf("%s: k=%d v=%d, want %d", tb.FullName(), k, got[k], v)
		}
	}
}

// runsPerBucket is the most sorted runs of any bucket of the latest snapshot.
func runsPerBucket(t *testing.T, tb *table.Table) int {
	ctx := context.Background()
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tb.FileSet(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, b := range fs.Buckets() {
		most = max(most, len(b.Runs))
	}
	return most
}

func config(t *testing.T, wh string, defaults map[string]string) *policy.Config {
	dir := t.TempDir()
	c := &policy.Config{Path: filepath.Join(dir, "compactd.yaml"), Workers: 2,
		Tick: policy.Duration(50 * time.Millisecond), DiscoveryInterval: policy.Duration(200 * time.Millisecond),
		GracePeriod: policy.Duration(5 * time.Second), LockLease: policy.Duration(3 * time.Second),
		Retry:      policy.Retry{Initial: policy.Duration(50 * time.Millisecond), Max: policy.Duration(200 * time.Millisecond), Attempts: 3},
		Warehouses: []policy.Warehouse{{Path: wh}}, Defaults: defaults}
	c.WithDefaults()
	return c
}

func logger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func start(t *testing.T, cfg *policy.Config, o sched.Options) (*sched.Scheduler, func() error) {
	t.Helper()
	if o.Logger == nil {
		o.Logger = logger(t)
	}
	s, err := sched.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(30 * time.Second):
				runErr = errors.New("daemon did not stop")
			}
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return s, stop
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tableStatus(s *sched.Scheduler, name string) (sched.TableStatus, bool) {
	for _, ts := range s.Status().Tables {
		if ts.Table == name {
			return ts, true
		}
	}
	return sched.TableStatus{}, false
}

func successes(ts sched.TableStatus, k policy.Kind) int {
	n := 0
	for _, j := range ts.LastJobs {
		if j.Kind == k && j.Outcome == "success" {
			n++
		}
	}
	return n
}

func get(t *testing.T, h http.Handler, path string) string {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func TestDaemonKeepsTablesCompactedExpiredAndCleanWhileAWriterCommits(t *testing.T) {
	wh := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	a := newModel(t, createTable(t, wh, "a", nil))
	b := newModel(t, createTable(t, wh, "b", nil))
	// compactd refuses tables Java rejects (full-compaction changelog with
	// deletion vectors): this one must halt without holding the others back.
	createTable(t, wh, "cl", map[string]string{"changelog-producer": "full-compaction", "deletion-vectors.enabled": "true"})
	// A stale orphan in a bucket directory, old enough for cleanup.
	orphanFile := filepath.Join(a.tb.Path(), "bucket-0", "data-00000000-0000-0000-0000-000000000000-0.parquet")
	if err := os.MkdirAll(filepath.Dir(orphanFile), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(orphanFile, []byte("junk"), 0o644)
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(orphanFile, old, old)

	cfg := config(t, wh, map[string]string{
		"compact.schedule":          "@every 1s",
		"expire.schedule":           "@every 1s",
		"orphan.schedule":           "@every 2s",
		"snapshot.num-retained.min": "2",
		"snapshot.num-retained.max": "6",
	})
	s, stop := start(t, cfg, sched.Options{})
	h := s.Handler()

	// The writer commits to both tables for a while, two or three commits per
	// compaction check (@every has a one-second resolution): between
	// checks level-0 files pile up over the trigger, but never up to
	// where a Java writer would stall.
	const trigger = 5 // Paimon's num-sorted-run.compaction-trigger default
	const stopTrigger = trigger + 3
	maxRuns := 0
	for i := 0; i < 10; i++ {
		a.commit(t, rng, 20)
		b.commit(t, rng, 20)
		maxRuns = max(maxRuns, runsPerBucket(t, a.tb), runsPerBucket(t, b.tb))
		time.Sleep(400 * time.Millisecond)
	}
	t.Logf("most sorted runs in a bucket while writing: %d", maxRuns)
	if maxRuns > stopTrigger {
		t.Errorf("sorted runs reached %d while the daemon ran; writers stall above %d", maxRuns, stopTrigger)
	}
	// After the writer stops, the next compaction brings every bucket to
	// the trigger or under, and expiration to the retention.
	for _, m := range []*model{a, b} {
		waitFor(t, "compaction of "+m.tb.FullName(), 10*time.Second, func() bool { return runsPerBucket(t, m.tb) <= trigger })
		waitFor(t, "expiration of "+m.tb.FullName(), 10*time.Second, func() bool {
			ids, _ := m.tb.SnapshotIDs(context.Background())
			return len(ids) <= 6
		})
	}
	waitFor(t, "orphan cleanup", 10*time.Second, func() bool {
		_, err := os.Stat(orphanFile)
		return errors.Is(err, os.ErrNotExist)
	})

	st, ok := tableStatus(s, "db.cl")
	if !ok || st.Halted == "" || !strings.Contains(st.Halted, "changelog-producer") {
		t.Fatalf("db.cl not halted with the reason: %+v", st)
	}
	for _, name := range []string{"db.a", "db.b"} {
		ts, _ := tableStatus(s, name)
		if ts.Halted != "" {
			t.Fatalf("%s halted: %s", name, ts.Halted)
		}
		if ts.LastSuccess[policy.Compact].IsZero() || ts.LastSuccess[policy.Expire].IsZero() {
			t.Fatalf("%s: no successful compact and expire: %+v", name, ts.LastSuccess)
		}
	}
	var status sched.Status
	raw := get(t, h, "/status")
	if err := json.Unmarshal([]byte(raw), &status); err != nil || len(status.Tables) != 3 {
		t.Fatalf("/status: %v, %d tables", err, len(status.Tables))
	}
	// /status follows docs/json.md: lowerCamelCase keys (maps keyed by job
	// kind are data) and no nulls.
	var doc any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatal(err)
	}
	checkJSONContract(t, "", doc)
	if get(t, h, "/healthz") != "ok\n" {
		t.Fatal("/healthz")
	}
	metrics := get(t, h, "/metrics")
	for _, want := range []string{
		`compactd_table_halted{table="db.cl",warehouse="` + wh + `"} 1`,
		`compactd_table_halted{table="db.a",warehouse="` + wh + `"} 0`,
		`compactd_jobs_total{kind="compact",outcome="success",table="db.a"`,
		`compactd_jobs_total{kind="compact",outcome="halted",table="db.cl"`,
		`compactd_job_rows_total{direction="out",kind="compact",table="db.b"`,
		`compactd_job_files_deleted_total{kind="expire",table="db.a"`,
		`compactd_job_files_deleted_total{kind="orphan",table="db.a"`,
		`compactd_table_last_success_timestamp_seconds{kind="orphan",table="db.b"`,
		`compactd_table_sorted_runs_max{table="db.a"`,
		`compactd_table_level0_files{table="db.b"`,
		`compactd_table_sorted_runs{table="db.a"`,
		`compactd_table_pending_compaction_bytes{table="db.a"`,
		`compactd_table_snapshots_retained{table="db.b"`,
		`compactd_job_duration_seconds_count{kind="expire",table="db.b"`,
		`compactd_job_failures_total{class="permanent",kind="compact",table="db.cl"`,
		"compactd_queue_length ", "compactd_workers_busy ",
		`compactd_build_info{commit="unknown",goversion="go`,
		`compactd_commit_rebases_total{kind="compact",table="db.a"`,
		`compactd_commit_conflicts_total{kind="compact",table="db.b"`,
		`compactd_compaction_bucket_jobs_abandoned_total{kind="compact",table="db.a"`,
		`compactd_storage_operations_total{op="write_exclusive",outcome="ok",warehouse="` + wh + `"}`,
		`compactd_storage_operations_total{op="delete",outcome="ok",warehouse="` + wh + `"}`,
		`compactd_warehouse_lock_held{warehouse="` + wh + `"} 1`,
		`compactd_warehouse_lock_renewals_total{outcome="success",warehouse="` + wh + `"}`,
		`compactd_table_sorted_runs_stop_trigger{table="db.a",warehouse="` + wh + `"} 8`,
		`compactd_table_sorted_runs_stop_trigger_ratio{table="db.b"`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Prometheus' own linter passes the exposition (issue 18: two gauges
	// ended in the reserved _sum suffix).
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
	a.check(t)
	b.check(t)
	if _, err := os.Stat(filepath.Join(wh, sched.LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the lock outlived a clean shutdown")
	}
}

// Issue 12 item 3: expiration that finds the latest snapshot's delta
// manifest list damaged deletes nothing, and the daemon halts the table at
// once with the error naming the file.
func TestDaemonHaltsATableWhoseMetadataExpireCannotRead(t *testing.T) {
	wh := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	m := newModel(t, createTable(t, wh, "damaged", nil))
	for i := 0; i < 4; i++ {
		m.commit(t, rng, 10)
	}
	ctx := context.Background()
	s, err := m.tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list := m.tb.Paths().ManifestPath(s.DeltaManifestList)
	if err := os.Truncate(list, 10); err != nil {
		t.Fatal(err)
	}
	idsBefore, _ := m.tb.SnapshotIDs(ctx)
	cfg := config(t, wh, map[string]string{
		"compact.enabled": "false", "orphan.enabled": "false", "expire.schedule": "@every 1s",
		"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "snapshot.time-retained": "1ms",
	})
	sc, _ := start(t, cfg, sched.Options{})
	waitFor(t, "halt", 15*time.Second, func() bool { st, _ := tableStatus(sc, "db.damaged"); return st.Halted != "" })
	st, _ := tableStatus(sc, "db.damaged")
	if !strings.Contains(st.Halted, s.DeltaManifestList) || st.Failures[policy.Expire] != 1 {
		t.Fatalf("halted after %d failures with %q; want one failure naming %s", st.Failures[policy.Expire], st.Halted, s.DeltaManifestList)
	}
	if ids, _ := m.tb.SnapshotIDs(ctx); len(ids) != len(idsBefore) {
		t.Fatalf("snapshots %v after the halt, %v before", ids, idsBefore)
	}
}

// The daemon's expire job expires tables whose changelog outlives their
// snapshots (it refused them before): snapshot expiry keeps the changelog
// of expired snapshots in changelog/, and changelog expiry, which runs
// right after it, keeps changelog.num-retained.min of them.
func TestDaemonExpiresADecoupledChangelog(t *testing.T) {
	wh := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	m := newModel(t, createTable(t, wh, "dec", map[string]string{
		"changelog.num-retained.min": "3", "changelog.num-retained.max": "3",
	}))
	for i := 0; i < 6; i++ {
		m.commit(t, rng, 10)
	}
	cfg := config(t, wh, map[string]string{
		"compact.enabled": "false", "orphan.enabled": "false", "expire.schedule": "@every 1s",
		"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "snapshot.time-retained": "1ms",
	})
	sc, stop := start(t, cfg, sched.Options{})
	ctx := context.Background()
	changelogs := func() []int64 {
		ids, err := table.ListIDs(ctx, m.tb.FileIO(), filepath.Join(m.tb.Path(), "changelog"), "changelog-")
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	waitFor(t, "decoupled expiry", 15*time.Second, func() bool {
		ids, _ := m.tb.SnapshotIDs(ctx)
		st, _ := tableStatus(sc, "db.dec")
		return len(ids) == 1 && slices.Equal(changelogs(), []int64{4, 5}) && !st.LastSuccess[policy.Expire].IsZero()
	})
	st, _ := tableStatus(sc, "db.dec")
	if st.Halted != "" || st.LastSuccess[policy.Expire].IsZero() {
		t.Fatalf("status %+v", st)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	m.check(t)
}

var jsonKey = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// checkJSONContract walks a decoded JSON document for keys that are not
// lowerCamelCase and for nulls; objects under lastSuccess, next and
// failures are keyed by job kind (data).
func checkJSONContract(t *testing.T, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil:
		t.Errorf("/status: %s is null", path)
	case map[string]any:
		dataKeyed := strings.HasSuffix(path, ".lastSuccess") || strings.HasSuffix(path, ".next") || strings.HasSuffix(path, ".failures")
		for k, e := range x {
			if !dataKeyed && !jsonKey.MatchString(k) {
				t.Errorf("/status: key %s.%s is not lowerCamelCase", path, k)
			}
			checkJSONContract(t, path+"."+k, e)
		}
	case []any:
		for _, e := range x {
			checkJSONContract(t, path+"[]", e)
		}
	}
}
