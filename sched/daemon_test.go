package sched_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// hookRunner runs the real jobs with test hooks.
type hookRunner struct {
	sched.PackageRunner
	compact func(ctx context.Context, t *table.Table, o *compact.Options) error
	mu      sync.Mutex
	calls   map[string]int
}

func (r *hookRunner) Compact(ctx context.Context, t *table.Table, o compact.Options) (*compact.Summary, error) {
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[t.FullName()]++
	r.mu.Unlock()
	if r.compact != nil {
		if err := r.compact(ctx, t, &o); err != nil {
			return nil, err
		}
	}
	return compact.Run(ctx, t, o)
}

func (r *hookRunner) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

var _ sched.Runner = (*hookRunner)(nil)

func compactOnly(extra map[string]string) map[string]string {
	m := map[string]string{"compact.schedule": "@every 1s", "expire.enabled": "false", "orphan.enabled": "false"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// dataFiles lists the data files on disk under a table.
func dataFiles(t *testing.T, tb *table.Table) []string {
	var out []string
	filepath.Walk(tb.Path(), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasPrefix(info.Name(), "data-") {
			out = append(out, info.Name())
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func liveFiles(t *testing.T, tb *table.Table) []string {
	ctx := context.Background()
	tb, _ = table.OpenPath(ctx, tb.FileIO(), tb.Path())
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adds, _, _, err := tb.LiveEntries(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range adds {
		out = append(out, e.File.FileName)
	}
	slices.Sort(out)
	return out
}

func TestShutdownCancelsACompactionPastTheGracePeriodAndLosesNothing(t *testing.T) {
	wh := t.TempDir()
	m := newModel(t, createTable(t, wh, "a", nil))
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 8; i++ {
		m.commit(t, rng, 30)
	}
	snapBefore, _ := m.tb.LatestSnapshotID(context.Background())
	inCompaction := make(chan struct{})
	var once sync.Once
	r := &hookRunner{compact: func(ctx context.Context, _ *table.Table, o *compact.Options) error {
		// Hold the job between merge and commit until the daemon cancels it.
		o.BeforeCommit = func() {
			once.Do(func() { close(inCompaction) })
			<-ctx.Done()
		}
		return nil
	}}
	cfg := config(t, wh, compactOnly(nil))
	cfg.GracePeriod = policy.Duration(200 * time.Millisecond)
	s, stop := start(t, cfg, sched.Options{Runner: r})
	select {
	case <-inCompaction:
	case <-time.After(10 * time.Second):
		t.Fatal("no compaction started")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st, _ := tableStatus(s, "db.a")
	if len(st.LastJobs) == 0 || st.LastJobs[len(st.LastJobs)-1].Outcome != "cancelled" {
		t.Fatalf("last job = %+v, want cancelled", st.LastJobs)
	}
	if snap, _ := m.tb.LatestSnapshotID(context.Background()); snap != snapBefore {
		t.Fatalf("a cancelled compaction committed snapshot %d", snap)
	}
	m.check(t)
	if live, disk := liveFiles(t, m.tb), dataFiles(t, m.tb); !slices.Equal(live, disk) {
		t.Fatalf("cancelled compaction left files: %d live, %d on disk", len(live), len(disk))
	}
}

func TestShutdownLetsARunningCompactionFinishWithinTheGracePeriod(t *testing.T) {
	wh := t.TempDir()
	m := newModel(t, createTable(t, wh, "a", nil))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 8; i++ {
		m.commit(t, rng, 30)
	}
	inCompaction := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	r := &hookRunner{compact: func(ctx context.Context, _ *table.Table, o *compact.Options) error {
		o.BeforeCommit = func() {
			once.Do(func() { close(inCompaction) })
			<-release
		}
		return nil
	}}
	s, stop := start(t, config(t, wh, compactOnly(nil)), sched.Options{Runner: r})
	<-inCompaction
	stopped := make(chan error)
	go func() { stopped <- stop() }()
	time.Sleep(100 * time.Millisecond) // shutdown has begun and waits
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	st, _ := tableStatus(s, "db.a")
	if j := st.LastJobs[len(st.LastJobs)-1]; j.Outcome != "success" || j.Snapshot == 0 {
		t.Fatalf("last job = %+v, want a committed success", j)
	}
	if r.count("db.a") != 1 {
		t.Fatalf("%d compactions, want 1 (no new work after shutdown began)", r.count("db.a"))
	}
	m.check(t)
}

func TestASecondDaemonOnTheSameWarehouseRefusesToStart(t *testing.T) {
	wh := t.TempDir()
	createTable(t, wh, "a", nil)
	first, _ := start(t, config(t, wh, compactOnly(nil)), sched.Options{})
	waitFor(t, "first daemon", 5*time.Second, func() bool { _, ok := tableStatus(first, "db.a"); return ok })
	second, err := sched.New(config(t, wh, compactOnly(nil)), sched.Options{Logger: logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := second.Run(ctx); !errors.Is(err, sched.ErrLocked) {
		t.Fatalf("second daemon: want ErrLocked, got %v", err)
	}
}

func TestFailuresAreRetriedOrHaltTheTableUntilResumed(t *testing.T) {
	wh := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	models := map[string]*model{}
	for _, n := range []string{"flaky", "broken", "bad", "good"} {
		models[n] = newModel(t, createTable(t, wh, n, nil))
		for i := 0; i < 7; i++ {
			models[n].commit(t, rng, 10)
		}
	}
	var brokenFixed atomic.Bool
	r := &hookRunner{compact: func(ctx context.Context, tb *table.Table, o *compact.Options) error {
		switch tb.Name() {
		case "flaky": // conflicts forever: retried, never halted
			return &table.ConflictError{Table: tb.FullName(), Reason: "test"}
		case "broken": // an unknown error: halted after Retry.Attempts
			if !brokenFixed.Load() {
				return errors.New("parquet: invalid magic number")
			}
		case "bad": // permanent at once
			return &sched.PermanentError{Err: errors.New("corrupt file data-x.parquet")}
		}
		return nil
	}}
	cfg := config(t, wh, compactOnly(nil))
	s, stop := start(t, cfg, sched.Options{Runner: r})
	waitFor(t, "halts", 10*time.Second, func() bool {
		b, _ := tableStatus(s, "db.broken")
		d, _ := tableStatus(s, "db.bad")
		return b.Halted != "" && d.Halted != ""
	})
	waitFor(t, "good compacted", 10*time.Second, func() bool {
		g, _ := tableStatus(s, "db.good")
		return successes(g, policy.Compact) > 0
	})
	waitFor(t, "flaky retried", 10*time.Second, func() bool { return r.count("db.flaky") >= 4 })
	f, _ := tableStatus(s, "db.flaky")
	if f.Halted != "" || f.Failures[policy.Compact] < 4 {
		t.Fatalf("flaky: %+v", f)
	}
	d, _ := tableStatus(s, "db.bad")
	if r.count("db.bad") != 1 || !strings.Contains(d.Halted, "corrupt file") {
		t.Fatalf("bad: %d attempts, halted %q", r.count("db.bad"), d.Halted)
	}
	b, _ := tableStatus(s, "db.broken")
	if n := r.count("db.broken"); n != cfg.Retry.Attempts {
		t.Fatalf("broken: %d attempts before halting, want %d", n, cfg.Retry.Attempts)
	}
	if !strings.Contains(b.Halted, "3 times") {
		t.Fatalf("broken halted %q", b.Halted)
	}
	time.Sleep(300 * time.Millisecond)
	if n := r.count("db.broken"); n != cfg.Retry.Attempts {
		t.Fatalf("a halted table was tried again (%d attempts)", n)
	}
	// The halt survives a restart.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	s2, _ := start(t, cfg, sched.Options{Runner: r})
	waitFor(t, "restart", 5*time.Second, func() bool { b, _ := tableStatus(s2, "db.broken"); return b.Halted != "" })
	time.Sleep(300 * time.Millisecond)
	if n := r.count("db.broken"); n != cfg.Retry.Attempts {
		t.Fatalf("a halted table ran after a restart (%d attempts)", n)
	}
	// compactd resume.
	brokenFixed.Store(true)
	recs, err := sched.Resume(cfg.StatePath(), "db.broken", "")
	if err != nil || len(recs) != 1 {
		t.Fatalf("Resume: %v, %v", recs, err)
	}
	waitFor(t, "resumed table compacted", 10*time.Second, func() bool {
		b, _ := tableStatus(s2, "db.broken")
		return b.Halted == "" && successes(b, policy.Compact) > 0
	})
	models["broken"].check(t)
}

func TestPolicyChangesAndNewTablesApplyWithoutARestart(t *testing.T) {
	wh := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	a := newModel(t, createTable(t, wh, "a", nil))
	for i := 0; i < 7; i++ {
		a.commit(t, rng, 10)
	}
	cfg := config(t, wh, compactOnly(map[string]string{"compact.enabled": "false"}))
	r := &hookRunner{}
	s, _ := start(t, cfg, sched.Options{Runner: r})
	waitFor(t, "discovery", 5*time.Second, func() bool { _, ok := tableStatus(s, "db.a"); return ok })
	time.Sleep(300 * time.Millisecond)
	if r.count("db.a") != 0 {
		t.Fatal("compaction ran while disabled")
	}
	if _, err := policy.Update(cfg.PolicyPath(), "db.a", map[string]string{"compact.enabled": "true"}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "override applied", 10*time.Second, func() bool { return r.count("db.a") > 0 })
	// A table created now is discovered and (enabled by its own options)
	// compacted.
	b := newModel(t, createTable(t, wh, "b", map[string]string{"compactd.compact.enabled": "true"}))
	for i := 0; i < 7; i++ {
		b.commit(t, rng, 10)
	}
	waitFor(t, "new table compacted", 10*time.Second, func() bool { return r.count("db.b") > 0 })
	// SIGHUP with a config that excludes db.b drops it.
	next := *cfg
	next.Warehouses = []policy.Warehouse{{Path: wh, Exclude: []string{"db.b"}}}
	if err := s.Reload(context.Background(), &next); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "excluded table dropped", 10*time.Second, func() bool { _, ok := tableStatus(s, "db.b"); return !ok })
	a.check(t)
	b.check(t)
}

// A configured warehouse that does not exist is an error at start, and
// nothing is created there (issue 18: the daemon created it and watched 0
// tables with /healthz ok).
func TestAMissingWarehouseIsAnErrorAtStart(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-warehouse")
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{missing: "no such directory", notDir: "not a directory"} {
		cfg := config(t, path, nil)
		s, err := sched.New(cfg, sched.Options{Logger: logger(t)})
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = s.Run(ctx)
			cancel()
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("warehouse %s: %v, want an error naming it and %q", path, err, want)
		}
		if path == missing {
			if _, serr := os.Stat(missing); !os.IsNotExist(serr) {
				t.Errorf("the missing warehouse was created (%v)", serr)
			}
		}
	}
}
