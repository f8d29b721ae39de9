package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/fileio/fileiotest"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// s3Scenarios picks one partitioned single-bucket scenario per merge engine
// and the unpartitioned two-bucket wide table (three writers): every engine
// and both layouts of the local compaction test, at a cost the S3 round
// trips allow (~30-60 files per table).
func s3Scenarios(t *testing.T) []*fixtures.Scenario {
	t.Helper()
	all := fixtures.All(fixtures.Tiny, 11)
	var out []*fixtures.Scenario
	seen := map[string]bool{}
	for _, s := range all[:len(all)-2] {
		if !seen[s.Engine] && strings.Contains(s.Name, "_partitioned_b1_") {
			seen[s.Engine] = true
			out = append(out, s)
		}
	}
	out = append(out, all[len(all)-2])
	if len(out) != len(fixtures.Engines)+1 {
		names := make([]string, len(all))
		for i, s := range all {
			names[i] = s.Name
		}
		t.Fatalf("picked %d scenarios from %v", len(out), names)
	}
	return out
}

// TestS3FullCompactionAgainstJava is the proof of the S3 issue: tables Java
// Paimon wrote (on local disk, uploaded to a fresh S3 prefix) are fully
// compacted by compactd on the S3 server, and then
//   - compactd's scan on S3 equals Java's read of a local copy after Paimon's
//     own full compaction;
//   - Java Paimon, through its own S3 file IO (paimon-s3 / S3A), reads the
//     same rows from the table compactd left on S3;
//   - Java writers then keep committing on S3 and Paimon's compaction runs
//     on top of compactd's files, reading what the same writes and
//     compaction give on the local copy.
func TestS3FullCompactionAgainstJava(t *testing.T) {
	env := requireS3(t)
	ctx := context.Background()
	j := interop.Java(t)
	s := env.store(t, env.endpoint)
	built := interop.BuildScenarios(t, t.TempDir(), s3Scenarios(t), interop.BuildOptions{})
	whs := make([]string, len(built))
	refs := make([]string, len(built))
	scanned := make([][]string, len(built)) // compactd's scans on S3 after its compaction
	var localDur, s3Dur time.Duration
	for i, b := range built {
		name := b.Scenario.Name
		refs[i] = filepath.Join(t.TempDir(), "ref")
		copyDir(t, b.Warehouse, refs[i])
		whs[i] = env.newWarehouse(t, s, name)
		uploadDir(t, s, b.Warehouse, whs[i])
		tb := openTable(t, s, whs[i], b.Table)
		before := latestID(t, tb)
		if !interop.IsFirstRow(b.Scenario) {
			diffRows(t, name+": compactd on S3 before compaction", canon(t, b.JavaRows), mustScan(t, tb, nil))
		}
		start := time.Now()
		sum, err := compact.Run(ctx, tb, compact.Options{Full: true})
		if err != nil {
			t.Fatalf("%s: compactd full compaction on S3: %v", name, err)
		}
		s3Dur += time.Since(start)
		if sum.Snapshot != before+1 {
			t.Fatalf("%s: compaction committed snapshot %d, want %d", name, sum.Snapshot, before+1)
		}
		if k := snapshotOf(t, tb, sum.Snapshot).CommitKind; k != table.CommitCompact {
			t.Fatalf("%s: snapshot %d is %s, want COMPACT", name, sum.Snapshot, k)
		}
		scanned[i] = mustScan(t, openTable(t, s, whs[i], b.Table), nil)
		// The same compaction of the same table on local disk, for the
		// timing comparison only (the copy is discarded).
		local := filepath.Join(t.TempDir(), "local")
		copyDir(t, b.Warehouse, local)
		start = time.Now()
		if _, err := compact.Run(ctx, openLocal(t, local, b.Table), compact.Options{Full: true}); err != nil {
			t.Fatalf("%s: compactd full compaction on local disk: %v", name, err)
		}
		localDur += time.Since(start)
		t.Logf("%s: %d files (%d bytes) in, %d out", name, sum.FilesIn, sum.BytesIn, sum.FilesOut)
	}
	t.Logf("compactd full compactions of %d tables: %v on S3, %v on local disk", len(built), s3Dur.Round(time.Millisecond), localDur.Round(time.Millisecond))
	// One JVM: Paimon's own compaction of the local copies and its reads of
	// the copies and of the S3 tables; then Java writers keep committing on
	// S3 on top of compactd's files and Java compacts there, and the same on
	// the local copies.
	const perTable = 9
	var reqs []interop.BatchRequest
	for i, b := range built {
		rows := filepath.Join(t.TempDir(), "rows2.jsonl")
		if err := writeFile(rows, secondRound(t, b.Scenario.RowsJSONL())); err != nil {
			t.Fatal(err)
		}
		write := func(wh string) map[string]string {
			f := flags(wh, b.Table)
			f["rows"] = rows
			return f
		}
		reqs = append(reqs,
			interop.BatchRequest{Verb: "compact", Flags: flags(refs[i], b.Table)},
			interop.BatchRequest{Verb: "read", Flags: flags(refs[i], b.Table)},
			interop.BatchRequest{Verb: "read", Flags: flags(whs[i], b.Table)},
			interop.BatchRequest{Verb: "write", Flags: write(whs[i])},
			interop.BatchRequest{Verb: "compact", Flags: flags(whs[i], b.Table)},
			interop.BatchRequest{Verb: "read", Flags: flags(whs[i], b.Table)},
			interop.BatchRequest{Verb: "write", Flags: write(refs[i])},
			interop.BatchRequest{Verb: "compact", Flags: flags(refs[i], b.Table)},
			interop.BatchRequest{Verb: "read", Flags: flags(refs[i], b.Table)},
		)
	}
	start := time.Now()
	res := batch(t, j, reqs)
	t.Logf("Java batch (%d verbs, half of them on S3): %v", len(reqs), time.Since(start).Round(time.Millisecond))
	for i, b := range built {
		r := res[perTable*i : perTable*(i+1)]
		t.Run(b.Scenario.Name, func(t *testing.T) {
			for k, x := range r {
				if x.Err != nil {
					t.Fatalf("Java %s %v: %v", reqs[perTable*i+k].Verb, reqs[perTable*i+k].Flags, x.Err)
				}
			}
			want := canon(t, rowsOf(t, r[1]))
			if len(want) == 0 {
				t.Fatal("Java reads no rows after its own compaction")
			}
			diffRows(t, "Java on S3 after compactd's compaction", want, canon(t, rowsOf(t, r[2])))
			diffRows(t, "compactd on S3 after its compaction", want, scanned[i])
			diffRows(t, "Java on S3 after its writes and compaction on top of compactd's", canon(t, rowsOf(t, r[8])), canon(t, rowsOf(t, r[5])))
		})
	}
}

