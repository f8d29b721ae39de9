package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// server is a catalog database the tests run against.
type server struct{ name, uri, user, password string }

// servers are the real PostgreSQL and MariaDB of scripts/db-servers.sh
// (test.sh starts them; with COMPACTD_REQUIRE_JDBC=1 a missing one fails).
func servers(t *testing.T) []server {
	t.Helper()
	var out []server
	for _, s := range interop.JDBCServers(t).Servers() {
		out = append(out, server{s.Name, s.JDBC, s.User, s.Password})
	}
	return out
}

// eachServer runs f against every server with a catalog key of its own,
// so tests sharing a database never see each other's rows.
func eachServer(t *testing.T, f func(t *testing.T, s server, db *sql.DB, key string)) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			conn, err := ParseURL(s.uri, s.user, s.password)
			if err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open(conn.Driver, conn.DSN)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			createJavaCatalogTables(t, db)
			f(t, s, db, fmt.Sprintf("k%d", rand.Int64()))
		})
	}
}

// createJavaCatalogTables creates the tables Java's JdbcCatalog creates
// on start (JdbcUtils.CREATE_CATALOG_TABLE and
// CREATE_DATABASE_PROPERTIES_TABLE), which compactd itself never does.
func createJavaCatalogTables(t *testing.T, db *sql.DB) {
	for _, ddl := range []string{
		"CREATE TABLE paimon_tables(catalog_key VARCHAR(255) NOT NULL, database_name VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, PRIMARY KEY (catalog_key, database_name, table_name))",
		"CREATE TABLE paimon_database_properties(catalog_key VARCHAR(255) NOT NULL, database_name VARCHAR(255) NOT NULL, property_key VARCHAR(255), property_value VARCHAR(1000), PRIMARY KEY (catalog_key, database_name, property_key))",
	} {
		if _, err := db.Exec(ddl); err != nil && !isExistingTable(err) {
			t.Fatal(err)
		}
	}
}

