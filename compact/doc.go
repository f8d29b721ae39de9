// Package compact executes compaction plans: it turns a table's live file
// set into the planner's view, runs the pure planner, merges the picked runs
// through the merge engine into new files, and commits the result as one
// COMPACT snapshot, rebasing over concurrent writers.
//
// Where things are: Run (compact.go) is one compaction of a table from
// start to commit, all jobs' results published by one table.Commit;
// Supported (compact.go) is the one place a table is refused before anything
// is planned; PlanTable and PlannerOptions (compact.go) plan without
// executing (the CLI shows plans through them; with Options.PlanOnly the
// manifest entries are let go before planning and the view cannot be
// executed); LoadView and ViewOf
// (view.go) build the planner's view from a snapshot's FileSet; exec.go runs
// one job: upgrades as metadata-only level changes, rewrites through package
// scan into a write.Roller or write.AppendRoller.
package compact
