package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
)

// TestORCLevel0FilesInAParquetTable: Java writes level-0 files in ORC
// (file.format.per.level='0:orc' on a Parquet table, which compact.Supported
// refused before the ORC writer existed); compactd's full compaction
// reads them and writes Parquet, and Java reads what Paimon's own full
// compaction of a copy gives, with no ORC file left.
func TestORCLevel0FilesInAParquetTable(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	var scenarios []*fixtures.Scenario
	for _, p := range []fixtures.Params{
		{Engine: "deduplicate", Partitioned: true, Buckets: 2, Size: fixtures.Tiny, Seed: 31},
		{Engine: "partial-update", Buckets: 1, Size: fixtures.Tiny, Seed: 31},
	} {
		s := fixtures.Generate(p)
		s.Spec.Options["file.format.per.level"] = "0:orc"
		s.Name += "_l0orc"
		scenarios = append(scenarios, s)
	}
	built := interop.BuildScenarios(t, t.TempDir(), scenarios, interop.BuildOptions{})
	var reqs []interop.BatchRequest
	refs := make([]string, len(built))
	for i, b := range built {
		orcFiles := 0
		for _, f := range b.Files {
			if f["file_format"] == "orc" {
				orcFiles++
			}
		}
		if orcFiles == 0 {
			t.Fatalf("%s: Java wrote no ORC level-0 file: %v", b.Scenario.Name, formatLevels(b.Files))
		}
		refs[i] = filepath.Join(t.TempDir(), "ref")
		copyDir(t, b.Warehouse, refs[i])
		if _, err := compact.Run(ctx, openLocal(t, b.Warehouse, b.Table), compact.Options{Full: true}); err != nil {
			t.Fatalf("%s: compactd: %v", b.Scenario.Name, err)
		}
		reqs = append(reqs,
			interop.BatchRequest{Verb: "compact", Flags: flags(refs[i], b.Table)},
			interop.BatchRequest{Verb: "read", Flags: flags(refs[i], b.Table)},
			interop.BatchRequest{Verb: "read", Flags: flags(b.Warehouse, b.Table)},
			interop.BatchRequest{Verb: "files", Flags: flags(b.Warehouse, b.Table)})
	}
	res := batch(t, j, reqs)
	for i, b := range built {
		r := res[4*i : 4*i+4]
		t.Run(b.Scenario.Name, func(t *testing.T) {
			if r[0].Err != nil {
				t.Fatalf("Java's compaction of the copy: %v", r[0].Err)
			}
			diffRows(t, "Java after compactd's compaction", canon(t, rowsOf(t, r[1])), canon(t, rowsOf(t, r[2])))
			for _, f := range rowsOf(t, r[3]) {
				if f["file_format"] != "parquet" {
					t.Errorf("a %v file is left after the full compaction: %v", f["file_format"], f["file_path"])
				}
			}
		})
	}
}
