// Package planner decides what to compact in a Paimon table, the way Java
// Paimon's writers would, without doing any I/O.
//
// The planner is a pure function: Plan takes an immutable View of the live
// files (grouped per partition and bucket), the jobs already running, the
// table's typed Options and the current time, and returns a Plan value. It
// never reads storage, never calls time.Now and never logs, so the same
// inputs always give the same plan. Apply computes the effect of a plan on a
// View (again without I/O), which is what Backlog and the property tests use.
//
// Primary-key tables follow paimon-core's merge-tree compaction (release
// 2.0.0 by default, see Behavior):
//
//   - sorted runs: every level-0 file is a run (newest first), every
//     non-empty level >= 1 is one run (Levels.levelSortedRuns);
//   - picking: UniversalCompaction (early full compaction, size
//     amplification, size ratio, run count), wrapped by
//     ForceUpLevel0Compaction for lookup-style tables;
//   - on-demand full compaction: CompactStrategy.pickFullCompaction;
//   - execution detail: IntervalPartition sections and the upgrade-versus-
//     rewrite walk of MergeTreeCompactTask.
//
// Append tables follow BucketedAppendCompactManager (bucket > 0) and
// AppendCompactCoordinator (bucket = -1).
//
// Java keeps a little per-writer state between picks (the time of the last
// full compaction, the gentle lookup-compaction counter). A daemon has no
// long-lived writer, so that state is an explicit input (Bucket.State) and
// output (PlanResult.States) of the planner; Apply carries it forward.
//
// Where a daemon necessarily differs from a long-lived Java writer:
//
//   - Every plan starts from the table's live files, like a Java writer that
//     was just restored. A bucketed-append writer keeps large compaction
//     outputs out of its queue until it restarts; the planner sees them
//     again each round (exactly what a restarted or batch Java writer does).
//   - full-compaction.delta-commits is a Flink checkpoint counter. The
//     planner reads it from View.History: a bucket is fully compacted once
//     it was written by a data commit and at least N data commits (table
//     wide) happened since the bucket last appeared in a COMPACT snapshot.
//   - Bucket-unaware append planning is the coordinator's batch mode: no
//     ageing of leftovers (Paimon issue #5130 has the same limitation).
//   - Off-peak hours use now.Hour() in now's location; pass now in the
//     zone the Java writers would run in.
//
// Behavior selects the release line to reproduce (2.0.0 by default; the
// 1.4 line is what the interop oracle runs and what the pick vectors were
// checked against).
package planner
