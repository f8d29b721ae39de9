package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// changelogScenario is a table and the commits its writers make in each
// round; rows carry _user/_commit as the interop write verb takes them.
type changelogScenario struct {
	name    string
	columns []fixtures.Column
	options map[string]string
	rounds  func(round int) []map[string]any
}

// TestCompactionChangelogFilesEqualJavas: for each changelog producer and
// engine, Java's writers commit the same rows to two copies of a table;
// compactd compacts one, Java the other (full compactions for
// full-compaction, the normal pick for lookup), round after round. The
// changelog files of each COMPACT snapshot hold the same records in the
// same order per bucket (row kind, key, sequence number, value), their
// metadata agree where Java's is deterministic (level, file source, row
// and delete counts per bucket), and Java reads both tables the same.
func TestCompactionChangelogFilesEqualJavas(t *testing.T) {
	interop.Java(t) // fails here when the oracle is missing
	for _, producer := range []string{"full-compaction", "lookup"} {
		for _, sc := range changelogScenarios() {
			if producer == "full-compaction" && (strings.HasPrefix(sc.name, "first-row") || strings.Contains(sc.name, "deletion vectors")) {
				continue // Java rejects first-row and deletion vectors with full-compaction
			}
			t.Run(producer+"/"+sc.name, func(t *testing.T) {
				// Two at a time (-parallel defaults to GOMAXPROCS): one's JVM
				// overlaps the other's Go side.
				t.Parallel()
				runChangelogScenario(t, interop.Java(t), producer, sc)
			})
		}
	}
}

func changelogScenarios() []changelogScenario {
	all := baseChangelogScenarios()
	// ORC tables (issue #21): their changelog files are ORC too.
	for _, sc := range all[:] {
		if sc.name == "deduplicate with deletes" || sc.name == "aggregation" {
			o := map[string]string{"file.format": "orc"}
			for k, v := range sc.options {
				o[k] = v
			}
			sc.name += " (ORC)"
			sc.options = o
			all = append(all, sc)
		}
	}
	return all
}

