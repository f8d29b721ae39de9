// Package reach walks everything a Paimon table's kept metadata reaches:
// from the snapshots, tags and long-lived changelogs of every branch to
// their manifest lists, manifests (and the data, changelog and extra files
// they name), index manifests, index files and statistics files. Snapshot
// expiration (what it must not delete) and orphan cleanup (what it must
// keep) both decide on this walk, so both import it, and neither imports
// the other.
//
// The walk fails closed: a file it cannot read is a *table.DamagedError
// naming the table, the file and what reaches it, unless it is missing and
// the snapshot or tag naming it is going away too (Vanish). The JSON
// metadata itself (snapshots, tags, consumers, branches, hints) is read
// through package table's branch readers; the Avro metadata through a
// Metadata, implemented for an open table by TableMetadata.
package reach

import (
	"context"

	"github.com/compactd/compactd/fileio"
)

// Source is the table a walk (and expiration and orphan cleanup) works on:
// its store, root path and a reader for its Avro metadata.
type Source struct {
	FS   fileio.FileIO
	Root string
	Meta Metadata
}

// Kind is a manifest entry kind.
type Kind int8

const (
	Add    Kind = 0
	Delete Kind = 1
)

// DataEntry is a manifest entry reduced to what reachability and deletion
// need. Path and ExtraPaths are resolved by the Metadata implementation
// (bucket directory from partition and bucket, or the external path).
type DataEntry struct {
	Kind      Kind
	Partition string // serialized partition BinaryRow, compared as bytes
	Bucket    int32
	Level     int32
	Name      string
	Path      string
	// ExtraPaths are the paths of the entry's extra files (e.g. file indexes).
	ExtraPaths []string
	// Compacted is set when the file's _FILE_SOURCE is COMPACT. A file
	// without a source (written before Paimon recorded it) counts as an
	// APPEND file, as Paimon's expiration counts it.
	Compacted bool
}

// IndexFile is one entry of an index manifest.
type IndexFile struct {
	Name string
	Path string
}

// Metadata reads the Avro metadata a walk or an expiration plan needs. A
// missing file must give an error wrapping fs.ErrNotExist
// (fileio.ErrNotExist), and an undecodable one an error wrapping
// table.ErrCorrupt.
type Metadata interface {
	// ManifestList returns the manifest file names a manifest list holds, in order.
	ManifestList(ctx context.Context, name string) ([]string, error)
	// Manifest streams the entries of one data or changelog manifest in file order.
	Manifest(ctx context.Context, name string, fn func(DataEntry) error) error
	// IndexManifest returns the index files an index manifest lists.
	IndexManifest(ctx context.Context, name string) ([]IndexFile, error)
}

// Opt is the value of an optional snapshot field, "" when absent.
func Opt(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
