// Package catalog finds Paimon tables through the catalog their writers
// use and opens them so that compactd's commits take part in that
// catalog's protocol: a file-system warehouse publishes snapshot files
// directly; a JDBC catalog (catalog/jdbc) wraps the publish in Paimon's
// distributed lock; a REST catalog (catalog/rest) commits through its API.
//
// A Catalog hands out *table.Table values whose SnapshotCommit is the
// catalog's, so everything below (compact, expire, maint) commits the
// catalog's way without knowing about catalogs.
package catalog

import (
	"context"

	"github.com/compactd/compactd/table"
)

// Catalog lists and opens the tables of one Paimon catalog.
type Catalog interface {
	// Name identifies the catalog in logs and errors; it never contains
	// a secret (password, token).
	Name() string
	// ListDatabases and ListTables return names sorted ascending.
	ListDatabases(ctx context.Context) ([]string, error)
	ListTables(ctx context.Context, database string) ([]string, error)
	// OpenTable opens database.name with the catalog's commit point set
	// (table.SetSnapshotCommit). A table the catalog does not know is an
	// error wrapping table.ErrNotATable.
	OpenTable(ctx context.Context, database, name string) (*table.Table, error)
	// Close releases connections; tables opened before stay readable but
	// must not commit afterwards.
	Close() error
}
