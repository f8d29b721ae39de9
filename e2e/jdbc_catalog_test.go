package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/compactd/compactd/catalog"
	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// The proofs of compactd beside Java writers that commit through a
// catalog: Paimon's JDBC catalog with its distributed lock, on the
// loopback S3 server (where Java's publish is check-then-rename and only
// the lock keeps two committers from overwriting each other), against the
// real PostgreSQL and MariaDB of scripts/db-servers.sh.

// soakFor is how long the writers of a soak commit: COMPACTD_CATALOG_SOAK
// (a Go duration) or 40s: with the table's setup and reads about 90 s a
// catalog on this 2-core machine, the servers' soaks in parallel.
func soakFor(t *testing.T) time.Duration {
	if v := os.Getenv("COMPACTD_CATALOG_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("COMPACTD_CATALOG_SOAK=%q: %v", v, err)
		}
		return d
	}
	return 40 * time.Second
}

// wideSpec is the partial-update wide table compactd exists for: each of
// three write-only writers owns one column and writes it for every key.
func wideSpec(buckets int) map[string]any {
	return map[string]any{
		"columns": []map[string]string{
			{"name": "k", "type": "BIGINT NOT NULL"},
			{"name": "c0", "type": "BIGINT"}, {"name": "c1", "type": "BIGINT"}, {"name": "c2", "type": "BIGINT"},
		},
		"primaryKeys": []string{"k"},
		"bucket":      buckets,
		"options": map[string]string{
			"merge-engine": "partial-update", "write-only": "true",
			// Java's own retries: the lock serialises the three writers
			// and compactd, so a writer's commit may wait behind all three.
			"commit.max-retries": "100",
			// Kept until the test's expiry decides: the writers must not
			// expire what the test checks.
			"snapshot.num-retained.min": "1000", "snapshot.num-retained.max": "1000",
		},
	}
}

// wideRows is writer w's script: column c<w> of keys 0..keys-1, in
// commits of perCommit rows. Every pass writes the same values, so the
// table's rows after any number of passes are those of one pass of each.
func wideRows(w, keys, perCommit int) []byte {
	var b strings.Builder
	for k := 0; k < keys; k++ {
		fmt.Fprintf(&b, `{"k":%d,"c%d":%d,"_commit":%d}`+"\n", k, w, k*10+w, k/perCommit)
	}
	return []byte(b.String())
}

func wideWant(keys int) []string {
	out := make([]string, keys)
	for k := 0; k < keys; k++ {
		out[k] = fmt.Sprintf(`{"c0":%d,"c1":%d,"c2":%d,"k":%d}`, k*10, k*10+1, k*10+2, k)
	}
	slices.Sort(out) // as canon sorts
	return out
}

// snapshotWatch records every snapshot of a table as it appears, and
// reports any snapshot whose file changed while it existed: an overwrite.
type snapshotWatch struct {
	mu     sync.Mutex
	seen   map[int64][]byte
	errs   []string
	stop   chan struct{}
	done   chan struct{}
	tb     *table.Table
	passes int
}

