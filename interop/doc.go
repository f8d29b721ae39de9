// Package interop drives Java Paimon (interop/java) and pypaimon (interop/python) from Go tests,
// as oracles for what a correct Paimon reader, writer and compactor does. Build the oracles once
// with `make interop-deps` (interop/install.sh); these wrappers never build anything and fail the
// test, rather than skip it, when the artifacts are missing.
//
// Every method takes a warehouse directory and a table name "db.table" and returns rows in the
// canonical JSON form of interop/README.md, decoded with Normalize: integers as int64, other
// numbers as float64, everything else as the JSON decoder gives it.
//
// Where things are: Java and NewJava (interop.go) give the JavaOracle
// (Create, Write, Read, Compact, Expire, Orphans, Pick, Batch), Python the
// PythonOracle; build.go builds tables for fixtures scenarios; canonical.go
// normalises rows; pickgen.go generates the planner vectors answered by
// Java's UniversalCompaction.
package interop
