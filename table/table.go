package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sourcegraph/conc/pool"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table/manifest"
)

// schemaReadParallelism bounds the schema files OpenPath reads at once.
const schemaReadParallelism = 8

// ErrNoSnapshot is returned when a table has no snapshot yet.
var ErrNoSnapshot = errors.New("table has no snapshot")

// ErrNotATable is returned by OpenPath when the directory holds no schema.
var ErrNotATable = errors.New("not a Paimon table (no schema/schema-N)")

// UnsupportedFormatError refuses a table whose metadata compactd cannot
// read. It matches errors.Is(err, manifest.ErrUnsupportedFormat).
type UnsupportedFormatError struct {
	Option string // e.g. "manifest.format"
	Value  string // e.g. "orc"
	Table  string // table path
}

func (e *UnsupportedFormatError) Error() string {
	return fmt.Sprintf("not supported: %s=%s in %s", e.Option, e.Value, e.Table)
}

// Unwrap lets callers test errors.Is(err, manifest.ErrUnsupportedFormat).
func (e *UnsupportedFormatError) Unwrap() error { return manifest.ErrUnsupportedFormat }

// Table is an open Paimon table (main branch): its schemas, options and
// layout. Snapshots, tags and consumers are read on demand, so one Table
// can be kept while the table is written to; schemas added after Open are
// loaded when first asked for.
type Table struct {
	fio      fileio.FileIO
	path     string
	database string // "" when opened by path
	name     string

	mu        sync.Mutex
	schemas   map[int64]*TableSchema
	schemaIDs []int64
	latest    *TableSchema
	paths     *PathFactory

	// snapshotCommit is the catalog's commit point; nil publishes the
	// snapshot file directly (commit_publish.go).
	snapshotCommit SnapshotCommit

	// readOnly is why compactd must not write the table ("" when it may;
	// writable.go); fio then refuses every write.
	readOnly string
}

// Open opens <warehouse>/<database>.db/<name>. The names must be Paimon
// database and table names and the table directory must lie inside the
// warehouse (ResolveTablePath): a name cannot lead anywhere else.
func Open(ctx context.Context, fio fileio.FileIO, warehouse, database, name string) (*Table, error) {
	path, err := ResolveTablePath(ctx, fio, warehouse, database, name)
	if err != nil {
		return nil, fmt.Errorf("open %w", err)
	}
	t, err := OpenPath(ctx, fio, path)
	if err != nil {
		return nil, err
	}
	t.database, t.name = database, name
	return t, nil
}

// OpenNamed opens the table database.name whose directory a catalog named
// (a REST catalog's table path): the names are checked as Open checks
// them, the path is the catalog's, and the caller confines it.
func OpenNamed(ctx context.Context, fio fileio.FileIO, tablePath, database, name string) (*Table, error) {
	if err := CheckDatabaseName(database); err != nil {
		return nil, fmt.Errorf("open table %s.%s: %w", database, name, err)
	}
	if err := CheckTableName(name); err != nil {
		return nil, fmt.Errorf("open table %s.%s: %w", database, name, err)
	}
	t, err := OpenPath(ctx, fio, tablePath)
	if err != nil {
		return nil, err
	}
	t.database, t.name = database, name
	return t, nil
}

