package interop

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The JDBC-catalog side of issue 16's proofs: Java Paimon's verbs through a JDBC catalog with
// its lock, on PostgreSQL and MariaDB (scripts/db-servers.sh), and the lock-hold verb.

var jdbcSpec = map[string]any{
	"columns":     []map[string]string{{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "v", "type": "STRING"}},
	"primaryKeys": []string{"id"},
	"bucket":      2,
	"options":     map[string]string{"write-only": "true"},
}

// catalogKey is a fresh catalog key: each test sees only its own tables and locks.
func catalogKey() string {
	return "t" + strings.ReplaceAll(uuid.NewString()[:13], "-", "")
}

// s3Warehouse returns a fresh s3:// warehouse on the loopback server, or "" (skipping the
// caller's S3 case) when none is configured and COMPACTD_REQUIRE_S3 is not 1.
func s3Warehouse(t *testing.T, what string) string {
	t.Helper()
	ep := os.Getenv("COMPACTD_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("COMPACTD_REQUIRE_S3") == "1" {
			t.Fatal(`COMPACTD_REQUIRE_S3=1 but COMPACTD_TEST_S3_ENDPOINT is not set; run: eval "$(scripts/s3-server.sh start)"`)
		}
		t.Skip(`S3 case needs COMPACTD_TEST_S3_ENDPOINT; run: eval "$(scripts/s3-server.sh start)"`)
	}
	bucket := os.Getenv("COMPACTD_TEST_S3_BUCKET")
	if bucket == "" {
		bucket = "compactd-test"
	}
	t.Setenv("COMPACTD_S3_ENDPOINT", ep) // the Java oracle's paimon-s3 endpoint
	return "s3://" + bucket + "/interop/" + what + "-" + uuid.NewString()[:8]
}

