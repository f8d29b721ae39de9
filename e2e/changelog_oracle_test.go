package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// The changelog proof of issue 15: Java Paimon's own compaction of a copy
// made from the same commits is the reference. Java reads the changelog
// (its incremental changelog read, snapshot by snapshot, verb changelog) of
// the table compactd compacted and of the copy Java compacted; they must be
// the same rows. Streaming readers (StreamTableScan, verb stream) started
// before compactd runs must receive the same rows on both. Java writers
// keep committing and Java's compaction runs on top of compactd's files.
//
// What Java guarantees about order, and so what is compared in order:
// a compaction writes one changelog per bucket (FullChangelogMergeTree /
// LookupMergeTreeCompactRewriter emit while merging the bucket's sorted
// runs), so inside one (snapshot, partition, bucket) the rows come in key
// order with a key's -U right before its +U; that is the order a streaming
// consumer of that bucket sees and it is compared exactly. Across buckets
// and partitions Java promises no order (splits are planned from a hash
// map; Flink reads buckets in parallel), so groups are compared by their
// (snapshot, partition, bucket) key. A stream's first plan (the latest
// snapshot's merged rows) is compared as a multiset.

// clRound bounds the commits of each round: [0, r1) before the first
// compaction, [r1, r2) before the second, [r2, n) Java's writes on top.
func clRounds(n int) (r1, r2 int) { return n * 4 / 9, n * 7 / 9 }

// clScenarios is the matrix: for lookup and full-compaction, partial-update
// with sequence groups (the three-stream wide table: writer-a/b/c each own
// a sequence group, write-only) in all four layouts, deduplicate (deletes,
// out-of-order sequence.field) and aggregation partitioned/4 buckets and
// unpartitioned/1 bucket, first-row (lookup only: Java rejects it with
// full-compaction) in the same two layouts, and a deduplicate table with
// changelog-producer.row-deduplicate(-ignore-fields); and two tables with
// changelog-producer=input (the wide table, deduplicate partitioned/4
// buckets), whose changelog Java's writers write and compaction leaves be.
func clScenarios(seed uint64) []*fixtures.Scenario {
	type layout struct {
		part    bool
		buckets int
	}
	all := []layout{{false, 1}, {true, 4}, {false, 4}, {true, 1}}
	size := func(l layout) fixtures.Size {
		// Medium for one bucket of one partition (300 keys, 900 rows),
		// Small elsewhere (90 to 360 keys, 270 to 1080 rows): enough keys per
		// bucket for new, updated, deleted and untouched ones each round.
		if !l.part && l.buckets == 1 {
			return fixtures.Medium
		}
		return fixtures.Small
	}
	var out []*fixtures.Scenario
	for _, producer := range []string{"lookup", "full-compaction"} {
		add := func(s *fixtures.Scenario) {
			s.Name = strings.ReplaceAll(producer, "-", "_") + "_" + s.Name
			s.Spec.Options = maps.Clone(s.Spec.Options)
			s.Spec.Options["changelog-producer"] = producer
			out = append(out, s)
		}
		for _, l := range all {
			add(fixtures.WideTable(fixtures.Params{Partitioned: l.part, Buckets: l.buckets, Size: size(l), Seed: seed, Commits: 4}))
		}
		engines := []string{"deduplicate", "aggregation"}
		if producer == "lookup" {
			engines = append(engines, "first-row")
		}
		for _, e := range engines {
			for _, l := range all[:2] {
				add(fixtures.Generate(fixtures.Params{Engine: e, Partitioned: l.part, Buckets: l.buckets, Size: size(l), Seed: seed, Commits: 9}))
			}
		}
		add(rowDedupScenario(seed))
	}
	// changelog-producer=input: the writers' commits carry the changelog
	// and a compaction must leave it alone (Java's compaction writes none).
	producer := "input"
	for _, s := range []*fixtures.Scenario{
		fixtures.WideTable(fixtures.Params{Partitioned: false, Buckets: 1, Size: size(all[0]), Seed: seed, Commits: 4}),
		fixtures.Generate(fixtures.Params{Engine: "deduplicate", Partitioned: true, Buckets: 4, Size: size(all[1]), Seed: seed, Commits: 9}),
	} {
		s.Name = producer + "_" + s.Name
		s.Spec.Options = maps.Clone(s.Spec.Options)
		s.Spec.Options["changelog-producer"] = producer
		out = append(out, s)
	}
	return out
}

