package sched

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sourcegraph/conc"

	"github.com/compactd/compactd/catalog"
	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/table"
)

// Options configure a Scheduler beyond its config.
type Options struct {
	// Runner runs the jobs; nil means the real packages (PackageRunner).
	Runner Runner
	// FileIO opens a warehouse; nil means fileio.For / ForWithS3Config.
	FileIO func(ctx context.Context, w policy.Warehouse, path string) (fileio.FileIO, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Registerer takes the scheduler's metrics and Gatherer serves them on
	// /metrics (usually one *prometheus.Registry for both). A nil
	// Registerer means a fresh registry of the scheduler's own, which is
	// then also the Gatherer; a nil Gatherer means the Registerer if it is
	// one.
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	// Build labels compactd_build_info; empty fields are "unknown" (the
	// Go version: the running one).
	Build BuildInfo
	// Coordinator, if set, makes the scheduler one replica of a fleet:
	// no warehouse lock; the leader enqueues due units instead of running
	// them, and the coordinator runs units through RunUnit (fleet.go).
	Coordinator Coordinator
}

// BuildInfo identifies the running build (the caller knows it: the
// version and commit are set at link time in the command).
type BuildInfo struct {
	Version, Commit, GoVersion string
}

// Scheduler is the daemon. Create it with New, run it with Run.
type Scheduler struct {
	// openMu serializes openWarehouses: Run's first open and a SIGHUP's
	// Reload at start-up would otherwise both take the warehouse lock, and
	// the second would find the first's and fail as if another daemon
	// held it.
	openMu  sync.Mutex
	opts    Options
	runner  Runner
	log     *slog.Logger
	m       *metrics
	started time.Time

	mu          sync.Mutex
	cfg         *policy.Config
	store       *policy.Store
	storeMod    time.Time
	storeLoaded bool
	storeErr    string
	warehouses  map[string]*warehouse // by resolved path
	tables      map[string]*tableState
	busy        int
	queue       int
	// compactions and memory are the running compactions and their
	// estimated memory (admit.go).
	compactions  int
	memory       int64
	recent       []JobRecord
	lastDiscover time.Time
	reload       bool
	stopping     bool
	// lockErr is the lost lock that stopped the daemon (/readyz).
	lockErr error
}

type warehouse struct {
	cfg  policy.Warehouse
	path string
	fio  fileio.FileIO
	cat  catalog.Catalog // lists and opens the tables, commits the catalog's way
	lock *Lock
	err  string // last discovery error
	// discovered: a discovery listed the warehouse completely at least
	// once since it was locked (/readyz).
	discovered bool
	// skipped are the directories discovery left out because compactd
	// cannot address their names, each warned about once.
	skipped map[string]bool
}

// warnSkipped logs, once per directory, what discovery left out.
func (s *Scheduler) warnSkipped(w *warehouse, dirs []table.SkippedDir) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range dirs {
		if w.skipped[d.Path] {
			continue
		}
		if w.skipped == nil {
			w.skipped = map[string]bool{}
		}
		w.skipped[d.Path] = true
		s.log.Warn("skipping a directory whose name compactd cannot address", "warehouse", w.path, "dir", d.Path, "err", d.Err)
	}
}

type tableState struct {
	key     string
	wh      *warehouse
	name    string // db.table
	running policy.Kind
	// reserved is the running compaction's memory estimate (admit.go).
	reserved int64
	// A compaction split into bucket-range runs (buckets-per-run, runs.go):
	// the ranges not started yet, the runs running, the round's record
	// and its first error.
	ranges   []*compact.BucketRange
	runs     int
	roundRec JobRecord
	roundErr error
	halted   string
	haltedAt time.Time
	// haltUnrecorded: the halted record could not be written.
	haltUnrecorded bool
	policyErr      string
	eff            *policy.Effective
	jobs           map[policy.Kind]policy.Job
	next           map[policy.Kind]time.Time
	last           map[policy.Kind]time.Time // last success
	failures       map[policy.Kind]int       // consecutive
	backlog        Backlog
	lastJobs       []JobRecord
	gone           bool
}

