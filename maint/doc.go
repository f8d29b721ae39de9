// Package maint holds Paimon's table maintenance operations other than
// compaction, snapshot expiration and orphan cleanup: tags (create, delete,
// automatic expiry), rollback to a snapshot or tag, and partition
// expiration. Each follows the Java implementation it names, so a table
// maintained here stays what Java Paimon would have left.
//
// The selection logic (which tags expire, which partitions expire, how a
// partition value becomes a time) is pure and separately testable; the
// functions taking a *table.Table do the I/O.
//
// Where things are: tag.go (CreateTag, DeleteTag, ListTags, ExpireTags,
// SelectExpiredTags); autotag.go (Paimon's automatic tag creation:
// RunTagAutoManager, PlanAutoTags, PeriodHandler); rollback.go
// (RollbackToSnapshot, RollbackToTag, RollbackToTimestamp); partition.go
// (ExpirePartitions, SelectExpiredPartitions); timefmt.go (TimeExtractor: a
// partition value read as a time through Java date patterns).
package maint
