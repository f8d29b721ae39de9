// Package write turns records into committed data files: a rolling writer
// that cuts files at target-file-size, the DataFileMeta Java would write for
// each file, and APPEND commits of new level-0 files. Compaction writes its
// outputs through the same rolling writer.
//
// Where things are: Roller (roller.go) writes primary-key KeyValue files at
// one level and AppendRoller (append.go) append-table files, both rolling at
// the target size (rolling.go); FileMeta and AppendFileMeta (meta.go) build the
// DataFileMeta of a written file; CreateTable and Writer (writer.go) create a
// table and commit rows as a write-only writer with its own commit user (used
// by tests and the `example` command).
package write
