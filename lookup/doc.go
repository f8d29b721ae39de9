// Package lookup is Paimon's LookupLevels for compactd: point lookups of
// primary keys in the levels of a bucket above a compaction's output
// level (Levels, levels.go), answering merge.HigherLookup for the lookup
// merge of deletion-vector and first-row tables. It reads data files
// (table, table/datafile) and hands the merge what it found; the merge
// itself (package merge) does no I/O.
package lookup