func watchSnapshots(tb *table.Table) *snapshotWatch {
	w := &snapshotWatch{seen: map[int64][]byte{}, stop: make(chan struct{}), done: make(chan struct{}), tb: tb}
	go func() {
		defer close(w.done)
		for {
			w.poll()
			select {
			case <-w.stop:
				w.poll()
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *snapshotWatch) poll() {
	ctx := context.Background()
	ids, err := w.tb.SnapshotIDs(ctx)
	if err != nil {
		return // a listing racing an expiry; the next poll sees it settled
	}
	for _, id := range ids {
		data, err := fileio.ReadFile(ctx, w.tb.FileIO(), w.tb.Paths().SnapshotPath(id))
		if err != nil {
			continue // expired in between
		}
		w.mu.Lock()
		if old, ok := w.seen[id]; ok && string(old) != string(data) {
			w.errs = append(w.errs, fmt.Sprintf("snapshot %d changed while it existed:\n  was %s\n  now %s", id, old, data))
		} else if !ok {
			w.seen[id] = data
		}
		w.mu.Unlock()
	}
	w.passes++
}

// finish stops the watch and returns each snapshot seen.
func (w *snapshotWatch) finish(t *testing.T) map[int64]*table.Snapshot {
	close(w.stop)
	<-w.done
	for _, e := range w.errs {
		t.Error(e)
	}
	out := map[int64]*table.Snapshot{}
	for id, data := range w.seen {
		var s table.Snapshot
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("snapshot %d: %v", id, err)
		}
		out[id] = &s
	}
	return out
}

// checkCommits checks that every Java commit is a snapshot of its user
// and identifier, that no (user, identifier) was published twice, and
// that compactd's snapshots are its own COMPACTs.
func checkCommits(t *testing.T, seen map[int64]*table.Snapshot, writers []interop.LoopResult) (compacts int) {
	t.Helper()
	type commit struct {
		user string
		id   int64
	}
	at := map[commit]int64{}
	for id, s := range seen {
		c := commit{s.CommitUser, s.CommitIdentifier}
		if prev, dup := at[c]; dup && s.CommitKind != table.CommitCompact {
			t.Errorf("commit %s/%d published twice: snapshots %d and %d", c.user, c.id, prev, id)
		}
		at[c] = id
		if s.CommitKind == table.CommitCompact {
			compacts++
		}
	}
	for _, w := range writers {
		if len(w.Identifiers) < 3 {
			t.Errorf("writer %s made only %d commits", w.User, len(w.Identifiers))
		}
		for _, id := range w.Identifiers {
			if _, ok := at[commit{w.User, id}]; !ok {
				t.Errorf("writer %s's commit %d is not a snapshot: lost or overwritten", w.User, id)
			}
		}
	}
	return compacts
}

// jdbcCase is one test's table on S3 behind a JDBC catalog of its own
// key: the Java oracle and compactd's catalog both go through it.
type jdbcCase struct {
	j     *interop.JavaOracle
	store *fileio.S3
	wh    string
	cat   catalog.Catalog
}

// newJDBCCase makes the warehouse, creates db.t (spec, rows) with Java
// through the catalog and opens compactd's catalog on it.
func newJDBCCase(t *testing.T, srv interop.JDBCServer, s3e s3Env, what string, spec map[string]any, rows []byte) *jdbcCase {
	t.Helper()
	key := what + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	copts := srv.CatalogOptions(key)
	c := &jdbcCase{j: interop.Java(t).WithCatalogOptions(copts), store: s3e.store(t, s3e.endpoint)}
	c.wh = s3e.newWarehouse(t, c.store, what+"-"+srv.Name)
	c.j.Create(c.wh, "db.t", spec, rows)
	cat, err := catalog.Open(context.Background(), catalog.Options(withWarehouse(copts, c.wh)), func(ctx context.Context, p string) (fileio.FileIO, error) { return c.store, nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	c.cat = cat
	return c
}

func (c *jdbcCase) open(t *testing.T) *table.Table {
	t.Helper()
	tb, err := c.cat.OpenTable(context.Background(), "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	if !tb.HasCatalogCommit() {
		t.Fatal("the table does not commit through the catalog lock")
	}
	return tb
}

// TestJavaWritersThroughTheJDBCLockBesideCompactd: three Java writers
// commit in loops through the JDBC catalog with its lock on S3 while
// compactd compacts and expires the same table through the same catalog.
func TestJavaWritersThroughTheJDBCLockBesideCompactd(t *testing.T) {
	env := interop.JDBCServers(t)
	s3e := requireS3(t)
	for _, srv := range env.Servers() {
		t.Run(srv.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := newJDBCCase(t, srv, s3e, "soak", wideSpec(2), nil)
			j, wh, cat := c.j, c.wh, c.cat
			tb := c.open(t)
			watch := watchSnapshots(tb)

			const keys, perCommit = 300, 50
			var writers []interop.LoopWriter
			for w := 0; w < 3; w++ {
				writers = append(writers, interop.LoopWriter{Warehouse: wh, Table: "db.t", CommitUser: fmt.Sprintf("java-%d", w),
					Rows: wideRows(w, keys, perCommit), Duration: soakFor(t)})
			}
			var res []interop.LoopResult
			var werr error
			done := make(chan struct{})
			go func() {
				defer close(done)
				res, werr = j.RunWriters(ctx, writers)
			}()
			// Expiry by age, as tables are configured beside writers: a
			// Java commit re-reads the snapshots since the one it started
			// from, and fails if they were expired under it (as it fails
			// beside Java's own expiry).
			eo := expire.Options{RetainMin: 10, RetainMax: 100000, TimeRetained: 30 * time.Second, Limit: 10}
			runs, expired := 0, 0
		loop:
			for {
				select {
				case <-done:
					break loop
				default:
				}
				tb, err := cat.OpenTable(ctx, "db", "t")
				if err == nil {
					_, err = tb.LatestSnapshot(ctx)
				}
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				if _, err := compact.Run(ctx, tb, compact.Options{Full: runs%3 == 2}); err != nil {
					t.Fatalf("compaction %d: %v", runs, err)
				}
				runs++
				rep, err := expire.Run(ctx, reach.TableSource(tb), expire.RunOptions{Options: eo, Now: time.Now()})
				if err != nil {
					t.Fatalf("expire after compaction %d: %v", runs, err)
				}
				expired += len(rep.Snapshots)
				time.Sleep(300 * time.Millisecond) // a schedule, not a busy loop
			}
			if werr != nil {
				t.Fatalf("Java writers: %v", werr)
			}
			seen := watch.finish(t)
			compacts := checkCommits(t, seen, res)
			if compacts < 3 {
				t.Errorf("only %d COMPACT snapshots while the writers committed", compacts)
			}
			commits := 0
			for _, r := range res {
				commits += len(r.Identifiers)
			}
			t.Logf("%s: %d Java commits by 3 writers, %d compactd runs (%d COMPACT snapshots), %d snapshots expired, %d snapshots watched",
				srv.Name, commits, runs, compacts, expired, len(seen))
			diffRows(t, "Java's read of the table", wideWant(keys), canon(t, j.Read(wh, "db.t")))
		})
	}
}

func withWarehouse(o map[string]string, wh string) map[string]string {
	c := maps.Clone(o)
	c["warehouse"] = wh
	return c
}

// TestCompactdWaitsForAJavaWriterInsideTheLock is the dangerous
// interleaving, with Java's own lock: a Java commit holds the catalog
// lock and has found snapshot N free, and is paused before writing it,
// while compactd wants to publish N. compactd must wait for the lock and
// then publish N+1, leaving N as Java wrote it. Without the lock (the
// file system's publish) compactd would take N and Java's rename would
// then overwrite it.
func TestCompactdWaitsForAJavaWriterInsideTheLock(t *testing.T) {
	env := interop.JDBCServers(t)
	s3e := requireS3(t)
	for _, srv := range env.Servers() {
		t.Run(srv.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var rows strings.Builder
			for c := 0; c < 6; c++ {
				for k := 0; k < 20; k++ {
					fmt.Fprintf(&rows, `{"k":%d,"c0":%d,"_commit":%d}`+"\n", k, c*100+k, c)
				}
			}
			c := newJDBCCase(t, srv, s3e, "hold", wideSpec(1), []byte(rows.String()))
			j, wh, store := c.j, c.wh, c.store
			tb := c.open(t)
			latest, err := tb.LatestSnapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// Java's snapshot N: the latest one again, as another commit
			// of an empty change would write it.
			theirs := *latest
			theirs.ID = latest.ID + 1
			theirs.CommitUser = "java-holder"
			theirs.CommitIdentifier = 99
			theirs.TimeMillis = time.Now().UnixMilli()
			data, err := theirs.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			holder := j.StartLockHolder(wh, "db.t", theirs.ID, data)
			if exists := holder.Locked(); exists {
				t.Fatalf("snapshot %d exists before anyone wrote it", theirs.ID)
			}

			type result struct {
				sum *compact.Summary
				err error
			}
			out := make(chan result, 1)
			go func() {
				sum, err := compact.Run(ctx, tb, compact.Options{Full: true, CommitUser: "compactd-hold-test"})
				out <- result{sum, err}
			}()
			time.Sleep(3 * time.Second)
			select {
			case r := <-out:
				t.Fatalf("compactd finished while Java held the lock: snapshot %d, %v", r.sum.Snapshot, r.err)
			default:
			}
			if ok, err := fileio.Exists(ctx, store, tb.Paths().SnapshotPath(theirs.ID)); err != nil || ok {
				t.Fatalf("snapshot %d exists while Java holds the lock (err %v): compactd raced it", theirs.ID, err)
			}
			holder.Proceed()
			if !holder.Wait() {
				t.Fatal("the Java holder did not write its snapshot")
			}
			r := <-out
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.sum.Snapshot != theirs.ID+1 {
				t.Errorf("compactd published snapshot %d, want %d, after Java's", r.sum.Snapshot, theirs.ID+1)
			}
			back, err := fileio.ReadFile(ctx, store, tb.Paths().SnapshotPath(theirs.ID))
			if err != nil || string(back) != string(data) {
				t.Errorf("Java's snapshot %d is not as Java wrote it (err %v)", theirs.ID, err)
			}
			mine, err := tb.Snapshot(ctx, r.sum.Snapshot)
			if err != nil {
				t.Fatal(err)
			}
			if mine.CommitKind != table.CommitCompact || mine.CommitUser != "compactd-hold-test" {
				t.Errorf("snapshot %d is %s by %s, want compactd's COMPACT", mine.ID, mine.CommitKind, mine.CommitUser)
			}
			want := make([]string, 20)
			for k := 0; k < 20; k++ {
				want[k] = fmt.Sprintf(`{"c0":%d,"c1":null,"c2":null,"k":%d}`, 500+k, k)
			}
			slices.Sort(want)
			diffRows(t, "Java's read after both commits", want, canon(t, j.Read(wh, "db.t")))
		})
	}
}
