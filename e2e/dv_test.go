package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
)

// The deletion-vector proof (issue 14): Java Paimon's own compaction of a
// copy is the reference at every step, Java and pypaimon read compactd's
// output, and Java keeps writing and compacting on top of it.
//
// The tests are batched by phase over all scenarios (one JVM and one Python
// process per phase) to keep the suite within its time budget.

// dvCompactd runs compactd's compaction of wh's db.t: its own minor pick
// (compact.Options{}: one universal / lookup pick per bucket, as Java's
// TableWriteImpl.compact(partition, bucket, false)) or a full compaction.
func dvCompactd(ctx context.Context, wh string, full bool) (*compact.Summary, error) {
	tb, err := table.Open(ctx, tableFIO(), wh, "db", "t")
	if err != nil {
		return nil, err
	}
	return compact.Run(ctx, tb, compact.Options{Full: full})
}

// dvSummary renders dvs output as sorted "partition/bucket/Llevel/rows/dv"
// texts: what must be equal between compactd's and Java's compaction of
// the same files (names differ).
func dvSummary(files []interop.DVFile) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		dv := "-"
		if f.DV != nil {
			dv = fmt.Sprint(*f.DV)
		}
		out = append(out, fmt.Sprintf("%s/%d/L%d/%d rows/dv %s", f.Partition, f.Bucket, f.Level, f.RecordCount, dv))
	}
	sort.Strings(out)
	return out
}

// dvTotals counts the files with a deletion vector and their positions, and
// checks that Java reads every vector back with the cardinality the index
// manifest records and that no level-0 file has one.
func dvTotals(t *testing.T, what string, files []interop.DVFile) (withDV int, positions int64) {
	t.Helper()
	for _, f := range files {
		if f.DV == nil {
			continue
		}
		withDV++
		positions += *f.DV
		if f.Level == 0 {
			t.Errorf("%s: level-0 file %s has a deletion vector", what, f.File)
		}
		if f.DVMeta != nil && *f.DVMeta != *f.DV {
			t.Errorf("%s: %s: vector holds %d positions, the index manifest says %d", what, f.File, *f.DV, *f.DVMeta)
		}
		if *f.DV > f.RecordCount {
			t.Errorf("%s: %s: vector of %d positions in a file of %d rows", what, f.File, *f.DV, f.RecordCount)
		}
	}
	return withDV, positions
}

