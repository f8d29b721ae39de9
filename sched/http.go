package sched

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/compactd/compactd/policy"
)

// Status is the JSON of /status.
type Status struct {
	Started     time.Time     `json:"started"`
	Config      string        `json:"config,omitempty"`
	Workers     int           `json:"workers"`
	Busy        int           `json:"busy"`
	Queue       int           `json:"queue"`
	PolicyError string        `json:"policyStoreError,omitempty"`
	Warehouses  []WhStatus    `json:"warehouses"`
	Tables      []TableStatus `json:"tables"`
	Recent      []JobRecord   `json:"recentJobs"`
	// Fleet is the fleet this daemon is a replica of (coordinated mode).
	Fleet *FleetStatus `json:"fleet,omitempty"`
}

// WhStatus is one warehouse in /status.
type WhStatus struct {
	Path string `json:"path"`
	// Catalog names the catalog the warehouse's tables are found and
	// committed through (the path for a file-system warehouse); it holds
	// no secret.
	Catalog string `json:"catalog"`
	// Lock is our generation file of the warehouse lock.
	Lock string `json:"lock"`
	// LeaseExpires is the end of the lease last renewed; LeaseDeadline is
	// when the daemon gives the warehouse up unless a renewal succeeds.
	LeaseExpires  time.Time `json:"leaseExpires"`
	LeaseDeadline time.Time `json:"leaseDeadline"`
	Error         string    `json:"error,omitempty"`
}

// TableStatus is one table in /status.
type TableStatus struct {
	Warehouse   string                    `json:"warehouse"`
	Table       string                    `json:"table"`
	Running     policy.Kind               `json:"running,omitempty"`
	Halted      string                    `json:"halted,omitempty"`
	HaltedAt    *time.Time                `json:"haltedAt,omitempty"`
	PolicyError string                    `json:"policyError,omitempty"`
	Backlog     Backlog                   `json:"backlog"`
	LastSuccess map[policy.Kind]time.Time `json:"lastSuccess"`
	Next        map[policy.Kind]time.Time `json:"next"`
	Failures    map[policy.Kind]int       `json:"consecutiveFailures,omitempty"`
	LastJobs    []JobRecord               `json:"lastJobs"`
}

// Status snapshots the daemon's state.
func (s *Scheduler) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Started: s.started, Config: s.cfg.Path, Workers: s.cfg.Workers, Busy: s.busy, Queue: s.queue,
		PolicyError: s.storeErr, Recent: append([]JobRecord{}, s.recent...), Tables: []TableStatus{}, Warehouses: []WhStatus{}}
	for _, w := range s.warehouses {
		ws := WhStatus{Path: w.path, Catalog: w.cat.Name(), Error: w.err}
		if w.lock != nil {
			ws.Lock, ws.LeaseExpires, ws.LeaseDeadline = w.lock.Path(), w.lock.Expires(), w.lock.Deadline()
		}
		st.Warehouses = append(st.Warehouses, ws)
	}
	if s.opts.Coordinator != nil {
		st.Fleet = s.opts.Coordinator.Status()
	}
	slices.SortFunc(st.Warehouses, func(a, b WhStatus) int { return cmp.Compare(a.Path, b.Path) })
	for _, t := range s.tables {
		ts := TableStatus{Warehouse: t.wh.path, Table: t.name, Running: t.running, Halted: t.halted, PolicyError: t.policyErr,
			Backlog: t.backlog, LastSuccess: map[policy.Kind]time.Time{}, Next: map[policy.Kind]time.Time{},
			Failures: map[policy.Kind]int{}, LastJobs: append([]JobRecord{}, t.lastJobs...)}
		if t.halted != "" {
			at := t.haltedAt
			ts.HaltedAt = &at
		}
		for k, v := range t.last {
			ts.LastSuccess[k] = v
		}
		for k, j := range t.jobs {
			if j.Enabled {
				ts.Next[k] = t.next[k]
			}
		}
		for k, n := range t.failures {
			if n > 0 {
				ts.Failures[k] = n
			}
		}
		st.Tables = append(st.Tables, ts)
	}
	slices.SortFunc(st.Tables, func(a, b TableStatus) int {
		return cmp.Or(cmp.Compare(a.Warehouse, b.Warehouse), cmp.Compare(a.Table, b.Table))
	})
	return st
}

// Ready is nil when the daemon is ready to do its work: it runs with its
// config, holds the lock of every configured warehouse (none lost, none past
// its renewal deadline), and has listed each of them completely at least
// once, with no discovery error since. Otherwise it says why, naming the
// warehouse: /readyz answers 503 with it.
func (s *Scheduler) Ready() error {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lockErr != nil {
		return s.lockErr
	}
	if s.stopping {
		return errors.New("shutting down")
	}
	var reasons []string
	for _, wc := range s.cfg.Warehouses {
		p := s.cfg.WarehousePath(wc)
		w, ok := s.warehouses[p]
		var why string
		switch {
		case !ok:
			why = "lock not held (yet): the daemon is starting or could not lock it"
		case w.lock == nil:
			// A fleet's replica: no lock; only the leader discovers.
			if fs := s.opts.Coordinator.Status(); fs != nil && fs.Error != "" {
				why = "coordinator: " + fs.Error
			} else if w.err != "" {
				why = "discovery failed: " + w.err
			}
			if why == "" {
				continue
			}
		case w.lock.Err() != nil:
			why = w.lock.Err().Error()
		case !now.Before(w.lock.Deadline()):
			why = fmt.Sprintf("lock lease not renewed before its deadline %s", w.lock.Deadline().Format(time.RFC3339))
		case w.err != "":
			why = "discovery failed: " + w.err
		case !w.discovered:
			why = "tables not discovered yet"
		default:
			continue
		}
		reasons = append(reasons, fmt.Sprintf("warehouse %s: %s", p, why))
	}
	if len(reasons) > 0 {
		return errors.New(strings.Join(reasons, "; "))
	}
	return nil
}

// Handler serves /metrics, /healthz (liveness: the process answers and is
// not shutting down), /readyz (Ready) and /status (JSON, or HTML for a
// browser: see statusFormat).
func (s *Scheduler) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.opts.Gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		stopping := s.stopping
		s.mu.Unlock()
		if stopping {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ready\n"))
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept")
		html, err := statusFormat(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if html {
			s.serveStatusPage(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.Status())
	})
	return mux
}
