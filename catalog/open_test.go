package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

func TestOpenRefusesWhatItCannotHonour(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		opts   Options
		errHas string
	}{
		{Options{"metastore": "hive", "uri": "thrift://h:9083", "warehouse": "/w"}, "metastore=hive"},
		{Options{"metastore": "glue", "warehouse": "/w"}, `metastore="glue"`},
		{Options{"metastore": "jdbc", "uri": "jdbc:postgresql://h/db", "warehouse": "/w", "lock.type": "zookeeper"}, "lock.type"},
		{Options{"metastore": "jdbc", "uri": "jdbc:postgresql://h/db", "warehouse": "/w", "dlf.region": "x"}, "dlf.region"},
		{Options{"metastore": "jdbc", "uri": "jdbc:postgresql://h/db", "warehouse": "/w", "lock.enabled": "yes"}, "lock.enabled"},
		{Options{"metastore": "jdbc", "uri": "jdbc:postgresql://h/db", "warehouse": "/w", "lock-acquire-timeout": "soon"}, "lock-acquire-timeout"},
		{Options{"metastore": "jdbc", "uri": "jdbc:postgresql://h/db", "warehouse": "/w", "jdbc.password": "a", "jdbc.password-env": "B"}, "only one of"},
		{Options{"metastore": "jdbc", "uri": "jdbc:postgresql://h/db", "warehouse": "/w", "jdbc.password-env": "COMPACTD_TEST_UNSET_VAR"}, "not set"},
		{Options{"metastore": "jdbc", "uri": "jdbc:postgresql://h/db"}, "no warehouse"},
		{Options{"metastore": "jdbc", "uri": "jdbc:sqlserver://h/db", "warehouse": "/w"}, "sqlserver"},
		{Options{}, "no warehouse"},
	} {
		_, err := Open(ctx, c.opts, nil)
		if err == nil || !strings.Contains(err.Error(), c.errHas) {
			t.Errorf("%v: error %v, want one containing %q", c.opts, err, c.errHas)
		}
	}
}

func TestSecretFromFileOrEnvironment(t *testing.T) {
	f := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(f, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COMPACTD_TEST_PW", "from-env")
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{"jdbc.password": "plain"}, "plain"},
		{Options{"jdbc.password-file": f}, "s3cret"},
		{Options{"jdbc.password-env": "COMPACTD_TEST_PW"}, "from-env"},
		{Options{}, ""},
	} {
		got, err := c.opts.Secret("jdbc.password", "jdbc.password-file", "jdbc.password-env")
		if err != nil || got != c.want {
			t.Errorf("%v: %q, %v; want %q", c.opts, got, err, c.want)
		}
	}
}

func TestFileSystemCatalogListsTheWarehouse(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	if err := os.MkdirAll(filepath.Join(wh, "db.db", "t", "schema"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, Options{"warehouse": wh}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dbs, err := c.ListDatabases(ctx)
	if err != nil || len(dbs) != 1 || dbs[0] != "db" {
		t.Fatalf("databases %v, %v; want [db]", dbs, err)
	}
	if c.Name() != wh {
		t.Errorf("name %q, want the warehouse %q", c.Name(), wh)
	}
}

func TestConfineRefusesTablesOutsideTheRoot(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	fields := table.RowType{{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}}}
	s, err := table.NewTableSchema(0, fields, 0, nil, []string{"k"}, map[string]string{"bucket": "1"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := write.CreateTable(ctx, fileio.NewLocal(), wh, "db", "t", s); err != nil {
		t.Fatal(err)
	}
	fs := &FileSystem{FIO: fileio.NewLocal(), Warehouse: wh}
	if _, err := Confine(fs, fileio.NewLocal(), wh).OpenTable(ctx, "db", "t"); err != nil {
		t.Fatalf("a table inside the root: %v", err)
	}
	other := t.TempDir()
	if _, err := Confine(fs, fileio.NewLocal(), other).OpenTable(ctx, "db", "t"); err == nil || !strings.Contains(err.Error(), "outside the warehouse") {
		t.Fatalf("a table outside the root: %v, want a refusal", err)
	}
}
