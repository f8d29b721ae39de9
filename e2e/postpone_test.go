package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
	"github.com/prometheus/client_golang/prometheus"
)

// TestPostponedRowsBecomeVisible: Java writers put rows of a bucket=-2
// table into bucket-postpone, where Java's batch read does not see them;
// after compactd's compaction Java reads every row, merged by key in each
// writer's commit order.
func TestPostponedRowsBecomeVisible(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	wh, wantRows := postponedTable(t, j)
	if got := j.Read(wh, "db.t"); len(got) != 0 {
		t.Fatalf("Java reads %d rows before the postponed compaction, want 0", len(got))
	}
	if got := compactdRows(t, wh, "db.t"); len(got) != 0 {
		t.Fatalf("compactd scan reads %d rows before the postponed compaction, want 0 (as Java)", len(got))
	}
	sum, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Postponed.Snapshot == 0 || sum.Postponed.Files != 18 || sum.Postponed.Assigned != 6 {
		t.Fatalf("postponed compaction: %+v, want 18 files moved to 2x3 buckets", sum.Postponed)
	}
	diffRows(t, "Java read after compactd's postponed compaction", canon(t, wantRows), canon(t, j.Read(wh, "db.t")))
	diffRows(t, "compactd scan", canon(t, wantRows), canon(t, compactdRows(t, wh, "db.t")))
}

