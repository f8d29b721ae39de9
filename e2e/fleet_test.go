package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
)

// fleetDB creates a schema of its own on the shared PostgreSQL
// (scripts/db-servers.sh; a missing server fails), drops it after, and
// returns a URL whose search_path is that schema (the fleet's tables and
// River's live there).
func fleetDB(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("COMPACTD_PG_DSN")
	if dsn == "" {
		t.Fatal("COMPACTD_PG_DSN is not set: start PostgreSQL with scripts/db-servers.sh start and eval its env")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	name := fmt.Sprintf("fleet_test_%d_%d", os.Getpid(), rand.Uint32())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
		admin.Close(ctx)
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + name
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type replica struct {
	id, addr string
	cmd      *exec.Cmd
	log      *os.File
}

func startReplica(t *testing.T, bin, cfg, dsn, id, dir string) *replica {
	t.Helper()
	r := &replica{id: id, addr: freePort(t)}
	f, err := os.Create(filepath.Join(dir, id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	r.log = f
	r.cmd = exec.Command(bin, "daemon", "--config", cfg, "--coordinator", dsn, "--replica-id", id, "--listen", r.addr)
	r.cmd.Stdout, r.cmd.Stderr = f, f
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Kill()
			_ = r.cmd.Wait()
		}
		f.Close()
	})
	return r
}

func logTail(t *testing.T, r *replica) string {
	b, _ := os.ReadFile(r.log.Name())
	s := string(b)
	if len(s) > 3000 {
		s = s[len(s)-3000:]
	}
	return s
}

// unitRow is a row of the fleet's unit log.
type unitRow struct {
	id            int64
	replica, user string
	tbl, kind     string
	from, to      *int
	started       time.Time
	finished      *time.Time
	outcome       *string
	snapshot      *int64
}

func (u unitRow) overlapsBuckets(o unitRow) bool {
	if u.from == nil || o.from == nil {
		return true // a whole-table unit excludes every other
	}
	r1 := compact.BucketRange{From: *u.from, To: *u.to}
	r2 := compact.BucketRange{From: *o.from, To: *o.to}
	hi := func(r compact.BucketRange) int {
		if r.To <= 0 {
			return 1 << 30
		}
		return r.To
	}
	return r1.From < hi(r2) && r2.From < hi(r1)
}

// Three replicas of the built binary share one warehouse of several
// Java-written tables (two engines, 1, 4 and 16 buckets, a dozen level-0
// files per bucket), coordinated through a real PostgreSQL; one replica is
// SIGKILLed while it runs a unit and started again, and a Java writer
// commits half of two tables' rows meanwhile. Every table's backlog
// is worked off within fleetBound, Java reads the rows it read before
// (for the two written meanwhile: those of an uncompacted copy given the
// same commits, so no Java commit is lost), no
// two units ever held one bucket (or a table against a whole-table unit)
// at once per the unit log, every COMPACT snapshot was committed by a
// logged unit inside its run, and the 16-bucket table's units ran on more
// than one replica, with Java reading the same rows as from a copy that
// one `compactd compact` compacted.
func TestFleetOfThreeReplicasWithAKill(t *testing.T) {
	const fleetBound = 150 * time.Second
	dsn := fleetDB(t)
	bin := buildCLI(t)
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	var scen []*fixtures.Scenario
	for _, e := range []string{"deduplicate", "aggregation"} {
		for _, part := range []bool{false, true} {
			for _, b := range []int{1, 4} {
				if part && b == 1 {
					continue
				}
				scen = append(scen, fixtures.Generate(fixtures.Params{Engine: e, Partitioned: part, Buckets: b, Size: fixtures.Small, Seed: 7}))
			}
		}
	}
	scen = append(scen, fixtures.Generate(fixtures.Params{Engine: "deduplicate", Buckets: 16, Size: fixtures.Small, Seed: 8}))
	j := interop.Java(t)
	var reqs []interop.BatchRequest
	names := make([]string, len(scen))
	// The first tables get half their commits from a Java writer while the
	// fleet runs; a copy in an unwatched warehouse gets the same commits,
	// uncompacted, to read the expected rows from.
	const concurrent = 2
	ref := filepath.Join(dir, "reference")
	var later, refCreate []interop.BatchRequest
	for i, s := range scen {
		names[i] = "db.t" + fmt.Sprint(i) + "_" + s.Name
		spec := filepath.Join(dir, fmt.Sprintf("spec%d.json", i))
		rows := filepath.Join(dir, fmt.Sprintf("rows%d.jsonl", i))
		if err := writeFile(spec, s.Spec.JSON()); err != nil {
			t.Fatal(err)
		}
		first := s.RowsJSONL()
		if i < concurrent {
			// Half now, half by a Java writer while the fleet runs.
			half := len(s.Commits) / 2
			first = s.RowsJSONLRange(0, half)
			rest := filepath.Join(dir, fmt.Sprintf("rest%d.jsonl", i))
			if err := writeFile(rest, s.RowsJSONLRange(half, len(s.Commits))); err != nil {
				t.Fatal(err)
			}
			for _, w := range []string{wh, ref} {
				later = append(later, interop.BatchRequest{Verb: "write", Flags: map[string]string{"warehouse": w, "table": names[i], "rows": rest}})
			}
			refCreate = append(refCreate, interop.BatchRequest{Verb: "create", Flags: map[string]string{"warehouse": ref, "table": names[i], "spec": spec, "rows": rows}})
		}
		if err := writeFile(rows, first); err != nil {
			t.Fatal(err)
		}
		common := map[string]string{"warehouse": wh, "table": names[i]}
		reqs = append(reqs, interop.BatchRequest{Verb: "create", Flags: map[string]string{"warehouse": wh, "table": names[i], "spec": spec, "rows": rows}},
			interop.BatchRequest{Verb: "read", Flags: common})
	}
	res, err := j.Batch(context.Background(), append(reqs, refCreate...))
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]string{}
	for i, n := range names {
		if res[2*i].Err != nil || res[2*i+1].Err != nil {
			t.Fatalf("java %s: %v %v", n, res[2*i].Err, res[2*i+1].Err)
		}
		rows, err := interop.ParseRows(joinLines(res[2*i+1].Lines))
		if err != nil {
			t.Fatal(err)
		}
		before[n] = canon(t, rows)
	}
	big := names[len(names)-1]
	// The 16-bucket table's copy, compacted by one `compactd compact`: the
	// single daemon's result to compare the fleet's with.
	single := filepath.Join(dir, "single")
	bigDB, bigName, _ := strings.Cut(big, ".")
	copyDir(t, filepath.Join(wh, bigDB+".db", bigName), filepath.Join(single, bigDB+".db", bigName))
	if out, err := exec.Command(bin, "compact", single, big).CombinedOutput(); err != nil {
		t.Fatalf("single compaction: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "compactd.yaml")
	if err := writeFile(cfg, fmt.Appendf(nil, `workers: 1
tick: 200ms
discovery-interval: 1s
grace-period: 5s
state-dir: %s
policy-file: %s
coordinator:
  rescue-after: 8s
  heartbeat: 1s
  buckets-per-unit: 4
warehouses:
  - path: %s
defaults:
  compact.schedule: "@every 2s"
  expire.schedule: "@every 3s"
  orphan.schedule: "@every 4s"
  orphan.older-than: 1h
`, filepath.Join(dir, "state"), filepath.Join(dir, "policies.yaml"), wh)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	reps := map[string]*replica{}
	for _, id := range []string{"r1", "r2", "r3"} {
		reps[id] = startReplica(t, bin, cfg, dsn, id, dir)
	}
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)

	// Kill a replica while it runs a unit (whichever has one first).
	var killed string
	var killedAt time.Time
	for deadline := time.Now().Add(60 * time.Second); killed == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var id string
		err := db.QueryRow(ctx, `SELECT replica FROM compactd_fleet_unit WHERE finished IS NULL AND kind = 'compact' ORDER BY started LIMIT 1`).Scan(&id)
		if err != nil {
			continue // the table may not exist yet, or no unit runs
		}
		r := reps[id]
		if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = r.cmd.Wait()
		killed, killedAt = id, time.Now()
	}
	if killed == "" {
		t.Fatalf("no replica ran a compaction unit within 60s; r1's log:\n%s", logTail(t, reps["r1"]))
	}
	t.Logf("SIGKILLed %s at +%v while it ran a unit", killed, killedAt.Sub(start).Round(time.Millisecond))
	time.Sleep(time.Second)
	reps[killed+"b"] = startReplica(t, bin, cfg, dsn, killed+"b", dir)
	// Java commits while the fleet compacts those tables.
	wres, err := j.Batch(context.Background(), later)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range wres {
		if r.Err != nil {
			t.Fatalf("java write during the fleet's run: %v", r.Err)
		}
	}
	t.Logf("java committed into %d tables at +%v", concurrent, time.Since(start).Round(time.Millisecond))

	// Backlog worked off: compactd's planner finds nothing to compact in
	// any table.
	pending := func() []string {
		var out []string
		for _, n := range names {
			db, tn, _ := strings.Cut(n, ".")
			tb, err := table.OpenPath(ctx, tableFIO(), filepath.Join(wh, db+".db", tn))
			if err != nil {
				t.Fatal(err)
			}
			_, plan, _, err := compact.PlanTable(ctx, tb, compact.Options{}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Jobs) > 0 {
				out = append(out, fmt.Sprintf("%s: %d bucket jobs", n, len(plan.Jobs)))
			}
		}
		return out
	}
	var left []string
	for {
		left = pending()
		if len(left) == 0 || time.Since(start) > fleetBound {
			break
		}
		time.Sleep(time.Second)
	}
	if len(left) > 0 {
		rows, err := db.Query(ctx, `SELECT replica, tbl, kind, coalesce(bucket_from, -1), started, coalesce(outcome, ''), coalesce(error, '') FROM compactd_fleet_unit WHERE kind = 'compact' ORDER BY started`)
		if err == nil {
			for rows.Next() {
				var rep, tbl, kind, outcome, msg string
				var from int
				var at time.Time
				if rows.Scan(&rep, &tbl, &kind, &from, &at, &outcome, &msg) == nil && (outcome != "success" || strings.Contains(left[0], tbl)) {
					t.Logf("unit %s %s %s %d %v %s %s", rep, tbl, kind, from, at.Format(time.TimeOnly), outcome, msg)
				}
			}
			rows.Close()
		}
		var jobs string
		_ = db.QueryRow(ctx, `SELECT string_agg(state || ' ' || attempt || ' ' || args::text, E'\n') FROM river_job WHERE state NOT IN ('completed')`).Scan(&jobs)
		t.Logf("jobs not completed:\n%s", jobs)
		t.Fatalf("backlog not worked off within %v: %v\nr1 log:\n%s", fleetBound, left, logTail(t, reps["r1"]))
	}
	t.Logf("every table's backlog worked off %v after start", time.Since(start).Round(time.Second))

	// /status of a live replica shows the fleet; the metrics are served.
	var live *replica
	for id, r := range reps {
		if id != killed {
			live = r
			break
		}
	}
	var st struct {
		Fleet *struct {
			Leader   string `json:"leader"`
			Replicas []struct {
				ID string `json:"id"`
			} `json:"replicas"`
			QueueDepth int `json:"queueDepth"`
		} `json:"fleet"`
	}
	time.Sleep(1500 * time.Millisecond) // one heartbeat after the restart
	resp, err := http.Get("http://" + live.addr + "/status")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Fleet == nil || st.Fleet.Leader == "" || len(st.Fleet.Replicas) != 3 {
		t.Fatalf("/status fleet: %+v (%v)", st.Fleet, err)
	}
	resp, err = http.Get("http://" + live.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	found := map[string]bool{}
	for sc.Scan() {
		for _, m := range []string{"compactd_fleet_queue_depth ", "compactd_fleet_oldest_due_job_age_seconds ", "compactd_fleet_leader "} {
			if strings.HasPrefix(sc.Text(), m) {
				found[m] = true
			}
		}
	}
	resp.Body.Close()
	if len(found) != 3 {
		t.Fatalf("fleet metrics missing: found %v", found)
	}

	for id, r := range reps {
		if id != killed {
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for id, r := range reps {
		if id != killed {
			if err := r.cmd.Wait(); err != nil {
				t.Errorf("replica %s: %v\n%s", id, err, logTail(t, r))
			}
		}
	}

	// The unit log: no overlap on a bucket, nor of a whole-table unit with
	// any unit of its table. A unit the kill interrupted ends at the kill.
	rows, err := db.Query(ctx, `SELECT id, replica, commit_user, tbl, kind, bucket_from, bucket_to, started, finished, outcome, snapshot
		FROM compactd_fleet_unit ORDER BY started`)
	if err != nil {
		t.Fatal(err)
	}
	var units []unitRow
	for rows.Next() {
		var u unitRow
		if err := rows.Scan(&u.id, &u.replica, &u.user, &u.tbl, &u.kind, &u.from, &u.to, &u.started, &u.finished, &u.outcome, &u.snapshot); err != nil {
			t.Fatal(err)
		}
		if u.finished == nil {
			if u.replica != killed {
				t.Errorf("unit %d of %s on %s never finished", u.id, u.tbl, u.replica)
				continue
			}
			k := killedAt
			u.finished = &k
		}
		units = append(units, u)
	}
	rows.Close()
	byReplica := map[string]int{}
	// By commit user, every unit: one killed between its commit and its log
	// update committed without a logged snapshot.
	committed := map[string]unitRow{}
	for i, a := range units {
		committed[a.user] = a
		if a.snapshot != nil && a.tbl == big {
			byReplica[a.replica]++
		}
		for _, b := range units[i+1:] {
			if a.tbl != b.tbl || !a.overlapsBuckets(b) {
				continue
			}
			if b.started.Before(*a.finished) && a.started.Before(*b.finished) {
				t.Errorf("units %d (%s %s on %s, %v–%v) and %d (%s %s on %s, %v–%v) overlapped", a.id, a.kind, a.tbl, a.replica, a.started, a.finished,
					b.id, b.kind, b.tbl, b.replica, b.started, b.finished)
			}
		}
	}
	t.Logf("%d units logged; units of %s that committed, by replica: %v", len(units), big, byReplica)
	if len(byReplica) < 2 {
		t.Errorf("the 16-bucket table's units ran on %d replica(s), want several: %v", len(byReplica), byReplica)
	}
	// Every COMPACT snapshot was committed by a logged unit, during it.
	compacts := 0
	for _, n := range names {
		dbn, tn, _ := strings.Cut(n, ".")
		tb, err := table.OpenPath(ctx, tableFIO(), filepath.Join(wh, dbn+".db", tn))
		if err != nil {
			t.Fatal(err)
		}
		ids, err := tb.SnapshotIDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			s, err := tb.Snapshot(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if s.CommitKind != "COMPACT" {
				continue
			}
			compacts++
			u, ok := committed[s.CommitUser]
			at := time.UnixMilli(s.TimeMillis)
			if !ok || u.tbl != n || at.Before(u.started.Add(-time.Second)) || at.After(u.finished.Add(time.Second)) {
				t.Errorf("%s snapshot %d (COMPACT by %s at %v) has no unit of its own in the log (%+v)", n, id, s.CommitUser, at, u)
			}
		}
	}
	if compacts < len(names) {
		t.Errorf("%d COMPACT snapshots for %d tables", compacts, len(names))
	}
	// Java reads what it read before.
	reqs = reqs[:0]
	for _, n := range names {
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: map[string]string{"warehouse": wh, "table": n}})
	}
	reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: map[string]string{"warehouse": single, "table": big}})
	for _, n := range names[:concurrent] {
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: map[string]string{"warehouse": ref, "table": n}})
	}
	res, err = j.Batch(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	if res[len(names)].Err != nil {
		t.Fatalf("java read of the single daemon's copy: %v", res[len(names)].Err)
	}
	singleRows, err := interop.ParseRows(joinLines(res[len(names)].Lines))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		if res[i].Err != nil {
			t.Fatalf("java read %s: %v", n, res[i].Err)
		}
		rows, err := interop.ParseRows(joinLines(res[i].Lines))
		if err != nil {
			t.Fatal(err)
		}
		want := before[n]
		if i < concurrent {
			// Every Java commit, the ones during the fleet's run too.
			refRows, err := interop.ParseRows(joinLines(res[len(names)+1+i].Lines))
			if err != nil || res[len(names)+1+i].Err != nil {
				t.Fatalf("java read of the reference %s: %v %v", n, err, res[len(names)+1+i].Err)
			}
			want = canon(t, refRows)
		}
		diffRows(t, n+" after the fleet", want, canon(t, rows))
		if n == big {
			diffRows(t, n+": the fleet's against one compactd compact's", canon(t, singleRows), canon(t, rows))
		}
	}
}
