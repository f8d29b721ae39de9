package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os/exec"
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
)

// Postponed buckets (bucket = -2, issue 17) against Java's own postpone compaction.
//
// Java writers (three commit users, several commits each) write a postpone table: every row
// lands in bucket-postpone, invisible to batch readers. A copy of the table is taken; compactd
// compacts the table, the harness's postpone-compact (Java's Flink postpone compaction rebuilt
// on the core API, see interop/README.md) compacts the copy. Then:
//   - Java reads both with the bucket of every row: equal rows, every key in the same bucket;
//   - pypaimon and compactd's scan read the same rows, and all equal the merged rows the
//     commits imply (the model, which does not depend on Java);
//   - the files are laid out alike: per partition and bucket the same levels, row counts,
//     total-bucket count, file format and source; no postpone file left; one COMPACT snapshot.
//
// A second round writes more (into an existing and, partitioned, a new partition), optionally
// after ALTER TABLE SET postpone.default-bucket-num: an existing partition keeps its bucket
// count, a new one takes the (new) default. A third round has Java write and run its own
// postpone compaction on top of compactd's result, compared with the same on the copy.
//
// Writers never race on what decides a result: Java gives no order between writers (its
// compaction reads them in parallel), so deduplicate and first-row writers own disjoint keys,
// partial-update writers own disjoint (key, sequence group) pairs with increasing sequence
// fields, and aggregation uses order-free functions (sum, max) on shared keys.

const (
	ppWriters = 3
	ppCommits = 4
	ppRows    = 40 // per commit and writer: 3 × 4 × 40 = 480 rows a round
	ppIDs     = 300
)

// ppModel is the merged state the commits imply: key "dt|id" → row (nil: deleted).
type ppModel map[string]interop.Row

type ppEngine struct {
	name    string
	columns []fixtures.Column
	options map[string]string
	// row draws one write of writer w (round r, commit c, i-th row) and applies it to m.
	row func(rng *rand.Rand, m ppModel, r, w, c, i int, dt string, seq *int64) map[string]any
	// pyUnsupported: pypaimon refuses the table (ErrUnsupported), e.g. sequence groups.
	pyUnsupported bool
	// onlyPartitioned: the engine is tested on a partitioned table only.
	onlyPartitioned bool
}

func ppKey(dt string, id int64) string { return fmt.Sprintf("%s|%d", dt, id) }

// ownID draws an id that writer w owns (id ≡ w mod ppWriters).
func ownID(rng *rand.Rand, w int) int64 {
	return int64(rng.IntN(ppIDs/ppWriters)*ppWriters + w)
}

