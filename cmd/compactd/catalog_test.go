package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
)

// TestCommandsThroughAJDBCCatalog: with --catalog, `list` shows what the
// catalog registered, `compact` commits through it, a directory it did not
// register is not found, and the password (from the environment) appears
// in no output.
func TestCommandsThroughAJDBCCatalog(t *testing.T) {
	srv := interop.JDBCServers(t).Postgres
	dir := t.TempDir()
	bin := compactdBinary(t)
	wh := filepath.Join(dir, "wh")
	key := fmt.Sprintf("cli%d", rand.Int64())
	j := interop.Java(t).WithCatalogOptions(srv.CatalogOptions(key))
	var rows strings.Builder
	for c := 0; c < 6; c++ {
		fmt.Fprintf(&rows, `{"k":%d,"v":%d,"_commit":%d}`+"\n", c%2, c, c)
	}
	spec := map[string]any{
		"columns":     []map[string]string{{"name": "k", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "BIGINT"}},
		"primaryKeys": []string{"k"}, "bucket": 1, "options": map[string]string{"write-only": "true"},
	}
	j.Create(wh, "db.t", spec, []byte(rows.String()))
	// The same table in the warehouse, unknown to the catalog.
	interop.Java(t).Create(wh, "db.stray", spec, nil)

	compactd := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--catalog", srv.JDBC, "--catalog-option", "catalog-key=" + key,
			"--catalog-option", "jdbc.user=" + srv.User, "--catalog-option", "jdbc.password-env=COMPACTD_TEST_CATALOG_PW",
			"--catalog-option", "lock.enabled=true"}, args...)...)
		cmd.Env = append(cmd.Environ(), "COMPACTD_TEST_CATALOG_PW="+srv.Password)
		out, err := cmd.CombinedOutput()
		if srv.Password != "" && strings.Contains(string(out), "password="+srv.Password) {
			t.Errorf("compactd %v printed the password:\n%s", args, out)
		}
		return string(out), err
	}
	out, err := compactd("list", wh)
	if err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if !strings.Contains(out, "db.t\n") || strings.Contains(out, "db.stray") || !strings.Contains(out, "catalog-key "+key) {
		t.Errorf("list printed:\n%s\nwant db.t of catalog %s and not db.stray", out, key)
	}
	if out, err := compactd("compact", wh, "db.t", "--full"); err != nil {
		t.Fatalf("compact: %v\n%s", err, out)
	}
	tb, err := table.Open(context.Background(), fileio.NewLocal(), wh, "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := tb.LatestSnapshot(context.Background()); err != nil || s.CommitKind != table.CommitCompact {
		t.Fatalf("latest snapshot after compact: %+v, %v; want a COMPACT", s, err)
	}
	if out, err := compactd("compact", wh, "db.stray"); err == nil || !strings.Contains(out, "not registered") {
		t.Errorf("compact of an unregistered table: %v\n%s\nwant a not-registered error", err, out)
	}
	interop.DiffRows(t, "Java's read after the CLI's compaction",
		interop.CanonStrings(t, mustParse(t, `{"k":0,"v":4}`+"\n"+`{"k":1,"v":5}`+"\n")), interop.CanonStrings(t, j.Read(wh, "db.t")))
}

func mustParse(t *testing.T, jsonl string) []interop.Row {
	rows, err := interop.ParseRows([]byte(jsonl))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestCommandsThroughARESTCatalog: --catalog http://… lists the REST
// catalog's tables and compacts one through its commit endpoint; the token
// (from the environment) appears in no output.
func TestCommandsThroughARESTCatalog(t *testing.T) {
	e := interop.RequireREST(t)
	bin := compactdBinary(t)
	db := fmt.Sprintf("cli%d", rand.Int64N(1<<40))
	j := interop.Java(t).WithCatalogOptions(e.CatalogOptions())
	var rows strings.Builder
	for c := 0; c < 6; c++ {
		fmt.Fprintf(&rows, `{"k":%d,"v":%d,"_commit":%d}`+"\n", c%2, c, c)
	}
	j.Create(e.Warehouse, db+".t", map[string]any{
		"columns":     []map[string]string{{"name": "k", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "BIGINT"}},
		"primaryKeys": []string{"k"}, "bucket": 1, "options": map[string]string{"write-only": "true"},
	}, []byte(rows.String()))
	compactd := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--catalog", e.URI, "--catalog-option", "token-env=COMPACTD_TEST_REST_TOKEN"}, args...)...)
		cmd.Env = append(cmd.Environ(), "COMPACTD_TEST_REST_TOKEN="+e.Token)
		out, err := cmd.CombinedOutput()
		if strings.Contains(string(out), e.Token) {
			t.Errorf("compactd %v printed the token:\n%s", args, out)
		}
		return string(out), err
	}
	out, err := compactd("list", e.Warehouse)
	if err != nil || !strings.Contains(out, db+".t\n") {
		t.Fatalf("list: %v\n%s\nwant %s.t", err, out, db)
	}
	if out, err := compactd("compact", e.Warehouse, db+".t", "--full"); err != nil {
		t.Fatalf("compact: %v\n%s", err, out)
	}
	var kinds []string
	for _, s := range j.Snapshots(e.Warehouse, db+".t") {
		kinds = append(kinds, fmt.Sprint(s["commit_kind"]))
	}
	if len(kinds) != 7 || kinds[6] != "COMPACT" {
		t.Errorf("snapshots through the catalog are %v, want 6 APPENDs and compactd's COMPACT", kinds)
	}
	if out, err := compactd("rollback", e.Warehouse, db+".t", "--to-snapshot", "3"); err == nil || !strings.Contains(out, "REST catalog") {
		t.Errorf("rollback through the REST catalog: %v\n%s\nwant a refusal", err, out)
	}
	if n := len(j.Snapshots(e.Warehouse, db+".t")); n != 7 {
		t.Errorf("%d snapshots after the refused rollback, want 7", n)
	}
	interop.DiffRows(t, "Java's read after the CLI's compaction",
		interop.CanonStrings(t, mustParse(t, `{"k":0,"v":4}`+"\n"+`{"k":1,"v":5}`+"\n")), interop.CanonStrings(t, j.Read(e.Warehouse, db+".t")))
}
