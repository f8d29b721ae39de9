// Package expire expires old snapshots of a Paimon table and deletes the
// files only they referenced, following Paimon's ExpireSnapshotsImpl and
// SnapshotDeletion.
//
// The work is split in two layers. The decisions (which snapshots expire,
// which files become unreferenced) are pure functions over small input types
// and are tested exhaustively; Run is the I/O executor that feeds them from a
// table and deletes in a crash-safe order.
//
// Where things are: Select (select.go) picks the snapshots to expire;
// PlanFiles (plan.go) finds the files only they reach, walking metadata
// through table/reach; Run (run.go) reads everything kept first, then
// deletes; Options (options.go) are the expiration settings read from table
// options. Tables whose changelog outlives their snapshots (changelog.*
// retention above snapshot.*, Paimon's ExpireChangelogImpl and
// ChangelogDeletion) keep long-lived changelogs in changelog/: Run writes
// them for the snapshots it expires (PlanFilesFor keeps what they need),
// then ExpireChangelogs (changelog.go) expires them with SelectChangelogs
// and PlanChangelogs. The data files a plan deletes are a PathList
// (pathlist.go): deduplicated by hash and spilled to an unlinked temporary
// file past 65,536 paths, so an expiration of a million files holds their
// hashes, not their paths.
package expire
