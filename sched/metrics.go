package sched

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// metrics are the scheduler's Prometheus metrics, registered on the
// registerer the scheduler is given (Options.Registerer), so that several
// schedulers may live in one process on registries of their own. The
// process-wide collectors (Go runtime, process) are not the scheduler's:
// the daemon command registers them beside it.
type metrics struct {
	sortedRunsMax, sortedRunsSum   *prometheus.GaugeVec
	level0Max, level0Sum           *prometheus.GaugeVec
	pendingBytes, runsOverTrigger  *prometheus.GaugeVec
	postponedRows, postponedFiles  *prometheus.GaugeVec
	snapshots, halted, lastSuccess *prometheus.GaugeVec

	duration                   *prometheus.HistogramVec
	jobs, failures             *prometheus.CounterVec
	rows, bytes, filesDeleted  *prometheus.CounterVec
	queue, busy, workers, tabs prometheus.Gauge
	// This daemon's compactions and their estimated memory (admit.go).
	compactions, memory prometheus.Gauge

	// The backlog against the writers' stall point.
	stopTrigger, stopRatio *prometheus.GaugeVec
	// What compaction commits met of concurrent writers.
	commitRebases, commitConflicts, abandoned *prometheus.CounterVec
	retries                                   *prometheus.CounterVec
	storage                                   *prometheus.CounterVec
	lockHeld                                  *prometheus.GaugeVec
	lockRenewals, lockLosses                  *prometheus.CounterVec
	reloads                                   *prometheus.CounterVec
	buildInfo                                 *prometheus.GaugeVec
}

var tableLabels = []string{"warehouse", "table"}

// jobLabels name the job kind "kind", not "job": Prometheus sets "job" on
// every scraped series to the scrape job's name (renaming ours to
// exported_job), so a label of that name would not survive a scrape.
var jobLabels = []string{"warehouse", "table", "kind"}

