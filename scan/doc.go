// Package scan reads a table's rows as Paimon's batch read returns them:
// the live files of a snapshot, merged on read through the table's merge
// engine for primary-key tables, concatenated for append tables.
//
// Where things are: New and Scanner.Each (scan.go) read a whole snapshot
// row by row (the `scan` command and the tests); OpenMerged (merged.go) merges
// one bucket's files into merge.Iterator records; OpenMergedBatches and
// AppendBatches (batch.go) are the batch path compaction uses (package
// lookup answers the lookup merges' questions about higher levels); dv.go
// reads deletion vectors; json.go renders rows as the
// canonical JSON of interop/README.md.
package scan
