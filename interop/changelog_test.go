package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compactd/compactd/fixtures"
)

// changelogScript renders rows {"k","v","_kind"} of one commit as a write script.
func changelogScript(t *testing.T, rows []map[string]any) []byte {
	t.Helper()
	var out []byte
	for _, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, b...), '\n')
	}
	return out
}

// clText renders changelog rows as "snapshot/kind/k/v" texts.
func clText(rows []Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%v/%v/%v/%v", r[SnapshotField], r[KindField], r["k"], r["v"])
	}
	return out
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// TestChangelogAndStreamVerbsReadJavasChangelog pins the changelog and stream verbs on tables
// Java compacts itself (changelog-producer lookup with Paimon's normal pick, full-compaction with
// a full compaction), two buckets, write-only writers:
//   - commit 1 writes keys 0..99; Java's compaction then emits +I for each (nothing before);
//   - commit 2 updates 0..29, deletes 30..39, inserts 100..119 and leaves 40..99 alone; Java's
//     compaction emits -U(old)/+U(new), -D(old), +I(new) and nothing for the untouched keys.
//
// The changelog verb returns exactly that per snapshot (APPEND snapshots have none), in key
// order inside each (snapshot, bucket) with -U before +U; one incremental read of the whole range
// returns the same rows; a streaming reader started before the first compaction (its first plan
// empty: lookup streams read levels above 0 first, full-compaction the top level) receives the same
// rows in the same order per bucket; pypaimon's streaming reader reads the same changelog.
func TestChangelogAndStreamVerbsReadJavasChangelog(t *testing.T) {
	ctx := context.Background()
	j := Java(t)
	py := Python(t)
	wh := filepath.Join(t.TempDir(), "wh")
	producers := []string{"lookup", "full-compaction"}
	var c1, c2 []map[string]any
	for k := range 100 {
		c1 = append(c1, map[string]any{"k": k, "v": fmt.Sprintf("a%d", k)})
	}
	for k := range 30 {
		c2 = append(c2, map[string]any{"k": k, "v": fmt.Sprintf("b%d", k), "_kind": "+U"})
	}
	for k := 30; k < 40; k++ {
		c2 = append(c2, map[string]any{"k": k, "_kind": "-D"})
	}
	for k := 100; k < 120; k++ {
		c2 = append(c2, map[string]any{"k": k, "v": fmt.Sprintf("c%d", k)})
	}
	var targets []StreamTarget
	var setup, steps, reads, pyReads []BatchRequest
	dir := t.TempDir()
	f1, f2 := writeTemp(t, dir, "c1.jsonl", changelogScript(t, c1)), writeTemp(t, dir, "c2.jsonl", changelogScript(t, c2))
	tableOf := map[string]string{"lookup": "db.lk", "full-compaction": "db.fc"}
	for _, p := range producers {
		name := tableOf[p]
		spec := fixtures.Spec{
			Columns:     []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
			PrimaryKeys: []string{"k"},
			Bucket:      2,
			Options:     map[string]string{"changelog-producer": p, "write-only": "true"},
		}
		common := map[string]string{"warehouse": wh, "table": name}
		setup = append(setup, BatchRequest{Verb: "create", Flags: with(common,
			"spec", writeTemp(t, dir, p+".spec.json", spec.JSON()), "rows", f1)})
		targets = append(targets, StreamTarget{ID: p, Warehouse: wh, Table: name})
		// lookup: Paimon's normal pick (its lookup strategy); full-compaction: a full compaction.
		full := fmt.Sprint(p != "lookup")
		steps = append(steps,
			BatchRequest{Verb: "compact", Flags: with(common, "full", full)},
			BatchRequest{Verb: "write", Flags: with(common, "rows", f2)},
			BatchRequest{Verb: "compact", Flags: with(common, "full", full)})
		between := ChangelogRequest(wh, name, 0, 4)
		between.Flags["per-snapshot"] = "false"
		reads = append(reads, ChangelogRequest(wh, name, 0, 4), between)
		pyReads = append(pyReads, ChangelogRequest(wh, name, 0, 4))
	}
	mustBatch := func(reqs []BatchRequest) []BatchResult {
		t.Helper()
		res, err := j.Batch(ctx, reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("Java %s (request %d): %v", reqs[i].Verb, i, r.Err)
			}
		}
		return res
	}
	mustBatch(setup)
	stream, err := j.StartStream(ctx, targets)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	for _, p := range producers {
		if stream.Next[p] != 2 {
			t.Errorf("%s: the stream's first plan ends before snapshot %d, want 2", p, stream.Next[p])
		}
	}
	for i, r := range mustBatch(steps) {
		if steps[i].Verb == "compact" {
			var res struct{ Snapshot int64 }
			if err := json.Unmarshal(r.Lines[0], &res); err != nil || res.Snapshot != int64(2+2*(i%3/2)) {
				t.Fatalf("%s: compaction result %s (%v), want snapshot %d", steps[i].Flags["table"], r.Lines[0], err, 2+2*(i%3/2))
			}
		}
	}
	if err := stream.Until("", 4); err != nil {
		t.Fatal(err)
	}
	streamed, err := stream.Wait()
	if err != nil {
		t.Fatal(err)
	}
	readRes := mustBatch(reads)
	pyRes, err := py.Batch(ctx, pyReads)
	if err != nil {
		t.Fatal(err)
	}

	var want []string
	for k := range 100 {
		want = append(want, fmt.Sprintf("2/+I/%d/a%d", k, k))
	}
	for k := range 30 {
		want = append(want, fmt.Sprintf("4/-U/%d/a%d", k, k), fmt.Sprintf("4/+U/%d/b%d", k, k))
	}
	for k := 30; k < 40; k++ {
		want = append(want, fmt.Sprintf("4/-D/%d/a%d", k, k))
	}
	for k := 100; k < 120; k++ {
		want = append(want, fmt.Sprintf("4/+I/%d/c%d", k, k))
	}
	want = sortedCopy(want)
	rowsOf := func(r BatchResult) []Row {
		t.Helper()
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		rows, err := ParseRows(joinLines(r.Lines))
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	for i, p := range producers {
		t.Run(p, func(t *testing.T) {
			cl := rowsOf(readRes[2*i])
			if got := sortedCopy(clText(cl)); !slices.Equal(got, want) {
				t.Fatalf("changelog (0, 4]:\n%v\nwant\n%v", got, want)
			}
			checkKeyOrder(t, "Java changelog", cl)
			between := rowsOf(readRes[2*i+1])
			for _, r := range between {
				if r[SnapshotField] != int64(4) {
					t.Fatalf("one read of (0, 4] tags a row with snapshot %v", r[SnapshotField])
				}
				r[SnapshotField] = nil
			}
			var all []Row
			for _, r := range cl {
				c := maps.Clone(r)
				c[SnapshotField] = nil
				all = append(all, c)
			}
			if got, ref := sortedCopy(clText(between)), sortedCopy(clText(all)); !slices.Equal(got, ref) {
				t.Errorf("one read of (0, 4] returns\n%v\nthe per-snapshot reads\n%v", got, ref)
			}

			rows := streamed[p]
			for _, r := range rows {
				if r[PlanField] == int64(0) {
					t.Fatalf("the stream's first plan returned %v; nothing was compacted yet", r)
				}
			}
			if got, ref := perBucket(rows), perBucket(cl); !slices.Equal(got, ref) {
				t.Errorf("streaming reader received\n%v\nthe changelog verb reads\n%v", got, ref)
			}
			pyRows := rowsOf(pyRes[i])
			if got, ref := perBucket(pyRows), perBucket(cl); !slices.Equal(got, ref) {
				t.Errorf("pypaimon's streaming reader reads\n%v\nJava\n%v", got, ref)
			}
			t.Logf("%d changelog rows; the stream received %d, pypaimon read %d", len(cl), len(rows), len(pyRows))
		})
	}
}

