// Package sched is the compactd daemon: one scheduling loop over the
// watched tables and a bounded pool of workers running compaction,
// full compaction, snapshot expiration, orphan cleanup, tag creation and
// expiry, and partition expiration per the tables' effective policies
// (package policy).
//
// At most one job changes a table at a time; the buckets of one compaction
// are merged in parallel inside that job. Due jobs are ordered by the
// table's backlog (sorted runs over the trigger, then bytes pending, then
// time since the last success); a job that has waited longer than
// starveAfter goes before any backlog, so no table starves.
//
// Failures are classified (Classify): transient ones are retried with
// exponential backoff; permanent ones, and unknown ones that keep failing,
// halt the table — recorded in the state directory so that it survives a
// restart — until `compactd resume` removes the record.
//
// Where things are: New, Scheduler.Run and Reload (sched.go) are the loop;
// jobs.go runs one job (Runner, PackageRunner) and observes backlog;
// classify.go sorts errors into retry and halt (Classify); state.go records
// halted tables (ListHalted, Resume); lock.go is the warehouse lock
// (AcquireLock); http.go serves /status and /healthz (Status, Handler) on
// the bounded server of httpserver.go; metrics.go registers the Prometheus
// metrics.
package sched
