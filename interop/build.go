package interop

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/compactd/compactd/fixtures"
)

// Built is a fixtures scenario that Java Paimon created and wrote into Warehouse as table Table,
// with what Java read back right after the writes.
type Built struct {
	Scenario  *fixtures.Scenario
	Warehouse string
	Table     string // always "db.t"
	JavaRows  []Row  // Java read after the writes (empty for first-row tables: see IsFirstRow)
	Files     []Row  // $files after the writes
	Snapshots []Row  // $snapshots after the writes
	// FinalRows is JavaRows, or with BuildOptions.CompactFirstRow the rows Java reads after its
	// own full compaction of a first-row table.
	FinalRows []Row
}

// BuildOptions tune BuildScenarios.
type BuildOptions struct {
	// CompactFirstRow runs Java's full compaction on first-row tables after reading them, so
	// FinalRows holds their visible content. Leave it false to get the tables uncompacted.
	CompactFirstRow bool
}

// IsFirstRow reports whether the scenario uses the first-row engine. Paimon's batch scan skips
// level-0 files for first-row tables (CoreOptions.batchScanSkipLevel0: deletion vectors or
// first-row), so a write-only first-row table reads empty until something compacts it.
func IsFirstRow(s *fixtures.Scenario) bool { return s.Engine == "first-row" }

// BuildScenarios creates and writes every scenario with Java Paimon under dir/<scenario name>/
// warehouse, and reads each back (rows, $files, $snapshots), all in one JVM. Use it to get real
// Paimon tables to point compactd at:
//
//	built := interop.BuildScenarios(t, t.TempDir(), fixtures.All(fixtures.Tiny, 1), interop.BuildOptions{})
//	for _, b := range built { /* compactd scan of b.Warehouse/db.db/t == b.JavaRows */ }
func BuildScenarios(tb testing.TB, dir string, scenarios []*fixtures.Scenario, o BuildOptions) []*Built {
	tb.Helper()
	j := Java(tb)
	var reqs []BatchRequest
	var built []*Built
	for _, s := range scenarios {
		sdir := filepath.Join(dir, s.Name)
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			tb.Fatal(err)
		}
		spec := writeTemp(tb, sdir, "spec.json", s.Spec.JSON())
		b := &Built{Scenario: s, Warehouse: filepath.Join(sdir, "warehouse"), Table: "db.t"}
		built = append(built, b)
		common := map[string]string{"warehouse": b.Warehouse, "table": b.Table}
		if s.CompactedPrefix > 0 {
			// The prefix by a compacting writer (it leaves deletion vectors on a DV table),
			// then the write-only commits.
			prefix := writeTemp(tb, sdir, "rows-prefix.jsonl", s.RowsJSONLRange(0, s.CompactedPrefix))
			rest := writeTemp(tb, sdir, "rows.jsonl", s.RowsJSONLRange(s.CompactedPrefix, len(s.Commits)))
			reqs = append(reqs,
				BatchRequest{Verb: "create", Flags: with(common, "spec", spec, "rows", prefix,
					"options", `{"write-only":"false"}`, "wait-compaction", "true")},
				BatchRequest{Verb: "write", Flags: with(common, "rows", rest)})
		} else {
			rows := writeTemp(tb, sdir, "rows.jsonl", s.RowsJSONL())
			reqs = append(reqs, BatchRequest{Verb: "create", Flags: with(common, "spec", spec, "rows", rows)})
		}
		reqs = append(reqs,
			BatchRequest{Verb: "read", Flags: common},
			BatchRequest{Verb: "files", Flags: common},
			BatchRequest{Verb: "snapshots", Flags: common})
		if o.CompactFirstRow && IsFirstRow(s) {
			reqs = append(reqs,
				BatchRequest{Verb: "compact", Flags: common},
				BatchRequest{Verb: "read", Flags: common})
		}
	}
	start := time.Now()
	res, err := j.Batch(context.Background(), reqs)
	if err != nil {
		tb.Fatalf("interop: java batch: %v", err)
	}
	tb.Logf("interop: java ran %d verbs over %d scenarios in one JVM in %v", len(reqs), len(scenarios), time.Since(start).Round(time.Millisecond))
	next := 0
	take := func(b *Built, what string) []Row {
		r := res[next]
		next++
		if r.Err != nil {
			tb.Fatalf("interop: scenario %s: %s: %v", b.Scenario.Name, what, r.Err)
		}
		rows, err := ParseRows(joinLines(r.Lines))
		if err != nil {
			tb.Fatalf("interop: scenario %s: %s: %v", b.Scenario.Name, what, err)
		}
		return rows
	}
	for _, b := range built {
		take(b, "create")
		if b.Scenario.CompactedPrefix > 0 {
			take(b, "write after the compacted prefix")
		}
		b.JavaRows = take(b, "read")
		b.Files = take(b, "files")
		b.Snapshots = take(b, "snapshots")
		b.FinalRows = b.JavaRows
		if o.CompactFirstRow && IsFirstRow(b.Scenario) {
			take(b, "compact")
			b.FinalRows = take(b, "read after compaction")
		}
	}
	return built
}

func with(m map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func joinLines(lines [][]byte) []byte {
	var n int
	for _, l := range lines {
		n += len(l) + 1
	}
	out := make([]byte, 0, n)
	for _, l := range lines {
		out = append(out, l...)
		out = append(out, '\n')
	}
	return out
}
