package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"testing"

	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
)

// buildCLI builds the compactd binary once per test binary.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "compactd")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/compactd")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build compactd: %v\n%s", err, out)
	}
	return bin
}

type inspectJSON struct {
	Snapshots []struct {
		ID               int64  `json:"id"`
		SchemaID         int64  `json:"schemaId"`
		Kind             string `json:"commitKind"`
		CommitUser       string `json:"commitUser"`
		CommitIdentifier int64  `json:"commitIdentifier"`
		TotalRecordCount int64  `json:"totalRecordCount"`
		DeltaRecordCount int64  `json:"deltaRecordCount"`
	} `json:"snapshots"`
	Buckets []struct {
		Bucket int32 `json:"bucket"`
		Runs   []struct {
			Files []struct {
				Name     string `json:"fileName"`
				Level    int32  `json:"level"`
				Size     int64  `json:"fileSize"`
				Rows     int64  `json:"rowCount"`
				MinSeq   int64  `json:"minSequenceNumber"`
				MaxSeq   int64  `json:"maxSequenceNumber"`
				SchemaID int64  `json:"schemaId"`
			} `json:"files"`
		} `json:"sortedRuns"`
	} `json:"buckets"`
}

// TestInspectMatchesJavaSystemTables compares `compactd inspect --json`
// with Java Paimon's $files and $snapshots system tables for every scenario.
func TestInspectMatchesJavaSystemTables(t *testing.T) {
	bin := buildCLI(t)
	built := interop.BuildScenarios(t, t.TempDir(), fixtures.All(fixtures.Tiny, 3), interop.BuildOptions{})
	for _, b := range built {
		t.Run(b.Scenario.Name, func(t *testing.T) {
			out, err := exec.Command(bin, "inspect", "--json", b.Warehouse, b.Table).Output()
			if err != nil {
				t.Fatalf("compactd inspect: %v", err)
			}
			rep := inspectFilesEqual(t, out, b.Files)
			var got, want []string
			for _, s := range rep.Snapshots {
				got = append(got, fmt.Sprintf("%d %s %s id=%d schema=%d total=%d delta=%d", s.ID, s.Kind, s.CommitUser, s.CommitIdentifier, s.SchemaID, s.TotalRecordCount, s.DeltaRecordCount))
			}
			for _, s := range b.Snapshots {
				want = append(want, fmt.Sprintf("%v %v %v id=%v schema=%v total=%v delta=%v", s["snapshot_id"], s["commit_kind"], s["commit_user"], s["commit_identifier"], s["schema_id"], s["total_record_count"], s["delta_record_count"]))
			}
			sort.Strings(got)
			sort.Strings(want)
			if len(want) == 0 {
				t.Fatal("Java lists no snapshots")
			}
			diffRows(t, "snapshots", want, got)
		})
	}
}

// inspectFilesEqual compares the files of `compactd inspect --json` output
// with Java's $files rows (name, bucket, level, rows, size, sequence range,
// schema) and returns the parsed report.
func inspectFilesEqual(t *testing.T, out []byte, javaFiles []interop.Row) inspectJSON {
	t.Helper()
	var rep inspectJSON
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, bk := range rep.Buckets {
		for _, r := range bk.Runs {
			for _, f := range r.Files {
				got = append(got, fmt.Sprintf("%s bucket=%d level=%d rows=%d size=%d seq=%d..%d schema=%d",
					f.Name, bk.Bucket, f.Level, f.Rows, f.Size, f.MinSeq, f.MaxSeq, f.SchemaID))
			}
		}
	}
	for _, f := range javaFiles {
		want = append(want, fmt.Sprintf("%s bucket=%v level=%v rows=%v size=%v seq=%v..%v schema=%v",
			path.Base(fmt.Sprint(f["file_path"])), f["bucket"], f["level"], f["record_count"], f["file_size_in_bytes"],
			f["min_sequence_number"], f["max_sequence_number"], f["schema_id"]))
	}
	sort.Strings(got)
	sort.Strings(want)
	diffRows(t, "files", want, got)
	return rep
}