// rowDedupScenario is a deduplicate table with
// changelog-producer.row-deduplicate=true ignoring column ts: many updates
// rewrite a key's v and n unchanged (only ts differs, or nothing), which
// must produce no -U/+U; others change v or delete the key.
func rowDedupScenario(seed uint64) *fixtures.Scenario {
	rng := rand.New(rand.NewPCG(seed, 15))
	s := &fixtures.Scenario{
		Name:      "rowdedup_unpartitioned_b4",
		Engine:    "deduplicate",
		WriteOnly: true,
		Spec: fixtures.Spec{
			Columns: []fixtures.Column{{Name: "id", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"},
				{Name: "n", Type: "INT"}, {Name: "ts", Type: "BIGINT"}},
			PrimaryKeys: []string{"id"},
			Bucket:      4,
			Options: map[string]string{"write-only": "true",
				"changelog-producer.row-deduplicate":               "true",
				"changelog-producer.row-deduplicate-ignore-fields": "ts"},
		},
	}
	const keys = 400
	cur := map[int64][2]any{}
	for ci := range 9 {
		c := fixtures.Commit{User: "writer"}
		for range 150 {
			id := int64(rng.IntN(keys))
			v, n := any(fmt.Sprintf("v%d", rng.IntN(3))), any(int64(rng.IntN(3)))
			old, had := cur[id]
			kind := "+I"
			switch r := rng.IntN(10); {
			case had && r < 5: // same values, new ts: no changelog with row-deduplicate
				v, n = old[0], old[1]
				kind = "+U"
			case had && r == 5:
				c.Records = append(c.Records, fixtures.Record{Kind: "-D", Values: map[string]any{"id": id}})
				delete(cur, id)
				continue
			}
			cur[id] = [2]any{v, n}
			c.Records = append(c.Records, fixtures.Record{Kind: kind, Values: map[string]any{"id": id, "v": v, "n": n, "ts": int64(ci*1000 + rng.IntN(1000))}})
		}
		s.Commits = append(s.Commits, c)
	}
	return s
}

// clTable is one scenario's pair of warehouses: A compacted by compactd,
// B by Java, both written by the same Java commits.
type clTable struct {
	s        *fixtures.Scenario
	producer string
	a, b     string // warehouses
	scripts  [3]string
	// snapshots after each compaction round on A and B (0: none)
	roundA, roundB [2]int64
	failed         error // compactd's first failure
}

// full: full-compaction's changelog only comes from full compactions; for
// input a full compaction makes sure each round compacts at all (the
// universal pick waits for 5 runs) — its changelog must stay the writers'.
func (c *clTable) full() bool { return c.producer != "lookup" }

// javaCompact is the Java reference compaction of a round: Paimon's normal
// pick (TableWriteImpl.compact(partition, bucket, false): for lookup the
// ForceUpLevel0Compaction wrapped universal pick, as compactd's planner
// without Full) for lookup, a full compaction otherwise (compactd Full:
// true).
func (c *clTable) javaCompact(wh string) interop.BatchRequest {
	f := flags(wh, "db.t")
	f["full"] = fmt.Sprint(c.full())
	return interop.BatchRequest{Verb: "compact", Flags: f}
}

func (c *clTable) compactd(ctx context.Context, round int) {
	if c.failed != nil {
		return
	}
	tb, err := table.Open(ctx, tableFIO(), c.a, "db", "t")
	if err == nil {
		var sum *compact.Summary
		sum, err = compact.Run(ctx, tb, compact.Options{Full: c.full()})
		if err == nil {
			c.roundA[round] = sum.Snapshot
			return
		}
	}
	c.failed = fmt.Errorf("compactd compaction round %d: %w", round+1, err)
}

// TestChangelogProducersAgainstJava is the proof of issue 15 over
// clScenarios (20 tables). Per table, A and B start as the same
// Java commits (round 1, write-only writers), then:
//
//  1. compactd compacts A, Java compacts B (same pick); Java writes round 2
//     into both;
//  2. streaming readers (Java StreamTableScan, default scan.mode
//     latest-full: their first plan reads the compacted files) start on A
//     and B; compactd compacts A, Java compacts B;
//  3. Java writes round 3 into both and Java compacts both (Java on top of
//     compactd's files and changelog history);
//  4. the readers stop at the last snapshot.
//
// Then: each compaction committed one snapshot with the same id on A and
// B; Java's changelog of every snapshot of A equals B's (per (snapshot,
// partition, bucket), in order); Java's snapshot reads after each round
// are equal; the streaming readers received the same rows on A and B, and
// replaying each reader's rows (+I/+U upsert, -U/-D retract exactly the
// current row) gives Java's final read; pypaimon reads A's rows and A's
// changelog as Java reads B's (pypaimon 2.1.0 refuses sequence groups);
// the files' levels match. The reference side must show every kind the
// engines allow (+I, -U/+U, -D where deletes exist, row-deduplicate
// suppressing updates, keys untouched by a round), or the proof is vacuous.
func TestChangelogProducersAgainstJava(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	py := interop.Python(t)
	start := time.Now()
	phase := func(what string) { t.Logf("%v: %s", time.Since(start).Round(time.Millisecond), what) }
	root := t.TempDir()
	var tables []*clTable
	var reqs []interop.BatchRequest
	for _, s := range clScenarios(15) {
		c := &clTable{s: s, producer: s.Spec.Options["changelog-producer"],
			a: filepath.Join(root, s.Name, "a"), b: filepath.Join(root, s.Name, "b")}
		n := len(s.Commits)
		r1, r2 := clRounds(n)
		for i, r := range [][2]int{{0, r1}, {r1, r2}, {r2, n}} {
			c.scripts[i] = tempFile(t, fmt.Sprintf("%s-%d.jsonl", s.Name, i), s.RowsJSONLRange(r[0], r[1]))
		}
		f := flags(c.a, "db.t")
		f["spec"] = tempFile(t, s.Name+".spec.json", s.Spec.JSON())
		f["rows"] = c.scripts[0]
		reqs = append(reqs, interop.BatchRequest{Verb: "create", Flags: f})
		tables = append(tables, c)
	}
	// Java refuses first-row with full-compaction, so the matrix has none.
	bad := fixtures.Generate(fixtures.Params{Engine: "first-row", Buckets: 1, Size: fixtures.Tiny, Seed: 1})
	bad.Spec.Options["changelog-producer"] = "full-compaction"
	badFlags := flags(filepath.Join(root, "rejected"), "db.t")
	badFlags["spec"] = tempFile(t, "rejected.spec.json", bad.Spec.JSON())
	reqs = append(reqs, interop.BatchRequest{Verb: "create", Flags: badFlags})
	res := batch(t, j, reqs)
	for i, c := range tables {
		if res[i].Err != nil {
			t.Fatalf("%s: Java create: %v", c.s.Name, res[i].Err)
		}
		copyDir(t, c.a, c.b)
	}
	if err := res[len(tables)].Err; err == nil || !strings.Contains(err.Error(), "changelog-producer on FIRST_ROW merge engine") {
		t.Errorf("Java created a first-row table with changelog-producer=full-compaction (%v); the matrix should cover it", err)
	}
	phase("Java wrote round 1")

	// Round 1.
	for _, c := range tables {
		c.compactd(ctx, 0)
	}
	phase("compactd round 1")
	reqs = reqs[:0]
	for _, c := range tables {
		reqs = append(reqs, c.javaCompact(c.b),
			interop.BatchRequest{Verb: "files", Flags: flags(c.a, "db.t")},
			interop.BatchRequest{Verb: "files", Flags: flags(c.b, "db.t")},
			interop.BatchRequest{Verb: "write", Flags: withOpt(flags(c.a, "db.t"), "rows", c.scripts[1])},
			interop.BatchRequest{Verb: "write", Flags: withOpt(flags(c.b, "db.t"), "rows", c.scripts[1])})
	}
	res = batch(t, j, reqs)
	// files (partition, bucket, level, rows) after each compactd round, A's then B's
	roundFiles := make([][2][2][]string, len(tables))
	for i, c := range tables {
		r := res[5*i : 5*(i+1)]
		c.roundB[0] = javaSnapshot(t, c.s.Name+": Java compaction round 1", r[0])
		roundFiles[i][0] = [2][]string{fileLevels(rowsOf(t, r[1])), fileLevels(rowsOf(t, r[2]))}
		for k := 3; k < 5; k++ {
			if r[k].Err != nil {
				t.Fatalf("%s: Java write round 2: %v", c.s.Name, r[k].Err)
			}
		}
	}
	phase("Java round 1 compactions, round 2 writes")

	// Round 2 under streaming readers.
	var targets []interop.StreamTarget
	for i, c := range tables {
		// Paimon's default scan.mode (latest-full), and from-snapshot 1: a
		// reader that consumes every changelog from the table's start.
		fromFirst := map[string]string{"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}
		targets = append(targets,
			interop.StreamTarget{ID: fmt.Sprint("a", i), Warehouse: c.a, Table: "db.t"},
			interop.StreamTarget{ID: fmt.Sprint("b", i), Warehouse: c.b, Table: "db.t"},
			interop.StreamTarget{ID: fmt.Sprint("fa", i), Warehouse: c.a, Table: "db.t", Options: fromFirst},
			interop.StreamTarget{ID: fmt.Sprint("fb", i), Warehouse: c.b, Table: "db.t", Options: fromFirst})
	}
	stream, err := j.StartStream(ctx, targets)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	phase("streaming readers ready")
	for _, c := range tables {
		c.compactd(ctx, 1)
	}
	phase("compactd round 2")
	reqs = reqs[:0]
	for _, c := range tables {
		reqs = append(reqs, c.javaCompact(c.b),
			interop.BatchRequest{Verb: "files", Flags: flags(c.a, "db.t")},
			interop.BatchRequest{Verb: "files", Flags: flags(c.b, "db.t")},
			interop.BatchRequest{Verb: "write", Flags: withOpt(flags(c.a, "db.t"), "rows", c.scripts[2])},
			interop.BatchRequest{Verb: "write", Flags: withOpt(flags(c.b, "db.t"), "rows", c.scripts[2])},
			c.javaCompact(c.a), c.javaCompact(c.b))
	}
	res = batch(t, j, reqs)
	last := make([][2]int64, len(tables))
	onTopFailed := make([]error, len(tables))
	for i, c := range tables {
		r := res[7*i : 7*(i+1)]
		c.roundB[1] = javaSnapshot(t, c.s.Name+": Java compaction round 2", r[0])
		roundFiles[i][1] = [2][]string{fileLevels(rowsOf(t, r[1])), fileLevels(rowsOf(t, r[2]))}
		for _, k := range []int{4, 6} {
			if r[k].Err != nil {
				t.Fatalf("%s: Java step %d on the reference copy: %v", c.s.Name, k, r[k].Err)
			}
		}
		for _, k := range []int{3, 5} {
			if r[k].Err != nil && onTopFailed[i] == nil {
				onTopFailed[i] = fmt.Errorf("Java %s on top of compactd's table: %w", reqs[7*i+k].Verb, r[k].Err)
			}
		}
		last[i] = [2]int64{latestSnapshotID(t, c.a), latestSnapshotID(t, c.b)}
		for side, id := range []string{"a", "b", "fa", "fb"} {
			if err := stream.Until(fmt.Sprint(id, i), last[i][side%2]); err != nil {
				t.Fatal(err)
			}
		}
	}
	phase("Java round 2 compactions, round 3 writes and compactions on top")
	streamed, err := stream.Wait()
	if err != nil {
		t.Fatal(err)
	}
	phase("streaming readers done")

	// Reads.
	const per = 10
	reqs = reqs[:0]
	var pyReqs []interop.BatchRequest
	for i, c := range tables {
		reqs = append(reqs,
			interop.ChangelogRequest(c.a, "db.t", 0, last[i][0]),              // 0
			interop.ChangelogRequest(c.b, "db.t", 0, last[i][1]),              // 1
			readReq(c.a, "db.t", "snapshot", fmt.Sprint(max(c.roundA[0], 1))), // 2
			readReq(c.b, "db.t", "snapshot", fmt.Sprint(max(c.roundB[0], 1))), // 3
			readReq(c.a, "db.t", "snapshot", fmt.Sprint(max(c.roundA[1], 1))), // 4
			readReq(c.b, "db.t", "snapshot", fmt.Sprint(max(c.roundB[1], 1))), // 5
			readReq(c.a, "db.t"), // 6
			readReq(c.b, "db.t"), // 7
			interop.BatchRequest{Verb: "files", Flags: flags(c.a, "db.t")}, // 8
			interop.BatchRequest{Verb: "files", Flags: flags(c.b, "db.t")}, // 9
		)
		pyReqs = append(pyReqs, readReq(c.a, "db.t", "snapshot", fmt.Sprint(max(c.roundA[0], 1))),
			interop.ChangelogRequest(c.a, "db.t", 0, last[i][0]),
			interop.ChangelogRequest(c.b, "db.t", 0, last[i][1]),
			readReq(c.a, "db.t", "snapshot", fmt.Sprint(max(c.roundA[1], 1))))
	}
	res = batch(t, j, reqs)
	phase("Java changelog and snapshot reads")
	pyRes, err := py.Batch(ctx, pyReqs)
	if err != nil {
		t.Fatal(err)
	}
	phase("pypaimon reads")

	cover := map[string]map[string]int{} // engine/producer -> what Java's changelog on B shows
	for i, c := range tables {
		r := res[per*i : per*(i+1)]
		for _, k := range []int{1, 3, 5, 7, 9} {
			if r[k].Err != nil {
				t.Fatalf("%s: Java %s of the reference copy: %v", c.s.Name, reqs[per*i+k].Verb, r[k].Err)
			}
		}
		ref := rowsOf(t, r[1])
		kind := clEngine(c.s) + "/" + c.producer
		if cover[kind] == nil {
			cover[kind] = map[string]int{}
		}
		clCover(t, cover[kind], ref, rowsOf(t, r[3]), c)
		t.Run(c.s.Name+"/java reference", func(t *testing.T) {
			// The harness on Java alone: B's stream (after its first plan)
			// is B's changelog, and replaying it gives Java's read.
			b, fb := streamed[fmt.Sprint("b", i)], streamed[fmt.Sprint("fb", i)]
			checkStreamIsChangelog(t, b, ref, stream.Next[fmt.Sprint("b", i)])
			checkReplay(t, "Java's stream of Java's compactions", b, rowsOf(t, r[7]), c.s)
			if len(firstPlan(fb, true)) != 0 {
				t.Errorf("a from-snapshot reader's first plan returned %d rows", len(firstPlan(fb, true)))
			}
			checkStreamIsChangelog(t, fb, ref, 1)
			checkReplay(t, "Java's from-snapshot stream of Java's compactions", fb, rowsOf(t, r[7]), c.s)
			pyChangelog(t, "pypaimon's streaming read of Java's changelog", ref, pyRes[4*i+2])
		})
		t.Run(c.s.Name+"/compactd", func(t *testing.T) {
			if c.failed != nil {
				t.Fatal(c.failed)
			}
			if c.roundA != c.roundB {
				t.Errorf("compactd committed snapshots %v, Java %v", c.roundA, c.roundB)
			}
			clCompare(t, "Java's changelog of compactd's compactions (and Java's on top)", ref, rowsOf(t, r[0]))
			for k, what := range []string{"after round 1", "after round 2", "after Java's writes and compaction on top"} {
				diffRows(t, "Java read "+what, canon(t, rowsOf(t, r[3+2*k])), canon(t, rowsOf(t, r[2+2*k])))
			}
			if onTopFailed[i] != nil {
				t.Error(onTopFailed[i])
			}
			for k, f := range roundFiles[i] {
				if !equalStrings(f[0], f[1]) {
					t.Errorf("files (partition/bucket/level/rows) after compactd's round %d:\n  %v\nafter Java's:\n  %v", k+1, f[0], f[1])
				}
			}
			// Java's own pick on top of compactd's files depends on their
			// sizes (UniversalCompaction's size ratio and amplification), and
			// compactd's Parquet files are not byte for byte Java's: a few
			// percent apart, which can tip Java's next pick to another output
			// level (seen: L4 over compactd's L5 where Java's copy goes to L5).
			// Rows and changelog must be equal regardless (checked above and
			// below); the files of that last compaction are compared only when
			// the pick was the same.
			onTopSame := true
			if got, want := fileLevels(rowsOf(t, r[8])), fileLevels(rowsOf(t, r[9])); !equalStrings(got, want) {
				onTopSame = false
				t.Logf("Java's pick on top of compactd's files differs from its pick on its own: files\n  %v\nvs\n  %v\n(file sizes after compactd's rounds %v %v, after Java's %v %v)",
					got, want, fileSizes(t, c.a, c.roundA[0]), fileSizes(t, c.a, c.roundA[1]), fileSizes(t, c.b, c.roundB[0]), fileSizes(t, c.b, c.roundB[1]))
			}
			for k, id := range []int64{c.roundB[0], c.roundB[1], last[i][1]} {
				if k == 2 && !onTopSame {
					continue
				}
				what := []string{"compactd's round 1", "compactd's round 2", "Java's compaction on top of compactd's"}[k]
				clMetaCompare(t, fmt.Sprintf("snapshot %d (%s)", id, what), clSnapshotMeta(t, c.b, id), clSnapshotMeta(t, c.a, id))
			}
			a, b := streamed[fmt.Sprint("a", i)], streamed[fmt.Sprint("b", i)]
			if stream.Next[fmt.Sprint("a", i)] != stream.Next[fmt.Sprint("b", i)] {
				t.Errorf("the streaming readers started before snapshot %d on A, %d on B", stream.Next[fmt.Sprint("a", i)], stream.Next[fmt.Sprint("b", i)])
			}
			diffRows(t, "streaming reader's first plan (compactd's round 1 files)", clCanon(t, firstPlan(b, true)), clCanon(t, firstPlan(a, true)))
			clCompare(t, "streaming reader's changelog plans", firstPlan(b, false), firstPlan(a, false))
			checkReplay(t, "Java's stream of compactd's compactions", a, rowsOf(t, r[6]), c.s)
			fa, fb := streamed[fmt.Sprint("fa", i)], streamed[fmt.Sprint("fb", i)]
			clCompare(t, "from-snapshot streaming reader", fb, fa)
			checkReplay(t, "Java's from-snapshot stream of compactd's compactions", fa, rowsOf(t, r[6]), c.s)
			// pypaimon reads what compactd's compactions left (its final
			// state is Java's work; pypaimon 2.1.0 misreads aggregation tables
			// whose keys sit at two levels above 0, e.g. L4 over L5, on
			// all-Java tables too).
			checkPy(t, "pypaimon read after compactd's round 1", canon(t, rowsOf(t, r[3])), pyRes[4*i], c.s)
			checkPy(t, "pypaimon read after compactd's round 2", canon(t, rowsOf(t, r[5])), pyRes[4*i+3], c.s)
			pyChangelog(t, "pypaimon's streaming read of compactd's changelog", ref, pyRes[4*i+1])
		})
	}
	for kind, seen := range cover {
		t.Logf("Java's changelog on the reference copies, %s: %v", kind, seen)
		need := []string{"+I", "round 2 -U/+U", "round 2 untouched keys", "round 2 new keys"}
		switch {
		case strings.HasSuffix(kind, "/input"):
			// The changelog is on the writers' APPEND snapshots; the
			// compactions add none (checked by clCover).
			need = []string{"+I", "appends with changelog"}
		case strings.HasPrefix(kind, "first-row"):
			need = []string{"+I", "round 2 untouched keys", "round 2 new keys"}
		}
		if strings.HasPrefix(kind, "deduplicate") || strings.HasPrefix(kind, "rowdedup") {
			need = append(need, "-D")
		}
		if strings.HasPrefix(kind, "rowdedup") {
			need = append(need, "round 2 rewrites without changelog")
		}
		for _, k := range need {
			if seen[k] == 0 {
				t.Errorf("%s: Java's changelog shows no %q; the scenarios no longer exercise it", kind, k)
			}
		}
	}
}

func clEngine(s *fixtures.Scenario) string {
	if strings.Contains(s.Name, "rowdedup") {
		return "rowdedup"
	}
	return engineOf(s)
}

// clSnapshotMeta summarises what a compaction committed besides the data
// files: the snapshot's kind and record counts (changelogRecordCount
// included) and each changelog file's manifest entry (partition, bucket,
// level, rows, file source, sequence range, keys, stats, name prefix and
// extension, existence on disk); names differ between A and B, so they
// are left out.
func clSnapshotMeta(t *testing.T, wh string, id int64) []string {
	t.Helper()
	ctx := context.Background()
	tb := openLocal(t, wh, "db.t")
	s, err := tb.Snapshot(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	opt := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	out := []string{fmt.Sprintf("snapshot %d %v total %d delta %d changelog %s hasChangelogManifest %v",
		s.ID, s.CommitKind, s.TotalRecordCount, s.DeltaRecordCount, opt(s.ChangelogRecordCount), s.ChangelogManifestList != nil)}
	metas, err := tb.ChangelogManifests(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := tb.ReadManifests(ctx, metas)
	if err != nil {
		t.Fatal(err)
	}
	// The compaction's data files too (the delta manifest list: its ADDs and
	// DELETEs), so a difference in stats shows whether it is the changelog
	// writer's or every file's.
	delta, err := manifest.ReadList(ctx, tb.FileIO(), tb.Paths().ManifestPath(s.DeltaManifestList))
	if err != nil {
		t.Fatal(err)
	}
	data, err := tb.ReadManifests(ctx, delta)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for i, e := range append(entries, data...) {
		what := "changelog"
		if i >= len(entries) {
			what = "data"
		}
		f := e.File
		path, err := tb.DataFilePath(&e)
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(path)
		src := "null"
		if f.FileSource != nil {
			src = f.FileSource.String()
		}
		ext := filepath.Ext(f.FileName)
		files = append(files, fmt.Sprintf("  %s %v part=%x bucket=%d/%d L%d rows=%d source=%s seq=%d..%d deleteRows=%s schema=%d minKey=%x maxKey=%x keyStats=%x/%x/%s valueStats=%x/%x/%s statsCols=%v prefix-ok=%v ext=%s exists=%v",
			what, e.Kind, e.Partition, e.Bucket, e.TotalBuckets, f.Level, f.RowCount, src, f.MinSequenceNumber, f.MaxSequenceNumber,
			opt(f.DeleteRowCount), f.SchemaID, f.MinKey, f.MaxKey, f.KeyStats.MinValues, f.KeyStats.MaxValues, nullCounts(f.KeyStats.NullCounts),
			f.ValueStats.MinValues, f.ValueStats.MaxValues, nullCounts(f.ValueStats.NullCounts), f.ValueStatsCols,
			strings.HasPrefix(f.FileName, "changelog-") == (what == "changelog"), ext, statErr == nil || e.Kind != manifest.FileKindAdd))
	}
	sort.Strings(files)
	return append(out, files...)
}

// clMetaCompare reports, line by line (sorted), which fields of
// clSnapshotMeta differ.
func clMetaCompare(t *testing.T, what string, want, got []string) {
	t.Helper()
	if equalStrings(got, want) {
		return
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d snapshot/file lines, Java's %d:\n  %v\nJava's\n  %v", what, len(got), len(want), got, want)
		return
	}
	bad := 0
	for i := range want {
		if got[i] == want[i] {
			continue
		}
		if bad++; bad > 3 {
			continue
		}
		gf, wf := strings.Fields(got[i]), strings.Fields(want[i])
		var diffs []string
		for k := range min(len(gf), len(wf)) {
			if gf[k] != wf[k] {
				diffs = append(diffs, fmt.Sprintf("%.300s (Java's %.300s)", gf[k], wf[k]))
			}
		}
		t.Errorf("%s: %.40s…: %s", what, want[i], strings.Join(diffs, "; "))
	}
	if bad > 3 {
		t.Errorf("%s: %d of %d lines differ", what, bad, len(want))
	}
}

// fileSizes lists "bucket/Llevel/size" of the data files a snapshot added.
func fileSizes(t *testing.T, wh string, id int64) []string {
	t.Helper()
	ctx := context.Background()
	tb := openLocal(t, wh, "db.t")
	s, err := tb.Snapshot(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	delta, err := manifest.ReadList(ctx, tb.FileIO(), tb.Paths().ManifestPath(s.DeltaManifestList))
	if err != nil {
		t.Fatal(err)
	}
	data, err := tb.ReadManifests(ctx, delta)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range data {
		if e.Kind == manifest.FileKindAdd {
			out = append(out, fmt.Sprintf("%d/L%d/%d", e.Bucket, e.File.Level, e.File.FileSize))
		}
	}
	sort.Strings(out)
	return out
}

func nullCounts(c []*int64) string {
	var parts []string
	for _, p := range c {
		if p == nil {
			parts = append(parts, "null")
		} else {
			parts = append(parts, fmt.Sprint(*p))
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// pyChangelog compares pypaimon's changelog read with Java's, accepting
// only pypaimon 2.1.0's refusal of a table (ErrUnsupported: sequence
// groups).
func pyChangelog(t *testing.T, what string, want []interop.Row, r interop.BatchResult) {
	t.Helper()
	switch {
	case errors.Is(r.Err, interop.ErrUnsupported):
		t.Logf("%s: pypaimon refuses this table: %.160s", what, firstLine(r.Err))
	case r.Err != nil:
		t.Errorf("%s: %v", what, r.Err)
	default:
		clCompare(t, what, want, rowsOf(t, r))
	}
}

// javaSnapshot is the snapshot a Java compact verb committed.
func javaSnapshot(t *testing.T, what string, r interop.BatchResult) int64 {
	t.Helper()
	if r.Err != nil || len(r.Lines) == 0 {
		t.Fatalf("%s: %v", what, r.Err)
	}
	var res struct{ Snapshot int64 }
	if err := json.Unmarshal(r.Lines[0], &res); err != nil {
		t.Fatalf("%s: %q: %v", what, r.Lines[0], err)
	}
	return res.Snapshot
}

func latestSnapshotID(t *testing.T, wh string) int64 {
	t.Helper()
	return latestID(t, openLocal(t, wh, "db.t"))
}

// clMeta are the fields the oracles add to changelog and stream rows.
var clMeta = []string{interop.KindField, interop.SnapshotField, interop.BucketField, interop.PlanField}

// clGroup is the (snapshot, partition, bucket) of a changelog row.
func clGroup(r interop.Row) string {
	return fmt.Sprintf("snapshot %v dt=%v bucket %v", r[interop.SnapshotField], r["dt"], r[interop.BucketField])
}

// clText is a row with its kind, as JSON without the plan number.
func clText(t *testing.T, r interop.Row) string {
	t.Helper()
	c := maps.Clone(r)
	delete(c, interop.PlanField)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func clCanon(t *testing.T, rows []interop.Row) []string {
	t.Helper()
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = clText(t, r)
	}
	sort.Strings(out)
	return out
}

// clCompare checks that got holds want's rows group by group
// ((snapshot, partition, bucket)), each group in the same order.
func clCompare(t *testing.T, what string, want, got []interop.Row) {
	t.Helper()
	group := func(rows []interop.Row) map[string][]string {
		g := map[string][]string{}
		for _, r := range rows {
			g[clGroup(r)] = append(g[clGroup(r)], clText(t, r))
		}
		return g
	}
	wg, gg := group(want), group(got)
	keys := slices.Sorted(maps.Keys(wg))
	for k := range gg {
		if _, ok := wg[k]; !ok {
			keys = append(keys, k)
		}
	}
	bad := 0
	for _, k := range keys {
		w, g := wg[k], gg[k]
		if slices.Equal(w, g) {
			continue
		}
		if bad++; bad > 5 {
			continue
		}
		ws, gs := slices.Sorted(slices.Values(w)), slices.Sorted(slices.Values(g))
		if slices.Equal(ws, gs) {
			t.Errorf("%s: %s: the same %d rows in another order:\n  got  %v\n  want %v", what, k, len(g), head(g, 6), head(w, 6))
			continue
		}
		diffRows(t, what+": "+k, ws, gs)
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d (snapshot, partition, bucket) groups differ (%d rows, want %d)", what, bad, len(keys), len(got), len(want))
	}
}

// firstPlan returns a stream's first-plan rows (first) or the rest.
func firstPlan(rows []interop.Row, first bool) []interop.Row {
	var out []interop.Row
	for _, r := range rows {
		if (r[interop.PlanField] == int64(0)) == first {
			out = append(out, r)
		}
	}
	return out
}

// checkStreamIsChangelog: after its first plan a streaming reader of a
// changelog-producer table receives exactly the changelog files of the
// snapshots it follows (ChangelogFollowUpScanner), i.e. what the changelog
// verb reads for those snapshots.
func checkStreamIsChangelog(t *testing.T, stream, changelog []interop.Row, from int64) {
	t.Helper()
	rest := firstPlan(stream, false)
	var want []interop.Row
	for _, r := range changelog {
		if r[interop.SnapshotField].(int64) >= from {
			want = append(want, r)
		}
	}
	if len(rest) == 0 {
		t.Fatal("the streaming reader received no changelog")
	}
	clCompare(t, "streaming reader vs the changelog verb", want, rest)
}

// checkReplay applies a stream's rows in order to a table state (+I/+U
// upsert; -U/-D must retract exactly the key's current row) and compares
// the state with Java's read after the last snapshot the stream consumed.
// A downstream consumer materialising the changelog depends on both.
func checkReplay(t *testing.T, what string, rows, read []interop.Row, s *fixtures.Scenario) {
	t.Helper()
	if s.Spec.Options["changelog-producer"] == "input" {
		// The writers' own rows: a -D carries only what the writer wrote
		// and may name a key that does not exist; nothing to replay.
		return
	}
	// changelog-producer.row-deduplicate-ignore-fields: an update changing
	// only those columns emits no changelog, and a later -U/-D carries the
	// stored (newer) values of them, so a consumer cannot know them: they are
	// left out of the comparison.
	var ignored []string
	if s.Spec.Options["changelog-producer.row-deduplicate"] == "true" {
		for _, f := range strings.Split(s.Spec.Options["changelog-producer.row-deduplicate-ignore-fields"], ",") {
			if f = strings.TrimSpace(f); f != "" {
				ignored = append(ignored, f)
			}
		}
	}
	strip := func(r interop.Row) interop.Row {
		v := maps.Clone(r)
		for _, m := range append(slices.Clone(clMeta), ignored...) {
			delete(v, m)
		}
		return v
	}
	state := map[string]string{}
	keyOf := func(r interop.Row) string {
		var k []string
		for _, c := range s.Spec.PrimaryKeys {
			k = append(k, fmt.Sprint(r[c]))
		}
		return strings.Join(k, "|")
	}
	bad := 0
	for _, r := range rows {
		v := strip(r)
		text := canon(t, []interop.Row{v})[0]
		k := keyOf(v)
		switch r[interop.KindField] {
		case "+I", "+U":
			state[k] = text
		case "-U", "-D":
			if state[k] != text && bad < 5 {
				bad++
				t.Errorf("%s: %v of key %s retracts %s, the consumer holds %q", what, r[interop.KindField], k, text, state[k])
			}
			delete(state, k)
		default:
			t.Fatalf("%s: row kind %v", what, r[interop.KindField])
		}
	}
	got := slices.Sorted(maps.Values(state))
	want := make([]interop.Row, len(read))
	for i, r := range read {
		want[i] = strip(r)
	}
	diffRows(t, what+": the stream replayed vs Java's read", canon(t, want), got)
}

// clCover counts, on the reference copy, what Java's changelog exercises.
func clCover(t *testing.T, seen map[string]int, changelog, readRound1 []interop.Row, c *clTable) {
	t.Helper()
	keyOf := func(r interop.Row) string { return fmt.Sprint(r["dt"], "|", r["id"]) }
	round1 := map[string]bool{}
	for _, r := range readRound1 {
		round1[keyOf(r)] = true
	}
	touched := map[string]bool{}
	appends := map[any]bool{}
	for _, r := range changelog {
		kind := r[interop.KindField].(string)
		seen[kind]++
		if c.producer == "input" {
			if id := r[interop.SnapshotField]; id == c.roundB[0] || id == c.roundB[1] {
				if !appends[id] {
					t.Errorf("%s: Java's compaction (snapshot %v) wrote changelog with changelog-producer=input", c.s.Name, id)
				}
				appends[id] = true
			} else if !appends[id] {
				appends[id] = true
				seen["appends with changelog"]++
			}
		}
		if r[interop.SnapshotField] != c.roundB[1] {
			continue
		}
		touched[keyOf(r)] = true
		switch {
		case kind == "-U" || kind == "+U":
			seen["round 2 -U/+U"]++
		case kind == "+I" && !round1[keyOf(r)]:
			seen["round 2 new keys"]++
		}
	}
	for k := range round1 {
		if !touched[k] {
			seen["round 2 untouched keys"]++
		}
	}
	if clEngine(c.s) == "rowdedup" {
		// Keys round 2 rewrote that were in round 1 but got no changelog.
		var written []map[string]any
		r1, r2 := clRounds(len(c.s.Commits))
		for _, cm := range c.s.Commits[r1:r2] {
			for _, rec := range cm.Records {
				written = append(written, rec.Values)
			}
		}
		for _, v := range written {
			k := fmt.Sprint(nil, "|", v["id"])
			if round1[k] && !touched[k] {
				seen["round 2 rewrites without changelog"]++
			}
		}
	}
}

// TestValueStatsOfBytesColumnsAreJavas is the smallest case of the one
// difference TestChangelogProducersAgainstJava finds in compactd's files:
// Java Paimon 1.4.2 records no min/max for BYTES (BINARY/VARBINARY)
// columns in a Parquet file's value stats — its ParquetSimpleStatsExtractor
// (toFieldStats) turns their footer statistics into min = max = null,
// keeping the null count — while compactd's stats collector keeps a
// (truncated) min and max. The same holds for every data and changelog file
// compactd writes. One Java-written full-compaction table, compacted fully
// by compactd (A) and by Java (B): the compaction's data and changelog
// file entries must carry the same stats.
func TestValueStatsOfBytesColumnsAreJavas(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	wh := filepath.Join(t.TempDir(), "a")
	var rows []map[string]any
	for k := range 50 {
		rows = append(rows, map[string]any{"id": k, "b": "cGF5bG9hZA==", "v": fmt.Sprint("v", k), "_commit": k % 2})
	}
	spec := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "id", Type: "BIGINT NOT NULL"}, {Name: "b", Type: "BYTES"}, {Name: "v", Type: "STRING"}},
		PrimaryKeys: []string{"id"},
		Bucket:      1,
		Options:     map[string]string{"write-only": "true", "changelog-producer": "full-compaction"},
	}
	j.Create(wh, "db.t", spec, jsonl(t, rows))
	ref := filepath.Join(t.TempDir(), "b")
	copyDir(t, wh, ref)
	sum, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Compact(ref, "db.t", interop.CompactOptions{}); got != sum.Snapshot {
		t.Fatalf("compactd committed snapshot %d, Java %d", sum.Snapshot, got)
	}
	clMetaCompare(t, "the full compaction's files", clSnapshotMeta(t, ref, sum.Snapshot), clSnapshotMeta(t, wh, sum.Snapshot))
}