// Backlog is what a table still needs, as last observed.
type Backlog struct {
	Observed        time.Time `json:"observed"`
	Snapshot        int64     `json:"snapshot"`
	Snapshots       int       `json:"snapshots"`
	Buckets         int       `json:"buckets"`
	SortedRunsMax   int       `json:"sortedRunsMax"`
	SortedRunsSum   int       `json:"sortedRunsSum"`
	Level0Max       int       `json:"level0FilesMax"`
	Level0Sum       int       `json:"level0FilesSum"`
	RunsOverTrigger int       `json:"runsOverTrigger"`
	PendingBytes    int64     `json:"pendingBytes"`
	Trigger         int       `json:"trigger"`
	// StopTrigger is num-sorted-run.stop-trigger: a bucket with this many
	// sorted runs stalls the table's Java writers.
	StopTrigger int `json:"stopTrigger"`
	// PostponedRows and PostponedFiles wait in bucket-postpone (bucket =
	// -2 tables): readers see none of them until a compaction moves them.
	PostponedRows  int64 `json:"postponedRows"`
	PostponedFiles int   `json:"postponedFiles"`
}

// JobRecord is one finished job.
type JobRecord struct {
	Warehouse    string      `json:"warehouse"`
	Table        string      `json:"table"`
	Kind         policy.Kind `json:"job"`
	Start        time.Time   `json:"start"`
	Seconds      float64     `json:"seconds"`
	Outcome      string      `json:"outcome"` // success, failed, halted, cancelled
	Class        string      `json:"class,omitempty"`
	Error        string      `json:"error,omitempty"`
	Snapshot     int64       `json:"snapshot,omitempty"`
	Buckets      int         `json:"buckets,omitempty"`
	RowsIn       int64       `json:"rowsIn,omitempty"`
	RowsOut      int64       `json:"rowsOut,omitempty"`
	BytesIn      int64       `json:"bytesIn,omitempty"`
	BytesOut     int64       `json:"bytesOut,omitempty"`
	FilesDeleted int         `json:"filesDeleted,omitempty"`
	Note         string      `json:"note,omitempty"`
	// BucketRange is a fleet unit's buckets ("[0,4)"); empty for a
	// whole-table job.
	BucketRange string `json:"bucketRange,omitempty"`
}

const (
	recentJobs   = 100
	perTableJobs = 10
	starveAfter  = time.Minute
)

