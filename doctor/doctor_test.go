package doctor_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/doctor"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// newTable creates db.t (bucket 1) with commits commits of 10 keys each.
func newTable(t *testing.T, opts map[string]string, commits int) *table.Table {
	t.Helper()
	return newTableIn(t, fileio.NewLocal(), filepath.Join(t.TempDir(), "wh"), opts, commits)
}

func newTableIn(t *testing.T, fio fileio.FileIO, wh string, opts map[string]string, commits int) *table.Table {
	t.Helper()
	ctx := context.Background()
	fields := table.RowType{
		{ID: 0, Name: "id", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
	}
	o := map[string]string{"bucket": "1", "write-only": "true"}
	for k, v := range opts {
		o[k] = v
	}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"id"}, o, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(ctx, fio, wh, "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	for c := range commits {
		w, err := write.NewWriter(ctx, tb, "w")
		if err != nil {
			t.Fatal(err)
		}
		for k := range 10 {
			if err := w.Write(table.RowKindInsert, table.Row{int64(k), int64(c)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

func run(t *testing.T, tb *table.Table) *doctor.Report {
	t.Helper()
	tb, err := table.OpenPath(context.Background(), tb.FileIO(), tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := doctor.Run(context.Background(), tb, doctor.Options{OrphanOlderThan: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// find returns the findings of a check.
func find(rep *doctor.Report, check string) []doctor.Finding {
	var out []doctor.Finding
	for _, f := range rep.Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

func want(t *testing.T, rep *doctor.Report, check, severity, text string) {
	t.Helper()
	for _, f := range find(rep, check) {
		if f.Severity == severity && strings.Contains(f.Message, text) {
			if severity == doctor.Warn || severity == doctor.Error {
				if f.Action == "" {
					t.Errorf("%s finding %q says nothing to do", check, f.Message)
				}
			}
			return
		}
	}
	t.Errorf("no %s %s finding containing %q in:\n%+v", severity, check, text, rep.Findings)
}

func TestAHealthyTableHasNoWarnings(t *testing.T) {
	rep := run(t, newTable(t, nil, 3))
	if w := rep.Worst(); w == doctor.Warn || w == doctor.Error {
		// A table never compacted warns that nothing compacts it.
		for _, f := range rep.Findings {
			if (f.Severity == doctor.Warn || f.Severity == doctor.Error) && f.Check != "compaction" {
				t.Errorf("unexpected %s: %+v", f.Severity, f)
			}
		}
	}
	want(t, rep, "files", doctor.OK, "all 3 data files")
	want(t, rep, "compaction", doctor.Warn, "nothing compacted this table")
	want(t, rep, "orphans", doctor.OK, "no unreferenced file")
	want(t, rep, "full-compaction", doctor.Info, "0 of 1 buckets are fully compacted")
}

func TestAfterAFullCompaction(t *testing.T) {
	tb := newTable(t, nil, 3)
	if _, err := compact.Run(context.Background(), tb, compact.Options{Full: true}); err != nil {
		t.Fatal(err)
	}
	rep := run(t, tb)
	want(t, rep, "full-compaction", doctor.Info, "1 of 1 buckets are fully compacted")
	want(t, rep, "compaction", doctor.Info, "the last COMPACT snapshot is 4")
	if w := rep.Worst(); w != doctor.OK && w != doctor.Info {
		t.Fatalf("worst %s after a full compaction: %+v", w, rep.Findings)
	}
}

func TestMissingFilesAreErrors(t *testing.T) {
	tb := newTable(t, nil, 3)
	files, _ := filepath.Glob(filepath.Join(tb.Path(), "bucket-0", "data-*"))
	if len(files) != 3 {
		t.Fatalf("%d data files", len(files))
	}
	if err := os.Remove(files[1]); err != nil {
		t.Fatal(err)
	}
	rep := run(t, tb)
	want(t, rep, "files", doctor.Error, "1 of the 3 data files the latest snapshot needs are missing, e.g. "+files[1])
	if rep.Worst() != doctor.Error {
		t.Fatalf("worst %s", rep.Worst())
	}
}

// Level-0 files at num-sorted-run.stop-trigger: writers that compact stall.
func TestSortedRunsAtTheStopTrigger(t *testing.T) {
	rep := run(t, newTable(t, map[string]string{"num-sorted-run.compaction-trigger": "2", "num-sorted-run.stop-trigger": "4"}, 4))
	want(t, rep, "sorted-runs", doctor.Error, "4 sorted runs, at num-sorted-run.stop-trigger 4")
	rep = run(t, newTable(t, map[string]string{"num-sorted-run.compaction-trigger": "2", "num-sorted-run.stop-trigger": "9"}, 4))
	want(t, rep, "sorted-runs", doctor.Warn, "1 buckets have more than num-sorted-run.compaction-trigger 2 sorted runs")
}

func TestConsumersHintsOrphansAndRefusedOptions(t *testing.T) {
	tb := newTable(t, map[string]string{"pk-bitmap.index.columns": "v"}, 3)
	dir := filepath.Join(tb.Path(), "consumer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "consumer-gone-job"), []byte(`{"nextSnapshot":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tb.Path(), "snapshot", "LATEST"), []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	orphanFile := filepath.Join(tb.Path(), "bucket-0", "data-00000000-0000-0000-0000-000000000000-0.parquet")
	if err := os.WriteFile(orphanFile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-3 * time.Hour)
	if err := os.Chtimes(orphanFile, old, old); err != nil {
		t.Fatal(err)
	}
	rep := run(t, tb)
	want(t, rep, "options", doctor.Warn, "compactd refuses to compact this table")
	want(t, rep, "consumers", doctor.Warn, "reads from snapshot 0, which is expired")
	want(t, rep, "hints", doctor.Info, "the hint says 2, the snapshot files say 3")
	want(t, rep, "orphans", doctor.Info, "1 unreferenced files")
}

// On S3 the doctor checks that the store refuses a second create of an
// object (what keeps two committers from overwriting a snapshot), and
// reads the table as on a local disk.
func TestDoctorOnS3ChecksConditionalWrites(t *testing.T) {
	ep := os.Getenv("COMPACTD_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("COMPACTD_REQUIRE_S3") == "1" {
			t.Fatal("COMPACTD_REQUIRE_S3=1 but COMPACTD_TEST_S3_ENDPOINT is not set")
		}
		t.Skip("needs COMPACTD_TEST_S3_ENDPOINT; run: eval \"$(scripts/s3-server.sh start)\"")
	}
	bucket := os.Getenv("COMPACTD_TEST_S3_BUCKET")
	if bucket == "" {
		bucket = "compactd-test"
	}
	root := "s3://" + bucket + "/doctor-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000")
	fio, err := fileio.ForWithS3Config(context.Background(), root, fileio.S3Config{Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	tb := newTableIn(t, fio, root, nil, 2)
	rep := run(t, tb)
	want(t, rep, "conditional-writes", doctor.OK, "refuses a second create")
	want(t, rep, "files", doctor.OK, "all 2 data files")

	// A table compactd only reads (altered to bzip2 manifests) gets no probe
	// object: the doctor does not write into it.
	ctx := context.Background()
	data, err := fileio.ReadFile(ctx, fio, tb.Path()+"/schema/schema-0")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	schema["id"] = 1
	schema["options"].(map[string]any)["manifest.compression"] = "bzip2"
	if data, err = json.Marshal(schema); err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(ctx, fio, tb.Path()+"/schema/schema-1", data); err != nil {
		t.Fatal(err)
	}
	rep = run(t, tb)
	want(t, rep, "conditional-writes", doctor.Info, "not checked: compactd does not write this table")
}

// A snapshot the compaction check cannot read is reported, not skipped.
func TestAnUnreadableSnapshotIsAFinding(t *testing.T) {
	tb := newTable(t, nil, 3)
	if err := os.WriteFile(filepath.Join(tb.Path(), "snapshot", "snapshot-2"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := run(t, tb)
	want(t, rep, "compaction", doctor.Error, "cannot read the snapshot")
}