func exec(t *testing.T, db *sql.DB, dialect Dialect, q string, args ...any) {
	t.Helper()
	if dialect == Postgres {
		for i := range args {
			q = replaceFirst(q, "?", fmt.Sprintf("$%d", i+1))
		}
	}
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func replaceFirst(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}

func dialectOf(t *testing.T, s server) Dialect {
	c, err := ParseURL(s.uri, s.user, s.password)
	if err != nil {
		t.Fatal(err)
	}
	return c.Dialect
}

// createTable writes db.<name> (k BIGINT primary key, v BIGINT) into wh
// with one commit, and registers it under key as Java's catalog does.
func createTable(t *testing.T, sdb *sql.DB, d Dialect, key, wh, database, name string) {
	t.Helper()
	fields := table.RowType{
		{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
	}
	sc, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, map[string]string{"bucket": "1", "write-only": "true"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tb, err := write.CreateTable(ctx, fileio.NewLocal(), wh, database, name, sc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := write.NewWriter(ctx, tb, "java-writer")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(table.RowKindInsert, table.Row{int64(1), int64(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	exec(t, sdb, d, "INSERT INTO paimon_tables (catalog_key, database_name, table_name) VALUES (?, ?, ?)", key, database, name)
}

func openCatalog(t *testing.T, s server, key, wh string, lock bool, timeout time.Duration) *Catalog {
	t.Helper()
	c, err := Open(context.Background(), Config{URI: s.uri, User: s.user, Password: s.password, CatalogKey: key,
		Warehouse: wh, FileIO: fileio.NewLocal(), LockEnabled: &lock, LockAcquireTimeout: timeout, LockCheckMaxSleep: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCatalogListsAndOpensWhatIsRegistered(t *testing.T) {
	eachServer(t, func(t *testing.T, s server, sdb *sql.DB, key string) {
		ctx := context.Background()
		d := dialectOf(t, s)
		wh := t.TempDir()
		createTable(t, sdb, d, key, wh, "db1", "b")
		createTable(t, sdb, d, key, wh, "db1", "a")
		createTable(t, sdb, d, key, wh, "db2", "c")
		// Another catalog's table in the same warehouse, and a database
		// with properties only: Java lists the latter, not the former.
		createTable(t, sdb, d, key+"x", wh, "db3", "d")
		exec(t, sdb, d, "INSERT INTO paimon_database_properties (catalog_key, database_name, property_key, property_value) VALUES (?, ?, ?, ?)", key, "db0", "comment", "empty")
		c := openCatalog(t, s, key, wh, false, 0)
		dbs, err := c.ListDatabases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"db0", "db1", "db2"}; !slices.Equal(dbs, want) {
			t.Errorf("databases %v, want %v", dbs, want)
		}
		names, err := c.ListTables(ctx, "db1")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"a", "b"}; !slices.Equal(names, want) {
			t.Errorf("tables %v, want %v", names, want)
		}
		tb, err := c.OpenTable(ctx, "db1", "a")
		if err != nil {
			t.Fatal(err)
		}
		if tb.FullName() != "db1.a" || tb.HasCatalogCommit() {
			t.Errorf("opened %s (catalog commit %v), want db1.a committing to the file system (lock off)", tb.FullName(), tb.HasCatalogCommit())
		}
		// db3.d has a directory in the warehouse but is another catalog's.
		if _, err := c.OpenTable(ctx, "db3", "d"); !errors.Is(err, table.ErrNotATable) {
			t.Errorf("open of another catalog's table: %v, want ErrNotATable", err)
		}
		if lc := openCatalog(t, s, key, wh, true, time.Minute); !mustOpen(t, lc, "db1", "a").HasCatalogCommit() {
			t.Error("with lock.enabled the table does not commit through the lock")
		}
	})
}

func mustOpen(t *testing.T, c *Catalog, db, name string) *table.Table {
	t.Helper()
	tb, err := c.OpenTable(context.Background(), db, name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// lockRow reads the lock's row: whether it exists and its expiry.
func lockRow(t *testing.T, sdb *sql.DB, d Dialect, key string) (bool, int64) {
	t.Helper()
	q := "SELECT expire_time_seconds FROM paimon_distributed_locks WHERE lock_id = ?"
	if d == Postgres {
		q = "SELECT expire_time_seconds FROM paimon_distributed_locks WHERE lock_id = $1"
	}
	var exp int64
	err := sdb.QueryRow(q, key).Scan(&exp)
	if errors.Is(err, sql.ErrNoRows) {
		return false, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return true, exp
}

func TestLockIsJavasRow(t *testing.T) {
	eachServer(t, func(t *testing.T, s server, sdb *sql.DB, key string) {
		d := dialectOf(t, s)
		c := openCatalog(t, s, key, t.TempDir(), true, 90*time.Second)
		l := c.Lock()
		k := l.Key("db", "t")
		if k != key+".db.t" {
			t.Fatalf("lock key %q, want %q", k, key+".db.t")
		}
		var mu sync.Mutex
		var order []string
		entered := make(chan struct{})
		release := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := l.Run(context.Background(), "db", "t", func(context.Context) error {
				close(entered)
				<-release
				mu.Lock()
				order = append(order, "first")
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
		<-entered
		if ok, exp := lockRow(t, sdb, d, k); !ok || exp != 90 {
			t.Fatalf("while held: row %v expire %d, want a row with Java's expire_time_seconds 90", ok, exp)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Run(context.Background(), "db", "t", func(context.Context) error {
				mu.Lock()
				order = append(order, "second")
				mu.Unlock()
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(700 * time.Millisecond)
		close(release)
		wg.Wait()
		if !slices.Equal(order, []string{"first", "second"}) {
			t.Errorf("critical sections ran as %v, want first then second", order)
		}
		if ok, _ := lockRow(t, sdb, d, k); ok {
			t.Error("the row is still there after both released")
		}
	})
}

func TestLockTakesOverOnlyExpiredRows(t *testing.T) {
	eachServer(t, func(t *testing.T, s server, sdb *sql.DB, key string) {
		d := dialectOf(t, s)
		c := openCatalog(t, s, key, t.TempDir(), true, 2*time.Second)
		l := c.Lock()
		// A holder that died long ago, by the database's clock.
		past := "NOW() - INTERVAL '30' SECOND"
		if d == Postgres {
			past = "NOW() - INTERVAL '30 seconds'"
		}
		exec(t, sdb, d, "INSERT INTO paimon_distributed_locks (lock_id, acquired_at, expire_time_seconds) VALUES (?, "+past+", 10)", l.Key("db", "dead"))
		ran := false
		if err := l.Run(context.Background(), "db", "dead", func(context.Context) error { ran = true; return nil }); err != nil || !ran {
			t.Fatalf("expired row: ran %v err %v, want the lock taken over", ran, err)
		}
		// A live holder: the acquire gives up after the timeout, fn never runs.
		exec(t, sdb, d, "INSERT INTO paimon_distributed_locks (lock_id, expire_time_seconds) VALUES (?, 3600)", l.Key("db", "live"))
		start := time.Now()
		err := l.Run(context.Background(), "db", "live", func(context.Context) error {
			t.Error("ran under a lock someone else holds")
			return nil
		})
		if !errors.Is(err, ErrLockTimeout) {
			t.Fatalf("live row: %v, want ErrLockTimeout", err)
		}
		if el := time.Since(start); el < 2*time.Second || el > 10*time.Second {
			t.Errorf("gave up after %s, want about the 2s acquire timeout", el)
		}
		if ok, _ := lockRow(t, sdb, d, l.Key("db", "live")); !ok {
			t.Error("the live holder's row was deleted")
		}
	})
}

// TestLockNeverActsPastItsExpiry: the critical section's context ends
// before the row may expire, and a section that overran leaves the row
// to expire rather than delete what may be another holder's row.
func TestLockNeverActsPastItsExpiry(t *testing.T) {
	eachServer(t, func(t *testing.T, s server, sdb *sql.DB, key string) {
		d := dialectOf(t, s)
		c := openCatalog(t, s, key, t.TempDir(), true, 4*time.Second)
		l := c.Lock()
		var deadline time.Duration
		err := l.Run(context.Background(), "db", "t", func(ctx context.Context) error {
			dl, ok := ctx.Deadline()
			if !ok {
				t.Fatal("the critical section has no deadline")
			}
			deadline = time.Until(dl)
			<-ctx.Done() // overrun the lock
			return ctx.Err()
		})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run: %v, want the section's deadline", err)
		}
		if deadline <= 0 || deadline > 4*time.Second-time.Second+100*time.Millisecond {
			t.Errorf("section deadline %s after acquiring, want before the 4s expiry minus its margin", deadline)
		}
		if ok, _ := lockRow(t, sdb, d, l.Key("db", "t")); !ok {
			t.Error("an overrun section's release deleted the row (it might be another holder's by then)")
		}
	})
}

// TestCommitWaitsForTheLockHolder is the dangerous interleaving: a writer
// holds the lock, has checked that snapshot N does not exist and is about
// to write it, while compactd wants to publish N. compactd must wait for
// the lock, then see N taken and publish N+1; N stays the writer's.
func TestCommitWaitsForTheLockHolder(t *testing.T) {
	eachServer(t, func(t *testing.T, s server, sdb *sql.DB, key string) {
		ctx := context.Background()
		d := dialectOf(t, s)
		wh := t.TempDir()
		createTable(t, sdb, d, key, wh, "db", "t")
		c := openCatalog(t, s, key, wh, true, time.Minute)
		tb := mustOpen(t, c, "db", "t")
		latest, err := tb.LatestSnapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The other writer takes the lock (its row, as Java inserts it).
		k := c.Lock().Key("db", "t")
		exec(t, sdb, d, "INSERT INTO paimon_distributed_locks (lock_id, expire_time_seconds) VALUES (?, 60)", k)

		w, err := write.NewWriter(ctx, tb, "compactd")
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(table.RowKindInsert, table.Row{int64(2), int64(2)}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		var got *table.Snapshot
		go func() {
			var err error
			got, err = w.Commit(ctx)
			done <- err
		}()
		time.Sleep(1500 * time.Millisecond)
		select {
		case err := <-done:
			t.Fatalf("commit finished while another writer held the lock: %v", err)
		default:
		}
		if ids, _ := tb.SnapshotIDs(ctx); len(ids) != 1 {
			t.Fatalf("snapshots %v while the lock was held, want only %d", ids, latest.ID)
		}
		// The holder writes snapshot N (its own commit) and releases.
		theirs := *latest
		theirs.ID = latest.ID + 1
		theirs.CommitUser = "java-writer-2"
		data, err := theirs.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.FileIO().WriteExclusive(ctx, tb.Paths().SnapshotPath(theirs.ID), data); err != nil {
			t.Fatal(err)
		}
		exec(t, sdb, d, "DELETE FROM paimon_distributed_locks WHERE lock_id = ?", k)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got.ID != theirs.ID+1 {
			t.Errorf("compactd published snapshot %d, want %d (after the holder's)", got.ID, theirs.ID+1)
		}
		back, err := fileio.ReadFile(ctx, tb.FileIO(), tb.Paths().SnapshotPath(theirs.ID))
		if err != nil || string(back) != string(data) {
			t.Errorf("the holder's snapshot %d was changed (err %v)", theirs.ID, err)
		}
		if ok, _ := lockRow(t, sdb, d, k); ok {
			t.Error("compactd left its lock row behind")
		}
	})
}

// TestAFailedConnectionDoesNotShowThePassword: the drivers' errors for a
// refused login name the server and user, never the password.
func TestAFailedConnectionDoesNotShowThePassword(t *testing.T) {
	eachServer(t, func(t *testing.T, s server, _ *sql.DB, key string) {
		const pw = "not-the-password-7f3a"
		_, err := Open(context.Background(), Config{URI: s.uri, User: s.user, Password: pw, CatalogKey: key,
			Warehouse: t.TempDir(), FileIO: fileio.NewLocal()})
		if err == nil {
			t.Fatal("a wrong password connected")
		}
		t.Logf("refused: %v", err)
		if strings.Contains(err.Error(), pw) {
			t.Errorf("the error shows the password: %v", err)
		}
	})
}
