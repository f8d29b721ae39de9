package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
)

// TestORCCompactionInAnotherZone: Java Paimon in Asia/Shanghai writes an
// ORC append table with TIMESTAMP columns (stored in the writer's zone),
// compactd rewrites it (its files name UTC as the writer's zone), Java in
// Shanghai reads the same wall-clock times, then writes on top and
// compacts. LTZ columns are left out: with Paimon's default
// orc.timestamp-ltz.legacy.type=true their stored instant depends on the
// writer's zone.
func TestORCCompactionInAnotherZone(t *testing.T) {
	// Not parallel: the JVM's zone comes from the environment.
	t.Setenv("JAVA_TOOL_OPTIONS", "-Duser.timezone=Asia/Shanghai")
	ctx := context.Background()
	j := interop.Java(t)
	spec, rows := orcAppendScenario("zone", 2, nil, 12, 5)
	var cols []fixtures.Column
	for _, c := range spec.Columns {
		if c.Name != "ltz" {
			cols = append(cols, c)
		}
	}
	spec.Columns = cols
	var kept bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(rows), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "ltz")
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		kept.Write(b)
		kept.WriteByte('\n')
	}
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	specPath, rowsPath := filepath.Join(dir, "spec.json"), filepath.Join(dir, "rows.jsonl")
	if err := writeFile(specPath, spec.JSON()); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(rowsPath, kept.Bytes()); err != nil {
		t.Fatal(err)
	}
	f := flags(wh, "db.t")
	f["spec"], f["rows"] = specPath, rowsPath
	res := batch(t, j, []interop.BatchRequest{{Verb: "create", Flags: f}, {Verb: "read", Flags: flags(wh, "db.t")}})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	want := canon(t, rowsOf(t, res[1]))
	sum, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{Full: true})
	if err != nil {
		t.Fatalf("compactd: %v", err)
	}
	if sum.Snapshot == 0 {
		t.Fatal("compactd committed nothing")
	}
	round2 := filepath.Join(dir, "rows2.jsonl")
	if err := writeFile(round2, secondRound(t, kept.Bytes())); err != nil {
		t.Fatal(err)
	}
	f2 := flags(wh, "db.t")
	f2["rows"] = round2
	res = batch(t, j, []interop.BatchRequest{{Verb: "read", Flags: flags(wh, "db.t")}, {Verb: "files", Flags: flags(wh, "db.t")},
		{Verb: "write", Flags: f2}, {Verb: "compact", Flags: flags(wh, "db.t")}, {Verb: "read", Flags: flags(wh, "db.t")}})
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	diffRows(t, "Java in Shanghai after compactd's compaction", want, canon(t, rowsOf(t, res[0])))
	if n := len(rowsOf(t, res[1])); n > 4 {
		t.Errorf("%d files after the full compaction", n)
	}
	if got := len(rowsOf(t, res[4])); got != 2*len(want) {
		t.Errorf("after writing the rows again and Java's compaction: %d rows, want %d", got, 2*len(want))
	}
}
