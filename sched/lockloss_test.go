package sched_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// lockWriteFIO fails the writes of lock files once failing is set, and
// remembers the lease of the last lock write that succeeded.
type lockWriteFIO struct {
	fileio.FileIO
	failing atomic.Bool
	mu      sync.Mutex
	expires time.Time // of the last lease written
}

func isLockFile(p string) bool { return strings.HasPrefix(path.Base(p), sched.LockFile) }

func (f *lockWriteFIO) Create(ctx context.Context, p string) (fileio.Writer, error) {
	if isLockFile(p) && f.failing.Load() {
		return nil, errors.New("injected: store unavailable")
	}
	w, err := f.FileIO.Create(ctx, p)
	if err != nil || !isLockFile(p) {
		return w, err
	}
	return &leaseWriter{Writer: w, f: f}, nil
}

func (f *lockWriteFIO) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if isLockFile(p) && f.failing.Load() {
		return errors.New("injected: store unavailable")
	}
	err := f.FileIO.WriteExclusive(ctx, p, data)
	if err == nil && isLockFile(p) {
		f.written(data)
	}
	return err
}

func (f *lockWriteFIO) written(data []byte) {
	var l struct {
		Expires time.Time `json:"expires"`
	}
	if json.Unmarshal(data, &l) == nil {
		f.mu.Lock()
		f.expires = l.Expires
		f.mu.Unlock()
	}
}

func (f *lockWriteFIO) leaseEnd() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.expires
}

type leaseWriter struct {
	fileio.Writer
	f   *lockWriteFIO
	buf []byte
}

func (w *leaseWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return w.Writer.Write(p)
}

func (w *leaseWriter) Close() error {
	if w.f.failing.Load() {
		_ = w.Writer.Abort()
		return errors.New("injected: store unavailable")
	}
	err := w.Writer.Close()
	if err == nil {
		w.f.written(w.buf)
	}
	return err
}

// A daemon whose lock heartbeats start failing (the store refuses its
// writes) must give the warehouse up before its lease ends, when another
// daemon may take the lock over: its running compaction is cancelled
// before the end of the last lease it wrote, commits nothing, and the
// daemon stops with ErrLockLost.
func TestAHolderWhoseHeartbeatsFailCancelsItsJobsBeforeItsLeaseEnds(t *testing.T) {
	wh := t.TempDir()
	m := newModel(t, createTable(t, wh, "a", nil))
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 8; i++ {
		m.commit(t, rng, 30)
	}
	ctx := context.Background()
	snapBefore, _ := m.tb.LatestSnapshotID(ctx)
	fio := &lockWriteFIO{FileIO: fileio.NewLocal()}
	inJob := make(chan struct{})
	var once sync.Once
	var cancelledAt atomic.Pointer[time.Time]
	var calls atomic.Int32
	r := &hookRunner{compact: func(ctx context.Context, _ *table.Table, o *compact.Options) error {
		calls.Add(1)
		o.BeforeCommit = func() {
			once.Do(func() { close(inJob) })
			<-ctx.Done()
			now := time.Now()
			cancelledAt.CompareAndSwap(nil, &now)
		}
		return nil
	}}
	cfg := config(t, wh, compactOnly(nil))
	cfg.LockLease = policy.Duration(2 * time.Second)
	cfg.GracePeriod = policy.Duration(time.Minute) // a lost lock must not wait for it
	reg := prometheus.NewRegistry()
	s, err := sched.New(cfg, sched.Options{Runner: r, Logger: logger(t), Registerer: reg,
		FileIO: func(context.Context, policy.Warehouse, string) (fileio.FileIO, error) { return fio, nil }})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	select {
	case <-inJob:
	case <-time.After(10 * time.Second):
		t.Fatal("no compaction started")
	}
	// Let one renewal pass, then fail them all.
	time.Sleep(700 * time.Millisecond)
	fio.failing.Store(true)
	failedFrom := time.Now()
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon kept running on a lease it could not renew")
	}
	end := fio.leaseEnd()
	at := cancelledAt.Load()
	if at == nil {
		t.Fatal("the running compaction was never cancelled")
	}
	t.Logf("writes failing from %s; job cancelled %s before the lease's end",
		failedFrom.Format(time.RFC3339Nano), end.Sub(*at))
	if !at.Before(end) {
		t.Fatalf("job cancelled at %s, after the lease ended at %s", at.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano))
	}
	if !errors.Is(runErr, sched.ErrLockLost) {
		t.Fatalf("Run returned %v, want ErrLockLost", runErr)
	}
	// The metrics tell: renewals that succeeded, then failed, one loss,
	// the lock no longer held.
	for _, c := range []struct {
		name   string
		labels map[string]string
		ok     func(float64) bool
	}{
		{"compactd_warehouse_lock_renewals_total", map[string]string{"warehouse": wh, "outcome": "success"}, func(v float64) bool { return v >= 1 }},
		{"compactd_warehouse_lock_renewals_total", map[string]string{"warehouse": wh, "outcome": "failure"}, func(v float64) bool { return v >= 1 }},
		{"compactd_warehouse_lock_losses_total", map[string]string{"warehouse": wh}, func(v float64) bool { return v == 1 }},
		{"compactd_warehouse_lock_held", map[string]string{"warehouse": wh}, func(v float64) bool { return v == 0 }},
	} {
		if v, found := metricValue(t, reg, c.name, c.labels); !found || !c.ok(v) {
			t.Errorf("%s%v = %v (present %v)", c.name, c.labels, v, found)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d compactions started, want 1 (no new work once renewals fail past the deadline)", n)
	}
	if id, _ := m.tb.LatestSnapshotID(ctx); id != snapBefore {
		t.Fatalf("a cancelled compaction committed snapshot %d", id)
	}
	ts, _ := tableStatus(s, "db.a")
	if len(ts.LastJobs) == 0 || ts.LastJobs[len(ts.LastJobs)-1].Outcome != "cancelled" {
		t.Fatalf("last job: %+v", ts.LastJobs)
	}
	m.check(t)
}
