package orphan

import (
	"fmt"
	"testing"
)

func TestRunReportKeepsTheCountAndABoundedSample(t *testing.T) {
	t.Parallel()
	var rep Report
	for i := range SampleLimit + 7 {
		rep.Files = append(rep.Files, File{Path: fmt.Sprintf("/t/bucket-0/data-%d.parquet", i)})
	}
	rep.bound()
	if len(rep.Files) != SampleLimit || rep.Files[0].Path != "/t/bucket-0/data-0.parquet" {
		t.Errorf("sample: %d files, want the first %d", len(rep.Files), SampleLimit)
	}
	if rep.FileCount != SampleLimit+7 || rep.Count() != SampleLimit+7 {
		t.Errorf("FileCount %d, Count() %d, want %d", rep.FileCount, rep.Count(), SampleLimit+7)
	}
	small := Report{Files: []File{{Path: "a"}}}
	small.bound()
	if small.FileCount != 1 || len(small.Files) != 1 {
		t.Errorf("small report: count %d, %d files", small.FileCount, len(small.Files))
	}
}
