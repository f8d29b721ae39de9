// Package jdbc is Paimon's JDBC catalog as compactd needs it: the tables
// its writers registered (paimon_tables, paimon_database_properties) and
// the distributed lock they take around every snapshot commit
// (paimon_distributed_locks), on PostgreSQL and MySQL/MariaDB.
//
// The lock is Java's JdbcCatalogLock statement for statement (lock.go):
// the same table, the key "<catalog-key>.<database>.<table>", an acquire
// that first deletes the key's row if the database clock says it expired
// and then inserts it, a release that deletes it, and Java's retry timing.
// Inside the lock compactd does what Java's RenamingSnapshotCommit does
// (check that the snapshot does not exist, write it, update LATEST),
// with its exclusive create as a second guard, and it never acts on a
// lock past the expiry the row was written with (Lock.Run).
//
// Entry points: Open (a Catalog from a Config), Catalog.OpenTable,
// ParseURL (Java's JDBC URL to a Go driver and DSN), Lock.
package jdbc
