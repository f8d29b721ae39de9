package jdbc

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Dialect is the SQL flavour of a JDBC URL's protocol, as Java's
// DistributedLockDialectFactory names them.
type Dialect string

const (
	Postgres Dialect = "postgresql"
	MySQL    Dialect = "mysql"
	// MariaDB is a jdbc:mariadb: URL. Java's JDBC catalog reads tables
	// through it but has no distributed lock for it (its dialect factory
	// throws), so writers that lock use jdbc:mysql: URLs for MariaDB.
	MariaDB Dialect = "mariadb"
)

// Conn is where a JDBC URL points, in Go's terms.
type Conn struct {
	Dialect Dialect
	Driver  string // database/sql driver name: "pgx" or "mysql"
	DSN     string // contains the password: never log it
	Display string // the URL without credentials, for logs and errors
}

// ParseURL turns Java's JDBC URL (jdbc:postgresql://host:port/db,
// jdbc:mysql://host:port/db, jdbc:mariadb://…) and credentials into a Go
// driver and DSN. User and password in the URL's query take effect when
// the arguments are empty, as the JDBC drivers let properties override
// them. A query parameter compactd does not translate is an error: a
// connection that silently drops (say) a TLS setting is not the writers'.
func ParseURL(raw, user, password string) (*Conn, error) {
	rest, ok := strings.CutPrefix(raw, "jdbc:")
	if !ok {
		return nil, fmt.Errorf("JDBC URL %q: want a jdbc: prefix", redact(raw))
	}
	proto, _, _ := strings.Cut(rest, ":")
	u, err := url.Parse(rest)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("JDBC URL %q: want jdbc:%s://host[:port]/database", redact(raw), proto)
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, fmt.Errorf("JDBC URL %q: want one database name after the host", redact(raw))
	}
	q := u.Query()
	take := func(k string) string {
		v := q.Get(k)
		q.Del(k)
		return v
	}
	if v := take("user"); user == "" {
		user = v
	}
	if v := take("password"); password == "" {
		password = v
	}
	display := fmt.Sprintf("jdbc:%s://%s/%s", proto, u.Host, db)
	c := &Conn{Display: display}
	switch Dialect(proto) {
	case Postgres:
		c.Dialect, c.Driver = Postgres, "pgx"
		dsn := url.URL{Scheme: "postgres", Host: u.Host, Path: "/" + db}
		if user != "" {
			dsn.User = url.UserPassword(user, password)
		}
		pq := url.Values{}
		if v := take("sslmode"); v != "" {
			pq.Set("sslmode", v)
		}
		if v := take("ssl"); v == "true" {
			pq.Set("sslmode", "require")
		} else if v != "" && v != "false" {
			return nil, fmt.Errorf("JDBC URL %s: ssl=%q: want true or false", display, v)
		}
		if v := take("connectTimeout"); v != "" {
			pq.Set("connect_timeout", v)
		}
		if v := take("currentSchema"); v != "" {
			pq.Set("search_path", v)
		}
		dsn.RawQuery = pq.Encode()
		c.DSN = dsn.String()
	case MySQL, MariaDB:
		c.Dialect, c.Driver = Dialect(proto), "mysql"
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = "3306"
		}
		mc := mysql.NewConfig()
		mc.User, mc.Passwd, mc.Net, mc.Addr, mc.DBName = user, password, "tcp", net.JoinHostPort(host, port), db
		switch v := take("useSSL") + take("sslMode"); strings.ToLower(v) {
		case "", "false", "disabled":
		case "true", "required":
			mc.TLSConfig = "true"
		default:
			return nil, fmt.Errorf("JDBC URL %s: TLS setting %q: compactd translates useSSL=true|false and sslMode=DISABLED|REQUIRED", display, v)
		}
		c.DSN = mc.FormatDSN()
	default:
		return nil, fmt.Errorf("JDBC URL %s: protocol %q: compactd's JDBC catalog supports postgresql, mysql and mariadb", display, proto)
	}
	for k := range q {
		return nil, fmt.Errorf("JDBC URL %s: parameter %q is not one compactd translates to its Go driver", display, k)
	}
	return c, nil
}

// redact drops a URL's query (where JDBC URLs carry passwords) for errors.
func redact(raw string) string {
	s, _, _ := strings.Cut(raw, "?")
	return s
}