// s3Table builds one scenario with Java on local disk and uploads it to a
// fresh S3 warehouse; it returns the local build and the S3 warehouse.
func s3Table(t *testing.T, env s3Env, s *fileio.S3, sc *fixtures.Scenario) (*interop.Built, string) {
	t.Helper()
	b := interop.BuildScenarios(t, t.TempDir(), []*fixtures.Scenario{sc}, interop.BuildOptions{})[0]
	wh := env.newWarehouse(t, s, sc.Name)
	uploadDir(t, s, b.Warehouse, wh)
	return b, wh
}

func dedupeScenario(t *testing.T) *fixtures.Scenario {
	t.Helper()
	return fixtures.Generate(fixtures.Params{Engine: "deduplicate", Partitioned: true, Buckets: 2, Size: fixtures.Tiny, Seed: 13})
}

// plantObject uploads a copy of an existing object under a fresh name of the
// same kind in the same directory: an uncommitted file of a writer (young)
// or the leftover of a crashed one (old). S3 gives it the server's time.
func plantObject(t *testing.T, fio fileio.FileIO, src, prefix, suffix string) string {
	t.Helper()
	ctx := context.Background()
	data, err := fileio.ReadFile(ctx, fio, src)
	if err != nil {
		t.Fatal(err)
	}
	dst := fileio.Join(fileio.Dir(src), prefix+uuid.NewString()+"-0"+suffix)
	if err := fileio.WriteFile(ctx, fio, dst, data); err != nil {
		t.Fatal(err)
	}
	return dst
}