// OpenPath opens the table whose directory is tablePath. It loads every
// schema (files written under older schemas are read through them) and
// refuses tables whose manifests are neither Avro nor ORC. A table whose
// metadata compactd cannot write as Java would (writable.go) is opened
// read-only: its FileIO refuses every write.
func OpenPath(ctx context.Context, fio fileio.FileIO, tablePath string) (*Table, error) {
	tablePath = strings.TrimRight(tablePath, "/")
	t := &Table{fio: fio, path: tablePath, name: fileio.Base(tablePath), schemas: map[int64]*TableSchema{}}
	ids, err := listIDs(ctx, fio, fileio.Join(tablePath, SchemaDir), schemaPrefix)
	if err != nil {
		return nil, fmt.Errorf("open table %s: %w", tablePath, err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("open table %s: %w", tablePath, ErrNotATable)
	}
	// The schemas are read side by side (an evolved table's on an object
	// store: one round trip, not one per schema).
	schemas := make([]*TableSchema, len(ids))
	p := pool.New().WithContext(ctx).WithCancelOnError().WithFirstError().WithMaxGoroutines(schemaReadParallelism)
	for i, id := range ids {
		p.Go(func(ctx context.Context) (err error) {
			schemas[i], err = t.readSchema(ctx, id)
			return err
		})
	}
	if err := p.Wait(); err != nil {
		return nil, fmt.Errorf("open table %s: %w", tablePath, err)
	}
	for i, id := range ids {
		t.schemas[id] = schemas[i]
	}
	t.schemaIDs = ids
	t.latest = t.schemas[ids[len(ids)-1]]
	if err := t.checkFormats(t.latest); err != nil {
		return nil, err
	}
	if t.readOnly = writeRefusal(t.latest, t.schemaPath(t.latest.ID)); t.readOnly != "" {
		t.fio = readOnlyFS{FileIO: fio, t: t}
	}
	t.paths = NewPathFactory(tablePath, t.latest)
	return t, nil
}

// checkFormats refuses a schema whose metadata compactd cannot read:
// manifests in a format other than Avro and ORC (Paimon's
// manifest.format=parquet).
func (t *Table) checkFormats(s *TableSchema) error {
	if f := s.CoreOptions().ManifestFormat; f != "avro" && f != "orc" {
		return &UnsupportedFormatError{Option: OptManifestFormat, Value: f, Table: t.path}
	}
	return nil
}

func (t *Table) readSchema(ctx context.Context, id int64) (*TableSchema, error) {
	path := fileio.Join(t.path, SchemaDir, SchemaFileName(id))
	data, err := fileio.ReadFile(ctx, t.fio, path)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", path, err)
	}
	s, err := ParseTableSchema(data)
	if err != nil {
		return nil, fmt.Errorf("read schema %s: %w", path, err)
	}
	if s.ID != id {
		return nil, fmt.Errorf("read schema %s: file holds schema id %d", path, s.ID)
	}
	return s, nil
}

// Path is the table directory.
func (t *Table) Path() string { return t.path }

// Name is the table name (last path element when opened by path).
func (t *Table) Name() string { return t.name }

// Database is the database name, "" when opened by path.
func (t *Table) Database() string { return t.database }

// FullName is "<db>.<table>" (or the path when opened by path), for logs.
func (t *Table) FullName() string {
	if t.database == "" {
		return t.path
	}
	return t.database + "." + t.name
}

// FileIO is the store the table lives on.
func (t *Table) FileIO() fileio.FileIO { return t.fio }

// Schema is the latest schema at Open.
func (t *Table) Schema() *TableSchema { return t.latest }

// Options are the latest schema's effective options.
func (t *Table) Options() *Options { return t.latest.CoreOptions() }

// Paths is the table's path factory (built from the latest schema).
func (t *Table) Paths() *PathFactory { return t.paths }

// HasPrimaryKey reports whether the table has a primary key.
func (t *Table) HasPrimaryKey() bool { return t.latest.HasPrimaryKey() }

// SchemaIDs are the schema ids found at Open, ascending.
func (t *Table) SchemaIDs() []int64 { return slices.Clone(t.schemaIDs) }

// SchemaByID returns schema id, reading it if it appeared after Open.
func (t *Table) SchemaByID(ctx context.Context, id int64) (*TableSchema, error) {
	t.mu.Lock()
	s, ok := t.schemas[id]
	t.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := t.readSchema(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.path, err)
	}
	if err := t.checkFormats(s); err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.schemas[id] = s
	t.mu.Unlock()
	return s, nil
}

// LatestSchema re-lists schema/ and returns the newest schema (which may
// be newer than Schema() when the table evolved since Open).
func (t *Table) LatestSchema(ctx context.Context) (*TableSchema, error) {
	ids, err := listIDs(ctx, t.fio, fileio.Join(t.path, SchemaDir), schemaPrefix)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.path, err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("table %s: %w", t.path, ErrNotATable)
	}
	return t.SchemaByID(ctx, ids[len(ids)-1])
}

// SnapshotIDs lists snapshot/ and returns the snapshot ids, ascending. The
// listing is the truth; LATEST/EARLIEST are only hints.
func (t *Table) SnapshotIDs(ctx context.Context) ([]int64, error) {
	ids, err := listIDs(ctx, t.fio, t.paths.SnapshotDir(), snapshotPrefix)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.path, err)
	}
	return ids, nil
}