// New validates cfg and prepares a scheduler; Run starts it.
func New(cfg *policy.Config, o Options) (*Scheduler, error) {
	cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Runner == nil {
		o.Runner = PackageRunner{}
	}
	if o.FileIO == nil {
		o.FileIO = defaultFileIO
	}
	if o.Registerer == nil {
		reg := prometheus.NewRegistry()
		o.Registerer, o.Gatherer = reg, reg
	}
	if o.Gatherer == nil {
		g, ok := o.Registerer.(prometheus.Gatherer)
		if !ok {
			return nil, errors.New("sched: Options.Registerer is not a Gatherer: set Options.Gatherer to serve /metrics")
		}
		o.Gatherer = g
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	b := o.Build
	b.Version, b.Commit = cmp.Or(b.Version, "unknown"), cmp.Or(b.Commit, "unknown")
	b.GoVersion = cmp.Or(b.GoVersion, runtime.Version())
	m.buildInfo.WithLabelValues(b.Version, b.Commit, b.GoVersion).Set(1)
	for _, f := range []string{"config", "policy-store"} {
		for _, o := range []string{"success", "failure"} {
			m.reloads.WithLabelValues(f, o) // at zero, so that increase() sees the first
		}
	}
	s := &Scheduler{opts: o, runner: o.Runner, log: o.Logger, m: m, cfg: cfg,
		warehouses: map[string]*warehouse{}, tables: map[string]*tableState{},
		store: &policy.Store{Tables: map[string]map[string]string{}}}
	return s, nil
}

func defaultFileIO(ctx context.Context, w policy.Warehouse, path string) (fileio.FileIO, error) {
	if w.S3 != nil {
		return fileio.ForWithS3Config(ctx, path, fileio.S3Config{Endpoint: w.S3.Endpoint, Region: w.S3.Region,
			AddressingStyle: w.S3.AddressingStyle, AccessKeyID: w.S3.AccessKeyID, SecretAccessKey: w.S3.SecretAccessKey, Profile: w.S3.Profile})
	}
	return fileio.For(ctx, path)
}

// Config returns the config in effect.
func (s *Scheduler) Config() *policy.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Reload replaces the config (SIGHUP): new warehouses are locked (an error
// keeps the old config), dropped ones released, and tables, policies and
// the policy store are re-read at the next tick.
func (s *Scheduler) Reload(ctx context.Context, cfg *policy.Config) error {
	cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		s.ReloadFailed(err)
		return err
	}
	if err := s.openWarehouses(ctx, cfg); err != nil {
		s.ReloadFailed(err)
		return err
	}
	s.m.reloads.WithLabelValues("config", "success").Inc()
	s.mu.Lock()
	s.cfg = cfg
	s.reload = true
	s.storeLoaded = false
	s.mu.Unlock()
	s.log.Info("configuration reloaded", "config", cfg.Path, "warehouses", len(cfg.Warehouses), "workers", cfg.Workers)
	return nil
}

// ReloadFailed counts a config reload that failed before Reload was
// called (the file could not be read or parsed); Reload counts its own.
func (s *Scheduler) ReloadFailed(err error) {
	s.m.reloads.WithLabelValues("config", "failure").Inc()
}

// observeStorage wraps a warehouse's FileIO so that its operations are
// counted in compactd_storage_operations_total.
func (s *Scheduler) observeStorage(warehouse string, fio fileio.FileIO) fileio.FileIO {
	return fileio.Observe(fio, func(op string, err error) {
		s.m.storage.WithLabelValues(warehouse, op, fileio.OutcomeOf(err)).Inc()
	})
}

// checkWarehouse fails for a warehouse that is not what the config can
// mean, before anything is written there (the lock would otherwise create
// a mistyped directory and the daemon watch nothing, healthily): a local
// path that is missing or not a directory, a store prefix that cannot be
// listed (a missing bucket, denied access). An empty store prefix is a
// warehouse with no tables yet.
func checkWarehouse(ctx context.Context, fio fileio.FileIO, p string) error {
	if !strings.Contains(p, "://") || strings.HasPrefix(p, "file://") {
		fi, err := fio.Stat(ctx, p)
		switch {
		case errors.Is(err, fileio.ErrNotExist):
			return errors.New("no such directory (create it, or fix the path in the config)")
		case err != nil:
			return fmt.Errorf("cannot be read: %w", err)
		case !fi.IsDir:
			return errors.New("not a directory")
		}
	}
	if _, err := fio.List(ctx, p); err != nil {
		return fmt.Errorf("cannot be listed: %w", err)
	}
	return nil
}

// openWarehouses locks the warehouses of cfg not yet held and releases
// those cfg dropped.
func (s *Scheduler) openWarehouses(ctx context.Context, cfg *policy.Config) error {
	s.openMu.Lock()
	defer s.openMu.Unlock()
	s.mu.Lock()
	held := maps.Clone(s.warehouses)
	s.mu.Unlock()
	want := map[string]*warehouse{}
	var opened []*warehouse
	for _, wc := range cfg.Warehouses {
		p := cfg.WarehousePath(wc)
		if w, ok := held[p]; ok {
			w.cfg = wc
			want[p] = w
			continue
		}
		fio, err := s.opts.FileIO(ctx, wc, p)
		if err == nil {
			fio = s.observeStorage(p, fio)
			err = checkWarehouse(ctx, fio, p)
		}
		if err == nil && s.opts.Coordinator != nil {
			// A fleet: the replicas share the warehouse, and what
			// excludes is kept in the coordinator's database.
			w := &warehouse{cfg: wc, path: p, fio: fio}
			if w.cat, err = s.openCatalog(ctx, w); err == nil {
				want[p] = w
				opened = append(opened, w)
				continue
			}
		}
		if err == nil && s.opts.Coordinator == nil {
			var l *Lock
			l, err = AcquireLock(ctx, fio, p, cfg.LockLease.D(), s.opts.Now)
			if err == nil {
				w := &warehouse{cfg: wc, path: p, fio: fio, lock: l}
				if w.cat, err = s.openCatalog(ctx, w); err == nil {
					want[p] = w
					opened = append(opened, w)
					s.m.lockHeld.WithLabelValues(p).Set(1)
					// At zero from the start, so that increase() sees the first.
					s.m.lockLosses.WithLabelValues(p)
					s.m.lockRenewals.WithLabelValues(p, "success")
					s.m.lockRenewals.WithLabelValues(p, "failure")
					continue
				}
				_ = l.Release(context.WithoutCancel(ctx))
			}
		}
		for _, w := range opened {
			w.releaseLock(ctx)
			_ = w.cat.Close()
			s.m.lockHeld.DeleteLabelValues(w.path)
		}
		return fmt.Errorf("warehouse %s: %w", p, err)
	}
	s.mu.Lock()
	for p, w := range s.warehouses {
		if _, ok := want[p]; !ok {
			w.releaseLock(ctx)
			_ = w.cat.Close()
			s.m.lockHeld.DeleteLabelValues(p)
			s.m.lockLosses.DeleteLabelValues(p)
			s.m.lockRenewals.DeletePartialMatch(prometheus.Labels{"warehouse": p})
			for _, t := range s.tables {
				if t.wh == w {
					t.gone = true
				}
			}
		}
	}
	s.warehouses = want
	s.mu.Unlock()
	return nil
}

// releaseLock releases the warehouse lock, if it has one (a fleet's
// replica has none).
func (w *warehouse) releaseLock(ctx context.Context) {
	if w.lock != nil {
		_ = w.lock.Release(context.WithoutCancel(ctx))
	}
}

// openCatalog opens the catalog a warehouse names; a file-system one
// when it names none.
func (s *Scheduler) openCatalog(ctx context.Context, w *warehouse) (catalog.Catalog, error) {
	if len(w.cfg.Catalog) == 0 {
		return &catalog.FileSystem{FIO: w.fio, Warehouse: w.path, OnSkipped: func(d []table.SkippedDir) { s.warnSkipped(w, d) }}, nil
	}
	opts := catalog.Options(maps.Clone(w.cfg.Catalog))
	if _, ok := opts["warehouse"]; !ok {
		opts["warehouse"] = w.path
	}
	c, err := catalog.Open(ctx, opts, func(ctx context.Context, p string) (fileio.FileIO, error) {
		fio, err := s.opts.FileIO(ctx, w.cfg, p)
		if err != nil {
			return nil, err
		}
		return s.observeStorage(w.path, fio), nil
	})
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(opts["metastore"], "rest") {
		// The server names each table's directory; the warehouse's path
		// is where they must all lie (and where the daemon's lock is).
		c = catalog.Confine(c, w.fio, w.path)
	}
	return c, nil
}

// Run locks the warehouses and schedules until ctx is cancelled, then
// stops taking work, gives running jobs the grace period to finish,
// cancels them, and releases the locks. It returns nil after a clean
// shutdown, or the error that stopped it (a lost lock).
func (s *Scheduler) Run(ctx context.Context) error {
	if err := s.openWarehouses(ctx, s.cfg); err != nil {
		return err
	}
	s.mu.Lock()
	s.started = s.opts.Now()
	s.mu.Unlock()
	jobCtx, cancelJobs := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelJobs(nil)
	var wg conc.WaitGroup
	// The locks are kept until the last job ended, through the grace
	// period: jobs never run on a lease nobody renews. A lost lock stops
	// new work and cancels the running jobs at once, from the watchdog
	// itself (not at the loop's next turn).
	lost := make(chan error, 1)
	hbCtx, stopHB := context.WithCancel(context.WithoutCancel(ctx))
	var hb conc.WaitGroup
	hb.Go(func() {
		if s.opts.Coordinator != nil {
			return // no warehouse locks in a fleet
		}
		s.keepLocks(hbCtx, func(err error) {
			s.mu.Lock()
			s.stopping = true
			s.lockErr = err
			s.mu.Unlock()
			cancelJobs(err)
			lost <- err
		})
	})
	defer func() { stopHB(); hb.Wait() }()

	tick := time.NewTicker(s.Config().Tick.D())
	defer tick.Stop()
	var runErr error
loop:
	for {
		s.tick(ctx, jobCtx, &wg)
		select {
		case <-ctx.Done():
			break loop
		case err := <-lost:
			runErr = err
			break loop
		case <-tick.C:
		}
	}
	s.mu.Lock()
	s.stopping = true
	busy := s.busy
	grace := s.cfg.GracePeriod.D()
	s.mu.Unlock()
	if runErr != nil {
		s.log.Error("lock lost: running jobs cancelled", "running", busy, "err", runErr)
	} else {
		s.log.Info("shutting down: no new jobs", "running", busy, "grace", grace.String())
	}
	if c := s.opts.Coordinator; c != nil {
		// The fleet's units run outside wg, on the catalogs closed below.
		if err := c.Drain(grace); err != nil {
			s.log.Warn("fleet: drain running units", "err", err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case err := <-lost:
		runErr = err
		<-done
	case <-time.After(grace):
		s.log.Warn("grace period over: cancelling running jobs")
		cancelJobs(errors.New("daemon shutting down"))
		<-done
	}
	stopHB()
	hb.Wait()
	if runErr == nil {
		select {
		case runErr = <-lost:
		default:
		}
	}
	s.mu.Lock()
	for _, w := range s.warehouses {
		if w.lock != nil {
			if err := w.lock.Release(context.Background()); err != nil {
				s.log.Warn("release warehouse lock", "warehouse", w.path, "err", err)
			}
			s.m.lockHeld.WithLabelValues(w.path).Set(0)
		}
		if err := w.cat.Close(); err != nil {
			s.log.Warn("close catalog", "warehouse", w.path, "catalog", w.cat.Name(), "err", err)
		}
	}
	s.mu.Unlock()
	return runErr
}

// keepLocks renews the warehouse locks every lease/4 (retrying failures
// every lease/20) and reports to lost (once) a lock that was taken over or whose
// deadline — the last successful renewal's start plus the lease minus
// LockMargin — passed without a renewal. The deadline is watched apart
// from the renewals, so a renewal hanging in the store cannot hold the
// report back past it.
func (s *Scheduler) keepLocks(ctx context.Context, lost func(error)) {
	type result struct {
		w   *warehouse
		err error
	}
	results := make(chan result)
	// Renewals still running when keepLocks returns are waited for, so
	// none lands after Release.
	var beats sync.WaitGroup
	defer beats.Wait()
	next := map[*Lock]time.Time{}
	inflight := map[*Lock]bool{}
	for {
		leaseFor := s.Config().LockLease.D()
		poll := min(max(leaseFor/20, 5*time.Millisecond), time.Second)
		select {
		case <-ctx.Done():
			return
		case r := <-results:
			l := r.w.lock
			inflight[l] = false
			s.mu.Lock()
			current := s.warehouses[r.w.path] == r.w
			s.mu.Unlock()
			switch {
			case !current:
				// Dropped by a reload, which released its lock.
				delete(next, l)
			case errors.Is(r.err, ErrLockLost):
				s.lockLost(r.w.path)
				s.log.Error("warehouse lock lost: stopping", "warehouse", r.w.path, "err", r.err)
				lost(fmt.Errorf("warehouse %s: %w", r.w.path, r.err))
				return
			case r.err != nil:
				if ctx.Err() != nil {
					return
				}
				next[l] = s.opts.Now().Add(poll)
				s.m.lockRenewals.WithLabelValues(r.w.path, "failure").Inc()
				s.log.Warn("warehouse lock heartbeat failed", "warehouse", r.w.path, "err", r.err,
					"deadline", l.Deadline())
			default:
				s.m.lockRenewals.WithLabelValues(r.w.path, "success").Inc()
				next[l] = s.opts.Now().Add(leaseFor / 4)
			}
		case <-time.After(poll):
		}
		s.mu.Lock()
		ws := slices.Collect(maps.Values(s.warehouses))
		s.mu.Unlock()
		now := s.opts.Now()
		for _, w := range ws {
			l := w.lock
			if d := l.Deadline(); !now.Before(d) {
				err := fmt.Errorf("warehouse %s: %w: %s not renewed before %s (lease %s, margin %s)", w.path, ErrLockLost,
					l.Path(), d.Format(time.RFC3339Nano), leaseFor, LockMargin(leaseFor))
				s.lockLost(w.path)
				s.log.Error("warehouse lock lapsed: stopping", "warehouse", w.path, "err", err)
				lost(err)
				return
			}
			if _, ok := next[l]; !ok {
				next[l] = now.Add(leaseFor / 4)
			}
			if inflight[l] || now.Before(next[l]) {
				continue
			}
			inflight[l] = true
			beats.Add(1)
			go func() {
				defer beats.Done()
				hctx, cancel := context.WithTimeout(ctx, l.Deadline().Sub(s.opts.Now()))
				defer cancel()
				err := l.Heartbeat(hctx)
				select {
				case results <- result{w, err}:
				case <-ctx.Done():
				}
			}()
		}
	}
}

// lockLost records a lost warehouse lock in the metrics.
func (s *Scheduler) lockLost(warehouse string) {
	s.m.lockLosses.WithLabelValues(warehouse).Inc()
	s.m.lockHeld.WithLabelValues(warehouse).Set(0)
}

// refreshTables rediscovers the tables when a reload is asked for or the
// discovery interval has passed, and syncs the halted tables.
func (s *Scheduler) refreshTables(ctx context.Context, now time.Time) {
	s.mu.Lock()
	discover := s.reload || now.Sub(s.lastDiscover) >= s.cfg.DiscoveryInterval.D()
	s.mu.Unlock()
	if discover {
		s.discover(ctx)
	}
	s.syncHalted(ctx)
}

// tick is one pass of the scheduling loop.
func (s *Scheduler) tick(ctx, jobCtx context.Context, wg *conc.WaitGroup) {
	now := s.opts.Now()
	s.reloadStore()
	if s.opts.Coordinator != nil {
		s.tickFleet(ctx, now)
		return
	}
	s.refreshTables(ctx, now)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return
	}
	cands := s.dueCandidates(now, false)
	queued := 0
	for _, c := range cands {
		switch {
		case c.t.running == "":
		case c.t.running == c.k && len(c.t.ranges) > 0:
			// A split compaction with ranges to start: in the table's
			// place in the order, as far as its share allows.
			queued += s.startRanges(jobCtx, wg, c.t, c.k)
			continue
		default:
			continue // another kind of the table runs, or was just dispatched
		}
		if isCompaction(c.k) && s.cfg.BucketsPerRun > 0 {
			if us := unitsOf(c.t.wh.path, c.t.name, c.k, c.t.eff, s.cfg.BucketsPerRun); len(us) > 1 {
				t := c.t
				t.running, t.runs, t.roundErr = c.k, 0, nil
				t.ranges = t.ranges[:0]
				for _, u := range us {
					t.ranges = append(t.ranges, u.Buckets)
				}
				t.roundRec = JobRecord{Warehouse: t.wh.path, Table: t.name, Kind: c.k, Start: now,
					Note: fmt.Sprintf("%d bucket-range runs of %d buckets", len(us), s.cfg.BucketsPerRun)}
				queued += s.startRanges(jobCtx, wg, t, c.k)
				continue
			}
		}
		if s.busy >= s.cfg.Workers {
			queued++
			continue
		}
		if isCompaction(c.k) {
			est := s.jobMemory(c.t, c.k, 0)
			if !s.fits(est) {
				queued++ // other kinds may still take the worker
				continue
			}
			s.reserve(est)
			c.t.reserved = est
		}
		s.busy++
		c.t.running = c.k
		t, k := c.t, c.k
		wg.Go(func() { s.runJob(jobCtx, t, k) })
	}
	s.queue = queued
	s.m.queue.Set(float64(queued))
	s.m.busy.Set(float64(s.busy))
	s.m.workers.Set(float64(s.cfg.Workers))
}

// reloadStore re-reads the policy store when its modification time changed.
func (s *Scheduler) reloadStore() {
	s.mu.Lock()
	file := s.cfg.PolicyPath()
	loaded, mod := s.storeLoaded, s.storeMod
	s.mu.Unlock()
	var m time.Time // zero: no file
	if st, err := os.Stat(file); err == nil {
		m = st.ModTime()
	}
	if loaded && m.Equal(mod) {
		return
	}
	store, err := policy.LoadStore(file)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storeLoaded, s.storeMod = true, m
	if err != nil {
		s.storeErr = err.Error()
		s.m.reloads.WithLabelValues("policy-store", "failure").Inc()
		s.log.Error("policy store unreadable: keeping the previous policies", "file", file, "err", err)
		return
	}
	if loaded {
		s.m.reloads.WithLabelValues("policy-store", "success").Inc()
		s.log.Info("policy store reloaded", "file", file)
	}
	s.storeErr = ""
	s.store = store
	s.reload = true
}

// discover lists the warehouses for tables, adds new ones, drops vanished
// ones, and re-resolves every table's policy.
func (s *Scheduler) discover(ctx context.Context) {
	s.mu.Lock()
	ws := slices.Collect(maps.Values(s.warehouses))
	cfg := s.cfg
	s.reload = false
	s.lastDiscover = s.opts.Now()
	s.mu.Unlock()
	type found struct {
		w    *warehouse
		name string
		opts map[string]string
	}
	var all []found
	seen := map[*warehouse]bool{}
	for _, w := range ws {
		dbs, err := w.cat.ListDatabases(ctx)
		if err != nil {
			s.log.Error("list warehouse", "warehouse", w.path, "err", err)
			s.mu.Lock()
			w.err = err.Error()
			s.mu.Unlock()
			continue
		}
		var dbErrs []error
		for _, db := range dbs {
			names, err := w.cat.ListTables(ctx, db)
			if err != nil {
				s.log.Error("list database", "warehouse", w.path, "database", db, "err", err)
				dbErrs = append(dbErrs, err) // names the database directory
				continue
			}
			for _, n := range names {
				full := db + "." + n
				if !w.cfg.Selects(full) {
					continue
				}
				var opts map[string]string
				if t, err := w.cat.OpenTable(ctx, db, n); err == nil {
					opts = t.Schema().EffectiveOptions()
				}
				all = append(all, found{w, full, opts})
			}
		}
		s.mu.Lock()
		if err := errors.Join(dbErrs...); err != nil {
			// A database that cannot be listed is a warehouse error too:
			// its tables would silently go unwatched.
			w.err = err.Error()
		} else {
			w.err = ""
			w.discovered = true
			seen[w] = true
		}
		s.mu.Unlock()
	}
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	present := map[string]bool{}
	for _, f := range all {
		key := f.w.path + "|" + f.name
		present[key] = true
		t, ok := s.tables[key]
		if !ok {
			t = &tableState{key: key, wh: f.w, name: f.name, next: map[policy.Kind]time.Time{},
				last: map[policy.Kind]time.Time{}, failures: map[policy.Kind]int{}}
			s.tables[key] = t
			s.log.Info("watching table", "warehouse", f.w.path, "table", f.name)
		}
		t.gone = false
		t.eff = policy.Resolve(f.name, f.opts, cfg.Defaults, s.store.Overrides(f.name))
		s.resolveJobs(t, now)
	}
	for key, t := range s.tables {
		if !present[key] && seen[t.wh] || s.warehouses[t.wh.path] != t.wh {
			if !t.gone {
				s.log.Info("table gone", "warehouse", t.wh.path, "table", t.name)
			}
			t.gone = true
			if t.running == "" {
				delete(s.tables, key)
				s.deleteTableMetrics(t)
			}
		}
	}
	s.m.tabs.Set(float64(len(s.tables)))
}

// resolveJobs re-derives t's job policies; a changed schedule takes effect
// from now. Called with s.mu held.
func (s *Scheduler) resolveJobs(t *tableState, now time.Time) {
	old := t.jobs
	t.jobs = map[policy.Kind]policy.Job{}
	var errs []error
	for _, k := range policy.Kinds {
		j, err := t.eff.Job(k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		t.jobs[k] = j
		if o, ok := old[k]; ok && o.Spec == j.Spec && !t.next[k].IsZero() {
			continue
		}
		switch {
		case j.Schedule == nil:
		case k == policy.Compact || k == policy.Expire:
			t.next[k] = now // check promptly, then on schedule
		default:
			t.next[k] = j.Schedule.Next(now)
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.policyErr = err.Error()
		s.log.Error("invalid policy: the affected jobs do not run", "table", t.name, "err", err)
	} else {
		t.policyErr = ""
	}
}

func (s *Scheduler) deleteTableMetrics(t *tableState) {
	l := map[string]string{"warehouse": t.wh.path, "table": t.name}
	for _, g := range []*prometheus.GaugeVec{s.m.sortedRunsMax, s.m.sortedRunsSum, s.m.level0Max, s.m.level0Sum, s.m.pendingBytes, s.m.runsOverTrigger,
		s.m.postponedRows, s.m.postponedFiles, s.m.stopTrigger, s.m.stopRatio,
		s.m.snapshots, s.m.halted, s.m.lastSuccess} {
		g.DeletePartialMatch(l)
	}
}

// candidate is a due job.
type candidate struct {
	t   *tableState
	k   policy.Kind
	due time.Time
}

// orderCandidates puts the due jobs in dispatch order: jobs waiting longer
// than starveAfter first, oldest first (no table starves behind busier
// ones); then the largest backlog — postponed rows (which no reader sees
// until they are compacted), sorted runs over the trigger, bytes pending —
// then the oldest last success (never first).
// dueCandidates are the enabled jobs due at now of the tables that are
// neither gone nor halted (nor, with idleOnly, running a job), in
// dispatch order. s.mu is held.
func (s *Scheduler) dueCandidates(now time.Time, idleOnly bool) []candidate {
	var cands []candidate
	for _, t := range s.tables {
		if t.gone || t.halted != "" || (idleOnly && t.running != "") || t.eff == nil {
			continue
		}
		for _, k := range policy.Kinds {
			j, ok := t.jobs[k]
			if !ok || !j.Enabled {
				continue
			}
			if due := t.next[k]; !due.IsZero() && !now.Before(due) {
				cands = append(cands, candidate{t, k, due})
			}
		}
	}
	orderCandidates(cands, now)
	return cands
}

func orderCandidates(cands []candidate, now time.Time) {
	slices.SortFunc(cands, func(a, b candidate) int {
		as, bs := now.Sub(a.due) > starveAfter, now.Sub(b.due) > starveAfter
		if as != bs {
			if as {
				return -1
			}
			return 1
		}
		if as {
			if c := a.due.Compare(b.due); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(b.t.backlog.PostponedRows, a.t.backlog.PostponedRows); c != 0 {
			return c
		}
		if c := cmp.Compare(b.t.backlog.RunsOverTrigger, a.t.backlog.RunsOverTrigger); c != 0 {
			return c
		}
		if c := cmp.Compare(b.t.backlog.PendingBytes, a.t.backlog.PendingBytes); c != 0 {
			return c
		}
		if c := a.t.last[a.k].Compare(b.t.last[b.k]); c != 0 {
			return c
		}
		if c := cmp.Compare(slices.Index(policy.Kinds, a.k), slices.Index(policy.Kinds, b.k)); c != 0 {
			return c
		}
		return cmp.Compare(a.t.key, b.t.key)
	})
}
