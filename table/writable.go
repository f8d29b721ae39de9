package table

// What compactd may write, decided once per table. Java reads every
// manifest, manifest list and index manifest of a table with the reader of
// its manifest.format and writes them with its manifest.compression (for
// ORC, also the table's orc.* options), so compactd writes them the same
// way (metadataFormat). A table whose metadata compactd cannot write that
// way (an Avro codec or ORC compression it has no encoder for, an orc.*
// value Java would refuse) is read but not written: its FileIO refuses
// every write, delete and publish (readOnlyFS below), and
// Commit/WriteSnapshot refuse before a catalog publishes anything. Every
// write path of every package goes through one of the two, so none can
// forget the check, and the first attempted write fails before anything
// changed.

import (
	"context"
	"errors"
	"fmt"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table/manifest"
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
	_, r := metadataFormat(s, schemaFile)
	return r
}

// metadataFormat is how metadata files of a table whose latest schema is
// s are written, or why they cannot be (the refusal, naming the option and
// schemaFile).
func metadataFormat(s *TableSchema, schemaFile string) (manifest.Format, string) {
	o := s.CoreOptions()
	if o.ManifestFormat == "orc" {
		w, err := ORCWriterOptions(s.Options, o, OptManifestCompression)
		if err != nil {
			return manifest.Format{}, fmt.Sprintf("%s=orc in %s: compactd cannot write its metadata files as Java would: %v", OptManifestFormat, schemaFile, err)
		}
		return manifest.ORC(w), ""
	}
	// Java's Avro writer takes avro.codec over manifest.compression.
	f := manifest.Avro(o.ManifestCompression)
	key := OptManifestCompression
	if v, ok := s.Options[OptAvroCodec]; ok {
		f, key = manifest.Avro(v), OptAvroCodec
	}
	if err := f.Check(); err != nil {
		return manifest.Format{}, fmt.Sprintf("%s=%s in %s: %v", key, f.Compression, schemaFile, err)
	}
	return f, ""
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

// MetadataFormat is how compactd writes the table's metadata files (the
// schema it was opened with), or the write refusal.
func (t *Table) MetadataFormat() (manifest.Format, error) {
	f, r := metadataFormat(t.latest, t.schemaPath(t.latest.ID))
	if r != "" {
		return f, &WriteRefusedError{Table: t.FullName(), Reason: r}
	}
	return f, nil
}
