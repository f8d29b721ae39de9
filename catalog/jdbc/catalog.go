package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	// The database/sql drivers of the two dialects: pgx is the maintained
	// PostgreSQL driver, go-sql-driver/mysql the one for MySQL and MariaDB.
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// Config is a JDBC catalog as its Java writers configure it.
type Config struct {
	// URI is Java's `uri`: jdbc:postgresql://…, jdbc:mysql://… or
	// jdbc:mariadb://….
	URI      string
	User     string // Java's jdbc.user
	Password string // Java's jdbc.password; never logged
	// CatalogKey is Java's catalog-key (default "jdbc"): the catalog's
	// rows in the shared tables, and the first part of every lock key.
	CatalogKey string
	// Warehouse is Java's warehouse: tables live in <warehouse>/<db>.db/<t>.
	Warehouse string
	FileIO    fileio.FileIO
	// LockEnabled is Java's lock.enabled; nil means Java's default: on
	// for object stores (an s3:// warehouse), off otherwise.
	LockEnabled *bool
	// LockAcquireTimeout and LockCheckMaxSleep are Java's
	// lock-acquire-timeout and lock-check-max-sleep (zero: 8 min, 8 s).
	// The acquire timeout is also the lock's expiry: use the writers'.
	LockAcquireTimeout time.Duration
	LockCheckMaxSleep  time.Duration
	// LockKeyMaxLength is Java's lock-key-max-length, used only when
	// compactd creates the lock table (as Java's catalog does).
	LockKeyMaxLength int
}

// Catalog is an open JDBC catalog.
type Catalog struct {
	cfg  Config
	conn *Conn
	db   *sql.DB
	lock *Lock // nil when the catalog does not lock
	ph   func(i int) string
}

// Open connects to the catalog database, checks that it holds a Paimon
// JDBC catalog (paimon_tables exists; compactd never creates it) and,
// where the catalog locks, that the lock table exists, creating it with
// Java's statement if not (as Java's catalog does on start).
func Open(ctx context.Context, cfg Config) (*Catalog, error) {
	if cfg.CatalogKey == "" {
		cfg.CatalogKey = "jdbc"
	}
	if cfg.Warehouse == "" {
		return nil, errors.New("JDBC catalog: no warehouse: Java's catalog needs one, and compactd needs the same")
	}
	if cfg.FileIO == nil {
		return nil, errors.New("JDBC catalog: no file IO for the warehouse")
	}
	conn, err := ParseURL(cfg.URI, cfg.User, cfg.Password)
	if err != nil {
		return nil, fmt.Errorf("JDBC catalog: %w", err)
	}
	db, err := sql.Open(conn.Driver, conn.DSN)
	if err != nil {
		return nil, fmt.Errorf("JDBC catalog %s: %w", conn.Display, err)
	}
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	c := &Catalog{cfg: cfg, conn: conn, db: db, ph: func(int) string { return "?" }}
	if conn.Dialect == Postgres {
		c.ph = func(i int) string { return fmt.Sprintf("$%d", i) }
	}
	fail := func(err error) (*Catalog, error) {
		db.Close()
		return nil, fmt.Errorf("JDBC catalog %s: %w", conn.Display, err)
	}
	if err := db.PingContext(ctx); err != nil {
		return fail(err)
	}
	if _, err := db.ExecContext(ctx, "SELECT catalog_key, database_name, table_name FROM paimon_tables WHERE 1 = 0"); err != nil {
		if isMissingTable(err) {
			return fail(errors.New("the database holds no Paimon JDBC catalog (no table paimon_tables)"))
		}
		return fail(err)
	}
	lockOn := strings.HasPrefix(cfg.Warehouse, "s3://") || strings.HasPrefix(cfg.Warehouse, "s3a://")
	if cfg.LockEnabled != nil {
		lockOn = *cfg.LockEnabled
	}
	if lockOn {
		if conn.Dialect == MariaDB {
			return fail(errors.New("lock.enabled with a jdbc:mariadb: URL: Java's JDBC catalog has no distributed lock for it (its writers would fail to start); MariaDB writers that lock use a jdbc:mysql: URL"))
		}
		l := &Lock{db: db, sql: lockStatements(conn.Dialect), catalogKey: cfg.CatalogKey, acquireTimeout: cfg.LockAcquireTimeout,
			checkMaxSleep: cfg.LockCheckMaxSleep, display: conn.Display, now: time.Now}
		if l.acquireTimeout <= 0 {
			l.acquireTimeout = DefaultLockAcquireTimeout
		}
		if l.checkMaxSleep <= 0 {
			l.checkMaxSleep = DefaultLockCheckMaxSleep
		}
		if l.expireSeconds() < 1 {
			return fail(fmt.Errorf("lock-acquire-timeout %s: the lock's expiry is its whole seconds, so it must be at least 1s", l.acquireTimeout))
		}
		keyLen := cfg.LockKeyMaxLength
		if keyLen <= 0 {
			keyLen = DefaultLockKeyMaxLength
		}
		if err := ensureLockTable(ctx, db, fmt.Sprintf(l.sql.create, keyLen)); err != nil {
			return fail(err)
		}
		c.lock = l
	}
	return c, nil
}

