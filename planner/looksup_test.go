package planner

import "testing"

// Job.LooksUp is the rule `compactd plan` explains and the executor follows:
// only lookup-style tables, only into a level above 0, only when level-0
// files are among the inputs.
func TestJobLooksUp(t *testing.T) {
	l0 := File{Name: "a", Level: 0}
	l3 := File{Name: "b", Level: 3}
	for _, c := range []struct {
		name string
		opts Options
		job  Job
		want bool
	}{
		{"deletion vectors, level 0 into level 4", Options{DeletionVectors: true}, Job{Inputs: []File{l0, l3}, OutputLevel: 4}, true},
		{"first-row, level 0 into the max level", Options{MergeEngine: "first-row"}, Job{Inputs: []File{l0}, OutputLevel: 5}, true},
		{"lookup changelog", Options{ChangelogProducer: "lookup"}, Job{Inputs: []File{l0}, OutputLevel: 1}, true},
		{"force-lookup", Options{ForceLookup: true}, Job{Inputs: []File{l0}, OutputLevel: 1}, true},
		{"no level-0 input", Options{DeletionVectors: true}, Job{Inputs: []File{l3}, OutputLevel: 4}, false},
		{"output level 0", Options{DeletionVectors: true}, Job{Inputs: []File{l0}, OutputLevel: 0}, false},
		{"not a lookup table", Options{MergeEngine: "deduplicate"}, Job{Inputs: []File{l0}, OutputLevel: 4}, false},
		{"force-up-level-0 alone is no lookup", Options{ForceUpLevel0: true}, Job{Inputs: []File{l0}, OutputLevel: 4}, false},
	} {
		if got := c.job.LooksUp(&c.opts); got != c.want {
			t.Errorf("%s: LooksUp = %v, want %v", c.name, got, c.want)
		}
	}
}
