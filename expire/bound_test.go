package expire

import (
	"fmt"
	"testing"
)

func TestRunReportKeepsCountsAndABoundedSample(t *testing.T) {
	t.Parallel()
	paths := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("/t/bucket-0/data-%d.parquet", i)
		}
		return out
	}
	rep := Report{Snapshots: []int64{1, 2}, DataFiles: paths(SampleLimit + 5), Manifests: paths(3)}
	rep.Changelog = ChangelogReport{Changelogs: []int64{1}, DataFiles: paths(SampleLimit * 2)}
	before := rep.Files()
	rep.bound()
	rep.Changelog.bound()
	if len(rep.DataFiles) != SampleLimit || rep.DataFiles[SampleLimit-1] != fmt.Sprintf("/t/bucket-0/data-%d.parquet", SampleLimit-1) {
		t.Errorf("data files sample: %d paths, want the first %d", len(rep.DataFiles), SampleLimit)
	}
	if rep.Counts.DataFiles != SampleLimit+5 || rep.Counts.Manifests != 3 || len(rep.Manifests) != 3 {
		t.Errorf("counts %+v, manifests %d", rep.Counts, len(rep.Manifests))
	}
	if len(rep.Changelog.DataFiles) != SampleLimit || rep.Changelog.Counts.DataFiles != 2*SampleLimit {
		t.Errorf("changelog: %d paths, count %d", len(rep.Changelog.DataFiles), rep.Changelog.Counts.DataFiles)
	}
	if after := rep.Files(); after != before || after != 2+SampleLimit+5+3+1+2*SampleLimit {
		t.Errorf("Files() = %d after bounding, %d before", after, before)
	}
	rep.bound() // idempotent: counts are not lowered to the sample's length
	if rep.Counts.DataFiles != SampleLimit+5 {
		t.Errorf("second bound lowered the count to %d", rep.Counts.DataFiles)
	}
}