func ensureLockTable(ctx context.Context, db *sql.DB, create string) error {
	_, err := db.ExecContext(ctx, "SELECT lock_id, acquired_at, expire_time_seconds FROM "+locksTable+" WHERE 1 = 0")
	if err == nil {
		return nil
	}
	if !isMissingTable(err) {
		return fmt.Errorf("lock table %s: %w", locksTable, err)
	}
	if _, err := db.ExecContext(ctx, create); err != nil && !isExistingTable(err) {
		return fmt.Errorf("create lock table %s: %w", locksTable, err)
	}
	return nil
}

// Name is the catalog's URL without credentials and its key.
func (c *Catalog) Name() string { return c.conn.Display + " (catalog-key " + c.cfg.CatalogKey + ")" }

// Locks says whether commits take the catalog's distributed lock.
func (c *Catalog) Locks() bool { return c.lock != nil }

// Lock is the catalog's distributed lock; nil when it does not lock.
func (c *Catalog) Lock() *Lock { return c.lock }

// Close closes the connections.
func (c *Catalog) Close() error { return c.db.Close() }

// ListDatabases lists the catalog's databases as Java's JdbcCatalog does:
// those with a table and those with properties.
func (c *Catalog) ListDatabases(ctx context.Context) ([]string, error) {
	var names []string
	for _, q := range []string{
		"SELECT DISTINCT database_name FROM paimon_tables WHERE catalog_key = " + c.ph(1),
		"SELECT DISTINCT database_name FROM paimon_database_properties WHERE catalog_key = " + c.ph(1),
	} {
		got, err := c.strings(ctx, q, c.cfg.CatalogKey)
		if err != nil && !(isMissingTable(err) && strings.Contains(q, "properties")) {
			return nil, fmt.Errorf("JDBC catalog %s: list databases: %w", c.Name(), err)
		}
		names = append(names, got...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// ListTables lists the tables registered under database.
func (c *Catalog) ListTables(ctx context.Context, database string) ([]string, error) {
	names, err := c.strings(ctx, "SELECT table_name FROM paimon_tables WHERE catalog_key = "+c.ph(1)+" AND database_name = "+c.ph(2), c.cfg.CatalogKey, database)
	if err != nil {
		return nil, fmt.Errorf("JDBC catalog %s: list tables of %s: %w", c.Name(), database, err)
	}
	slices.Sort(names)
	return names, nil
}

func (c *Catalog) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// OpenTable opens a table the catalog registered, at the location Java's
// catalog gives it (<warehouse>/<db>.db/<table>), committing under the
// catalog's lock where it locks. A table the catalog does not list is an
// error wrapping table.ErrNotATable, even if its directory exists: it is
// not the writers' table.
func (c *Catalog) OpenTable(ctx context.Context, database, name string) (*table.Table, error) {
	n, err := c.strings(ctx, "SELECT table_name FROM paimon_tables WHERE catalog_key = "+c.ph(1)+" AND database_name = "+c.ph(2)+" AND table_name = "+c.ph(3), c.cfg.CatalogKey, database, name)
	if err != nil {
		return nil, fmt.Errorf("JDBC catalog %s: table %s.%s: %w", c.Name(), database, name, err)
	}
	if len(n) == 0 {
		return nil, fmt.Errorf("JDBC catalog %s: table %s.%s is not registered: %w", c.Name(), database, name, table.ErrNotATable)
	}
	t, err := table.Open(ctx, c.cfg.FileIO, c.cfg.Warehouse, database, name)
	if err != nil {
		return nil, fmt.Errorf("JDBC catalog %s: %w", c.Name(), err)
	}
	if c.lock != nil {
		t.SetSnapshotCommit(lockedCommit{c.lock})
	}
	return t, nil
}

// lockedCommit publishes a snapshot as Java's RenamingSnapshotCommit does
// under a catalog lock.
type lockedCommit struct{ lock *Lock }

func (lc lockedCommit) CommitSnapshot(ctx context.Context, t *table.Table, s *table.Snapshot, data []byte, _ []manifest.Entry) error {
	return lc.lock.Run(ctx, t.Database(), t.Name(), func(ctx context.Context) error {
		path := t.Paths().SnapshotPath(s.ID)
		exists, err := fileio.Exists(ctx, t.FileIO(), path)
		if err != nil {
			return fmt.Errorf("commit to %s: check snapshot %d under the catalog lock: %w", t.FullName(), s.ID, err)
		}
		if exists {
			return fmt.Errorf("commit to %s: snapshot %d exists: %w", t.FullName(), s.ID, fileio.ErrExist)
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < lc.lock.minPublishTime() {
			return fmt.Errorf("commit to %s: the catalog lock expires in %s, too soon to publish snapshot %d", t.FullName(), time.Until(d).Round(time.Millisecond), s.ID)
		}
		return t.PublishSnapshotFile(ctx, s, data)
	})
}
