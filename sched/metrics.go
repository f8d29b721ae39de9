package sched

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the daemon's Prometheus metrics, on a registry of its own
// (several schedulers may live in one test process).
type metrics struct {
	reg *prometheus.Registry

	sortedRunsMax, sortedRunsSum   *prometheus.GaugeVec
	level0Max, level0Sum           *prometheus.GaugeVec
	pendingBytes, runsOverTrigger  *prometheus.GaugeVec
	snapshots, halted, lastSuccess *prometheus.GaugeVec

	duration                   *prometheus.HistogramVec
	jobs, failures             *prometheus.CounterVec
	rows, bytes, filesDeleted  *prometheus.CounterVec
	queue, busy, workers, tabs prometheus.Gauge
}

var tableLabels = []string{"warehouse", "table"}
var jobLabels = []string{"warehouse", "table", "job"}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	g := func(name, help string, labels ...string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "compactd", Name: name, Help: help}, labels)
		m.reg.MustRegister(v)
		return v
	}
	c := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "compactd", Name: name, Help: help}, labels)
		m.reg.MustRegister(v)
		return v
	}
	m.sortedRunsMax = g("table_sorted_runs_max", "Most sorted runs in one bucket (level-0 files count one each).", tableLabels...)
	m.sortedRunsSum = g("table_sorted_runs_sum", "Sorted runs summed over buckets.", tableLabels...)
	m.level0Max = g("table_level0_files_max", "Most level-0 files in one bucket.", tableLabels...)
	m.level0Sum = g("table_level0_files_sum", "Level-0 files summed over buckets.", tableLabels...)
	m.pendingBytes = g("table_pending_compaction_bytes", "Bytes the planner would still rewrite under the normal triggers.", tableLabels...)
	m.runsOverTrigger = g("table_sorted_runs_over_trigger", "Sorted runs above num-sorted-run.compaction-trigger, summed over buckets.", tableLabels...)
	m.snapshots = g("table_snapshots_retained", "Snapshots in the snapshot directory.", tableLabels...)
	m.halted = g("table_halted", "1 if the table is halted after a permanent error (see /status for the reason).", tableLabels...)
	m.lastSuccess = g("table_last_success_timestamp_seconds", "Unix time of the last successful job of each kind.", jobLabels...)
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "compactd", Name: "job_duration_seconds",
		Help: "Job durations.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 10)}, jobLabels)
	m.reg.MustRegister(m.duration)
	m.jobs = c("jobs_total", "Jobs finished, by outcome (success, failed, halted, cancelled).", append(jobLabels, "outcome")...)
	m.failures = c("job_failures_total", "Failed jobs by error class.", append(jobLabels, "class")...)
	m.rows = c("job_rows_total", "Rows read (in) and written (out) by compaction.", append(jobLabels, "direction")...)
	m.bytes = c("job_bytes_total", "Bytes read (in) and written (out) by compaction.", append(jobLabels, "direction")...)
	m.filesDeleted = c("job_files_deleted_total", "Files deleted by expiration and orphan cleanup.", jobLabels...)
	gauge := func(name, help string) prometheus.Gauge {
		v := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "compactd", Name: name, Help: help})
		m.reg.MustRegister(v)
		return v
	}
	m.queue = gauge("queue_length", "Due jobs waiting for a worker.")
	m.busy = gauge("workers_busy", "Workers running a job.")
	m.workers = gauge("workers", "Worker pool size.")
	m.tabs = gauge("tables", "Tables watched.")
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