// perBucket renders rows as "snapshot/bucket: kind k v" texts, sorted by (snapshot, bucket)
// with each group's rows in their received order.
func perBucket(rows []Row) []string {
	type key struct{ s, b int64 }
	groups := map[key][]string{}
	var keys []key
	for _, r := range rows {
		s, _ := r[SnapshotField].(int64)
		b, _ := r[BucketField].(int64)
		k := key{s, b}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], fmt.Sprintf("%d/%d: %v %v %v", s, b, r[KindField], r["k"], r["v"]))
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.s != b.s {
			return int(a.s - b.s)
		}
		return int(a.b - b.b)
	})
	var out []string
	for _, k := range keys {
		out = append(out, groups[k]...)
	}
	return out
}

// checkKeyOrder: inside each (snapshot, bucket) keys ascend, and a key's -U comes right before
// its +U.
func checkKeyOrder(t *testing.T, what string, rows []Row) {
	t.Helper()
	type key struct{ s, b int64 }
	last := map[key]Row{}
	for _, r := range rows {
		k := key{r[SnapshotField].(int64), r[BucketField].(int64)}
		if p, ok := last[k]; ok {
			pk, ck := p["k"].(int64), r["k"].(int64)
			switch {
			case ck < pk:
				t.Errorf("%s: snapshot %d bucket %d: key %d after %d", what, k.s, k.b, ck, pk)
			case ck == pk && !(p[KindField] == "-U" && r[KindField] == "+U"):
				t.Errorf("%s: snapshot %d bucket %d: key %d has %v then %v", what, k.s, k.b, ck, p[KindField], r[KindField])
			}
		}
		last[k] = r
	}
}

// TestStreamVerbStopsAtUntilAndFailsWithoutOne: a reader given "until" in its target stops once
// its checkpoint passes it (here at once: its latest-full first plan already covers the
// snapshot, and returns the compacted rows as +I); a reader never told where to stop fails the
// verb when stdin closes, rather than returning whatever it had read.
func TestStreamVerbStopsAtUntilAndFailsWithoutOne(t *testing.T) {
	ctx := context.Background()
	j := Java(t)
	wh := filepath.Join(t.TempDir(), "wh")
	var rows []map[string]any
	for k := range 10 {
		rows = append(rows, map[string]any{"k": k, "v": fmt.Sprintf("a%d", k)})
	}
	spec := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
		PrimaryKeys: []string{"k"},
		Bucket:      1,
		Options:     map[string]string{"changelog-producer": "lookup", "write-only": "true"},
	}
	j.Create(wh, "db.t", spec, changelogScript(t, rows))
	j.Compact(wh, "db.t", CompactOptions{Minor: true})

	s, err := j.StartStream(ctx, []StreamTarget{{ID: "x", Warehouse: wh, Table: "db.t", Until: 2}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(got["x"]) != 10 {
		t.Fatalf("reader x received %d rows, want the 10 compacted rows", len(got["x"]))
	}
	for _, r := range got["x"] {
		if r[KindField] != "+I" || r[PlanField] != int64(0) || r[SnapshotField] != int64(2) {
			t.Fatalf("first-plan row %v, want +I of plan 0 at snapshot 2", r)
		}
	}

	s, err = j.StartStream(ctx, []StreamTarget{{ID: "x", Warehouse: wh, Table: "db.t", Until: 2}, {ID: "y", Warehouse: wh, Table: "db.t"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(); err == nil || !strings.Contains(err.Error(), "stdin closed before an until for target y") {
		t.Fatalf("a reader without until: %v", err)
	}
}
