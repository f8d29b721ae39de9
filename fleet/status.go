package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/compactd/compactd/sched"
)

type metrics struct {
	depth, oldest, leader, replicas, running prometheus.Gauge
	beats                                    *prometheus.CounterVec
}

func newMetrics(r prometheus.Registerer) (*metrics, error) {
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "compactd", Subsystem: "fleet", Name: name, Help: help})
	}
	m := &metrics{
		depth:    g("queue_depth", "Units waiting in the fleet's queue (available, scheduled or retryable), as this replica last saw."),
		oldest:   g("oldest_due_job_age_seconds", "How long the oldest due unit of the fleet's queue has waited (0 when none is due)."),
		leader:   g("leader", "1 while this replica is the fleet's leader (it discovers tables and enqueues), else 0."),
		replicas: g("replicas", "Replicas that reported within three heartbeats."),
		running:  g("running_units", "Units running in the whole fleet."),
		beats: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "compactd", Subsystem: "fleet", Name: "heartbeats_total",
			Help: "Heartbeats of this replica to the coordinator, by outcome (a replica failing them takes no work)."}, []string{"outcome"}),
	}
	for _, c := range []prometheus.Collector{m.depth, m.oldest, m.leader, m.replicas, m.running, m.beats} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("fleet metrics: %w", err)
		}
	}
	m.beats.WithLabelValues("success")
	m.beats.WithLabelValues("failure")
	return m, nil
}

// Status is the fleet as the last heartbeat saw it.
func (f *Fleet) Status() *sched.FleetStatus {
	f.leaderMu.Lock()
	defer f.leaderMu.Unlock()
	if f.status == nil {
		return &sched.FleetStatus{Replica: f.o.ID, Error: "no heartbeat yet", Workers: max(f.o.Workers, 1)}
	}
	st := *f.status
	return &st
}

// beat reports this replica, learns who leads (River's leader table) and
// reads the queue. A failed beat makes this replica no leader: a replica
// cut off from the database enqueues nothing (and River fetches nothing).
func (f *Fleet) beat(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, max(f.o.Coordinator.Heartbeat.D(), time.Second))
	defer cancel()
	st, err := f.observe(ctx)
	f.leaderMu.Lock()
	defer f.leaderMu.Unlock()
	if err != nil {
		if f.leader {
			f.log.Warn("coordinator unreachable: no longer enqueueing", "err", err)
		}
		f.leader = false
		prev := f.status
		if prev == nil {
			prev = &sched.FleetStatus{Replica: f.o.ID}
		}
		s := *prev
		s.Error = err.Error()
		f.status = &s
		if f.m != nil {
			f.m.beats.WithLabelValues("failure").Inc()
			f.m.leader.Set(0)
		}
		return
	}
	if st.Leader == f.o.ID && !f.leader {
		f.log.Info("elected fleet leader")
	}
	f.leader = st.Leader == f.o.ID
	f.status = st
	if f.m != nil {
		f.m.beats.WithLabelValues("success").Inc()
		f.m.depth.Set(float64(st.QueueDepth))
		f.m.oldest.Set(st.OldestDueSeconds)
		f.m.replicas.Set(float64(len(st.Replicas)))
		f.m.running.Set(float64(len(st.Running)))
		if f.leader {
			f.m.leader.Set(1)
		} else {
			f.m.leader.Set(0)
		}
	}
}

func (f *Fleet) observe(ctx context.Context) (*sched.FleetStatus, error) {
	st := &sched.FleetStatus{Replica: f.o.ID, Replicas: []sched.ReplicaStatus{}, Running: []sched.UnitStatus{}}
	hb := f.o.Coordinator.Heartbeat.D()
	if _, err := f.pool.Exec(ctx, `INSERT INTO compactd_fleet_replica (id, host, started, last_seen, workers) VALUES ($1, $2, $3, now(), $4)
		ON CONFLICT (id) DO UPDATE SET last_seen = now(), workers = $4`, f.o.ID, f.host, f.start, max(f.o.Workers, 1)); err != nil {
		return nil, fmt.Errorf("coordinator: heartbeat: %w", err)
	}
	if err := f.pool.QueryRow(ctx, `SELECT coalesce((SELECT leader_id FROM river_leader WHERE expires_at > now() LIMIT 1), ''), now()`).
		Scan(&st.Leader, &st.Observed); err != nil {
		return nil, fmt.Errorf("coordinator: read leader: %w", err)
	}
	rows, err := f.pool.Query(ctx, `SELECT id, host, started, last_seen, workers FROM compactd_fleet_replica
		WHERE last_seen > now() - $1::interval ORDER BY id`, fmt.Sprintf("%d milliseconds", 3*hb.Milliseconds()))
	if err != nil {
		return nil, fmt.Errorf("coordinator: list replicas: %w", err)
	}
	for rows.Next() {
		var r sched.ReplicaStatus
		if err := rows.Scan(&r.ID, &r.Host, &r.Started, &r.LastSeen, &r.Workers); err != nil {
			rows.Close()
			return nil, fmt.Errorf("coordinator: list replicas: %w", err)
		}
		st.Replicas = append(st.Replicas, r)
		st.Workers += r.Workers
	}
	rows.Close()
	var oldest *float64
	if err := f.pool.QueryRow(ctx, `SELECT count(*), extract(epoch FROM now() - min(scheduled_at) FILTER (WHERE scheduled_at <= now()))::float8
		FROM river_job WHERE kind = $1 AND state IN ('available', 'scheduled', 'retryable')`, unitKind).Scan(&st.QueueDepth, &oldest); err != nil {
		return nil, fmt.Errorf("coordinator: read queue: %w", err)
	}
	if oldest != nil {
		st.OldestDueSeconds = max(*oldest, 0)
	}
	rows, err = f.pool.Query(ctx, `SELECT args, coalesce(attempted_by[array_upper(attempted_by, 1)], ''), coalesce(attempted_at, now()), attempt
		FROM river_job WHERE kind = $1 AND state = 'running' ORDER BY attempted_at`, unitKind)
	if err != nil {
		return nil, fmt.Errorf("coordinator: read running units: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		var u sched.UnitStatus
		if err := rows.Scan(&raw, &u.Replica, &u.Since, &u.Attempt); err != nil {
			return nil, fmt.Errorf("coordinator: read running units: %w", err)
		}
		if err := json.Unmarshal(raw, &u.Unit); err != nil {
			return nil, fmt.Errorf("coordinator: running unit %s: %w", raw, err)
		}
		st.Running = append(st.Running, u)
	}
	return st, rows.Err()
}
