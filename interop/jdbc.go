package interop

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	// database/sql drivers of the JDBC-catalog tests: "pgx" (PostgreSQL) and "mysql"
	// (MySQL/MariaDB), the same two the Go JDBC catalog uses.
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// The JDBC-catalog tests run against the PostgreSQL and MariaDB servers of
// scripts/db-servers.sh (eval "$(bash scripts/db-servers.sh env)"). Without its
// environment they skip, unless COMPACTD_REQUIRE_JDBC=1 (set by `make test`), which
// turns a missing or unreachable server into a failure.

// JDBCServer is one catalog database server.
type JDBCServer struct {
	// Name is "postgres" or "mariadb" (for subtest names).
	Name string
	// Driver is the database/sql driver name: "pgx" or "mysql".
	Driver string
	// DSN is the Go driver's data source name (pgx URL form, or go-sql-driver/mysql form).
	DSN string
	// JDBC is the JDBC URL Java Paimon's catalog gets as its uri (jdbc:postgresql://… or
	// jdbc:mysql://… — also for MariaDB: Paimon's JDBC lock only knows the mysql protocol).
	JDBC string
	// User and Password are the catalog's credentials (jdbc.user / jdbc.password).
	User, Password string
}

// JDBCEnv holds both servers.
type JDBCEnv struct {
	Postgres JDBCServer
	MySQL    JDBCServer
}

// Servers lists both, PostgreSQL first.
func (e JDBCEnv) Servers() []JDBCServer { return []JDBCServer{e.Postgres, e.MySQL} }

// JDBCServers returns the servers named by COMPACTD_PG_DSN / COMPACTD_PG_JDBC /
// COMPACTD_PG_USER / COMPACTD_PG_PASSWORD and COMPACTD_MYSQL_DSN / COMPACTD_MYSQL_JDBC /
// COMPACTD_MYSQL_USER / COMPACTD_MYSQL_PASSWORD after checking that each answers a ping.
// Missing variables skip the test unless COMPACTD_REQUIRE_JDBC=1; a server that is named
// but does not answer always fails it.
func JDBCServers(tb testing.TB) JDBCEnv {
	tb.Helper()
	env, missing := jdbcEnvFromEnviron()
	if missing != "" {
		const hint = `run: bash scripts/db-servers.sh start && eval "$(bash scripts/db-servers.sh env)"`
		if os.Getenv("COMPACTD_REQUIRE_JDBC") == "1" {
			tb.Fatalf("COMPACTD_REQUIRE_JDBC=1 but %s is not set; %s", missing, hint)
		}
		tb.Skipf("JDBC-catalog tests need %s; %s", missing, hint)
	}
	for _, s := range env.Servers() {
		if err := s.Ping(context.Background()); err != nil {
			tb.Fatalf("interop: %v (bash scripts/db-servers.sh status)", err)
		}
	}
	return env
}

func jdbcEnvFromEnviron() (JDBCEnv, string) {
	vars := map[string]*string{}
	env := JDBCEnv{
		Postgres: JDBCServer{Name: "postgres", Driver: "pgx"},
		MySQL:    JDBCServer{Name: "mariadb", Driver: "mysql"},
	}
	for prefix, s := range map[string]*JDBCServer{"COMPACTD_PG_": &env.Postgres, "COMPACTD_MYSQL_": &env.MySQL} {
		vars[prefix+"DSN"] = &s.DSN
		vars[prefix+"JDBC"] = &s.JDBC
		vars[prefix+"USER"] = &s.User
		vars[prefix+"PASSWORD"] = &s.Password
	}
	for _, name := range []string{
		"COMPACTD_PG_DSN", "COMPACTD_PG_JDBC", "COMPACTD_PG_USER", "COMPACTD_PG_PASSWORD",
		"COMPACTD_MYSQL_DSN", "COMPACTD_MYSQL_JDBC", "COMPACTD_MYSQL_USER", "COMPACTD_MYSQL_PASSWORD",
	} {
		v := os.Getenv(name)
		if v == "" {
			return JDBCEnv{}, name
		}
		*vars[name] = v
	}
	return env, ""
}

// Open opens the server's database with its Go driver (closed when the test ends).
func (s JDBCServer) Open(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sql.Open(s.Driver, s.DSN)
	if err != nil {
		tb.Fatalf("interop: open %s: %v", s.Name, err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// Ping connects once and runs a query.
func (s JDBCServer) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, err := sql.Open(s.Driver, s.DSN)
	if err != nil {
		return fmt.Errorf("%s catalog database %s: %w", s.Name, s.JDBC, err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("%s catalog database %s does not answer: %w", s.Name, s.JDBC, err)
	}
	return nil
}

// CatalogOptions are Java Paimon's catalog options for a JDBC catalog on this server with the
// catalog lock on (metastore=jdbc, uri, jdbc.user, jdbc.password, catalog-key,
// lock.enabled=true); pass them to JavaOracle.WithCatalogOptions. Use a fresh catalogKey
// per test: tables and locks of other keys are invisible to it.
func (s JDBCServer) CatalogOptions(catalogKey string) map[string]string {
	return map[string]string{
		"metastore":     "jdbc",
		"uri":           s.JDBC,
		"jdbc.user":     s.User,
		"jdbc.password": s.Password,
		"catalog-key":   catalogKey,
		"lock.enabled":  "true",
	}
}
