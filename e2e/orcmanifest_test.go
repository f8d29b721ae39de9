package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
)

// orcManifestFixtures are the shared fixture tables whose manifests are ORC
// (manifest.format=orc; Paimon 0.9 to 1.x), as format/db.table.
var orcManifestFixtures = []string{
	"orc/append_09.append_09",
	"parquet/append_09.append_09",
	"parquet/append_10.append_10",
	"parquet/append_with_empty_partition.append_with_empty_partition",
	"parquet/append_with_empty_partition_with_empty_value.append_with_empty_partition_with_empty_value",
	"parquet/append_with_empty_partition_with_specific_name.append_with_empty_partition_with_specific_name",
	"parquet/parquet_append_table.parquet_append_table",
	"parquet/pk_table_nested_type.pk_table_nested_type",
	"parquet/blob_data_evolution_with_dense_stats.blob_data_evolution_with_dense_stats",
}

// TestORCManifestFixturesCompactAgainstJava: every ORC-manifest fixture
// is writable; `compactd inspect` lists the files Java's $files lists
// (read from the ORC manifests and manifest lists) and its scan equals
// Java's read row for row, before and after `compactd compact --full`,
// which writes every new metadata file in ORC; Java then reads exactly
// the rows it read before the compaction. The one exception is the
// data-evolution table, whose rows Java stitches from several files by
// row id: compactd refuses to scan or compact data evolution (not its ORC
// manifests, which inspect reads) and leaves it byte for byte.
func TestORCManifestFixturesCompactAgainstJava(t *testing.T) {
	java := interop.Java(t)
	bin := buildCLI(t)
	whs := make([]string, len(orcManifestFixtures))
	var reqs []interop.BatchRequest
	for i, fx := range orcManifestFixtures {
		format, name, _ := strings.Cut(fx, "/")
		db, tbl, _ := strings.Cut(name, ".")
		whs[i] = t.TempDir()
		copyDir(t, filepath.Join(fixturesRoot(t), format, db+".db", tbl), filepath.Join(whs[i], db+".db", tbl))
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: flags(whs[i], name)},
			interop.BatchRequest{Verb: "files", Flags: flags(whs[i], name)})
	}
	res := batch(t, java, reqs)
	compacted := make([]bool, len(orcManifestFixtures))
	reqs = reqs[:0]
	for i, fx := range orcManifestFixtures {
		_, name, _ := strings.Cut(fx, "/")
		db, tbl, _ := strings.Cut(name, ".")
		wh := whs[i]
		root := filepath.Join(wh, db+".db", tbl)
		t.Run(fx+"/before", func(t *testing.T) {
			tb, err := table.Open(context.Background(), tableFIO(), wh, db, tbl)
			if err != nil {
				t.Fatal(err)
			}
			if f, err := tb.MetadataFormat(); tb.Options().ManifestFormat != "orc" || err != nil || !f.ORC {
				t.Fatalf("manifest.format=%s, MetadataFormat() = %v, %v: not an ORC-manifest table compactd writes in ORC", tb.Options().ManifestFormat, f, err)
			}
			out, err := exec.Command(bin, "inspect", "--json", wh, name).Output()
			if err != nil {
				t.Fatalf("compactd inspect: %v", err)
			}
			javaFiles := rowsOf(t, res[2*i+1])
			if len(javaFiles) == 0 {
				t.Fatal("Java lists no files")
			}
			inspectFilesEqual(t, out, javaFiles)
			want := rowsOf(t, res[2*i])
			if len(want) == 0 {
				t.Fatal("Java reads no rows: the comparison would prove nothing")
			}
			got, err := scanRows(wh, name)
			before := expiretest.Tree(t, root)
			cout, cerr := exec.Command(bin, "compact", "--full", wh, name).CombinedOutput()
			if strings.HasPrefix(name, "blob_data_evolution") {
				if !errors.Is(err, scan.ErrUnsupported) || !strings.Contains(err.Error(), "data-evolution") {
					t.Fatalf("want the data-evolution refusal, got %v (%d rows)", err, len(got))
				}
				if cerr == nil || !strings.Contains(string(cout), "data-evolution") {
					t.Fatalf("compactd compact: %v, want the data-evolution refusal\n%s", cerr, cout)
				}
				if after := expiretest.Tree(t, root); !slices.Equal(before, after) {
					t.Fatalf("a refused compaction changed the table:\n%s", expiretest.DiffTrees(before, after))
				}
				return
			}
			if err != nil {
				t.Fatalf("compactd scan: %v", err)
			}
			diffRows(t, name, canon(t, want), canon(t, got))
			if cerr != nil {
				t.Fatalf("compactd compact --full: %v\n%s", cerr, cout)
			}
			compacted[i] = true
		})
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: flags(wh, name)},
			interop.BatchRequest{Verb: "files", Flags: flags(wh, name)})
	}
	after := batch(t, java, reqs)
	n := 0
	for i, fx := range orcManifestFixtures {
		if !compacted[i] {
			continue
		}
		n++
		_, name, _ := strings.Cut(fx, "/")
		db, tbl, _ := strings.Cut(name, ".")
		wh := whs[i]
		t.Run(fx+"/after compactd's full compaction", func(t *testing.T) {
			for _, r := range after[2*i : 2*i+2] {
				if r.Err != nil {
					t.Fatalf("Java: %v", r.Err)
				}
			}
			diffRows(t, "Java's read after compactd's compaction vs before", canon(t, rowsOf(t, res[2*i])), canon(t, rowsOf(t, after[2*i])))
			out, err := exec.Command(bin, "inspect", "--json", wh, name).Output()
			if err != nil {
				t.Fatalf("compactd inspect: %v", err)
			}
			inspectFilesEqual(t, out, rowsOf(t, after[2*i+1]))
			checkAllORC(t, filepath.Join(wh, db+".db", tbl, "manifest"))
		})
	}
	if n < len(orcManifestFixtures)-1 {
		t.Fatalf("%d of %d ORC-manifest fixtures compacted", n, len(orcManifestFixtures))
	}
}