func ppEngines() []ppEngine {
	return []ppEngine{
		{
			name:    "deduplicate",
			columns: []fixtures.Column{{Name: "v", Type: "STRING"}, {Name: "n", Type: "BIGINT"}},
			options: map[string]string{},
			row: func(rng *rand.Rand, m ppModel, r, w, c, i int, dt string, _ *int64) map[string]any {
				id := ownID(rng, w)
				k := ppKey(dt, id)
				if old, ok := m[k]; ok && old != nil && rng.IntN(5) == 0 {
					m[k] = nil
					return map[string]any{"_kind": "-D", "id": id, "v": old["v"], "n": old["n"]}
				}
				v := fmt.Sprintf("r%d-w%d-c%d-%d-%x", r, w, c, i, rng.Uint32())
				n := int64(rng.Uint64())
				row := interop.Row{"id": id, "v": v, "n": n}
				m[k] = row
				return map[string]any{"id": id, "v": v, "n": n}
			},
		},
		{
			name: "partial-update-sequence-groups",
			columns: []fixtures.Column{
				{Name: "a", Type: "STRING"}, {Name: "sa", Type: "BIGINT"},
				{Name: "b", Type: "STRING"}, {Name: "sb", Type: "BIGINT"},
			},
			options: map[string]string{
				"merge-engine":             "partial-update",
				"fields.sa.sequence-group": "a",
				"fields.sb.sequence-group": "b",
			},
			pyUnsupported: true,
			row: func(rng *rand.Rand, m ppModel, r, w, c, i int, dt string, seq *int64) map[string]any {
				// Writers 0 and 1 own group a of even and odd ids; writer 2 owns group b of all.
				var id int64
				if w < 2 {
					id = int64(rng.IntN(ppIDs/2)*2 + w)
				} else {
					id = int64(rng.IntN(ppIDs))
				}
				k := ppKey(dt, id)
				row := m[k]
				if row == nil {
					row = interop.Row{"id": id, "a": nil, "sa": nil, "b": nil, "sb": nil}
					m[k] = row
				}
				*seq++ // strictly increasing: no two writes of a group tie
				val := fmt.Sprintf("r%d-w%d-c%d-%d", r, w, c, i)
				if w < 2 {
					row["a"], row["sa"] = val, *seq
					return map[string]any{"id": id, "a": val, "sa": *seq}
				}
				row["b"], row["sb"] = val, *seq
				return map[string]any{"id": id, "b": val, "sb": *seq}
			},
		},
		{
			name:    "aggregation",
			columns: []fixtures.Column{{Name: "total", Type: "BIGINT"}, {Name: "mx", Type: "INT"}},
			options: map[string]string{
				"merge-engine":                    "aggregation",
				"fields.total.aggregate-function": "sum",
				"fields.mx.aggregate-function":    "max",
			},
			row: func(rng *rand.Rand, m ppModel, r, w, c, i int, dt string, _ *int64) map[string]any {
				id := int64(rng.IntN(ppIDs)) // shared by every writer: sum and max commute
				k := ppKey(dt, id)
				add, mx := int64(rng.IntN(1000)-300), int64(rng.IntN(1_000_000))
				row := m[k]
				if row == nil {
					row = interop.Row{"id": id, "total": int64(0), "mx": mx}
					m[k] = row
				}
				row["total"] = row["total"].(int64) + add
				row["mx"] = max(row["mx"].(int64), mx)
				return map[string]any{"id": id, "total": add, "mx": mx}
			},
		},
		{
			// Deletion vectors make Java's writer compact level 0 up through its lookup: the
			// postponed rows land at the top level, and a later round's rows mark the rows they
			// replace in deletion vectors (index files in the compact increment).
			name:            "deduplicate-deletion-vectors",
			columns:         []fixtures.Column{{Name: "v", Type: "STRING"}},
			options:         map[string]string{"deletion-vectors.enabled": "true"},
			onlyPartitioned: true,
			row: func(rng *rand.Rand, m ppModel, r, w, c, i int, dt string, _ *int64) map[string]any {
				id := ownID(rng, w)
				v := fmt.Sprintf("r%d-w%d-c%d-%d", r, w, c, i)
				m[ppKey(dt, id)] = interop.Row{"id": id, "v": v}
				return map[string]any{"id": id, "v": v}
			},
		},
		{
			name:    "first-row",
			columns: []fixtures.Column{{Name: "v", Type: "STRING"}},
			options: map[string]string{"merge-engine": "first-row"},
			row: func(rng *rand.Rand, m ppModel, r, w, c, i int, dt string, _ *int64) map[string]any {
				id := ownID(rng, w)
				k := ppKey(dt, id)
				v := fmt.Sprintf("r%d-w%d-c%d-%d", r, w, c, i)
				if _, ok := m[k]; !ok {
					m[k] = interop.Row{"id": id, "v": v}
				}
				return map[string]any{"id": id, "v": v}
			},
		},
	}
}

// ppRound builds one round's write script: writers interleaved commit by commit, each writer
// its own commit user (users of a round are new: "r<round>w<w>").
func ppRound(t *testing.T, rng *rand.Rand, e ppEngine, m ppModel, r int, parts []string, seq *int64) []byte {
	t.Helper()
	var rows []map[string]any
	for c := range ppCommits {
		for w := range ppWriters {
			user := fmt.Sprintf("r%dw%d", r, w)
			for i := range ppRows {
				dt := parts[rng.IntN(len(parts))]
				row := e.row(rng, m, r, w, c, i, dt, seq)
				if dt != "" {
					row["dt"] = dt
					if mr := m[ppKey(dt, row["id"].(int64))]; mr != nil {
						mr["dt"] = dt
					}
				}
				row["_user"], row["_commit"] = user, c
				rows = append(rows, row)
			}
		}
	}
	return jsonl(t, rows)
}

func (m ppModel) rows() []interop.Row {
	var out []interop.Row
	for _, r := range m {
		if r != nil {
			out = append(out, interop.Normalize(map[string]any(r)).(map[string]any))
		}
	}
	return out
}

