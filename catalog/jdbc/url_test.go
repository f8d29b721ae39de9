package jdbc

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		url, user, pass      string
		dialect              Dialect
		dsn, display, errHas string
	}{
		{url: "jdbc:postgresql://127.0.0.1:5432/paimon", user: "u", pass: "p@ss", dialect: Postgres,
			dsn: "postgres://u:p%40ss@127.0.0.1:5432/paimon", display: "jdbc:postgresql://127.0.0.1:5432/paimon"},
		{url: "jdbc:postgresql://db.example/paimon?sslmode=verify-full&user=x&password=secret", dialect: Postgres,
			dsn: "postgres://x:secret@db.example/paimon?sslmode=verify-full", display: "jdbc:postgresql://db.example/paimon"},
		{url: "jdbc:postgresql://h/paimon?ssl=true", dialect: Postgres, dsn: "postgres://h/paimon?sslmode=require"},
		{url: "jdbc:mysql://127.0.0.1:3306/paimon", user: "u", pass: "pw-9", dialect: MySQL,
			dsn: "u:pw-9@tcp(127.0.0.1:3306)/paimon", display: "jdbc:mysql://127.0.0.1:3306/paimon"},
		{url: "jdbc:mysql://h/paimon?useSSL=false", user: "u", dialect: MySQL, dsn: "u@tcp(h:3306)/paimon"},
		{url: "jdbc:mariadb://h:3307/paimon", user: "u", dialect: MariaDB, dsn: "u@tcp(h:3307)/paimon"},
		{url: "postgresql://h/paimon", errHas: "want a jdbc: prefix"},
		{url: "jdbc:sqlite:/tmp/x.db", errHas: "want jdbc:sqlite://host"},
		{url: "jdbc:oracle://h/db", errHas: `protocol "oracle"`},
		{url: "jdbc:postgresql://h/", errHas: "one database name"},
		{url: "jdbc:postgresql://h/paimon?tcpKeepAlive=true&password=hunter2", errHas: `parameter "tcpKeepAlive"`},
		{url: "jdbc:mysql://h/paimon?useSSL=maybe", errHas: "TLS setting"},
	} {
		got, err := ParseURL(c.url, c.user, c.pass)
		if c.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("%s: error %v, want one containing %q", c.url, err, c.errHas)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: error %q shows the password", c.url, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		if got.Dialect != c.dialect || got.DSN != c.dsn {
			t.Errorf("%s: dialect %s dsn %q, want %s %q", c.url, got.Dialect, got.DSN, c.dialect, c.dsn)
		}
		if c.display != "" && got.Display != c.display {
			t.Errorf("%s: display %q, want %q", c.url, got.Display, c.display)
		}
		if strings.Contains(got.Display, "secret") || (c.pass != "" && strings.Contains(got.Display, c.pass)) {
			t.Errorf("%s: display %q shows the password", c.url, got.Display)
		}
	}
}