// catalogTables lists the tables the JDBC catalog registered under key.
func catalogTables(t *testing.T, db *sql.DB, s JDBCServer, key string) []string {
	t.Helper()
	q := "SELECT database_name, table_name FROM paimon_tables WHERE catalog_key = " + placeholder(s, 1)
	rows, err := db.Query(q, key)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d, tb string
		if err := rows.Scan(&d, &tb); err != nil {
			t.Fatal(err)
		}
		out = append(out, d+"."+tb)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// lockRows returns the lock rows of lockID in Java's lock table.
func lockRows(t *testing.T, db *sql.DB, s JDBCServer, lockID string) int {
	t.Helper()
	var n int
	q := "SELECT COUNT(*) FROM paimon_distributed_locks WHERE lock_id = " + placeholder(s, 1)
	if err := db.QueryRow(q, lockID).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func placeholder(s JDBCServer, i int) string {
	if s.Driver == "pgx" {
		return fmt.Sprintf("$%d", i)
	}
	return "?"
}

type commitKey struct {
	User string
	ID   int64
}

// snapshotCommits returns (commit user, identifier) of snapshots 1..n, checking the ids run
// without gaps.
func snapshotCommits(t *testing.T, j *JavaOracle, warehouse, table string) []commitKey {
	t.Helper()
	return commitsOf(t, j.Snapshots(warehouse, table))
}

func batchRows(t *testing.T, r BatchResult) []Row {
	t.Helper()
	var b []byte
	for _, l := range r.Lines {
		b = append(append(b, l...), '\n')
	}
	rows, err := ParseRows(b)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// commitsOf returns (commit user, identifier) of $snapshots rows, checking the ids run 1..n.
func commitsOf(t *testing.T, snapshots []Row) []commitKey {
	t.Helper()
	var out []commitKey
	for i, r := range snapshots {
		if id := r["snapshot_id"].(int64); id != int64(i+1) {
			t.Fatalf("snapshot %d at position %d", id, i)
		}
		out = append(out, commitKey{r["commit_user"].(string), r["commit_identifier"].(int64)})
	}
	return out
}

// TestJDBCCatalogVerbs: create, write (two commit users), read, compact and snapshots work
// through Java Paimon's JDBC catalog with its lock on both servers, on a local and on an S3
// warehouse, and the catalog database lists the table under the catalog key.
func TestJDBCCatalogVerbs(t *testing.T) {
	env := JDBCServers(t)
	base := Java(t)
	for _, s := range env.Servers() {
		for _, store := range []string{"local", "s3"} {
			t.Run(s.Name+"/"+store, func(t *testing.T) {
				wh := filepath.Join(t.TempDir(), "wh")
				if store == "s3" {
					wh = s3Warehouse(t, "jdbc-verbs")
				}
				key := catalogKey()
				j := base.WithCatalogOptions(s.CatalogOptions(key))
				rows := `{"id":1,"v":"a","_commit":1}
{"id":2,"v":"b","_commit":2}
{"id":3,"v":"c","_user":"u2","_commit":1}
{"id":1,"v":"a2","_user":"u2","_commit":2}
`
				j.Create(wh, "db.t", jdbcSpec, []byte(rows))
				if got := catalogTables(t, s.Open(t), s, key); !reflect.DeepEqual(got, []string{"db.t"}) {
					t.Fatalf("catalog %s lists %v, want [db.t]", key, got)
				}
				// The rest in one JVM: batch requests get the catalog options too.
				flags := map[string]string{"warehouse": wh, "table": "db.t"}
				res, err := j.Batch(context.Background(), []BatchRequest{
					{Verb: "read", Flags: flags}, {Verb: "compact", Flags: flags},
					{Verb: "read", Flags: flags}, {Verb: "snapshots", Flags: flags},
				})
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range res {
					if r.Err != nil {
						t.Fatalf("batch request %d: %v", i, r.Err)
					}
				}
				want := []Row{{"id": int64(1), "v": "a2"}, {"id": int64(2), "v": "b"}, {"id": int64(3), "v": "c"}}
				if got := batchRows(t, res[0]); !reflect.DeepEqual(got, want) {
					t.Fatalf("read %v, want %v", got, want)
				}
				if got := batchRows(t, res[2]); !reflect.DeepEqual(got, want) {
					t.Fatalf("read after compaction %v, want %v", got, want)
				}
				// Each user's commit is its own snapshot, in script order.
				wantCommits := []commitKey{{"interop", 1}, {"interop", 2}, {"u2", 3}, {"u2", 4}, {"interop-compact", 5}}
				if got := commitsOf(t, batchRows(t, res[3])); !reflect.DeepEqual(got, wantCommits) {
					t.Fatalf("snapshots %v, want %v", got, wantCommits)
				}
			})
		}
	}
}

// snapshotWithID returns snapshot src's JSON with id (and commit user) replaced: a snapshot
// that adds nothing, for lock-hold to write.
func snapshotWithID(t *testing.T, src string, id int64, user string) []byte {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = id
	m["commitUser"] = user
	m["commitIdentifier"] = id
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLockHoldVerbHoldsJavasOwnLock: lock-hold takes the lock Java's commits take (its row
// sits in paimon_distributed_locks while paused, under catalog-key.db.t), a Java writer that
// reached its commit waits for it, the holder writes its snapshot and LATEST only when the
// snapshot did not exist, and releases the lock.
func TestLockHoldVerbHoldsJavasOwnLock(t *testing.T) {
	env := JDBCServers(t)
	base := Java(t)
	for _, s := range env.Servers() {
		t.Run(s.Name, func(t *testing.T) {
			wh := filepath.Join(t.TempDir(), "wh")
			key := catalogKey()
			lockID := key + ".db.t"
			j := base.WithCatalogOptions(s.CatalogOptions(key))
			db := s.Open(t)
			j.Create(wh, "db.t", jdbcSpec, []byte(`{"id":1,"v":"a"}`+"\n"))
			tdir := filepath.Join(wh, "db.db", "t")
			snap := func(id int64) string { return filepath.Join(tdir, "snapshot", fmt.Sprintf("snapshot-%d", id)) }
			snap2 := snapshotWithID(t, snap(1), 2, "lock-holder")

			// Snapshot 1 exists: the holder checks, finds it, writes nothing.
			h := j.StartLockHolder(wh, "db.t", 1, snap2)
			if exists := h.Locked(); !exists {
				t.Fatal("lock-hold says snapshot 1 does not exist")
			}
			if n := lockRows(t, db, s, lockID); n != 1 {
				t.Fatalf("%d lock rows for %s while held, want 1", n, lockID)
			}
			h.Proceed()
			if h.Wait() {
				t.Fatal("lock-hold overwrote the existing snapshot 1")
			}
			if n := lockRows(t, db, s, lockID); n != 0 {
				t.Fatalf("%d lock rows for %s after release, want 0", n, lockID)
			}

			// Snapshot 2 does not exist: while the holder is paused a Java writer gets as far
			// as its commit (its manifest list is written) and must then wait for the lock.
			h = j.StartLockHolder(wh, "db.t", 2, snap2)
			if exists := h.Locked(); exists {
				t.Fatal("lock-hold says snapshot 2 exists")
			}
			if n := lockRows(t, db, s, lockID); n != 1 {
				t.Fatalf("%d lock rows for %s while held, want 1", n, lockID)
			}
			before := manifestLists(t, tdir)
			writerDone := make(chan error, 1)
			go func() {
				_, err := j.RunWriters(context.Background(), []LoopWriter{{Warehouse: wh, Table: "db.t", CommitUser: "java-writer", Rows: []byte(`{"id":2,"v":"b"}` + "\n")}})
				writerDone <- err
			}()
			deadline := time.Now().Add(2 * time.Minute)
			for len(manifestLists(t, tdir)) == len(before) {
				if time.Now().After(deadline) {
					t.Fatal("the Java writer wrote no manifest list in 2 minutes")
				}
				select {
				case err := <-writerDone:
					t.Fatalf("the Java writer ended before its commit: %v", err)
				case <-time.After(100 * time.Millisecond):
				}
			}
			// Its snapshot commit is next: give it ample time to race (it would write
			// snapshot-2 at once without the lock).
			select {
			case err := <-writerDone:
				t.Fatalf("the Java writer committed while lock-hold held the lock (err %v)", err)
			case <-time.After(5 * time.Second):
			}
			if _, err := os.Stat(snap(2)); !os.IsNotExist(err) {
				t.Fatalf("snapshot-2 appeared while the lock was held: %v", err)
			}
			h.Proceed()
			if !h.Wait() {
				t.Fatal("lock-hold did not write snapshot 2")
			}
			if err := <-writerDone; err != nil {
				t.Fatal(err)
			}
			if n := lockRows(t, db, s, lockID); n != 0 {
				t.Fatalf("%d lock rows for %s after both, want 0", n, lockID)
			}
			want := []commitKey{{"interop", 1}, {"lock-holder", 2}, {"java-writer", 2}}
			if got := snapshotCommits(t, j, wh, "db.t"); !reflect.DeepEqual(got, want) {
				t.Fatalf("snapshots %v, want %v", got, want)
			}
			got, err := os.ReadFile(snap(2))
			if err != nil || string(got) != string(snap2) {
				t.Fatalf("snapshot-2 is not the holder's bytes (%v)", err)
			}
			if hint, _ := os.ReadFile(filepath.Join(tdir, "snapshot", "LATEST")); string(hint) != "3" {
				t.Fatalf("LATEST = %q, want 3", hint)
			}
			wantRows := []Row{{"id": int64(1), "v": "a"}, {"id": int64(2), "v": "b"}}
			if rows := j.Read(wh, "db.t"); !reflect.DeepEqual(rows, wantRows) {
				t.Fatalf("read %v, want %v", rows, wantRows)
			}
		})
	}
}

func manifestLists(t *testing.T, tableDir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(tableDir, "manifest", "manifest-list-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConcurrentJavaWritersThroughJDBCLock: three writers in three JVMs with their own commit
// users commit in loops (two for 3 passes, one for 8 s) through the JDBC catalog's lock on the
// S3 server; every commit each reports is exactly one snapshot, none is lost or overwritten,
// and Java reads every row.
func TestConcurrentJavaWritersThroughJDBCLock(t *testing.T) {
	env := JDBCServers(t)
	base := Java(t)
	for _, s := range env.Servers() {
		t.Run(s.Name, func(t *testing.T) {
			wh := s3Warehouse(t, "jdbc-writers")
			j := base.WithCatalogOptions(s.CatalogOptions(catalogKey()))
			j.Create(wh, "db.t", jdbcSpec, nil)
			var writers []LoopWriter
			var want []Row
			for w := range 3 {
				var rows strings.Builder
				for c := range 2 {
					for k := range 2 {
						id := int64(w*100 + c*10 + k)
						fmt.Fprintf(&rows, `{"id":%d,"v":"w%d","_commit":%d}`+"\n", id, w, c)
						want = append(want, Row{"id": id, "v": fmt.Sprintf("w%d", w)})
					}
				}
				lw := LoopWriter{Warehouse: wh, Table: "db.t", CommitUser: fmt.Sprintf("writer-%d", w), Rows: []byte(rows.String()), Repeat: 3}
				if w == 2 {
					// The last one loops for a duration instead (passes of 2 commits).
					lw.Repeat, lw.Duration = 0, 8*time.Second
				}
				writers = append(writers, lw)
			}
			res, err := j.RunWriters(context.Background(), writers)
			if err != nil {
				t.Fatal(err)
			}
			var reported []commitKey
			for _, r := range res {
				if n := len(r.Identifiers); r.User == "writer-2" && (n < 2 || n%2 != 0) || r.User != "writer-2" && n != 6 {
					t.Errorf("%s reported %d commits, want 6 (3 passes x 2), or whole passes for writer-2", r.User, n)
				}
				t.Logf("%s: %d commits", r.User, len(r.Identifiers))
				for _, id := range r.Identifiers {
					reported = append(reported, commitKey{r.User, id})
				}
			}
			got := snapshotCommits(t, j, wh, "db.t")
			cmp := func(a, b commitKey) int {
				if c := strings.Compare(a.User, b.User); c != 0 {
					return c
				}
				return int(a.ID - b.ID)
			}
			slices.SortFunc(got, cmp)
			slices.SortFunc(reported, cmp)
			if !reflect.DeepEqual(got, reported) {
				t.Fatalf("snapshots' (user, identifier) %v, writers reported %v", got, reported)
			}
			slices.SortFunc(want, func(a, b Row) int { return int(a["id"].(int64) - b["id"].(int64)) })
			if rows := j.Read(wh, "db.t"); !reflect.DeepEqual(rows, want) {
				t.Fatalf("read %v, want %v", rows, want)
			}
		})
	}
}