// Snapshot reads snapshot id. A missing file gives an error wrapping
// fileio.ErrNotExist.
func (t *Table) Snapshot(ctx context.Context, id int64) (*Snapshot, error) {
	path := t.paths.SnapshotPath(id)
	data, err := fileio.ReadFile(ctx, t.fio, path)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", path, err)
	}
	s, err := ParseSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", path, err)
	}
	if s.ID != id {
		return nil, fmt.Errorf("read snapshot %s: file holds snapshot id %d", path, s.ID)
	}
	return s, nil
}

// ChangelogIDs lists changelog/ and returns the ids of the long-lived
// changelog files, ascending; none when the directory does not exist.
func (t *Table) ChangelogIDs(ctx context.Context) ([]int64, error) {
	ids, err := listIDs(ctx, t.fio, t.paths.ChangelogDir(), ChangelogPrefix)
	if errors.Is(err, fileio.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.path, err)
	}
	return ids, nil
}

// WriteChangelogLatestHint overwrites changelog/LATEST with id.
func (t *Table) WriteChangelogLatestHint(ctx context.Context, id int64) error {
	return t.writeHint(ctx, fileio.Join(t.paths.ChangelogDir(), hintLatest), id)
}

// LatestSnapshotID is the largest listed snapshot id; ErrNoSnapshot if none.
func (t *Table) LatestSnapshotID(ctx context.Context) (int64, error) {
	ids, err := t.SnapshotIDs(ctx)
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("table %s: %w", t.path, ErrNoSnapshot)
	}
	return ids[len(ids)-1], nil
}

// EarliestSnapshotID is the smallest listed snapshot id; ErrNoSnapshot if none.
func (t *Table) EarliestSnapshotID(ctx context.Context) (int64, error) {
	ids, err := t.SnapshotIDs(ctx)
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("table %s: %w", t.path, ErrNoSnapshot)
	}
	return ids[0], nil
}

// LatestSnapshot reads the newest listed snapshot; ErrNoSnapshot if none.
// A snapshot that vanishes between listing and reading (expired by a
// concurrent job) makes it list again.
func (t *Table) LatestSnapshot(ctx context.Context) (*Snapshot, error) {
	for attempt := 0; ; attempt++ {
		id, err := t.LatestSnapshotID(ctx)
		if err != nil {
			return nil, err
		}
		s, err := t.Snapshot(ctx, id)
		if err != nil && errors.Is(err, fileio.ErrNotExist) && attempt < 3 {
			continue
		}
		return s, err
	}
}

// ReadLatestHint reads snapshot/LATEST. ok is false when the hint is
// missing or unparsable (Java treats both as "no hint").
func (t *Table) ReadLatestHint(ctx context.Context) (id int64, ok bool, err error) {
	return t.readHint(ctx, t.paths.LatestHintPath())
}

// ReadEarliestHint reads snapshot/EARLIEST like ReadLatestHint.
func (t *Table) ReadEarliestHint(ctx context.Context) (id int64, ok bool, err error) {
	return t.readHint(ctx, t.paths.EarliestHintPath())
}

func (t *Table) readHint(ctx context.Context, path string) (int64, bool, error) {
	return ReadHint(ctx, t.fio, path)
}

// WriteLatestHint overwrites snapshot/LATEST with id (decimal, no newline).
func (t *Table) WriteLatestHint(ctx context.Context, id int64) error {
	return t.writeHint(ctx, t.paths.LatestHintPath(), id)
}

// WriteEarliestHint overwrites snapshot/EARLIEST with id.
func (t *Table) WriteEarliestHint(ctx context.Context, id int64) error {
	return t.writeHint(ctx, t.paths.EarliestHintPath(), id)
}

func (t *Table) writeHint(ctx context.Context, path string, id int64) error {
	return WriteHint(ctx, t.fio, path, id)
}

// TagNames lists tag/ and returns the tag names, sorted.
func (t *Table) TagNames(ctx context.Context) ([]string, error) {
	names, err := listVersioned(ctx, t.fio, t.paths.TagDir(), TagPrefix)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.path, err)
	}
	slices.Sort(names)
	return names, nil
}

// Tag reads tag/tag-<name>.
func (t *Table) Tag(ctx context.Context, name string) (*Tag, error) {
	path := t.paths.TagPath(name)
	data, err := fileio.ReadFile(ctx, t.fio, path)
	if err != nil {
		return nil, fmt.Errorf("read tag %s: %w", path, err)
	}
	tag, err := ParseTag(name, data)
	if err != nil {
		return nil, fmt.Errorf("read tag %s: %w", path, err)
	}
	return tag, nil
}