// ppLayout lists the latest snapshot's live data files as the comparison sees them (no names,
// sequence numbers or sizes: those legitimately differ between two writers of the same result),
// the total-bucket count of each partition's real buckets, and the snapshot's kind.
// ppBucketShape reduces ppLayout's files to one line per bucket: partition, bucket, total
// buckets, and whether it holds level-0 files.
func ppBucketShape(files []string) []string {
	level0 := map[string]bool{}
	var order []string
	for _, f := range files {
		fields := strings.Fields(f)
		var key []string
		l0 := false
		for _, x := range fields {
			switch {
			case strings.HasPrefix(x, "level="):
				l0 = x == "level=0"
			case strings.HasPrefix(x, "rows="), x == "parquet", x == "avro", x == "orc", x == "APPEND", x == "COMPACT":
			default:
				key = append(key, x)
			}
		}
		k := strings.Join(key, " ")
		if _, ok := level0[k]; !ok {
			order = append(order, k)
		}
		level0[k] = level0[k] || l0
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, fmt.Sprintf("%s level0=%v", k, level0[k]))
	}
	sort.Strings(out)
	return out
}

func ppLayout(t *testing.T, wh string) (files []string, totals map[string]int32, kind table.CommitKind) {
	t.Helper()
	ctx := context.Background()
	tb := openLocal(t, wh, "db.t")
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tb.FileSet(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	totals = map[string]int32{}
	for _, p := range fs.Partitions {
		for _, b := range p.Buckets {
			for _, e := range b.Files {
				ext := e.File.FileName[strings.LastIndexByte(e.File.FileName, '.')+1:]
				files = append(files, fmt.Sprintf("%s bucket=%d total=%d level=%d rows=%d %s %s",
					p.Path, e.Bucket, e.TotalBuckets, e.File.Level, e.File.RowCount, ext, e.File.FileSource))
				if e.Bucket >= 0 {
					if old, ok := totals[p.Path]; ok && old != e.TotalBuckets {
						t.Errorf("%s: partition %s has files of total buckets %d and %d", wh, p.Path, old, e.TotalBuckets)
					}
					totals[p.Path] = e.TotalBuckets
				}
			}
		}
	}
	sort.Strings(files)
	return files, totals, s.CommitKind
}

// ppCase is one table of the test: an engine, partitioned or not, with or without the
// default-bucket-num change; wh is compacted by compactd, ref (its copy) by Java.
type ppCase struct {
	name          string
	e             ppEngine
	partitioned   bool
	changeDefault bool
	cli           string // compactd binary when this case compacts through the CLI, else the Go API
	rng           *rand.Rand
	m             ppModel
	seq           int64
	wh, ref, dir  string
	parts         [3][]string // partitions written in each round
	totals0       map[string]int32
	failed        bool // a check failed: later rounds are not run on it
}

func (c *ppCase) file(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(c.dir, name)
	if err := writeFile(p, data); err != nil {
		t.Fatal(err)
	}
	return p
}

// ppCheck compares one case's tables after a round: Java's reads with buckets (jw: compactd's
// table, jr: the copy Java compacted), pypaimon's (pw, pr), compactd's scan, the file layout.
func ppCheck(t *testing.T, c *ppCase, jw, jr []byte, pw, pr interop.BatchResult, what string) {
	t.Helper()
	want := canon(t, c.m.rows())
	if len(want) == 0 {
		t.Fatalf("%s: the model is empty", what)
	}
	var withBucket [2][]interop.Row
	for i, b := range [][]byte{jw, jr} {
		rows, err := interop.ParseRows(b)
		if err != nil {
			t.Fatal(err)
		}
		withBucket[i] = rows
	}
	// Equal rows with equal "_bucket": every key sits in the bucket Java's compaction chose.
	diffRows(t, what+": Java's rows with their buckets, compactd's table vs Java's postpone compaction of the copy",
		canon(t, withBucket[1]), canon(t, withBucket[0]))
	strip := func(rows []interop.Row) []interop.Row {
		out := make([]interop.Row, len(rows))
		for i, r := range rows {
			out[i] = maps.Clone(r)
			delete(out[i], "_bucket")
		}
		return out
	}
	diffRows(t, what+": Java's read of compactd's table vs the merged rows of the commits", want, canon(t, strip(withBucket[0])))
	diffRows(t, what+": Java's read of its own compaction of the copy vs the merged rows of the commits", want, canon(t, strip(withBucket[1])))
	diffRows(t, what+": compactd's scan", want, canon(t, compactdRows(t, c.wh, "db.t")))
	for i, r := range []interop.BatchResult{pw, pr} {
		w := []string{c.wh, c.ref}[i]
		err := r.Err
		var rows []interop.Row
		if err == nil {
			rows, err = interop.ParseRows(joinLines(r.Lines))
		}
		switch {
		case err == nil:
			diffRows(t, what+": pypaimon's read of "+w, want, canon(t, rows))
		case c.e.pyUnsupported && errors.Is(err, interop.ErrUnsupported):
			t.Logf("%s: pypaimon refuses %s, as expected for %s", what, w, c.e.name)
		default:
			t.Errorf("%s: pypaimon read %s: %v", what, w, err)
		}
	}
	gotFiles, gotTotals, gotKind := ppLayout(t, c.wh)
	wantFiles, wantTotals, wantKind := ppLayout(t, c.ref)
	// Round 0 moves postponed rows into empty buckets: one level-0 run each, which Java's
	// writer leaves (or, lookup engines, lifts to the top level) exactly as compactd does. On
	// top of existing files the universal pick weighs file sizes, and compactd's Parquet files
	// are not byte for byte Java's, so a size-ratio pick may differ (a lookup compaction to
	// level 4 where Java merged into level 5); what readers rely on must still agree: the
	// buckets, their counts, and whether level-0 files remain.
	exact := strings.HasPrefix(what, "round0")
	if !exact {
		gotFiles, wantFiles = ppBucketShape(gotFiles), ppBucketShape(wantFiles)
	}
	if !slices.Equal(gotFiles, wantFiles) {
		t.Errorf("%s: file layout differs from Java's postpone compaction of the copy\ncompactd's table:\n  %s\nJava's:\n  %s",
			what, strings.Join(gotFiles, "\n  "), strings.Join(wantFiles, "\n  "))
	}
	if fmt.Sprint(gotTotals) != fmt.Sprint(wantTotals) {
		t.Errorf("%s: total buckets per partition %v, Java's %v", what, gotTotals, wantTotals)
	}
	if gotKind != table.CommitCompact || wantKind != table.CommitCompact {
		t.Errorf("%s: latest snapshot kinds %s (compactd's table) and %s (Java's), want COMPACT", what, gotKind, wantKind)
	}
	for _, f := range gotFiles {
		if strings.Contains(f, "bucket=-2 ") {
			t.Errorf("%s: a postpone file is still live after compaction: %s", what, f)
		}
	}
}

// ppBatch runs Java verbs in one JVM and returns each one's output (joined lines) and error.
func ppBatch(t *testing.T, j *interop.JavaOracle, reqs []interop.BatchRequest) []interop.BatchResult {
	t.Helper()
	if len(reqs) == 0 {
		return nil
	}
	res, err := j.Batch(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func ppVerb(verb, wh string, flags ...string) interop.BatchRequest {
	f := map[string]string{"warehouse": wh, "table": "db.t"}
	for i := 0; i+1 < len(flags); i += 2 {
		f[flags[i]] = flags[i+1]
	}
	return interop.BatchRequest{Verb: verb, Flags: f}
}

func joinLines(lines [][]byte) []byte {
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	return b
}

// ppCompactd compacts the table with compactd, through the CLI when bin is set, else the Go API.
func ppCompactd(t *testing.T, bin, wh string) {
	t.Helper()
	if bin != "" {
		out, err := exec.Command(bin, "compact", wh, "db.t").CombinedOutput()
		if err != nil {
			t.Fatalf("compactd compact %s db.t: %v\n%s", wh, err, out)
		}
		t.Logf("compactd compact: %s", strings.TrimSpace(string(out)))
		return
	}
	sum, err := compact.Run(context.Background(), openLocal(t, wh, "db.t"), compact.Options{})
	if err != nil {
		t.Fatalf("compactd compact (Go API): %v", err)
	}
	if sum.Snapshot == 0 {
		t.Fatal("compactd found nothing to compact in a table with postponed rows")
	}
}

// TestPostponeBucketsMatchJavaPostponeCompaction: see the comment at the top of the file. The
// nine tables (four engines, partitioned or not, and deduplicate with deletion vectors) go through the rounds in lockstep, so each
// step's Java and pypaimon work for all of them runs in one JVM and one Python process.
func TestPostponeBucketsMatchJavaPostponeCompaction(t *testing.T) {
	t.Parallel()
	j := interop.Java(t)
	py := interop.Python(t)
	bin := buildCLI(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	var cases []*ppCase
	for ei, e := range ppEngines() {
		for pi, partitioned := range []bool{true, false} {
			if e.onlyPartitioned && !partitioned {
				continue
			}
			// Half the cases change postpone.default-bucket-num before the second round; the
			// CLI compacts the partitioned cases, the Go API the unpartitioned ones.
			c := &ppCase{e: e, partitioned: partitioned, changeDefault: (ei%2 == 0) == partitioned,
				rng: rand.New(rand.NewPCG(seed, uint64(2*ei+pi))), m: ppModel{}, dir: t.TempDir()}
			c.name = fmt.Sprintf("%s/partitioned=%v/default-change=%v", e.name, partitioned, c.changeDefault)
			c.wh, c.ref = filepath.Join(c.dir, "wh"), filepath.Join(c.dir, "ref")
			c.parts = [3][]string{{""}, {""}, {""}}
			if partitioned {
				c.cli = bin
				c.parts = [3][]string{
					{"2024-01-01", "2024-01-02"},
					{"2024-01-02", "2024-01-03"}, // one existing, one new partition
					{"2024-01-01", "2024-01-03", "2024-01-04"},
				}
			}
			cases = append(cases, c)
		}
	}
	// run runs f as case c's subtest of the step; a failure retires the case.
	run := func(step string, c *ppCase, f func(t *testing.T)) {
		if c.failed {
			return
		}
		if !t.Run(c.name+"/"+step, f) {
			c.failed = true
		}
	}
	// compare runs, for every live case, pre(c) (called once per case) then Java's reads of both tables in one JVM,
	// pypaimon's in one process, and ppCheck.
	compare := func(what string, pre func(c *ppCase) []interop.BatchRequest) {
		var reqs, pyReqs []interop.BatchRequest
		start, first := map[*ppCase]int{}, map[*ppCase]int{}
		for _, c := range cases {
			if c.failed {
				continue
			}
			start[c] = len(reqs)
			reqs = append(reqs, pre(c)...)
			first[c] = len(reqs)
			reqs = append(reqs, ppVerb("read", c.wh, "with-bucket", "true"), ppVerb("read", c.ref, "with-bucket", "true"))
			pyReqs = append(pyReqs, ppVerb("read", c.wh), ppVerb("read", c.ref))
		}
		res := ppBatch(t, j, reqs)
		pyRes, err := py.Batch(context.Background(), pyReqs)
		if err != nil {
			t.Fatalf("pypaimon: %v", err)
		}
		pi := 0
		for _, c := range cases {
			if c.failed {
				continue
			}
			k, from := first[c], start[c]
			run(what, c, func(t *testing.T) {
				for i := from; i < k+2; i++ {
					if res[i].Err != nil {
						t.Fatalf("java %s %v: %v", reqs[i].Verb, reqs[i].Flags, res[i].Err)
					}
				}
				ppCheck(t, c, joinLines(res[k].Lines), joinLines(res[k+1].Lines), pyRes[pi], pyRes[pi+1], what)
			})
			pi += 2
		}
	}
	spec := func(c *ppCase) fixtures.Spec {
		s := fixtures.Spec{
			Columns:     append([]fixtures.Column{{Name: "id", Type: "BIGINT NOT NULL"}}, c.e.columns...),
			PrimaryKeys: []string{"id"},
			Bucket:      -2,
			Options:     map[string]string{"postpone.default-bucket-num": "3"},
		}
		maps.Copy(s.Options, c.e.options)
		if c.partitioned {
			s.Columns = append([]fixtures.Column{{Name: "dt", Type: "STRING NOT NULL"}}, s.Columns...)
			s.PrimaryKeys = []string{"dt", "id"}
			s.PartitionKeys = []string{"dt"}
		}
		return s
	}

	// Round 0: Java's writers; postponed rows are invisible until compacted.
	var reqs []interop.BatchRequest
	for _, c := range cases {
		reqs = append(reqs,
			ppVerb("create", c.wh, "spec", c.file(t, "spec.json", spec(c).JSON()),
				"rows", c.file(t, "r0.jsonl", ppRound(t, c.rng, c.e, c.m, 0, c.parts[0], &c.seq))),
			ppVerb("read", c.wh))
	}
	res := ppBatch(t, j, reqs)
	for i, c := range cases {
		run("round0-write", c, func(t *testing.T) {
			if res[2*i].Err != nil || res[2*i+1].Err != nil {
				t.Fatalf("java create/read: %v %v", res[2*i].Err, res[2*i+1].Err)
			}
			if n := len(res[2*i+1].Lines); n != 0 {
				t.Fatalf("Java reads %d rows of a postpone table before any compaction, want 0", n)
			}
			copyDir(t, c.wh, c.ref)
			ppCompactd(t, c.cli, c.wh)
		})
	}
	javaCompactsRef := func(c *ppCase) []interop.BatchRequest {
		return []interop.BatchRequest{ppVerb("postpone-compact", c.ref)}
	}
	compare("round0", javaCompactsRef)
	for _, c := range cases {
		run("round0-buckets", c, func(t *testing.T) {
			_, c.totals0, _ = ppLayout(t, c.ref)
			for _, p := range c.parts[0] {
				if c.totals0[ppPath(p)] != 3 {
					t.Errorf("Java gave partition %q %d buckets, want postpone.default-bucket-num=3", p, c.totals0[ppPath(p)])
				}
			}
		})
	}

	// Round 1: more postponed rows (after ALTER TABLE SET postpone.default-bucket-num=5 in half
	// the cases); an existing partition keeps its bucket count, a new one takes the default.
	reqs = nil
	owner := []*ppCase{}
	for _, c := range cases {
		if c.failed {
			continue
		}
		if c.changeDefault {
			for _, w := range []string{c.wh, c.ref} {
				reqs = append(reqs, ppVerb("alter", w, "set", `{"postpone.default-bucket-num":"5"}`))
				owner = append(owner, c)
			}
		}
		r1 := c.file(t, "r1.jsonl", ppRound(t, c.rng, c.e, c.m, 1, c.parts[1], &c.seq))
		reqs = append(reqs, ppVerb("write", c.wh, "rows", r1), ppVerb("write", c.ref, "rows", r1))
		owner = append(owner, c, c)
	}
	res = ppBatch(t, j, reqs)
	for _, c := range cases {
		run("round1-write", c, func(t *testing.T) {
			for i, r := range res {
				if owner[i] == c && r.Err != nil {
					t.Fatalf("java %s %v: %v", reqs[i].Verb, reqs[i].Flags, r.Err)
				}
			}
			ppCompactd(t, c.cli, c.wh)
		})
	}
	compare("round1", javaCompactsRef)
	for _, c := range cases {
		run("round1-buckets", c, func(t *testing.T) {
			_, totals1, _ := ppLayout(t, c.ref)
			for p, n := range c.totals0 {
				if totals1[p] != n {
					t.Errorf("partition %q went from %d to %d buckets", p, n, totals1[p])
				}
			}
			if c.partitioned {
				want := int32(3)
				if c.changeDefault {
					want = 5
				}
				if got := totals1[ppPath("2024-01-03")]; got != want {
					t.Errorf("the new partition has %d buckets, want %d", got, want)
				}
			}
		})
	}

	// Round 2: Java keeps writing and runs its own postpone compaction on top of compactd's
	// result; the copy gets the same.
	compare("round2-java-on-top", func(c *ppCase) []interop.BatchRequest {
		r2 := c.file(t, "r2.jsonl", ppRound(t, c.rng, c.e, c.m, 2, c.parts[2], &c.seq))
		return []interop.BatchRequest{
			ppVerb("write", c.wh, "rows", r2), ppVerb("postpone-compact", c.wh),
			ppVerb("write", c.ref, "rows", r2), ppVerb("postpone-compact", c.ref),
		}
	})
}

// ppPath is the partition directory of dt ("" unpartitioned).
func ppPath(dt string) string {
	if dt == "" {
		return ""
	}
	return "dt=" + dt
}
