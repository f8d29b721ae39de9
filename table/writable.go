package table

// What compactd may write, decided once per table. Some tables compactd
// reads but must not write: their metadata would have to be written in a
// format compactd has no writer for (manifest.format=orc: Java reads every
// manifest, manifest list and index manifest of a table with the reader
// of the table's manifest.format, so an Avro manifest among ORC ones
// breaks the table for Java). Such a table's FileIO refuses every write,
// delete and publish (readOnlyFS below), and Commit/WriteSnapshot refuse
// before a catalog publishes anything: every write path of every package
// goes through one of the two, so none can forget the check, and the
// first attempted write fails before anything changed.

import (
	"context"
	"errors"
	"fmt"

	"github.com/compactd/compactd/fileio"
)

// ErrReadOnly is wrapped by every refusal of a write to a table compactd
// reads but cannot write (WriteRefusedError).
var ErrReadOnly = errors.New("compactd cannot write this table")

// WriteRefusedError names the table and the file a refused write was
// about to touch, and why compactd cannot write the table.
type WriteRefusedError struct {
	Table  string // Table.FullName()
	File   string // the path written, deleted or published; "" for Writable
	Reason string // the option, the schema file setting it, what compactd lacks
}

func (e *WriteRefusedError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("table %s: not supported: writing to it: %s", e.Table, e.Reason)
	}
	return fmt.Sprintf("table %s: not supported: writing %s: %s", e.Table, e.File, e.Reason)
}

// Unwrap makes errors.Is(err, ErrReadOnly) hold.
func (e *WriteRefusedError) Unwrap() error { return ErrReadOnly }

// writeRefusal is the one capability check: why compactd must not write
// a table whose latest schema is s (the file schemaFile), "" when it may.
// Formats that Open refuses outright never get here.
func writeRefusal(s *TableSchema, schemaFile string) string {
	if f := s.CoreOptions().ManifestFormat; f != "avro" {
		return fmt.Sprintf("%s=%s in %s (compactd reads ORC manifests but writes Avro manifests only, and Java reads all of a table's manifests in its %s)",
			OptManifestFormat, f, schemaFile, OptManifestFormat)
	}
	return ""
}

// Writable says whether compactd may write the table: nil, or a
// *WriteRefusedError naming the schema file that makes it read-only.
// compact.Supported calls it to refuse before planning; the table's
// FileIO and Commit enforce it for every other write.
func (t *Table) Writable() error {
	if t.readOnly == "" {
		return nil
	}
	return &WriteRefusedError{Table: t.FullName(), Reason: t.readOnly}
}

func (t *Table) refuse(path string) error {
	return &WriteRefusedError{Table: t.FullName(), File: path, Reason: t.readOnly}
}

func (t *Table) schemaPath(id int64) string {
	return fileio.Join(t.path, SchemaDir, SchemaFileName(id))
}

// readOnlyFS is the FileIO of a table compactd must not write: reads pass
// through, every write, delete and publish is refused naming the file.
type readOnlyFS struct {
	fileio.FileIO
	t *Table
}

// Unwrap lets fileio.Unwrap find the store (doctor's S3 check, the local
// read paths of table/datafile).
func (r readOnlyFS) Unwrap() fileio.FileIO { return r.FileIO }

func (r readOnlyFS) Create(_ context.Context, path string) (fileio.Writer, error) {
	return nil, r.t.refuse(path)
}

func (r readOnlyFS) WriteExclusive(_ context.Context, path string, _ []byte) error {
	return r.t.refuse(path)
}

func (r readOnlyFS) Delete(_ context.Context, path string) error { return r.t.refuse(path) }

func (r readOnlyFS) DeleteDir(_ context.Context, path string) error { return r.t.refuse(path) }
