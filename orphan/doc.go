// Package orphan deletes files in a Paimon table directory that no snapshot,
// tag or long-lived changelog references (Paimon's remove_orphan_files):
// leftovers of failed or aborted writes and compactions, and data that
// rollback left behind.
//
// As with the expire package, the decision (Select) is a pure function over
// a listing and a set of referenced names; Run does the I/O in the order that
// keeps concurrent commits safe: list first, then collect references.
//
// Run applies Select's rule file by file as it lists and keeps only the
// candidates (old enough, recognised, inside the table), spooled to an
// unlinked temporary file past 65,536, with a 64-bit hash of each name in
// memory for the reference walk: its memory does not hold the table's
// listing. A hash collision can only keep a file, never delete one.
//
// Where things are: Select and Cutoff (select.go) are the pure decision
// over a listing; Run (run.go) lists the table, collects every reference
// through table/reach and deletes; the candidate spool and the reference
// set are in spool.go; RunTable (table.go) runs it on a *table.Table.
package orphan
