// Package deletionvector maintains the deletion vectors of a bucket while a
// compaction job runs, as Paimon's BucketedDvMaintainer does: Load reads
// the bucket's vectors from a snapshot's index manifest (fail closed),
// Maintainer.NotifyNewDeletion marks rows a compaction supersedes in
// higher-level files, RemoveDeletionVectorOf drops the vectors of rewritten
// files, and Write writes the bucket's new DELETION_VECTORS index file,
// byte-compatible with Java, returning the table.IndexChange a COMPACT
// commit carries (table.CommitRequest.IndexChanges).
//
// It sits beside scan and write: it reads and writes files through table
// and table/datafile and knows nothing about planning or committing.
package deletionvector
