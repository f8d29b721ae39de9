package sched_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

// gateFIO holds the daemon at the steps /readyz must see: the lock's
// exclusive create waits for lockGate, the first listing of the database
// directory (discovery; the lock never lists it) waits for listGate, and
// listings of the warehouse root fail while failRoot is set.
type gateFIO struct {
	fileio.FileIO
	wh, db             string
	lockGate, listGate chan struct{}
	lockAt, listAt     chan struct{} // closed when a call reaches the gate
	lockOnce, listOnce sync.Once
	failRoot           atomic.Bool
}

func (f *gateFIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if strings.HasPrefix(path.Base(p), sched.LockFile) {
		f.lockOnce.Do(func() { close(f.lockAt) })
		<-f.lockGate
	}
	return f.FileIO.WriteExclusive(ctx, p, data)
}

func (f *gateFIO) List(ctx context.Context, dir string) ([]fileio.FileInfo, error) {
	switch filepath.Clean(dir) {
	case f.db:
		f.listOnce.Do(func() { close(f.listAt) })
		<-f.listGate
	case f.wh:
		if f.failRoot.Load() {
			return nil, errors.New("injected: listing refused")
		}
	}
	return f.FileIO.List(ctx, dir)
}

// /readyz (issue 18) answers 200 only while the daemon can do its work:
// not before it holds the warehouse lock, not before its first discovery
// of the warehouse, not while discovery fails, and not once the lock was
// taken over; /healthz (liveness) answers 200 throughout, until the daemon
// stops.
func TestReadyzIsReadyOnlyWhileEveryWarehouseIsLockedAndDiscovered(t *testing.T) {
	wh := t.TempDir()
	createTable(t, wh, "a", nil)
	f := &gateFIO{FileIO: fileio.NewLocal(), wh: filepath.Clean(wh), db: filepath.Join(wh, "db.db"),
		lockGate: make(chan struct{}), listGate: make(chan struct{}), lockAt: make(chan struct{}), listAt: make(chan struct{})}
	var openLock, openList sync.Once
	releaseLock := func() { openLock.Do(func() { close(f.lockGate) }) }
	releaseList := func() { openList.Do(func() { close(f.listGate) }) }
	defer releaseLock()
	defer releaseList()
	cfg := config(t, wh, compactOnly(map[string]string{"compact.enabled": "false"}))
	// Renewals fail while the root listing does: a long lease keeps the
	// lock through that step.
	cfg.LockLease = policy.Duration(6 * time.Second)
	s, err := sched.New(cfg, sched.Options{Logger: logger(t),
		FileIO: func(context.Context, policy.Warehouse, string) (fileio.FileIO, error) { return f, nil }})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	probe := func(p string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		return rec.Code, rec.Body.String()
	}
	expect := func(step string, code int, want string) {
		t.Helper()
		got, body := probe("/readyz")
		if got != code || !strings.Contains(body, want) {
			t.Fatalf("%s: /readyz %d %q, want %d with %q", step, got, body, code, want)
		}
		t.Logf("%s: /readyz %d %s", step, got, strings.TrimSpace(body))
	}
	alive := func(step string) {
		t.Helper()
		if code, body := probe("/healthz"); code != 200 {
			t.Fatalf("%s: /healthz %d %q, want 200 (liveness)", step, code, body)
		}
	}
	eventually := func(step string, code int, want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		got, body := probe("/readyz")
		for got != code || !strings.Contains(body, want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: /readyz still %d %q, want %d with %q", step, got, body, code, want)
			}
			time.Sleep(20 * time.Millisecond)
			got, body = probe("/readyz")
		}
		t.Logf("%s: /readyz %d %s", step, got, strings.TrimSpace(body))
	}

	expect("before Run", 503, "lock not held")
	alive("before Run")

	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	select {
	case <-f.lockAt:
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon never tried to take the lock")
	}
	expect("taking the lock", 503, "lock not held")
	alive("taking the lock")
	releaseLock()

	select {
	case <-f.listAt:
	case <-time.After(10 * time.Second):
		t.Fatal("no discovery")
	}
	expect("locked, discovering", 503, "not discovered yet")
	releaseList()

	eventually("discovered", 200, "ready")

	f.failRoot.Store(true)
	eventually("discovery failing", 503, "injected: listing refused")
	alive("discovery failing")
	f.failRoot.Store(false)
	eventually("discovery recovered", 200, "ready")

	// Another daemon takes the lock over: a newer generation appears.
	gens, err := filepath.Glob(filepath.Join(wh, sched.LockFile+".*"))
	if err != nil || len(gens) == 0 {
		t.Fatalf("no lock generation file: %v %v", gens, err)
	}
	slices.Sort(gens)
	var gen int64
	if _, err := fmt.Sscanf(strings.TrimPrefix(filepath.Base(gens[len(gens)-1]), sched.LockFile+"."), "%d", &gen); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(wh, fmt.Sprintf("%s.%020d", sched.LockFile, gen+1))
	lease := fmt.Sprintf(`{"owner":"another-daemon","host":"elsewhere","pid":1,"generation":%d,"acquired":%q,"expires":%q}`,
		gen+1, time.Now().UTC().Format(time.RFC3339Nano), time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano))
	if err := os.WriteFile(newer, []byte(lease), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually("lock taken over", 503, "lock lost")
	select {
	case err := <-done:
		if !errors.Is(err, sched.ErrLockLost) {
			t.Fatalf("Run returned %v, want ErrLockLost", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the daemon kept running on a lost lock")
	}
	expect("stopped after the loss", 503, "lock lost")
}

// A daemon that shuts down is no longer ready, and says so.
func TestReadyzIsNotReadyOnceTheDaemonStops(t *testing.T) {
	wh := t.TempDir()
	createTable(t, wh, "a", nil)
	s, stop := start(t, config(t, wh, compactOnly(map[string]string{"compact.enabled": "false"})), sched.Options{})
	h := s.Handler()
	waitFor(t, "ready", 10*time.Second, func() bool { return s.Ready() == nil })
	if body := get(t, h, "/readyz"); body != "ready\n" {
		t.Fatalf("/readyz %q", body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), "shutting down") {
		t.Fatalf("/readyz after the daemon stopped: %d %q", rec.Code, rec.Body)
	}
}
