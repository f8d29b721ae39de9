package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
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

// TestORCManifestFixturesScanEqualJavaRead pins what the fixture loop
// (TestScanOfEveryFixtureTableEqualsJavaRead) would tolerate as a refusal:
// every ORC-manifest fixture opens read-only, `compactd inspect` lists the
// files Java's $files lists (read from the ORC manifests and manifest
// lists: name, bucket, level, rows, size, sequence range, schema), and its
// scan equals Java's read row for row. The one exception is the
// data-evolution table, whose rows Java stitches from several files by row
// id: compactd's scan refuses data evolution (scan.ErrUnsupported), not its
// ORC manifests, which inspect reads.
func TestORCManifestFixturesScanEqualJavaRead(t *testing.T) {
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
	for i, fx := range orcManifestFixtures {
		_, name, _ := strings.Cut(fx, "/")
		db, tbl, _ := strings.Cut(name, ".")
		wh := whs[i]
		t.Run(fx, func(t *testing.T) {
			tb, err := table.Open(context.Background(), tableFIO(), wh, db, tbl)
			if err != nil {
				t.Fatal(err)
			}
			if tb.Options().ManifestFormat != "orc" || !errors.Is(tb.Writable(), table.ErrReadOnly) {
				t.Fatalf("manifest.format=%s, Writable() = %v: not an ORC-manifest table opened read-only", tb.Options().ManifestFormat, tb.Writable())
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
			if strings.HasPrefix(name, "blob_data_evolution") {
				if !errors.Is(err, scan.ErrUnsupported) || !strings.Contains(err.Error(), "data-evolution") {
					t.Fatalf("want the data-evolution refusal, got %v (%d rows)", err, len(got))
				}
				return
			}
			if err != nil {
				t.Fatalf("compactd scan: %v", err)
			}
			diffRows(t, name, canon(t, want), canon(t, got))
		})
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
// Java's read and inspect lists Java's $files; writes are refused.
func TestJavaWrittenORCManifestTablesScanEqualJavaRead(t *testing.T) {
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
	for i, b := range built {
		c := cases[i]
		t.Run(b.Scenario.Name, func(t *testing.T) {
			db, tbl, _ := strings.Cut(b.Table, ".")
			root := filepath.Join(b.Warehouse, db+".db", tbl)
			tb, err := table.Open(context.Background(), tableFIO(), b.Warehouse, db, tbl)
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(tb.Writable(), table.ErrReadOnly) {
				t.Fatalf("Writable() = %v, want a refusal", tb.Writable())
			}
			// Every metadata file Java wrote is ORC, and there is an index
			// manifest where the case needs one.
			names, err := filepath.Glob(filepath.Join(root, "manifest", "*"))
			if err != nil || len(names) == 0 {
				t.Fatalf("manifests: %v %v", names, err)
			}
			index := 0
			for _, n := range names {
				data, err := os.ReadFile(n)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(data, []byte("ORC")) {
					t.Errorf("%s is not an ORC file", filepath.Base(n))
				}
				if strings.HasPrefix(filepath.Base(n), "index-manifest-") {
					index++
				}
			}
			if c.indexType != "" && index == 0 {
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
			if _, err := compact.Run(context.Background(), tb, compact.Options{Full: true}); !errors.Is(err, table.ErrReadOnly) {
				t.Fatalf("compaction: %v, want the read-only refusal", err)
			}
		})
	}
}
