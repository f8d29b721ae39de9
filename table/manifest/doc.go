// Package manifest is Paimon's manifest codec: the three metadata files
// that list a snapshot's files, read in every layout Java wrote from 0.8
// on and written as Java 1.3–2.0 writes them (Avro byte for byte).
//
//   - Data and changelog manifests (manifest.go): Read, Decode, Encode and
//     Write of []Entry, an ADD or DELETE (FileKind) of one data file in a
//     partition and bucket, described by DataFileMeta (entry.go, with
//     FileSource, LocalMillis and the FileIdentifier Java matches a DELETE
//     to its ADD by). Statistics are SimpleStats (stats.go).
//   - Manifest lists (list.go): ReadList, DecodeList, EncodeList and
//     WriteList of []ListEntry, Java's ManifestFileMeta: one manifest and
//     the summary readers prune by.
//   - Index manifests (index.go): ReadIndex, DecodeIndex, EncodeIndex and
//     WriteIndex of []IndexEntry, the HASH and DELETION_VECTORS index files
//     (IndexFileMeta, DeletionVectorMeta, GlobalIndexMeta).
//   - The Avro layer (avro.go, fields.go): compactd's one Avro stack
//     (internal/avro) underneath, Paimon fields matched by name under the
//     file's own writer schema, every length bounded by the bytes present.
//     Damage wraps ErrCorrupt; Parquet manifests and unknown codecs are
//     ErrUnsupportedFormat. ORC manifests (orc.go) decode through
//     internal/orc into the same generic records. A data manifest's
//     entries copy their byte fields out of the decoded blocks and take
//     their optional numbers from shared arrays (slab.go), so live entries
//     do not keep whole decompressed blocks alive.
//   - Format (format.go): manifest.format=orc writes all three in ORC
//     through internal/orc, with the schemas, paimon.id attributes and
//     writer settings Java Paimon 1.4 uses; Encode, EncodeList and
//     EncodeIndex take the Format.
//
// It knows bytes, not types: partitions, keys and statistics stay
// serialized BinaryRows. What needs the table's types lives in package
// table, which imports this one: building and decoding SimpleStats
// (table.NewSimpleStats, DecodeSimpleStats, StatsCollector), the
// manifest-list row of a written manifest (table.NewManifestListEntry),
// folding manifests into the live file set (Table.FileSet) and writing
// them in a commit (Table.Commit, with Java's minor manifest merge).
package manifest
