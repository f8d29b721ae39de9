// Package cast is Java Paimon's schema-evolution casts (CastExecutors):
// when a data file was written under an older schema (ALTER TABLE ...
// MODIFY COLUMN TYPE), each value of the file's column type is converted
// to the table's current type as Java converts it while reading. For
// resolves the cast between two types (nil when values pass unchanged);
// Func converts one value; ErrUnsupportedEvolution is what a type change
// or a value Java cannot convert fails with.
//
// Files: cast.go resolves the rules (For, nested and row casts) and states
// the assumptions (a UTC JVM, the Paimon versions restated); number.go the
// numeric primitives and string-to-number parsing; decimal.go DECIMAL;
// string.go the casts to strings and length fitting; temporal.go DATE,
// TIME and TIMESTAMP truncation and parsing. Java's arithmetic and text
// forms under them are internal/javacompat's.
//
// It is pure computation over table's types and values, used by
// table/datafile's readers (Parquet and Avro).
package cast