// newMetrics creates the metrics on reg. A metric reg already holds (a
// second scheduler on the same registry) is an error, not a panic.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	safe := &collectErrors{Registerer: reg}
	f := promauto.With(safe)
	g := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return f.NewGaugeVec(prometheus.GaugeOpts{Namespace: "compactd", Name: name, Help: help}, labels)
	}
	c := func(name, help string, labels ...string) *prometheus.CounterVec {
		return f.NewCounterVec(prometheus.CounterOpts{Namespace: "compactd", Name: name, Help: help}, labels)
	}
	gauge := func(name, help string) prometheus.Gauge {
		return f.NewGauge(prometheus.GaugeOpts{Namespace: "compactd", Name: name, Help: help})
	}
	m := &metrics{
		sortedRunsMax:   g("table_sorted_runs_max", "Most sorted runs in one bucket (level-0 files count one each).", tableLabels...),
		sortedRunsSum:   g("table_sorted_runs", "Sorted runs of the table: summed over buckets.", tableLabels...),
		level0Max:       g("table_level0_files_max", "Most level-0 files in one bucket.", tableLabels...),
		level0Sum:       g("table_level0_files", "Level-0 files of the table: summed over buckets.", tableLabels...),
		pendingBytes:    g("table_pending_compaction_bytes", "Bytes the planner would still rewrite under the normal triggers.", tableLabels...),
		runsOverTrigger: g("table_sorted_runs_over_trigger", "Sorted runs above num-sorted-run.compaction-trigger, summed over buckets.", tableLabels...),
		postponedRows:   g("table_postponed_rows", "Rows waiting in bucket-postpone (bucket = -2 tables), invisible to batch readers until compacted.", tableLabels...),
		postponedFiles:  g("table_postponed_files", "Files waiting in bucket-postpone (bucket = -2 tables).", tableLabels...),
		snapshots:       g("table_snapshots_retained", "Snapshots in the snapshot directory.", tableLabels...),
		halted:          g("table_halted", "1 if the table is halted after a permanent error (see /status for the reason).", tableLabels...),
		lastSuccess:     g("table_last_success_timestamp_seconds", "Unix time of the last successful job of each kind.", jobLabels...),
		duration: f.NewHistogramVec(prometheus.HistogramOpts{Namespace: "compactd", Name: "job_duration_seconds",
			Help: "Job durations.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 10)}, jobLabels),
		jobs:         c("jobs_total", "Jobs finished, by outcome (success, failed, halted, cancelled).", append(jobLabels, "outcome")...),
		failures:     c("job_failures_total", "Failed jobs by error class.", append(jobLabels, "class")...),
		rows:         c("job_rows_total", "Rows read (in) and written (out) by compaction.", append(jobLabels, "direction")...),
		bytes:        c("job_bytes_total", "Bytes read (in) and written (out) by compaction.", append(jobLabels, "direction")...),
		filesDeleted: c("job_files_deleted_total", "Files deleted by expiration and orphan cleanup.", jobLabels...),
		queue:        gauge("queue_length", "Due jobs waiting for a worker."),
		busy:         gauge("workers_busy", "Workers running a job."),
		workers:      gauge("workers", "Worker pool size."),
		tabs:         gauge("tables", "Tables watched."),
		compactions:  gauge("compactions_running", "Compactions (jobs or fleet units) this daemon runs, at most max-compactions."),
		memory: gauge("compaction_memory_reserved_bytes",
			"Estimated memory of the compactions this daemon runs, admitted under memory-budget."),

		stopTrigger: g("table_sorted_runs_stop_trigger", "num-sorted-run.stop-trigger of the table: the sorted runs of one bucket at which Java's writers stall.", tableLabels...),
		stopRatio: g("table_sorted_runs_stop_trigger_ratio",
			"Most sorted runs of one bucket divided by num-sorted-run.stop-trigger: at 1 the table's Java writers stall until compaction catches up.", tableLabels...),
		commitRebases: c("commit_rebases_total",
			"Compaction commit attempts made again on a newer snapshot after a concurrent writer took the snapshot id first.", jobLabels...),
		commitConflicts: c("commit_conflicts_total",
			"Compaction commits refused because a concurrent change touched their inputs (the jobs concerned are abandoned).", jobLabels...),
		abandoned: c("compaction_bucket_jobs_abandoned_total", "Bucket compactions dropped because a concurrent change removed their inputs.", jobLabels...),
		retries:   c("job_retries_total", "Failed jobs the scheduler tries again after a backoff, by error class.", append(jobLabels, "class")...),
		storage: c("storage_operations_total",
			"Storage (FileIO) operations by operation and outcome (ok, not_found, exists, cancelled, error); read counts reads of open files, some served from read-ahead.",
			"warehouse", "op", "outcome"),
		lockHeld:     g("warehouse_lock_held", "1 while the daemon holds the warehouse lock.", "warehouse"),
		lockRenewals: c("warehouse_lock_renewals_total", "Warehouse lock renewals by outcome (success, failure).", "warehouse", "outcome"),
		lockLosses:   c("warehouse_lock_losses_total", "Warehouse locks lost (taken over or lapsed); the daemon stops after one.", "warehouse"),
		reloads: c("config_reloads_total", "Reloads of the config file (SIGHUP) and of the policy store, by outcome (success, failure).",
			"file", "outcome"),
		buildInfo: g("build_info", "Always 1; the labels are the running build's.", "version", "commit", "goversion"),
	}
	if safe.err != nil {
		return nil, fmt.Errorf("sched: register metrics: %w", safe.err)
	}
	return m, nil
}

// collectErrors turns promauto's MustRegister into Register, keeping the
// first error, so a registry conflict comes back from New as an error.
type collectErrors struct {
	prometheus.Registerer
	err error
}

func (r *collectErrors) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil && r.err == nil {
			r.err = err
		}
	}
}
