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
// output (Plan.States) of the planner; Apply carries it forward.
package planner
