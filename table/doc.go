// Package table is Paimon's table format as compactd reads and writes it:
// everything in a table directory except the contents of data files, which
// package table/datafile owns. It knows the format and nothing about
// compaction, expiration or scheduling; every package above it goes through
// it to read metadata and through Table.Commit to publish anything.
//
// Where things live:
//
//   - Opening a table: Open and OpenPath (table.go) return a *Table with its
//     schemas (schema.go, TableSchema; types.go, DataType), options
//     (options.go, Options) and paths (paths.go, PathFactory: every file and
//     directory name Paimon uses). names.go checks database and table names;
//     ResolveTablePath refuses a table directory outside the warehouse.
//   - Metadata files: Snapshot (snapshot.go, with the order-keeping JSON
//     codec in snapshot_json.go), Tag (tag.go), Consumer (consumer.go). The
//     Table methods read the main branch as Java does; branch.go (ListIDs,
//     ReadSnapshotFile, ReadTags, ReadConsumers, BranchRoots, ReadHint,
//     WriteHint, TrustedEarliest) reads any branch fail closed for expire
//     and orphan.
//   - The manifest codec is package table/manifest (data manifests of
//     manifest.Entry and DataFileMeta, manifest lists of ListEntry, index
//     manifests of IndexEntry). What of it needs the table's types is here:
//     binaryrow.go is Paimon's BinaryRow (partitions, keys, statistics);
//     stats.go builds and decodes the manifest.SimpleStats of files and
//     partitions (NewSimpleStats, DecodeSimpleStats, StatsCollector);
//     manifest_summary.go the manifest-list row of a written manifest
//     (NewManifestListEntry).
//   - The live file set: fileset.go reads a snapshot's manifests and folds
//     them into the live entries (ReadManifests, MergeEntries, LiveEntries,
//     IndexEntries) and into a FileSet of partitions, buckets and sorted
//     runs (Table.FileSet).
//   - The commit protocol: commit*.go, after Java's FileStoreCommitImpl.
//     commit.go is Table.Commit and its attempt loop (manifests and
//     manifest lists written, then the snapshot file published by exclusive
//     create); commit_check.go the conflict checks against the latest
//     snapshot; indexchange.go the IndexChange a commit carries (a bucket's
//     deletion-vector index files replaced: CombineIndexEntries,
//     CheckIndexBase) and the new index manifest it writes; commit_merge.go the minor manifest merge of the base list.
//     ConflictError and ErrCommitOutcomeUnknown tell a caller whether its
//     files may be deleted.
//   - Damage: DamagedError and ErrCorrupt (damage.go) are how a reader
//     fails closed; Confine (confine.go) keeps deletions inside the table's
//     real path.
//   - Values: Row, Decimal, Timestamp, Map and KeyValue (row.go), compared
//     as Paimon compares them (compare.go).
//   - Java compatibility: the arithmetic and text forms themselves (floor
//     division, Float/Double.toString, civil dates, LocalDate and
//     DateTimeUtils text, String.trim, Character.isWhitespace) are in
//     internal/javacompat; timestamp.go splits instants with them
//     (TimestampFromMicros/Nanos/DayNanos); partition_value.go names
//     partition directories as Java does (PartitionValueString). The
//     schema-evolution casts (Java's CastExecutors) are package table/cast.
//
// Subpackages: table/manifest (the manifest codec, below table),
// table/datafile (data files), table/cast (schema-evolution casts),
// table/reach (what kept metadata reaches, for expire and orphan).
package table
