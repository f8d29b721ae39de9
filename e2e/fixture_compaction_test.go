package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
)

// TestFullCompactionOfEveryFixtureTable compacts a copy of every shared
// fixture table compactd accepts — tables written by Java Paimon 0.9–2.0,
// with schema evolution, nested types, append tables bucketed and not — and
// checks that Java reads the same rows afterwards. Tables compactd refuses
// must be refused before anything is written.
func TestFullCompactionOfEveryFixtureTable(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	type job struct{ name, wh, ref string }
	var jobs []job
	var reqs []interop.BatchRequest
	compacted, refused := 0, 0
	for _, format := range []string{"parquet", "avro"} {
		src := filepath.Join(fixturesRoot(t), format)
		for _, name := range fixtureTables(t, src) {
			db, tbl, _ := strings.Cut(name, ".")
			wh := t.TempDir()
			copyDir(t, filepath.Join(src, db+".db", tbl), filepath.Join(wh, db+".db", tbl))
			tb, err := table.Open(ctx, tableFIO(), wh, db, tbl)
			if err != nil {
				t.Logf("%s/%s: not opened: %v", format, name, err)
				refused++
				continue
			}
			if err := compact.Supported(tb, nil); err != nil {
				before, _ := tb.SnapshotIDs(ctx)
				if _, err2 := compact.Run(ctx, tb, compact.Options{Full: true}); err2 == nil {
					t.Errorf("%s: Supported refuses (%v) but Run does not", name, err)
				}
				after, _ := tb.SnapshotIDs(ctx)
				if len(after) != len(before) {
					t.Errorf("%s: a refused compaction committed", name)
				}
				t.Logf("%s/%s: refused: %v", format, name, err)
				refused++
				continue
			}
			// Java reads before; Paimon's own full compaction of a copy is the
			// reference (first-row tables show level-0 rows only once compacted).
			ref := t.TempDir()
			copyDir(t, filepath.Join(src, db+".db", tbl), filepath.Join(ref, db+".db", tbl))
			reqs = append(reqs,
				interop.BatchRequest{Verb: "read", Flags: flags(wh, name)},
				interop.BatchRequest{Verb: "compact", Flags: flags(ref, name)},
				interop.BatchRequest{Verb: "read", Flags: flags(ref, name)})
			jobs = append(jobs, job{format + "/" + name, wh, ref})
		}
	}
	before := batch(t, j, reqs)
	reqs = reqs[:0]
	var kept []int
	want := make([][]string, len(jobs))
	for i, jb := range jobs {
		if before[3*i].Err != nil {
			t.Logf("%s: Java cannot read it, not compared: %v", jb.name, firstLine(before[3*i].Err))
			continue
		}
		switch {
		case before[3*i+1].Err == nil && before[3*i+2].Err == nil:
			want[i] = canon(t, rowsOf(t, before[3*i+2]))
		case strings.Contains(jb.name, "first_row"):
			t.Errorf("%s: Java's compaction failed, no reference: %v", jb.name, before[3*i+1].Err)
			continue
		default:
			t.Logf("%s: Java's own compaction fails (%v); comparing with the rows before", jb.name, firstLine(before[3*i+1].Err))
			want[i] = canon(t, rowsOf(t, before[3*i]))
		}
		db, tbl, _ := strings.Cut(jb.name[strings.IndexByte(jb.name, '/')+1:], ".")
		tb, err := table.Open(ctx, tableFIO(), jb.wh, db, tbl)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := compact.Run(ctx, tb, compact.Options{Full: true}); err != nil {
			t.Errorf("%s: compactd compact --full: %v", jb.name, err)
			continue
		}
		compacted++
		kept = append(kept, i)
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: flags(jb.wh, db+"."+tbl)})
	}
	after := batch(t, j, reqs)
	for k, i := range kept {
		if after[k].Err != nil {
			t.Errorf("%s: Java cannot read the table compactd compacted: %v", jobs[i].name, after[k].Err)
			continue
		}
		diffRows(t, jobs[i].name, want[i], canon(t, rowsOf(t, after[k])))
	}
	t.Logf("compacted %d fixture tables, %d refused", compacted, refused)
	if compacted < 10 {
		t.Fatalf("only %d fixture tables were compacted", compacted)
	}
}