// TestPostponedRowsOverflowTheWriteBuffer: with a small write-buffer-size
// the postponed rows are flushed as a Java writer flushes a full buffer,
// into several level-0 files per bucket with increasing sequence numbers,
// which the compaction after the move merges; Java reads every key once
// with its last value.
func TestPostponedRowsOverflowTheWriteBuffer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	wh, want := postponedTable(t, j)
	tb := openLocal(t, wh, "db.t")
	sum, err := compact.Run(ctx, tb, compact.Options{Overrides: map[string]string{"write-buffer-size": "16 kb"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Postponed.Snapshot == 0 {
		t.Fatalf("nothing postponed was moved: %+v", sum.Postponed)
	}
	level0 := 0
	for _, f := range j.Files(wh, "db.t") {
		if fmt.Sprint(f["level"]) == "0" {
			level0++
		}
	}
	if sum.Snapshot == sum.Postponed.Snapshot || sum.Buckets == 0 {
		t.Fatalf("the flushed level-0 files were not compacted after the move (summary %+v, %d level-0 files)", sum, level0)
	}
	diffRows(t, "Java read", canon(t, want), canon(t, j.Read(wh, "db.t")))
}

// TestPostponedChangelogMatchesJava: with changelog-producer=input the
// move writes the replayed records as changelog, as Java's writer does at
// its flush; with lookup the compaction after the move writes the lookup
// changelog. Java's changelog read of compactd's result equals its read of
// its own postpone compaction of a copy, record for record per bucket
// (compactd commits the move and the compaction as two snapshots where
// Java has one, so snapshots are not compared).
func TestPostponedChangelogMatchesJava(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	for _, producer := range []string{"input", "lookup"} {
		t.Run(producer, func(t *testing.T) {
			wh, _ := postponedTable(t, j, "changelog-producer", producer)
			ref := filepath.Join(t.TempDir(), "ref")
			copyDir(t, wh, ref)
			base, err := openLocal(t, wh, "db.t").LatestSnapshotID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{}); err != nil {
				t.Fatal(err)
			}
			j.PostponeCompact(ref, "db.t", interop.PostponeCompactOptions{})
			changelog := func(w string) []interop.Row {
				latest, err := openLocal(t, w, "db.t").LatestSnapshotID(ctx)
				if err != nil {
					t.Fatal(err)
				}
				rows := j.Changelog(w, "db.t", base, latest)
				for _, r := range rows {
					delete(r, interop.SnapshotField)
				}
				return rows
			}
			want := changelog(ref)
			if len(want) == 0 {
				t.Fatal("Java's postpone compaction wrote no changelog")
			}
			diffRows(t, "changelog of the postponed compaction, compactd's vs Java's", canon(t, want), canon(t, changelog(wh)))
		})
	}
}

// postponedTable is a partitioned deduplicate table with bucket = -2 that
// three Java writers wrote three commits each into (disjoint keys per
// writer, each commit rewriting the writer's keys), and the rows a read
// must return once the postponed rows are compacted.
func postponedTable(t *testing.T, j *interop.JavaOracle, extra ...string) (string, []interop.Row) {
	t.Helper()
	spec := fixtures.Spec{
		Columns:       []fixtures.Column{{Name: "dt", Type: "STRING NOT NULL"}, {Name: "id", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
		PrimaryKeys:   []string{"dt", "id"},
		PartitionKeys: []string{"dt"},
		Bucket:        -2,
		Options:       map[string]string{"postpone.default-bucket-num": "3"},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		spec.Options[extra[i]] = extra[i+1]
	}
	var rows []map[string]any
	want := map[string]interop.Row{}
	for w := range 3 {
		user := fmt.Sprintf("writer-%d", w)
		for c := range 3 {
			for _, dt := range []string{"a", "b"} {
				for i := range 50 {
					id := w*1000 + i
					v := fmt.Sprintf("%s-c%d-%d", user, c, i)
					rows = append(rows, map[string]any{"dt": dt, "id": id, "v": v, "_user": user, "_commit": c})
					want[fmt.Sprintf("%s/%d", dt, id)] = interop.Row{"dt": dt, "id": int64(id), "v": v}
				}
			}
		}
	}
	wh := filepath.Join(t.TempDir(), "warehouse")
	j.Create(wh, "db.t", spec, nil)
	j.Write(wh, "db.t", jsonl(t, rows))
	var wantRows []interop.Row
	for _, r := range want {
		wantRows = append(wantRows, r)
	}
	return wh, wantRows
}

// TestPostponedCompactionBesideAWriter: a Java writer commits more
// postponed rows while compactd moves the earlier ones. Its file is not
// compactd's to move in that commit: it stays in bucket-postpone (nothing
// lost, nothing read twice) and the next run moves it.
func TestPostponedCompactionBesideAWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	wh, want := postponedTable(t, j)
	late := []map[string]any{{"dt": "a", "id": 5000, "v": "late", "_user": "late-writer", "_commit": 0}}
	sum, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{BeforeCommit: func() {
		if n := j.Write(wh, "db.t", jsonl(t, late)); n != 1 {
			t.Errorf("the concurrent Java writer made %d commits, want 1", n)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Postponed.Files != 18 {
		t.Fatalf("moved %d postponed files, want the 18 of the snapshot read", sum.Postponed.Files)
	}
	diffRows(t, "Java read after the first run", canon(t, want), canon(t, j.Read(wh, "db.t")))
	tb := openLocal(t, wh, "db.t")
	v, _, _, err := compact.PlanTable(ctx, tb, compact.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p := compact.PostponedOf(v.FileSet, ""); p.Files != 1 || p.Rows != 1 {
		t.Fatalf("after the first run bucket-postpone holds %+v, want the concurrent writer's 1 file of 1 row", p)
	}
	if _, err := compact.Run(ctx, tb, compact.Options{}); err != nil {
		t.Fatal(err)
	}
	want = append(want, interop.Row{"dt": "a", "id": int64(5000), "v": "late"})
	diffRows(t, "Java read after the second run", canon(t, want), canon(t, j.Read(wh, "db.t")))
}

// TestPostponedCompactionRace: two compactd runs move the same postponed
// rows; the one that commits second must fail without publishing (its
// rows would be in the buckets twice, with colliding sequence numbers),
// and leave none of its files behind.
func TestPostponedCompactionRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	wh, want := postponedTable(t, j)
	tb := openLocal(t, wh, "db.t")
	before := dataFiles(t, wh)
	_, err := compact.Run(ctx, tb, compact.Options{BeforeCommit: func() {
		if _, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{}); err != nil {
			t.Errorf("the competing run: %v", err)
		}
	}})
	var conflict *table.ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("the run that lost the race: err = %v, want a conflict", err)
	}
	diffRows(t, "Java read after the race", canon(t, want), canon(t, j.Read(wh, "db.t")))
	live := map[string]bool{}
	for _, f := range j.Files(wh, "db.t") {
		live[filepath.Base(fmt.Sprint(f["file_path"]))] = true
	}
	for f := range dataFiles(t, wh) {
		if !before[f] && !live[f] {
			t.Errorf("data file %s was left behind by the run that lost", f)
		}
	}
}

// TestPostponedCommitFailsWhenABucketGotNewRecords: a writer that writes
// real buckets of a postponed table (Java's batch writes do, with
// postpone.batch-write-fixed-bucket) adds a file to a bucket the postponed
// rows go to while compactd moves them. Both numbered their records from
// the bucket's highest sequence number, so compactd's commit must fail
// (its precondition) instead of publishing colliding sequence numbers; the
// next run moves the rows on top of the writer's.
func TestPostponedCommitFailsWhenABucketGotNewRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	wh, want := postponedTable(t, j)
	if _, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{}); err != nil {
		t.Fatal(err)
	}
	more := []map[string]any{{"dt": "a", "id": 7000, "v": "postponed-late", "_user": "late", "_commit": 0}}
	j.Write(wh, "db.t", jsonl(t, more))
	want = append(want, interop.Row{"dt": "a", "id": int64(7000), "v": "postponed-late"})
	tb := openLocal(t, wh, "db.t")
	s := tb.Schema()
	route, err := write.NewRouter(s)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := merge.NewEngine(s.EffectiveOptions(), s.Fields, s.PrimaryKeys, s.PartitionKeys...)
	if err != nil {
		t.Fatal(err)
	}
	late := table.Row{"a", int64(7000), nil}
	bucket, err := route.Bucket(late, 3)
	if err != nil {
		t.Fatal(err)
	}
	part, err := route.Partition(late)
	if err != nil {
		t.Fatal(err)
	}
	direct := table.Row{"a", int64(8000), "written-to-the-bucket"}
	for id := int64(8000); ; id++ {
		direct[1] = id
		if b, _ := route.Bucket(direct, 3); b == bucket {
			break
		}
	}
	want = append(want, interop.Row{"dt": "a", "id": direct[1], "v": "written-to-the-bucket"})
	_, err = compact.Run(ctx, tb, compact.Options{BeforeCommit: func() {
		fs, err := tb.FileSet(ctx, mustLatest(ctx, t, tb))
		if err != nil {
			t.Error(err)
			return
		}
		next := int64(0)
		for _, f := range fs.Bucket(part, bucket).Files {
			next = max(next, f.File.MaxSequenceNumber+1)
		}
		kv := table.KeyValue{Key: route.Key(direct), Seq: next, Kind: table.RowKindInsert, Value: direct}
		f, err := write.FlushBucket(ctx, tb, eng, part, bucket, 3, []table.KeyValue{kv}, false, nil)
		if err == nil {
			_, err = tb.Commit(ctx, table.CommitRequest{Kind: table.CommitAppend, CommitUser: "fixed-bucket-writer", CommitIdentifier: 1, Entries: f.Entries})
		}
		if err != nil {
			t.Errorf("the concurrent fixed-bucket write: %v", err)
		}
	}})
	var conflict *table.ConflictError
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "sequence numbers") {
		t.Fatalf("the move beside a write into its bucket: err = %v, want the sequence-number conflict", err)
	}
	if _, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{}); err != nil {
		t.Fatalf("the next run: %v", err)
	}
	diffRows(t, "Java read after the next run", canon(t, want), canon(t, j.Read(wh, "db.t")))
}