func dvFilesOf(t *testing.T, r interop.BatchResult) []interop.DVFile {
	t.Helper()
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	files, err := interop.ParseDVFiles(bytes.Join(r.Lines, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// roundScript is commits [from, from+4) of the scenario again (the base
// commit is commit 0) under fresh commit users "<round>-<user>": a Java
// writer that keeps committing into the compacted table, updating and
// deleting keys of the large base file.
func roundScript(t *testing.T, s *fixtures.Scenario, from int, round string) []byte {
	t.Helper()
	out := secondRound(t, s.RowsJSONLRange(from, from+4))
	return bytes.ReplaceAll(out, []byte(`"round2-`), []byte(`"`+round+`-`))
}

// TestDeletionVectorCompactionAgainstJava is the proof on every Java-written
// deletion-vector scenario (fixtures.AllDeletionVectors: deduplicate with
// and without sequence.field, partial-update with sequence.field and with
// sequence groups, aggregation; partitioned and not; 1 and 4 buckets;
// deletes, updates, two or three independent writers with out-of-order
// sequence numbers; 24 write-only level-0 runs over a large base, some after
// a compacting Java writer already left deletion vectors; 32- and 64-bit
// vectors). Copy A is compacted by compactd, copy B by Java:
//
//  1. minor: compactd's pick vs Java's `compact --full false`. Java's and
//     pypaimon's reads of A equal Java's read of B; the files (partition,
//     bucket, level, rows) and each file's deletion-vector cardinality as
//     Java reads it back are the same on both (the picks are identical), so
//     where Java writes deletion vectors compactd wrote them too, in index
//     files Java reads; Java's read of A without the vectors returns exactly
//     the positions they hide more (Java applies compactd's vectors).
//  2. full: Java's read and the files of A as B's; no vector is left
//     (pypaimon reads a full compaction of compactd's at step 4).
//  3. a Java writer commits more rows into A and B and Java's own minor
//     compaction runs on top of compactd's files: same rows, files and
//     vectors on both;
//  4. Java writes again (level-0 runs over Java's vectors), then compactd's
//     minor and full compaction on top of Java's vs Java's on B: same rows,
//     files and vectors after each, no vector left after the full one, and
//     pypaimon agrees after each.
//
// pypaimon's only accepted refusals are sequence groups and 64-bit vectors
// (checkPy). For every engine Java's minor compactions must write deletion
// vectors at each of steps 1, 3 and 4 (checked on B alone), so the vector
// path is exercised at every step, not only full compactions.
func TestDeletionVectorCompactionAgainstJava(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	py := interop.Python(t)
	start := time.Now()
	phase := func(what string) { t.Logf("%v: %s", time.Since(start).Round(time.Millisecond), what) }
	scenarios := fixtures.AllDeletionVectors(11)
	built := interop.BuildScenarios(t, t.TempDir(), scenarios, interop.BuildOptions{})
	phase("Java built the scenarios")
	refs := make([]string, len(built))
	failed := make([]error, len(built))
	fail := func(i int, step string, err error) {
		if failed[i] == nil {
			failed[i] = fmt.Errorf("%s: %w", step, err)
		}
	}

	// Before any compaction: compactd scans what Java reads (levels >= 1
	// with their vectors; batch scans skip level 0).
	for i, b := range built {
		got, err := scanRows(b.Warehouse, b.Table)
		if err != nil {
			t.Errorf("%s: compactd scan before compaction: %v", b.Scenario.Name, err)
		} else {
			diffRows(t, b.Scenario.Name+": compactd scan before compaction", canon(t, b.JavaRows), canon(t, got))
		}
		refs[i] = filepath.Join(t.TempDir(), "ref")
		copyDir(t, b.Warehouse, refs[i])
	}

	// Step 1: minor compactions.
	for i, b := range built {
		if _, err := dvCompactd(ctx, b.Warehouse, false); err != nil {
			fail(i, "compactd minor compaction", err)
		}
	}
	phase("compactd's minor compactions")
	var reqs []interop.BatchRequest
	for i, b := range built {
		a, r := flags(b.Warehouse, b.Table), flags(refs[i], b.Table)
		reqs = append(reqs,
			interop.BatchRequest{Verb: "compact", Flags: withOpt(flags(refs[i], b.Table), "full", "false")},                    // 0
			interop.BatchRequest{Verb: "read", Flags: r},                                                                       // 1
			interop.BatchRequest{Verb: "dvs", Flags: r},                                                                        // 2
			interop.BatchRequest{Verb: "compact", Flags: flags(refs[i], b.Table)},                                              // 3: full
			interop.BatchRequest{Verb: "read", Flags: r},                                                                       // 4
			interop.BatchRequest{Verb: "dvs", Flags: r},                                                                        // 5
			interop.BatchRequest{Verb: "read", Flags: a},                                                                       // 6
			interop.BatchRequest{Verb: "read", Flags: withOpt(flags(b.Warehouse, b.Table), "ignore-deletion-vectors", "true")}, // 7
			interop.BatchRequest{Verb: "dvs", Flags: a},                                                                        // 8
		)
	}
	const p1 = 9
	res1 := batch(t, j, reqs)
	phase("Java: minor and full compaction of the copies, reads")
	pyRes1 := pyReads(t, py, built)
	phase("pypaimon reads")
	minorDVs := map[string]int64{} // engine -> positions after a minor compaction
	for i, b := range built {
		r := res1[p1*i : p1*(i+1)]
		for k := 0; k < 6; k++ {
			if r[k].Err != nil {
				t.Fatalf("%s: Java step %d (%s) on the reference copy: %v", b.Scenario.Name, k, reqs[p1*i+k].Verb, r[k].Err)
			}
		}
		if n, pos := dvTotals(t, b.Scenario.Name+" Java minor", dvFilesOf(t, r[2])); n > 0 {
			minorDVs[engineOf(b.Scenario)] += pos
		}
	}
	for i, b := range built {
		t.Run(b.Scenario.Name+"/minor", func(t *testing.T) {
			if failed[i] != nil {
				t.Fatal(failed[i])
			}
			r := res1[p1*i : p1*(i+1)]
			want := canon(t, rowsOf(t, r[1]))
			diffRows(t, "Java read after compactd's minor compaction", want, canon(t, rowsOf(t, r[6])))
			checkPy(t, "pypaimon read after compactd's minor compaction", want, pyRes1[i], b.Scenario)
			got, ref := dvFilesOf(t, r[8]), dvFilesOf(t, r[2])
			if gs, rs := dvSummary(got), dvSummary(ref); !equalStrings(gs, rs) {
				t.Errorf("files and deletion vectors after compactd's minor compaction:\n  %v\nafter Java's:\n  %v", gs, rs)
			}
			_, positions := dvTotals(t, "compactd minor", got)
			higher := 0
			for _, f := range got {
				if f.Level > 0 {
					higher += int(f.RecordCount)
				}
			}
			raw := rowsOf(t, r[7])
			if len(raw) != higher || int64(len(raw)) != int64(len(rowsOf(t, r[6])))+positions {
				t.Errorf("Java read without the vectors: %d rows, want the %d rows of levels >= 1 = %d read + %d deleted positions",
					len(raw), higher, len(rowsOf(t, r[6])), positions)
			}
		})
	}

	// Step 2: full compactions.
	for i, b := range built {
		if failed[i] != nil {
			continue
		}
		if _, err := dvCompactd(ctx, b.Warehouse, true); err != nil {
			fail(i, "compactd full compaction", err)
		}
	}
	phase("compactd's full compactions")
	// (pypaimon reads compactd's full compaction at step 4.)
	// Step 3: Java writes into both copies and compacts on top (minor), then
	// writes again without compacting.
	reqs = reqs[:0]
	for i, b := range built {
		dir := t.TempDir()
		round2, round3 := filepath.Join(dir, "round2.jsonl"), filepath.Join(dir, "round3.jsonl")
		if err := writeFile(round2, roundScript(t, b.Scenario, 1, "round2")); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(round3, roundScript(t, b.Scenario, 5, "round3")); err != nil {
			t.Fatal(err)
		}
		a, r := flags(b.Warehouse, b.Table), flags(refs[i], b.Table)
		reqs = append(reqs,
			interop.BatchRequest{Verb: "read", Flags: a},                                                        // 0
			interop.BatchRequest{Verb: "dvs", Flags: a},                                                         // 1
			interop.BatchRequest{Verb: "write", Flags: withOpt(flags(b.Warehouse, b.Table), "rows", round2)},    // 2
			interop.BatchRequest{Verb: "compact", Flags: withOpt(flags(b.Warehouse, b.Table), "full", "false")}, // 3
			interop.BatchRequest{Verb: "write", Flags: withOpt(flags(refs[i], b.Table), "rows", round2)},        // 4
			interop.BatchRequest{Verb: "compact", Flags: withOpt(flags(refs[i], b.Table), "full", "false")},     // 5
			interop.BatchRequest{Verb: "read", Flags: a},                                                        // 6
			interop.BatchRequest{Verb: "read", Flags: r},                                                        // 7
			interop.BatchRequest{Verb: "dvs", Flags: a},                                                         // 8
			interop.BatchRequest{Verb: "dvs", Flags: r},                                                         // 9
			interop.BatchRequest{Verb: "write", Flags: withOpt(flags(b.Warehouse, b.Table), "rows", round3)},    // 10
			interop.BatchRequest{Verb: "write", Flags: withOpt(flags(refs[i], b.Table), "rows", round3)},        // 11
		)
	}
	const p3 = 12
	res3 := batch(t, j, reqs)
	phase("Java: writes and compactions on top, reads")
	onTopDVs := map[string]int64{}
	for i, b := range built {
		r := res3[p3*i : p3*(i+1)]
		for _, k := range []int{4, 5, 7, 9, 11} {
			if r[k].Err != nil {
				t.Fatalf("%s: Java step %d (%s) on the reference copy: %v", b.Scenario.Name, k, reqs[p3*i+k].Verb, r[k].Err)
			}
		}
		if n, pos := dvTotals(t, b.Scenario.Name+" Java minor on top", dvFilesOf(t, r[9])); n > 0 {
			onTopDVs[engineOf(b.Scenario)] += pos
		}
	}
	for i, b := range built {
		t.Run(b.Scenario.Name+"/full", func(t *testing.T) {
			if failed[i] != nil {
				t.Fatal(failed[i])
			}
			r, r1 := res3[p3*i:p3*(i+1)], res1[p1*i:p1*(i+1)]
			want := canon(t, rowsOf(t, r1[4]))
			diffRows(t, "Java read after compactd's full compaction", want, canon(t, rowsOf(t, r[0])))
			if gs, rs := dvSummary(dvFilesOf(t, r[1])), dvSummary(dvFilesOf(t, r1[5])); !equalStrings(gs, rs) {
				t.Errorf("files after compactd's full compaction:\n  %v\nafter Java's:\n  %v", gs, rs)
			}
			if n, _ := dvTotals(t, "compactd full", dvFilesOf(t, r[1])); n != 0 {
				t.Errorf("%d files keep a deletion vector after compactd's full compaction", n)
			}
		})
		t.Run(b.Scenario.Name+"/java writes and compacts on top of compactd", func(t *testing.T) {
			if failed[i] != nil {
				t.Fatal(failed[i])
			}
			r := res3[p3*i : p3*(i+1)]
			for _, k := range []int{2, 3, 6, 8, 10} {
				if r[k].Err != nil {
					t.Fatalf("Java %s on compactd's table: %v", reqs[p3*i+k].Verb, r[k].Err)
				}
			}
			diffRows(t, "Java read after Java's minor compaction on top of compactd's", canon(t, rowsOf(t, r[7])), canon(t, rowsOf(t, r[6])))
			if gs, rs := dvSummary(dvFilesOf(t, r[8])), dvSummary(dvFilesOf(t, r[9])); !equalStrings(gs, rs) {
				t.Errorf("files and vectors after Java's minor compaction on top of compactd's:\n  %v\non top of Java's:\n  %v", gs, rs)
			}
		})
	}

	// Step 4: compactd compacts on top of Java's compaction and the new
	// level-0 runs (minor, then full); Java does the same on B.
	againDVs := map[string]int64{}
	for step, full := range []bool{false, true} {
		what := []string{"minor", "full"}[step]
		for i, b := range built {
			if failed[i] != nil {
				continue
			}
			if _, err := dvCompactd(ctx, b.Warehouse, full); err != nil {
				fail(i, "compactd "+what+" compaction on top of Java's", err)
			}
		}
		phase("compactd's " + what + " compactions on top of Java's")
		reqs = reqs[:0]
		for i, b := range built {
			rf := flags(refs[i], b.Table)
			if !full {
				rf["full"] = "false"
			}
			reqs = append(reqs,
				interop.BatchRequest{Verb: "compact", Flags: rf},
				interop.BatchRequest{Verb: "read", Flags: flags(refs[i], b.Table)},
				interop.BatchRequest{Verb: "dvs", Flags: flags(refs[i], b.Table)},
				interop.BatchRequest{Verb: "read", Flags: flags(b.Warehouse, b.Table)},
				interop.BatchRequest{Verb: "dvs", Flags: flags(b.Warehouse, b.Table)})
		}
		res4 := batch(t, j, reqs)
		pyRes4 := pyReads(t, py, built)
		phase("Java's " + what + " compactions of the copies, reads")
		for i, b := range built {
			r := res4[5*i : 5*(i+1)]
			for k := 0; k < 3; k++ {
				if r[k].Err != nil {
					t.Fatalf("%s: Java step %d (%s) on the reference copy: %v", b.Scenario.Name, k, reqs[5*i+k].Verb, r[k].Err)
				}
			}
			if n, pos := dvTotals(t, b.Scenario.Name+" Java "+what+" again", dvFilesOf(t, r[2])); n > 0 {
				againDVs[engineOf(b.Scenario)] += pos
			}
			t.Run(b.Scenario.Name+"/compactd "+what+" on top of java", func(t *testing.T) {
				if failed[i] != nil {
					t.Fatal(failed[i])
				}
				want := canon(t, rowsOf(t, r[1]))
				diffRows(t, "Java read after compactd's compaction on top of Java's", want, canon(t, rowsOf(t, r[3])))
				checkPy(t, "pypaimon read after compactd's compaction on top of Java's", want, pyRes4[i], b.Scenario)
				got := dvFilesOf(t, r[4])
				if gs, rs := dvSummary(got), dvSummary(dvFilesOf(t, r[2])); !equalStrings(gs, rs) {
					t.Errorf("files and vectors after compactd's compaction on top of Java's:\n  %v\nJava's:\n  %v", gs, rs)
				}
				if n, _ := dvTotals(t, "compactd on top", got); full && n != 0 {
					t.Errorf("%d files keep a deletion vector after compactd's full compaction", n)
				}
			})
		}
	}
	// The scenarios must make Java write vectors for every engine, or the
	// comparisons above would only cover full compactions.
	for _, e := range []string{"deduplicate", "partial-update", "partial-update-groups", "aggregation"} {
		if minorDVs[e] == 0 || onTopDVs[e] == 0 || againDVs[e] == 0 {
			t.Errorf("%s: Java's minor compactions wrote deletion vectors with %d positions at step 1, %d at step 3, %d at step 4; the scenarios no longer exercise them at each step",
				e, minorDVs[e], onTopDVs[e], againDVs[e])
		}
	}
	t.Logf("deletion-vector positions Java wrote in minor compactions: step 1 %v, step 3 %v, step 4 %v", minorDVs, onTopDVs, againDVs)
}

func engineOf(s *fixtures.Scenario) string {
	if _, ok := s.Spec.Options["fields.a_seq.sequence-group"]; ok {
		return "partial-update-groups"
	}
	return s.Engine
}

func pyReads(t *testing.T, py *interop.PythonOracle, built []*interop.Built) []interop.BatchResult {
	t.Helper()
	var reqs []interop.BatchRequest
	for _, b := range built {
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: flags(b.Warehouse, b.Table)})
	}
	res, err := py.Batch(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkPy compares a pypaimon read. Two refusals of pypaimon 2.1.0 are
// accepted (interop/README.md): partial-update with sequence groups
// (ErrUnsupported), and 64-bit deletion vectors (it knows only the 32-bit
// magic number and fails with "Invalid magic number" on Java's own
// deletion-vectors.bitmap64 files too) — the latter only on a bitmap64
// table.
func checkPy(t *testing.T, what string, want []string, r interop.BatchResult, s *fixtures.Scenario) {
	t.Helper()
	switch {
	case errors.Is(r.Err, interop.ErrUnsupported):
		t.Logf("%s: pypaimon refuses this table: %v", what, firstLine(r.Err))
		return
	case r.Err != nil && s.Spec.Options["deletion-vectors.bitmap64"] == "true" && strings.Contains(r.Err.Error(), "Invalid magic number"):
		t.Logf("%s: pypaimon 2.1.0 cannot read 64-bit deletion vectors", what)
		return
	}
	diffRows(t, what, want, canon(t, rowsOf(t, r)))
}
