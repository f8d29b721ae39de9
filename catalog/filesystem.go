package catalog

import (
	"context"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// FileSystem is a warehouse without a metastore (Java's
// FileSystemCatalog): databases and tables are directories, commits
// publish snapshot files directly.
type FileSystem struct {
	FIO       fileio.FileIO
	Warehouse string
	// OnSkipped, if set, hears of directories listing left out because
	// compactd cannot address their names.
	OnSkipped func([]table.SkippedDir)
}

// Name is the warehouse path.
func (f *FileSystem) Name() string { return f.Warehouse }

// ListDatabases lists the <db>.db directories.
func (f *FileSystem) ListDatabases(ctx context.Context) ([]string, error) {
	dbs, skipped, err := table.ListDatabases(ctx, f.FIO, f.Warehouse)
	f.skipped(skipped)
	return dbs, err
}

// ListTables lists a database's table directories.
func (f *FileSystem) ListTables(ctx context.Context, database string) ([]string, error) {
	names, skipped, err := table.ListTables(ctx, f.FIO, f.Warehouse, database)
	f.skipped(skipped)
	return names, err
}

// OpenTable opens <warehouse>/<database>.db/<name>.
func (f *FileSystem) OpenTable(ctx context.Context, database, name string) (*table.Table, error) {
	return table.Open(ctx, f.FIO, f.Warehouse, database, name)
}

// Close does nothing: a file system holds no connections.
func (f *FileSystem) Close() error { return nil }

func (f *FileSystem) skipped(dirs []table.SkippedDir) {
	if len(dirs) > 0 && f.OnSkipped != nil {
		f.OnSkipped(dirs)
	}
}
