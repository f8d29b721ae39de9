// Package orphan deletes files in a Paimon table directory that no snapshot,
// tag or long-lived changelog references (Paimon's remove_orphan_files):
// leftovers of failed or aborted writes and compactions, and data that
// rollback left behind.
//
// As with the expire package, the decision (Select) is a pure function over
// a listing and a set of referenced names; Run does the I/O in the order that
// keeps concurrent commits safe: list first, then collect references.
//
// Where things are: Select and Cutoff (select.go) are the pure decision
// over a listing; Run (run.go) lists the table, collects every reference
// through table/reach and deletes; RunTable (table.go) runs it on a
// *table.Table.
package orphan
