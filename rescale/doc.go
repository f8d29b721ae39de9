// Package rescale changes the bucket count of partitions of a primary-key
// table as Paimon's rescale procedure does (RescaleAction: a batch read of
// the partitions' real buckets at the latest snapshot, written by a table
// copy with bucket = N as an INSERT OVERWRITE of those partitions, under
// commit.strict-mode.last-safe-snapshot = the read snapshot).
//
// Where things are: Supported (supported.go) refuses what rescale cannot do
// before anything is read; Run (rescale.go) selects the partitions, merges
// each one's old buckets in key order, routes every row to its new bucket
// with Java's hash (table.HashBinaryRow, table.BucketOf on the bucket key),
// writes one sorted run per new bucket at the top level and commits one
// OVERWRITE snapshot through table.Commit with LastSafeSnapshot set.
//
// It sits beside compact (cmd uses it; it uses scan, write, merge and
// table), and shares no state with compaction.
package rescale