func baseChangelogScenarios() []changelogScenario {
	pk := func(extra ...fixtures.Column) []fixtures.Column {
		return append([]fixtures.Column{{Name: "id", Type: "BIGINT NOT NULL"}}, extra...)
	}
	return []changelogScenario{
		{
			// The wide table: three streams, each its own sequence group.
			name: "partial-update three streams",
			columns: pk(fixtures.Column{Name: "a", Type: "STRING"}, fixtures.Column{Name: "ta", Type: "BIGINT"},
				fixtures.Column{Name: "b", Type: "BIGINT"}, fixtures.Column{Name: "tb", Type: "BIGINT"},
				fixtures.Column{Name: "c", Type: "DOUBLE"}, fixtures.Column{Name: "tc", Type: "BIGINT"}),
			options: map[string]string{"merge-engine": "partial-update",
				"fields.ta.sequence-group": "a", "fields.tb.sequence-group": "b", "fields.tc.sequence-group": "c"},
			rounds: func(round int) []map[string]any {
				var rows []map[string]any
				for i := range 240 {
					id := (i*7 + round*61) % (180 + 40*round)
					ts := round*1000 + i
					switch i % 3 {
					case 0:
						rows = append(rows, map[string]any{"id": id, "a": fmt.Sprintf("a%d-%d", round, i), "ta": ts, "_user": "s1", "_commit": i / 80})
					case 1:
						// An older ts for some keys: the group keeps its value.
						if i%7 == 1 {
							ts = i
						}
						rows = append(rows, map[string]any{"id": id, "b": int64(i * round), "tb": ts, "_user": "s2", "_commit": i / 80})
					default:
						rows = append(rows, map[string]any{"id": id, "c": float64(i) / 4, "tc": ts, "_user": "s3", "_commit": i / 80})
					}
				}
				return rows
			},
		},
		{
			name:    "deduplicate with deletes",
			columns: pk(fixtures.Column{Name: "v", Type: "STRING"}),
			options: map[string]string{},
			rounds: func(round int) []map[string]any {
				var rows []map[string]any
				for i := range 200 {
					id := (i*3 + round*17) % (150 + 30*round)
					r := map[string]any{"id": id, "v": fmt.Sprintf("v%d-%d", round, i%5), "_commit": i / 70}
					if round > 0 && i%9 == 0 {
						r = map[string]any{"id": id, "_kind": "-D", "_commit": i / 70}
					}
					rows = append(rows, r)
				}
				return rows
			},
		},
		{
			// One commit per round: the first compaction only upgrades each
			// bucket's level-0 file to the top, which Java reads for its
			// changelog (CHANGELOG_NO_REWRITE).
			name:    "deduplicate one commit per round",
			columns: pk(fixtures.Column{Name: "v", Type: "STRING"}),
			options: map[string]string{},
			rounds: func(round int) []map[string]any {
				var rows []map[string]any
				for i := range 150 {
					rows = append(rows, map[string]any{"id": (i*11 + round*7) % 130, "v": fmt.Sprintf("v%d-%d", round, i%4), "_commit": 0})
				}
				return rows
			},
		},
		{
			// Unchanged values on update: row-deduplicate drops their -U/+U.
			name:    "deduplicate row-deduplicate ignoring a field",
			columns: pk(fixtures.Column{Name: "v", Type: "STRING"}, fixtures.Column{Name: "seen", Type: "BIGINT"}),
			options: map[string]string{"changelog-producer.row-deduplicate": "true", "changelog-producer.row-deduplicate-ignore-fields": "seen"},
			rounds: func(round int) []map[string]any {
				var rows []map[string]any
				for i := range 200 {
					id := i % 120
					rows = append(rows, map[string]any{"id": id, "v": fmt.Sprintf("v%d", (id+round*(id%2))%4), "seen": int64(round*1000 + i), "_commit": i / 70})
				}
				return rows
			},
		},
		{
			name:    "aggregation",
			columns: pk(fixtures.Column{Name: "n", Type: "BIGINT"}, fixtures.Column{Name: "v", Type: "STRING"}),
			options: map[string]string{"merge-engine": "aggregation", "fields.n.aggregate-function": "sum",
				"fields.v.aggregate-function": "last_non_null_value"},
			rounds: func(round int) []map[string]any {
				var rows []map[string]any
				for i := range 200 {
					id := (i*5 + round*11) % (140 + 20*round)
					var v any = fmt.Sprintf("v%d", i%3)
					if i%4 == 0 {
						v = nil
					}
					rows = append(rows, map[string]any{"id": id, "n": int64(i%7 + 1), "v": v, "_commit": i / 70})
				}
				return rows
			},
		},
		{
			// Lookup only: Java rejects deletion vectors with full-compaction.
			name:    "partial-update with deletion vectors",
			columns: pk(fixtures.Column{Name: "a", Type: "STRING"}, fixtures.Column{Name: "b", Type: "BIGINT"}),
			options: map[string]string{"merge-engine": "partial-update", "deletion-vectors.enabled": "true"},
			rounds: func(round int) []map[string]any {
				var rows []map[string]any
				for i := range 200 {
					id := (i*7 + round*13) % (160 + 20*round)
					r := map[string]any{"id": id, "_commit": i / 70}
					if i%2 == 0 {
						r["a"] = fmt.Sprintf("a%d-%d", round, i%6)
					} else {
						r["b"] = int64(i % 9)
					}
					rows = append(rows, r)
				}
				return rows
			},
		},
		{
			name:    "first-row",
			columns: pk(fixtures.Column{Name: "v", Type: "STRING"}),
			options: map[string]string{"merge-engine": "first-row"},
			rounds: func(round int) []map[string]any {
				var rows []map[string]any
				for i := range 200 {
					id := (i*3 + round*37) % (150 + 50*round)
					rows = append(rows, map[string]any{"id": id, "v": fmt.Sprintf("v%d-%d", round, i), "_commit": i / 70})
				}
				return rows
			},
		},
	}
}

