package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
)

// formatLevels summarises $files rows as sorted
// "partition/bucket/Llevel/format/rows" texts.
func formatLevels(files []interop.Row) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		out = append(out, fmt.Sprintf("%v/%v/L%v/%v/%v rows", f["partition"], f["bucket"], f["level"], f["file_format"], f["record_count"]))
	}
	sort.Strings(out)
	return out
}

// TestAvroLevel0FilesAsCompactionInput: Java writes level-0 files in Avro
// (file.format.per.level='0:avro' on a Parquet table) for plain
// deduplicate, partial-update and aggregation tables and for a
// deletion-vector table (some of whose Avro files a compacting Java writer
// already compacted, leaving vectors). compactd compacts copy A (minor, then
// full) and Java copy B; after each step Java reads A as B, the files sit at
// the same levels in the same formats (Parquet at every level >= 1), and no
// Avro file is left after the full compaction. A table whose per-level
// option makes the top level Avro is refused by compact.Supported before
// anything is written, and Java's compaction does write Avro there.
func TestAvroLevel0FilesAsCompactionInput(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	level0Avro := func(s *fixtures.Scenario, spec string) *fixtures.Scenario {
		s.Spec.Options["file.format.per.level"] = spec
		s.Name += "_" + strings.NewReplacer(":", "", ",", "_").Replace(spec)
		return s
	}
	scenarios := []*fixtures.Scenario{
		level0Avro(fixtures.Generate(fixtures.Params{Engine: "deduplicate", Buckets: 1, Size: fixtures.Tiny, Seed: 3}), "0:avro"),
		level0Avro(fixtures.Generate(fixtures.Params{Engine: "partial-update", Partitioned: true, Buckets: 4, Size: fixtures.Tiny, Seed: 3}), "0:avro"),
		level0Avro(fixtures.Generate(fixtures.Params{Engine: "aggregation", Buckets: 4, Size: fixtures.Tiny, Seed: 3}), "0:avro"),
		level0Avro(fixtures.DeletionVectors(fixtures.DVParams{
			Params:          fixtures.Params{Engine: "deduplicate", Buckets: 2, Size: fixtures.Tiny, Seed: 3, Commits: 16},
			CompactedPrefix: 4, BaseRowsPerBucket: 600,
		}), "0:avro"),
		// Refused: Java writes level 5 in Avro, compactd cannot.
		level0Avro(fixtures.Generate(fixtures.Params{Engine: "deduplicate", Buckets: 1, Size: fixtures.Tiny, Seed: 4}), "0:avro,5:avro"),
	}
	refusedIdx := len(scenarios) - 1
	built := interop.BuildScenarios(t, t.TempDir(), scenarios, interop.BuildOptions{})
	refs := make([]string, len(built))
	for i, b := range built {
		avro := 0
		for _, f := range b.Files {
			if f["file_format"] == "avro" {
				avro++
				if f["level"] != int64(0) {
					t.Errorf("%s: Java wrote an Avro file at level %v", b.Scenario.Name, f["level"])
				}
			}
		}
		if avro == 0 {
			t.Fatalf("%s: Java wrote no Avro level-0 file: %v", b.Scenario.Name, formatLevels(b.Files))
		}
		refs[i] = filepath.Join(t.TempDir(), "ref")
		copyDir(t, b.Warehouse, refs[i])
	}

	// The refused table: nothing written, and Java's own full compaction
	// writes Avro at the top level (so the refusal is about a real format).
	rb := built[refusedIdx]
	tb := openLocal(t, rb.Warehouse, rb.Table)
	if err := compact.Supported(tb, nil); err == nil || !strings.Contains(err.Error(), "file.format.per.level") || !strings.Contains(err.Error(), "level-5 files avro") {
		t.Errorf("%s: Supported: %v, want a refusal naming file.format.per.level and level 5", rb.Scenario.Name, err)
	}
	before := treeState(t, rb.Warehouse)
	if _, err := compact.Run(ctx, tb, compact.Options{Full: true}); err == nil {
		t.Errorf("%s: compactd compacted a table whose top level Java writes in Avro", rb.Scenario.Name)
	}
	if after := treeState(t, rb.Warehouse); !equalStrings(before, after) {
		t.Errorf("%s: the refused compaction changed the table directory", rb.Scenario.Name)
	}

	failed := make([]error, len(built))
	for step, full := range []bool{false, true} {
		var reqs []interop.BatchRequest
		for i, b := range built {
			if i == refusedIdx {
				reqs = append(reqs,
					interop.BatchRequest{Verb: "compact", Flags: flags(refs[i], b.Table)},
					interop.BatchRequest{Verb: "files", Flags: flags(refs[i], b.Table)})
				continue
			}
			if failed[i] == nil {
				if _, err := compact.Run(ctx, openLocal(t, b.Warehouse, b.Table), compact.Options{Full: full}); err != nil {
					failed[i] = err
				}
			}
			rf := flags(refs[i], b.Table)
			if !full {
				rf["full"] = "false"
			}
			reqs = append(reqs,
				interop.BatchRequest{Verb: "compact", Flags: rf},
				interop.BatchRequest{Verb: "read", Flags: flags(refs[i], b.Table)},
				interop.BatchRequest{Verb: "files", Flags: flags(refs[i], b.Table)},
				interop.BatchRequest{Verb: "read", Flags: flags(b.Warehouse, b.Table)},
				interop.BatchRequest{Verb: "files", Flags: flags(b.Warehouse, b.Table)})
		}
		res := batch(t, j, reqs)
		k := 0
		for i, b := range built {
			if i == refusedIdx {
				if step == 1 {
					top := 0
					for _, f := range rowsOf(t, res[k+1]) {
						if f["file_format"] == "avro" && f["level"] == int64(5) {
							top++
						}
					}
					if res[k].Err != nil || top == 0 {
						t.Errorf("%s: Java's full compaction wrote no Avro top-level file (%v)", b.Scenario.Name, res[k].Err)
					}
				}
				k += 2
				continue
			}
			r := res[k : k+5]
			k += 5
			t.Run(fmt.Sprintf("%s/%s", b.Scenario.Name, []string{"minor", "full"}[step]), func(t *testing.T) {
				if failed[i] != nil {
					t.Fatalf("compactd compaction: %v", failed[i])
				}
				if r[0].Err != nil {
					t.Fatalf("Java's compaction of the copy: %v", r[0].Err)
				}
				diffRows(t, "Java read after compactd's compaction", canon(t, rowsOf(t, r[1])), canon(t, rowsOf(t, r[3])))
				got, ref := formatLevels(rowsOf(t, r[4])), formatLevels(rowsOf(t, r[2]))
				if !equalStrings(got, ref) {
					t.Errorf("files after compactd's compaction:\n  %v\nafter Java's:\n  %v", got, ref)
				}
				for _, f := range rowsOf(t, r[4]) {
					if f["level"] != int64(0) && f["file_format"] != "parquet" {
						t.Errorf("compactd left a %v file at level %v", f["file_format"], f["level"])
					}
					if full && f["file_format"] == "avro" {
						t.Errorf("an Avro file is left after the full compaction: %v", f["file_path"])
					}
				}
			})
		}
	}
}

// treeState lists every file under root with its size and modification
// time, sorted.
func treeState(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			out = append(out, fmt.Sprintf("%s %d %d", p, info.Size(), info.ModTime().UnixNano()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