// TestPostponedFileMissingFailsClosed: a postponed file the snapshot names
// is gone; compaction stops naming it and commits nothing.
func TestPostponedFileMissingFailsClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	wh, _ := postponedTable(t, j)
	matches, err := filepath.Glob(filepath.Join(wh, "db.db", "t", "dt=b", "bucket-postpone", "*"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no postponed files found: %v", err)
	}
	if err := os.Remove(matches[0]); err != nil {
		t.Fatal(err)
	}
	tb := openLocal(t, wh, "db.t")
	latest, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := dataFiles(t, wh)
	_, err = compact.Run(ctx, tb, compact.Options{})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(matches[0])) {
		t.Fatalf("err = %v, want an error naming %s", err, filepath.Base(matches[0]))
	}
	after, err := openLocal(t, wh, "db.t").LatestSnapshot(ctx)
	if err != nil || after.ID != latest.ID {
		t.Fatalf("latest snapshot after the failure: %v, %v; want %d", after, err, latest.ID)
	}
	for f := range dataFiles(t, wh) {
		if !before[f] {
			t.Errorf("file %s was left behind", f)
		}
	}
}

// dataFiles are the names of the data files under a warehouse.
func dataFiles(t *testing.T, wh string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(wh, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "data-") {
			out[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// postponedRunner records the postponed-row gauge the daemon exported
// when it decided to compact.
type postponedRunner struct {
	sched.PackageRunner
	reg  *prometheus.Registry
	mu   sync.Mutex
	seen []float64
}

func (r *postponedRunner) Compact(ctx context.Context, t *table.Table, o compact.Options) (*compact.Summary, error) {
	v, err := gauge(r.reg, "compactd_table_postponed_rows")
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.seen = append(r.seen, v)
	r.mu.Unlock()
	return compact.Run(ctx, t, o)
}

func gauge(g prometheus.Gatherer, name string) (float64, error) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			sum := 0.0
			for _, m := range mf.GetMetric() {
				sum += m.GetGauge().GetValue()
			}
			return sum, nil
		}
	}
	return 0, fmt.Errorf("metric %s not exported", name)
}