func runChangelogScenario(t *testing.T, j *interop.JavaOracle, producer string, sc changelogScenario) {
	ctx := context.Background()
	options := map[string]string{"changelog-producer": producer, "write-only": "true"}
	for k, v := range sc.options {
		options[k] = v
	}
	spec := fixtures.Spec{Columns: sc.columns, PrimaryKeys: []string{"id"}, Bucket: 2, Options: options}
	dir := t.TempDir()
	ours, ref := filepath.Join(dir, "ours"), filepath.Join(dir, "ref")
	j.Create(ours, "db.t", spec, nil)
	copyDir(t, ours, ref)
	full := producer == "full-compaction"
	// One JVM per round: the previous round's reads, both copies' writes
	// and Java's compaction of ref.
	var reads []interop.BatchRequest
	compactFlags := flags(ref, "db.t")
	compactFlags["full"] = fmt.Sprint(full)
	check := func(round int, res []interop.BatchResult) {
		t.Helper()
		diffRows(t, fmt.Sprintf("round %d: Java read after compactd", round), canon(t, rowsOf(t, res[1])), canon(t, rowsOf(t, res[0])))
	}
	for round := range 3 {
		rows := filepath.Join(dir, fmt.Sprintf("rows-%d.jsonl", round))
		if err := writeFile(rows, jsonl(t, sc.rounds(round))); err != nil {
			t.Fatal(err)
		}
		reqs := append(reads,
			interop.BatchRequest{Verb: "write", Flags: map[string]string{"warehouse": ours, "table": "db.t", "rows": rows}},
			interop.BatchRequest{Verb: "write", Flags: map[string]string{"warehouse": ref, "table": "db.t", "rows": rows}},
			interop.BatchRequest{Verb: "compact", Flags: compactFlags})
		res := batch(t, j, reqs)
		if len(reads) > 0 {
			check(round-1, res)
		}
		var jres struct{ Snapshot int64 }
		if err := json.Unmarshal(res[len(res)-1].Lines[0], &jres); err != nil {
			t.Fatal(err)
		}
		before := latestSnapshot(t, ours)
		sum, err := compact.Run(ctx, openLocal(t, ours, "db.t"), compact.Options{Full: full})
		if err != nil {
			t.Fatalf("round %d: compactd: %v", round, err)
		}
		javaCompacted := jres.Snapshot > before
		if (sum.Snapshot != 0) != javaCompacted {
			t.Fatalf("round %d: compactd committed snapshot %d, Java's latest is %d (was %d)", round, sum.Snapshot, jres.Snapshot, before)
		}
		reads = []interop.BatchRequest{{Verb: "read", Flags: flags(ours, "db.t")}, {Verb: "read", Flags: flags(ref, "db.t")}}
		if sum.Snapshot == 0 {
			continue
		}
		got := changelogOf(t, ours, sum.Snapshot)
		want := changelogOf(t, ref, jres.Snapshot)
		if len(want.records) == 0 {
			t.Fatalf("round %d: Java's compaction produced no changelog", round)
		}
		for bucket, w := range want.records {
			g := got.records[bucket]
			if strings.Join(g, "\n") != strings.Join(w, "\n") {
				t.Errorf("round %d, %s: changelog records differ\ncompactd (%d):\n  %s\nJava (%d):\n  %s", round, bucket,
					len(g), strings.Join(head(g, 40), "\n  "), len(w), strings.Join(head(w, 40), "\n  "))
			}
		}
		for bucket := range got.records {
			if _, ok := want.records[bucket]; !ok {
				t.Errorf("round %d, %s: compactd wrote changelog Java did not: %v", round, bucket, head(got.records[bucket], 10))
			}
		}
		if got.meta != want.meta {
			t.Errorf("round %d: changelog metadata differ:\ncompactd %s\nJava     %s", round, got.meta, want.meta)
		}
	}
	check(2, batch(t, j, reads))
}