// Tags reads every tag, sorted by name.
func (t *Table) Tags(ctx context.Context) ([]*Tag, error) {
	names, err := t.TagNames(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Tag, 0, len(names))
	for _, n := range names {
		tag, err := t.Tag(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, tag)
	}
	return out, nil
}

// Consumers reads every consumer/consumer-<id>, sorted by id. A consumer
// file deleted between listing and reading is skipped.
func (t *Table) Consumers(ctx context.Context) ([]*Consumer, error) {
	ids, err := listVersioned(ctx, t.fio, t.paths.ConsumerDir(), ConsumerPrefix)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.path, err)
	}
	slices.Sort(ids)
	out := make([]*Consumer, 0, len(ids))
	for _, id := range ids {
		path := t.paths.ConsumerPath(id)
		data, err := fileio.ReadFile(ctx, t.fio, path)
		if errors.Is(err, fileio.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read consumer %s: %w", path, err)
		}
		c, err := ParseConsumer(id, data)
		if err != nil {
			return nil, fmt.Errorf("read consumer %s: %w", path, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// SkippedDir is a directory a listing left out because its name is not
// one compactd can address (the caller decides how to report it).
type SkippedDir struct {
	Path string
	Err  error
}

// ListDatabases returns the databases of a filesystem-catalog warehouse:
// the directories named <db>.db, sorted. Directories whose <db> is not a
// database name compactd can address (CheckDatabaseName) are left out and
// returned as skipped.
func ListDatabases(ctx context.Context, fio fileio.FileIO, warehouse string) ([]string, []SkippedDir, error) {
	infos, err := fio.List(ctx, warehouse)
	if err != nil {
		return nil, nil, fmt.Errorf("list warehouse %s: %w", warehouse, err)
	}
	var out []string
	var skipped []SkippedDir
	for _, fi := range infos {
		if fi.IsDir && strings.HasSuffix(fi.Name, DatabaseSuffix) && len(fi.Name) > len(DatabaseSuffix) {
			db := strings.TrimSuffix(fi.Name, DatabaseSuffix)
			if err := CheckDatabaseName(db); err != nil {
				skipped = append(skipped, SkippedDir{Path: fi.Path, Err: err})
				continue
			}
			out = append(out, db)
		}
	}
	slices.Sort(out)
	return out, skipped, nil
}

// ListTables returns the tables of a database: the sub-directories holding
// at least one schema/schema-<id>, sorted. Directories whose name is not a
// table name (CheckTableName) are left out and returned as skipped.
func ListTables(ctx context.Context, fio fileio.FileIO, warehouse, database string) ([]string, []SkippedDir, error) {
	if err := CheckDatabaseName(database); err != nil {
		return nil, nil, fmt.Errorf("list database in warehouse %s: %w", warehouse, err)
	}
	dbPath := DatabasePath(warehouse, database)
	infos, err := fio.List(ctx, dbPath)
	if err != nil {
		return nil, nil, fmt.Errorf("list database %s: %w", dbPath, err)
	}
	var out []string
	var skipped []SkippedDir
	for _, fi := range infos {
		if !fi.IsDir {
			continue
		}
		if err := CheckTableName(fi.Name); err != nil {
			skipped = append(skipped, SkippedDir{Path: fi.Path, Err: err})
			continue
		}
		ids, err := listIDs(ctx, fio, fileio.Join(dbPath, fi.Name, SchemaDir), schemaPrefix)
		if err != nil {
			return nil, nil, fmt.Errorf("list database %s: %w", dbPath, err)
		}
		if len(ids) > 0 {
			out = append(out, fi.Name)
		}
	}
	slices.Sort(out)
	return out, skipped, nil
}

func sortInt64s(s []int64) { slices.Sort(s) }

// WriteSnapshot publishes snapshot s as snapshot/snapshot-<s.ID> with an
// exclusive create through the table's commit point (a catalog's lock
// where it has one, SetSnapshotCommit): if the id is taken the error wraps
// fileio.ErrExist and nothing is written (the caller re-plans against the
// new latest). On success LATEST names s.ID.
func (t *Table) WriteSnapshot(ctx context.Context, s *Snapshot) error {
	path := t.paths.SnapshotPath(s.ID)
	data, err := s.MarshalJSON()
	if err != nil {
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	if err := t.publish(ctx, s, data, nil); err != nil {
		return fmt.Errorf("write snapshot %s: %w", path, err)
	}
	return nil
}