// TestDaemonCompactsPostponedRows: the daemon sees the postponed rows as
// backlog (gauge and /status), compacts them, and afterwards reports none
// while Java reads every row.
func TestDaemonCompactsPostponedRows(t *testing.T) {
	t.Parallel()
	j := interop.Java(t)
	wh, want := postponedTable(t, j)
	cfg := &policy.Config{Path: filepath.Join(t.TempDir(), "compactd.yaml"), Workers: 1,
		Tick: policy.Duration(50 * time.Millisecond), DiscoveryInterval: policy.Duration(200 * time.Millisecond),
		GracePeriod: policy.Duration(5 * time.Second), LockLease: policy.Duration(3 * time.Second),
		Retry:      policy.Retry{Initial: policy.Duration(50 * time.Millisecond), Max: policy.Duration(200 * time.Millisecond), Attempts: 3},
		Warehouses: []policy.Warehouse{{Path: wh}},
		Defaults:   map[string]string{"compact.schedule": "@every 1s", "expire.enabled": "false", "orphan.enabled": "false"}}
	cfg.WithDefaults()
	reg := prometheus.NewRegistry()
	runner := &postponedRunner{reg: reg}
	s, err := sched.New(cfg, sched.Options{Runner: runner, Registerer: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var st sched.TableStatus
		for _, ts := range s.Status().Tables {
			if ts.Table == "db.t" {
				st = ts
			}
		}
		runner.mu.Lock()
		ran := len(runner.seen)
		runner.mu.Unlock()
		if ran > 0 && st.Backlog.PostponedFiles == 0 && !st.Backlog.Observed.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not work off the postponed rows: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	runner.mu.Lock()
	first := runner.seen[0]
	runner.mu.Unlock()
	if first != 900 {
		t.Errorf("compactd_table_postponed_rows when the daemon compacted = %v, want the 900 rows written", first)
	}
	if v, err := gauge(reg, "compactd_table_postponed_rows"); err != nil || v != 0 {
		t.Errorf("compactd_table_postponed_rows after the compaction = %v (%v), want 0", v, err)
	}
	diffRows(t, "Java read after the daemon", canon(t, want), canon(t, j.Read(wh, "db.t")))
}