func latestSnapshot(t *testing.T, warehouse string) int64 {
	t.Helper()
	id, err := openLocal(t, warehouse, "db.t").LatestSnapshotID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

type changelogFiles struct {
	records map[string][]string // "partition/bucket" -> records in file order
	meta    string              // per bucket: level, file source, rows, deletes, record count
}

// changelogOf reads the changelog files snapshot id of the table db.t in
// warehouse adds.
func changelogOf(t *testing.T, warehouse string, id int64) changelogFiles {
	t.Helper()
	ctx := context.Background()
	tb := openLocal(t, warehouse, "db.t")
	s, err := tb.Snapshot(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.CommitKind != table.CommitCompact {
		t.Fatalf("%s: snapshot %d is %s, want COMPACT", warehouse, id, s.CommitKind)
	}
	out := changelogFiles{records: map[string][]string{}}
	if s.ChangelogManifestList == nil {
		return out
	}
	lists, err := tb.ChangelogManifests(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := tb.ReadManifests(ctx, lists)
	if err != nil {
		t.Fatal(err)
	}
	sch := tb.Schema()
	schema := datafile.Schema{Fields: sch.Fields, KeyNames: sch.TrimmedPrimaryKeys()}
	type agg struct{ rows, deletes int64 }
	metas := map[string]*agg{}
	var total int64
	for i := range entries {
		e := &entries[i]
		if e.Kind != manifest.FileKindAdd {
			t.Fatalf("%s: changelog entry %s is %s", warehouse, e.File.FileName, e.Kind)
		}
		if !strings.HasPrefix(e.File.FileName, "changelog-") {
			t.Errorf("%s: changelog file %s is not named changelog-*", warehouse, e.File.FileName)
		}
		bucket := fmt.Sprintf("%x/%d", e.Partition, e.Bucket)
		src := "?"
		if e.File.FileSource != nil {
			src = e.File.FileSource.String()
		}
		key := fmt.Sprintf("%s level %d source %s", bucket, e.File.Level, src)
		if metas[key] == nil {
			metas[key] = &agg{}
		}
		metas[key].rows += e.File.RowCount
		if e.File.DeleteRowCount != nil {
			metas[key].deletes += *e.File.DeleteRowCount
		}
		total += e.File.RowCount
		path, err := tb.DataFilePath(e)
		if err != nil {
			t.Fatal(err)
		}
		r, err := datafile.OpenKeyValue(ctx, tb.FileIO(), path, schema, schema)
		if err != nil {
			t.Fatal(err)
		}
		kvs, err := merge.Collect(r)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, kv := range kvs {
			out.records[bucket] = append(out.records[bucket], fmt.Sprintf("%s %v seq=%d %v", kv.Kind.ShortString(), []any(kv.Key), kv.Seq, []any(kv.Value)))
		}
	}
	var keys []string
	for k := range metas {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "[%s: %d rows, %d deletes] ", k, metas[k].rows, metas[k].deletes)
	}
	rc := int64(-1)
	if s.ChangelogRecordCount != nil {
		rc = *s.ChangelogRecordCount
	}
	fmt.Fprintf(&b, "changelogRecordCount=%d (files %d)", rc, total)
	out.meta = b.String()
	return out
}

// TestInputChangelogIsLeftToTheWriters: with changelog-producer=input the
// writers write the changelog; Java's compaction writes none (its rewriter
// is the plain one), and neither does compactd's: the COMPACT snapshot has
// no changelog manifest list, every changelog file the writers committed
// is still there, and Java reads the table as after its own compaction.
func TestInputChangelogIsLeftToTheWriters(t *testing.T) {
	j := interop.Java(t)
	spec := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "id", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
		PrimaryKeys: []string{"id"}, Bucket: 2,
		Options: map[string]string{"changelog-producer": "input", "write-only": "true"},
	}
	var rows []map[string]any
	for i := range 300 {
		rows = append(rows, map[string]any{"id": i % 120, "v": fmt.Sprintf("v%d", i), "_commit": i / 100})
	}
	dir := t.TempDir()
	ours, ref := filepath.Join(dir, "ours"), filepath.Join(dir, "ref")
	j.Create(ours, "db.t", spec, jsonl(t, rows))
	copyDir(t, ours, ref)
	changelogFiles := func(wh string) []string {
		var names []string
		_ = filepath.Walk(filepath.Join(wh, "db.db", "t"), func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.HasPrefix(info.Name(), "changelog-") {
				names = append(names, strings.TrimPrefix(p, wh))
			}
			return err
		})
		slices.Sort(names)
		return names
	}
	before := changelogFiles(ours)
	if len(before) == 0 {
		t.Fatal("Java's input-producer writers wrote no changelog files")
	}
	sum, err := compact.Run(context.Background(), openLocal(t, ours, "db.t"), compact.Options{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	jsnap := j.Compact(ref, "db.t", interop.CompactOptions{})
	for _, c := range []struct {
		who string
		wh  string
		id  int64
	}{{"compactd", ours, sum.Snapshot}, {"Java", ref, jsnap}} {
		s, err := openLocal(t, c.wh, "db.t").Snapshot(context.Background(), c.id)
		if err != nil {
			t.Fatal(err)
		}
		if s.CommitKind != table.CommitCompact || s.ChangelogManifestList != nil || s.ChangelogRecordCount != nil {
			t.Fatalf("%s's snapshot %d: kind %s, changelog list %v, count %v", c.who, c.id, s.CommitKind, s.ChangelogManifestList, s.ChangelogRecordCount)
		}
	}
	if after := changelogFiles(ours); !slices.Equal(after, before) {
		t.Fatalf("changelog files changed:\nbefore %v\nafter  %v", before, after)
	}
	res := batch(t, j, []interop.BatchRequest{{Verb: "read", Flags: flags(ours, "db.t")}, {Verb: "read", Flags: flags(ref, "db.t")}})
	diffRows(t, "Java read after compactd", canon(t, rowsOf(t, res[1])), canon(t, rowsOf(t, res[0])))
}