func exists(t *testing.T, fio fileio.FileIO, p string) bool {
	t.Helper()
	ok, err := fileio.Exists(context.Background(), fio, p)
	if err != nil {
		t.Fatalf("stat %s: %v", p, err)
	}
	return ok
}

// TestS3ExpireAndOrphanCleanup: on an S3 table compactd compacted, snapshot
// expiration keeps the two newest snapshots readable (by compactd and by
// Java through S3A) and deletes what only expired snapshots used; orphan
// cleanup deletes planted objects older than the cutoff — the age is the
// server's Last-Modified — and keeps a younger one, which Java's own
// orphan clean agrees with.
func TestS3ExpireAndOrphanCleanup(t *testing.T) {
	env := requireS3(t)
	ctx := context.Background()
	j := interop.Java(t)
	s := env.store(t, env.endpoint)
	b, wh := s3Table(t, env, s, dedupeScenario(t))
	tb := openTable(t, s, wh, b.Table)
	if _, err := compact.Run(ctx, tb, compact.Options{Full: true}); err != nil {
		t.Fatalf("compaction on S3: %v", err)
	}
	latest := latestID(t, tb)
	if latest < 4 {
		t.Fatalf("only %d snapshots: the scenario is too small to expire anything", latest)
	}
	prevSnap := snapshotOf(t, tb, latest-1)
	wantLatest, wantPrev := mustScan(t, tb, nil), mustScan(t, tb, prevSnap)

	// Expiration keeps exactly the two newest snapshots.
	o := expire.DefaultOptions()
	o.RetainMin, o.RetainMax, o.TimeRetained = 2, 2, 0
	rep, err := expire.Run(ctx, reach.TableSource(tb), expire.RunOptions{Options: o, Now: time.Now()})
	if err != nil {
		t.Fatalf("expire on S3: %v", err)
	}
	if rep.End != latest-1 || len(rep.Snapshots) != int(latest-2) {
		t.Fatalf("expired %v (new earliest %d), want snapshots 1..%d", rep.Snapshots, rep.End, latest-2)
	}
	earliest, err := tb.EarliestSnapshotID(ctx)
	if err != nil || earliest != latest-1 {
		t.Fatalf("earliest snapshot after expiration = %d (%v), want %d", earliest, err, latest-1)
	}
	for id := int64(1); id < latest-1; id++ {
		if exists(t, s, tb.Paths().SnapshotPath(id)) {
			t.Errorf("expired snapshot %d still on S3", id)
		}
	}
	deleted := slices.Concat(rep.DataFiles, rep.Manifests, rep.ManifestLists)
	if len(deleted) == 0 {
		t.Fatal("expiration deleted no data or manifest file")
	}
	for _, p := range deleted {
		if exists(t, s, p) {
			t.Errorf("%s reported deleted but still on S3", p)
		}
	}
	diffRows(t, "compactd, latest snapshot after expiration", wantLatest, mustScan(t, tb, nil))
	diffRows(t, "compactd, previous snapshot after expiration", wantPrev, mustScan(t, tb, snapshotOf(t, tb, latest-1)))

	// Orphans: two old leftovers (a data file and a manifest), then, after the
	// cutoff, a young uncommitted data file. Gaps of two seconds on both sides
	// of the cutoff survive Last-Modified's one-second resolution.
	fs, err := tb.FileSet(ctx, snapshotOf(t, tb, latest))
	if err != nil {
		t.Fatal(err)
	}
	var dataFile string
	for _, bf := range fs.Buckets() {
		for i := range bf.Files {
			if dataFile, err = tb.DataFilePath(&bf.Files[i]); err != nil {
				t.Fatal(err)
			}
			break
		}
		if dataFile != "" {
			break
		}
	}
	if dataFile == "" {
		t.Fatal("no live data file to copy")
	}
	ml := tb.Paths().ManifestPath(snapshotOf(t, tb, latest).DeltaManifestList)
	oldData := plantObject(t, s, dataFile, "data-", filepath.Ext(dataFile))
	oldManifest := plantObject(t, s, ml, "manifest-", "")
	time.Sleep(2 * time.Second)
	cutoff := time.Now()
	time.Sleep(2 * time.Second)
	young := plantObject(t, s, dataFile, "data-", filepath.Ext(dataFile))

	javaOrphans := batch(t, j, []interop.BatchRequest{orphanReq(wh, b.Table, cutoff)})
	now := time.Now()
	orep, err := orphan.RunTable(ctx, tb, orphan.RunOptions{Now: now, OlderThan: now.Sub(cutoff), Force: true})
	if err != nil {
		t.Fatalf("orphan cleanup on S3: %v", err)
	}
	var got []string
	for _, f := range orep.Files {
		got = append(got, f.Path)
	}
	slices.Sort(got)
	want := []string{oldData, oldManifest}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("orphan cleanup deleted %v, want %v", got, want)
	}
	tableRoot := strings.TrimSuffix(tb.Path(), "/") + "/"
	var rel []string
	for _, p := range want {
		rel = append(rel, strings.TrimPrefix(p, tableRoot))
	}
	if jp := pathsOf(t, "Java orphans on S3", javaOrphans[0]); !slices.Equal(jp, rel) {
		t.Errorf("Java's orphan clean on S3 would delete %v, compactd deleted %v", jp, rel)
	}
	for _, p := range want {
		if exists(t, s, p) {
			t.Errorf("old orphan %s still on S3", p)
		}
	}
	if !exists(t, s, young) {
		t.Errorf("young uncommitted %s was deleted", young)
	}

	diffRows(t, "compactd, latest snapshot after orphan cleanup", wantLatest, mustScan(t, tb, nil))
	res := batch(t, j, []interop.BatchRequest{
		{Verb: "read", Flags: flags(wh, b.Table)},
		{Verb: "read", Flags: map[string]string{"warehouse": wh, "table": b.Table, "snapshot": strconv.FormatInt(latest-1, 10)}},
	})
	diffRows(t, "Java on S3, latest snapshot after expiration and orphan cleanup", wantLatest, canon(t, rowsOf(t, res[0])))
	diffRows(t, "Java on S3, previous snapshot after expiration and orphan cleanup", wantPrev, canon(t, rowsOf(t, res[1])))
}