// checkAllORC checks that every file of a manifest directory is ORC.
func checkAllORC(t *testing.T, dir string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("manifests: %v %v", names, err)
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("ORC")) {
			t.Errorf("%s is not an ORC file", filepath.Base(n))
		}
	}
}

// TestJavaWrittenORCManifestTablesScanEqualJavaRead has Java Paimon 1.4.2
// write tables with manifest.format=orc in the newest manifest layouts: a
// deletion-vector table whose compacting writer leaves vectors (an ORC
// index manifest of DELETION_VECTORS entries with their ranges), a
// dynamic-bucket table (an ORC index manifest of HASH entries), and tables
// with ORC and Parquet data files, manifests compressed with zstd (Paimon's
// default), snappy, lz4 and none. compactd must read every manifest list,
// manifest and index manifest: its scan (deletion vectors applied) equals
// Java's read and inspect lists Java's $files. Then compactd's full
// compaction writes its metadata (index manifests too) in ORC, and Java
// reads from it exactly what it reads from a copy it compacted itself.
func TestJavaWrittenORCManifestTablesCompactAgainstJava(t *testing.T) {
	t.Parallel()
	dv := fixtures.DeletionVectors(fixtures.DVParams{
		Params:          fixtures.Params{Engine: "deduplicate", Partitioned: true, Buckets: 2, Size: fixtures.Tiny, Seed: 5, Commits: 8},
		CompactedPrefix: 4, BaseRowsPerBucket: 50,
	})
	dyn := fixtures.Generate(fixtures.Params{Engine: "deduplicate", Partitioned: true, Size: fixtures.Tiny, Seed: 6})
	dyn.Spec.Bucket = -1
	dyn.Name = "dynamic_bucket"
	agg := fixtures.Generate(fixtures.Params{Engine: "aggregation", Partitioned: true, Buckets: 4, Size: fixtures.Tiny, Seed: 7})
	pu := fixtures.Generate(fixtures.Params{Engine: "partial-update", Buckets: 1, Size: fixtures.Tiny, Seed: 8})
	cases := []struct {
		s           *fixtures.Scenario
		dataFormat  string
		compression string
		indexType   string // the index Java writes, "" for none
	}{
		{dv, "orc", "zstd", "DELETION_VECTORS"},
		{dyn, "parquet", "snappy", "HASH"},
		{agg, "orc", "lz4", ""},
		{pu, "parquet", "none", ""},
	}
	var scenarios []*fixtures.Scenario
	for _, c := range cases {
		c.s.Spec.Options["manifest.format"] = "orc"
		c.s.Spec.Options["manifest.compression"] = c.compression
		c.s.Spec.Options["file.format"] = c.dataFormat
		scenarios = append(scenarios, c.s)
	}
	built := interop.BuildScenarios(t, t.TempDir(), scenarios, interop.BuildOptions{})
	bin := buildCLI(t)
	refs := make([]string, len(built))
	var reqs []interop.BatchRequest
	for i, b := range built {
		refs[i] = filepath.Join(t.TempDir(), "ref")
		copyDir(t, b.Warehouse, refs[i])
		reqs = append(reqs, interop.BatchRequest{Verb: "compact", Flags: flags(refs[i], b.Table)},
			interop.BatchRequest{Verb: "read", Flags: flags(refs[i], b.Table)})
	}
	ref := batch(t, interop.Java(t), reqs)
	reqs = reqs[:0]
	compacted := make([]bool, len(built))
	for i, b := range built {
		c := cases[i]
		t.Run(b.Scenario.Name, func(t *testing.T) {
			db, tbl, _ := strings.Cut(b.Table, ".")
			root := filepath.Join(b.Warehouse, db+".db", tbl)
			tb, err := table.Open(context.Background(), tableFIO(), b.Warehouse, db, tbl)
			if err != nil {
				t.Fatal(err)
			}
			if err := tb.Writable(); err != nil {
				t.Fatalf("Writable() = %v", err)
			}
			// Every metadata file Java wrote is ORC, and there is an index
			// manifest where the case needs one.
			checkAllORC(t, filepath.Join(root, "manifest"))
			names, _ := filepath.Glob(filepath.Join(root, "manifest", "index-manifest-*"))
			if c.indexType != "" && len(names) == 0 {
				t.Fatal("Java wrote no index manifest: the case proves nothing about them")
			}
			s, err := tb.LatestSnapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if c.indexType != "" {
				es, err := tb.IndexEntries(context.Background(), s)
				if err != nil || len(es) == 0 {
					t.Fatalf("index entries of snapshot %d: %d, %v", s.ID, len(es), err)
				}
				for _, e := range es {
					f := &e.IndexFile
					if f.IndexType != c.indexType || f.RowCount <= 0 || f.FileSize <= 0 || (c.indexType == "DELETION_VECTORS") != (len(f.DeletionVectors) > 0) {
						t.Errorf("index entry %+v", e)
					}
					if _, err := os.Stat(filepath.Join(root, "index", f.FileName)); err != nil {
						t.Errorf("index file: %v", err)
					}
				}
			}
			out, err := exec.Command(bin, "inspect", "--json", b.Warehouse, b.Table).Output()
			if err != nil {
				t.Fatalf("compactd inspect: %v", err)
			}
			inspectFilesEqual(t, out, b.Files)
			if len(b.JavaRows) == 0 {
				t.Fatal("Java reads no rows")
			}
			diffRows(t, b.Scenario.Name, canon(t, b.JavaRows), canon(t, compactdRows(t, b.Warehouse, b.Table)))
			sum, err := compact.Run(context.Background(), tb, compact.Options{Full: true})
			if err != nil || sum.Snapshot == 0 {
				t.Fatalf("compactd's full compaction: %+v, %v", sum, err)
			}
			checkAllORC(t, filepath.Join(root, "manifest"))
			compacted[i] = true
		})
		reqs = append(reqs, interop.BatchRequest{Verb: "read", Flags: flags(b.Warehouse, b.Table)},
			interop.BatchRequest{Verb: "files", Flags: flags(b.Warehouse, b.Table)})
	}
	after := batch(t, interop.Java(t), reqs)
	for i, b := range built {
		t.Run(b.Scenario.Name+"/after compactd's full compaction", func(t *testing.T) {
			if !compacted[i] {
				t.Fatal("not compacted: see the failure above")
			}
			for _, r := range []interop.BatchResult{ref[2*i], ref[2*i+1], after[2*i], after[2*i+1]} {
				if r.Err != nil {
					t.Fatalf("Java: %v", r.Err)
				}
			}
			want := canon(t, rowsOf(t, ref[2*i+1]))
			diffRows(t, "Java's read after compactd's compaction vs after its own", want, canon(t, rowsOf(t, after[2*i])))
			diffRows(t, "compactd's scan after its compaction", want, canon(t, compactdRows(t, b.Warehouse, b.Table)))
			out, err := exec.Command(bin, "inspect", "--json", b.Warehouse, b.Table).Output()
			if err != nil {
				t.Fatalf("compactd inspect: %v", err)
			}
			inspectFilesEqual(t, out, rowsOf(t, after[2*i+1]))
		})
	}
}
