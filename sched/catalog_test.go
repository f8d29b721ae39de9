package sched_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// TestDaemonWorksThroughAJDBCCatalog: a warehouse with a catalog block is
// discovered through the catalog (a table directory the catalog did not
// register is no table of its), and its compactions commit through the
// catalog's lock; Java reads the rows after.
func TestDaemonWorksThroughAJDBCCatalog(t *testing.T) {
	env := interop.JDBCServers(t)
	for _, srv := range env.Servers() {
		t.Run(srv.Name, func(t *testing.T) {
			wh := t.TempDir()
			copts := srv.CatalogOptions(fmt.Sprintf("daemon%d", rand.Int64()))
			j := interop.Java(t).WithCatalogOptions(copts)
			createJavaTable(t, j, wh)
			// A table directory the catalog never registered.
			createTable(t, wh, "stray", nil)

			cfg := config(t, wh, map[string]string{"compact.schedule": "@every 1s"})
			cfg.Warehouses[0].Catalog = maps.Clone(copts)
			s, stop := start(t, cfg, sched.Options{})
			waitFor(t, "a compaction of db.t", 60*time.Second, func() bool {
				ts, ok := tableStatus(s, "db.t")
				return ok && successes(ts, policy.Compact) > 0
			})
			if _, ok := tableStatus(s, "db.stray"); ok {
				t.Error("the daemon watches db.stray, which the catalog does not list")
			}
			st := s.Status()
			if len(st.Warehouses) != 1 || !strings.Contains(st.Warehouses[0].Catalog, "catalog-key "+copts["catalog-key"]) ||
				strings.Contains(fmt.Sprint(st), srv.Password+"@") {
				t.Errorf("/status warehouses %+v: want the JDBC catalog named, without its password", st.Warehouses)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			tb, err := table.Open(context.Background(), fileio.NewLocal(), wh, "db", "t")
			if err != nil {
				t.Fatal(err)
			}
			latest, err := tb.LatestSnapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if latest.CommitKind != table.CommitCompact {
				t.Errorf("latest snapshot %d is %s, want the daemon's COMPACT", latest.ID, latest.CommitKind)
			}
			checkJavaTable(t, j, wh)
		})
	}
}

// TestDaemonWorksThroughARESTCatalog: the daemon lists a REST catalog's
// tables and compacts them through its commit endpoint, with the tables
// confined to the warehouse path.
func TestDaemonWorksThroughARESTCatalog(t *testing.T) {
	srv := interop.StartRESTServer(t)
	j := interop.Java(t).WithCatalogOptions(srv.CatalogOptions())
	createJavaTable(t, j, srv.Warehouse)

	cfg := config(t, srv.Dir, map[string]string{"compact.schedule": "@every 1s"})
	cfg.Warehouses[0].Catalog = map[string]string{"metastore": "rest", "uri": srv.URI, "token": srv.Token, "warehouse": srv.Warehouse}
	s, stop := start(t, cfg, sched.Options{})
	waitFor(t, "a compaction of db.t", 60*time.Second, func() bool {
		ts, ok := tableStatus(s, "db.t")
		return ok && successes(ts, policy.Compact) > 0
	})
	if body := get(t, s.Handler(), "/status"); strings.Contains(body, srv.Token) || !strings.Contains(body, "rest:") {
		t.Errorf("/status shows the token or not the REST catalog:\n%s", body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	snaps := j.Snapshots(srv.Warehouse, "db.t")
	if last := snaps[len(snaps)-1]; fmt.Sprint(last["commit_kind"]) != "COMPACT" {
		t.Errorf("latest snapshot through the catalog is %v, want the daemon's COMPACT", last)
	}
	checkJavaTable(t, j, srv.Warehouse)
}

// createJavaTable writes db.t (k BIGINT key, v BIGINT; one bucket,
// write-only) with Java: seven commits over keys 0..9, enough level-0
// runs for a compaction.
func createJavaTable(t *testing.T, j *interop.JavaOracle, wh string) {
	t.Helper()
	var rows strings.Builder
	for c := 0; c < 7; c++ {
		for k := 0; k < 10; k++ {
			fmt.Fprintf(&rows, `{"k":%d,"v":%d,"_commit":%d}`+"\n", k, c*10+k, c)
		}
	}
	j.Create(wh, "db.t", map[string]any{
		"columns":     []map[string]string{{"name": "k", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "BIGINT"}},
		"primaryKeys": []string{"k"}, "bucket": 1, "options": map[string]string{"write-only": "true"},
	}, []byte(rows.String()))
}

// checkJavaTable checks that Java reads createJavaTable's last commit.
func checkJavaTable(t *testing.T, j *interop.JavaOracle, wh string) {
	t.Helper()
	var want strings.Builder
	for k := 0; k < 10; k++ {
		fmt.Fprintf(&want, `{"k":%d,"v":%d}`+"\n", k, 60+k)
	}
	wantRows, err := interop.ParseRows([]byte(want.String()))
	if err != nil {
		t.Fatal(err)
	}
	interop.DiffRows(t, "Java's read after the daemon's compaction", interop.CanonStrings(t, wantRows), interop.CanonStrings(t, j.Read(wh, "db.t")))
}