// TestS3CompactionThroughThrottling puts the fault proxy between compactd and
// the server. Throttled requests (503 SlowDown) are retried and the
// compaction commits exactly once; a commit throttled past the retry budget
// fails and leaves the table as it was, with only unreferenced objects added,
// which orphan cleanup removes; no row is lost either way, and Java reads the
// result through S3A.
func TestS3CompactionThroughThrottling(t *testing.T) {
	env := requireS3(t)
	ctx := context.Background()
	j := interop.Java(t)
	direct := env.store(t, env.endpoint)
	b, wh := s3Table(t, env, direct, dedupeScenario(t))
	proxy := fileiotest.NewFaultProxy(t, env.endpoint)
	// The conditional-write probe runs once here, outside the faults.
	if err := direct.CheckConditionalWrites(ctx, wh); err != nil {
		t.Fatal(err)
	}
	trusting := func(c *fileio.S3Config) { c.TrustConditionalWrites = true }
	want := mustScan(t, openTable(t, direct, wh, b.Table), nil)
	before := latestID(t, openTable(t, direct, wh, b.Table))
	keysBefore := env.keys(t, direct, wh)

	t.Run("a commit throttled past the retry budget leaves the table unchanged", func(t *testing.T) {
		s := env.store(t, proxy.URL, trusting, func(c *fileio.S3Config) { c.MaxAttempts = 3 })
		proxy.Inject(fileiotest.Fault{Kind: fileiotest.SlowDown, Match: fileiotest.IsConditionalPut, Times: -1})
		defer proxy.Clear()
		tb := openTable(t, s, wh, b.Table)
		if sum, err := compact.Run(ctx, tb, compact.Options{Full: true}); err == nil {
			t.Fatalf("compaction committed snapshot %d although every conditional PUT was throttled", sum.Snapshot)
		} else {
			t.Logf("compaction failed as expected: %v", err)
		}
		if proxy.Injected(fileiotest.SlowDown) == 0 {
			t.Fatal("no request was throttled")
		}
		proxy.Clear()
		tb = openTable(t, direct, wh, b.Table)
		t.Logf("the failed run left %d objects", len(env.keys(t, direct, wh))-len(keysBefore))
		if id := latestID(t, tb); id != before {
			t.Fatalf("latest snapshot %d after a failed compaction, want %d", id, before)
		}
		diffRows(t, "compactd after the failed compaction", want, mustScan(t, tb, nil))
		// Whatever the failed run left is unreferenced: removing every
		// unreferenced object restores exactly the objects there were.
		now := time.Now().Add(time.Minute)
		if _, err := orphan.RunTable(ctx, tb, orphan.RunOptions{Now: now, OlderThan: time.Minute, Force: true}); err != nil {
			t.Fatal(err)
		}
		if got := env.keys(t, direct, wh); !slices.Equal(got, keysBefore) {
			t.Fatalf("objects after the failed compaction and orphan cleanup differ from before:\nbefore %v\nafter  %v", keysBefore, got)
		}
	})

	t.Run("throttled requests are retried and the compaction commits once", func(t *testing.T) {
		s := env.store(t, proxy.URL, trusting)
		throttledBefore, requestsBefore := proxy.Injected(fileiotest.SlowDown), proxy.Requests()
		var n atomic.Int64
		// The first conditional PUT (the snapshot commit) and forty requests
		// spread over the run (every seventh) answer 503 SlowDown once.
		proxy.Inject(fileiotest.Fault{Kind: fileiotest.SlowDown, Match: fileiotest.IsConditionalPut})
		proxy.Inject(fileiotest.Fault{Kind: fileiotest.SlowDown, Times: 40, Match: func(*http.Request) bool { return n.Add(1)%7 == 0 }})
		defer proxy.Clear()
		tb := openTable(t, s, wh, b.Table)
		sum, err := compact.Run(ctx, tb, compact.Options{Full: true})
		if err != nil {
			t.Fatalf("compaction through throttling: %v", err)
		}
		throttled := proxy.Injected(fileiotest.SlowDown) - throttledBefore
		proxy.Clear()
		t.Logf("%d of %d requests throttled", throttled, proxy.Requests()-requestsBefore)
		if throttled < 3 {
			t.Fatalf("only %d requests throttled", throttled)
		}
		tb = openTable(t, direct, wh, b.Table)
		if id := latestID(t, tb); sum.Snapshot != before+1 || id != before+1 {
			t.Fatalf("compaction committed %d, latest is %d; want exactly one snapshot %d", sum.Snapshot, id, before+1)
		}
		if k := snapshotOf(t, tb, before+1).CommitKind; k != table.CommitCompact {
			t.Fatalf("snapshot %d is %s, want COMPACT", before+1, k)
		}
		diffRows(t, "compactd after the throttled compaction", want, mustScan(t, tb, nil))
		res := batch(t, j, []interop.BatchRequest{{Verb: "read", Flags: flags(wh, b.Table)}})
		diffRows(t, "Java on S3 after the throttled compaction", want, canon(t, rowsOf(t, res[0])))
	})
}
