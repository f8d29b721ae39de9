package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// latestSchemaOptions reads the options of a table directory's newest
// schema file as stored (no defaults), independently of compactd's table
// package.
func latestSchemaOptions(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "schema"))
	if err != nil {
		t.Fatal(err)
	}
	best, latest := -1, ""
	for _, e := range ents {
		n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "schema-"))
		if err == nil && strings.HasPrefix(e.Name(), "schema-") && n > best {
			best, latest = n, e.Name()
		}
	}
	if latest == "" {
		t.Fatalf("%s: no schema file", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "schema", latest))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Options map[string]string `json:"options"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s/schema/%s: %v", dir, latest, err)
	}
	return s.Options
}

// TestDeletionVectorFixtureTablesCompactAsJava: every table of the shared
// fixtures whose latest schema sets deletion-vectors.enabled=true (Paimon
// 0.9 to 2.0, 32- and 64-bit vectors, index files in the data directory,
// external data paths, schema evolution, lookup compaction) is copied
// twice; compactd compacts copy A (its minor pick, then full), Java copy B
// (`compact --full false`, then full), and Java reads A as it reads B after
// each step, with no vector left after the full compaction. A table Java
// cannot read (its data files are outside the fixture) must make compactd
// fail without committing; a table compactd refuses for a reason other
// than deletion vectors must be refused before anything is written.
func TestDeletionVectorFixtureTablesCompactAsJava(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	type job struct{ name, db, tbl, wh, ref string }
	var jobs []job
	var reqs []interop.BatchRequest
	for _, format := range []string{"parquet", "avro", "orc"} {
		src := filepath.Join(fixturesRoot(t), format)
		for _, name := range fixtureTables(t, src) {
			db, tbl, _ := strings.Cut(name, ".")
			dir := filepath.Join(src, db+".db", tbl)
			if latestSchemaOptions(t, dir)["deletion-vectors.enabled"] != "true" {
				continue
			}
			jb := job{name: format + "/" + name, db: db, tbl: tbl, wh: t.TempDir(), ref: t.TempDir()}
			copyDir(t, dir, filepath.Join(jb.wh, db+".db", tbl))
			copyDir(t, dir, filepath.Join(jb.ref, db+".db", tbl))
			jobs = append(jobs, jb)
			reqs = append(reqs,
				interop.BatchRequest{Verb: "read", Flags: flags(jb.wh, name)},
				interop.BatchRequest{Verb: "compact", Flags: withOpt(flags(jb.ref, name), "full", "false")},
				interop.BatchRequest{Verb: "read", Flags: flags(jb.ref, name)},
				interop.BatchRequest{Verb: "compact", Flags: flags(jb.ref, name)},
				interop.BatchRequest{Verb: "read", Flags: flags(jb.ref, name)})
		}
	}
	// pk_09, pk_dv_* (3), pk_with_bitmap_dv, pk_table_with_alter_table,
	// pk_compact_lookup, pk_btree_e2e (parquet and orc) when this was written.
	if len(jobs) < 9 {
		t.Fatalf("found %d deletion-vector fixture tables, want at least 9", len(jobs))
	}
	const per = 5
	before := batch(t, j, reqs)
	open := func(jb job) *table.Table {
		tb, err := table.Open(ctx, tableFIO(), jb.wh, jb.db, jb.tbl)
		if err != nil {
			t.Fatalf("%s: %v", jb.name, err)
		}
		return tb
	}
	snapshots := func(jb job) int {
		ids, err := open(jb).SnapshotIDs(ctx)
		if err != nil {
			t.Fatalf("%s: %v", jb.name, err)
		}
		return len(ids)
	}
	type ok struct {
		jb          job
		minor, full []string // Java's reads of B
	}
	var kept []ok
	for i, jb := range jobs {
		r := before[per*i : per*(i+1)]
		t.Run(jb.name+"/before", func(t *testing.T) {
			if r[0].Err != nil {
				// Data outside the fixture (data-file.external-paths): compactd
				// must stop with an error and commit nothing.
				n := snapshots(jb)
				if _, err := compact.Run(ctx, open(jb), compact.Options{Full: true}); err == nil {
					t.Errorf("compactd compacted a table Java cannot read (%v)", firstLine(r[0].Err))
				} else {
					t.Logf("Java cannot read it (%v); compactd fails: %v", firstLine(r[0].Err), firstLine(err))
				}
				if snapshots(jb) != n {
					t.Error("a failed compaction committed")
				}
				return
			}
			// Java's own compactions of the copy are the reference.
			want := func(k int) []string {
				if r[k-1].Err != nil || r[k].Err != nil {
					t.Fatalf("Java's own compaction of the copy fails, no reference: %v %v", r[k-1].Err, r[k].Err)
				}
				return canon(t, rowsOf(t, r[k]))
			}
			minor, full := want(2), want(4)
			// compactd scans what Java reads before compacting, or refuses
			// the table's data clearly (ORC data files) and then refuses to
			// compact it, committing nothing.
			got, err := scanRows(jb.wh, jb.db+"."+jb.tbl)
			switch {
			case errors.Is(err, scan.ErrUnsupported) || errors.Is(err, manifest.ErrUnsupportedFormat) || (err != nil && strings.Contains(err.Error(), "not supported")):
				n := snapshots(jb)
				if _, err2 := compact.Run(ctx, open(jb), compact.Options{Full: true}); err2 == nil {
					t.Errorf("compactd compacted a table it cannot scan (%v)", err)
				} else {
					t.Logf("compactd cannot read it (%v) and refuses: %v", firstLine(err), firstLine(err2))
				}
				if snapshots(jb) != n {
					t.Error("a refused compaction committed")
				}
				return
			case err != nil:
				t.Fatalf("compactd scan: %v", err)
			}
			diffRows(t, "compactd scan before compaction", canon(t, rowsOf(t, r[0])), canon(t, got))
			tb := open(jb)
			if err := compact.Supported(tb, nil); err != nil {
				if strings.Contains(err.Error(), "deletion-vectors") {
					t.Fatalf("compactd refuses a deletion-vector table Java reads: %v", err)
				}
				// Another documented refusal (e.g. a primary-key btree index).
				n := snapshots(jb)
				if _, err2 := compact.Run(ctx, tb, compact.Options{Full: true}); err2 == nil {
					t.Errorf("Supported refuses (%v) but Run does not", err)
				}
				if snapshots(jb) != n {
					t.Error("a refused compaction committed")
				}
				t.Logf("refused: %v", err)
				return
			}
			kept = append(kept, ok{jb: jb, minor: minor, full: full})
		})
	}
	// compactd's minor pick, then Java reads; then full, then Java reads.
	for step, full := range []bool{false, true} {
		reqs = reqs[:0]
		var done []ok
		for _, k := range kept {
			if _, err := compact.Run(ctx, open(k.jb), compact.Options{Full: full}); err != nil {
				t.Errorf("%s: compactd compaction (full=%v): %v", k.jb.name, full, err)
				continue
			}
			done = append(done, k)
			name := k.jb.db + "." + k.jb.tbl
			reqs = append(reqs,
				interop.BatchRequest{Verb: "read", Flags: flags(k.jb.wh, name)},
				interop.BatchRequest{Verb: "dvs", Flags: flags(k.jb.wh, name)})
		}
		res := batch(t, j, reqs)
		for i, k := range done {
			t.Run(k.jb.name+"/"+[]string{"minor", "full"}[step], func(t *testing.T) {
				want := k.minor
				if full {
					want = k.full
				}
				if res[2*i].Err != nil {
					t.Fatalf("Java cannot read the table compactd compacted: %v", res[2*i].Err)
				}
				diffRows(t, "Java read after compactd's compaction", want, canon(t, rowsOf(t, res[2*i])))
				files := dvFilesOf(t, res[2*i+1])
				n, _ := dvTotals(t, "compactd", files)
				if full && n != 0 {
					t.Errorf("%d files keep a deletion vector after a full compaction", n)
				}
			})
		}
		kept = done
	}
	names := make([]string, len(jobs))
	for i, jb := range jobs {
		names[i] = jb.name
	}
	sort.Strings(names)
	t.Logf("deletion-vector fixture tables: %v", names)
}
