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

// Job.ProducesChangelog is ChangelogMergeTreeRewriter.rewriteChangelog: a
// full-compaction table's jobs to num-levels - 1, a lookup table's lookups.
func TestJobProducesChangelog(t *testing.T) {
	l0 := File{Name: "a", Level: 0}
	l3 := File{Name: "b", Level: 3}
	full := Options{ChangelogProducer: "full-compaction", NumLevels: 6}
	for _, c := range []struct {
		name string
		opts Options
		job  Job
		want bool
	}{
		{"full-compaction, to the top level", full, Job{Inputs: []File{l3}, OutputLevel: 5}, true},
		{"full-compaction, below the top level", full, Job{Inputs: []File{l0}, OutputLevel: 4}, false},
		{"full-compaction, num-levels decides the top", Options{ChangelogProducer: "full-compaction", NumLevels: 3}, Job{Inputs: []File{l0}, OutputLevel: 2}, true},
		{"lookup, level 0 up", Options{ChangelogProducer: "lookup"}, Job{Inputs: []File{l0}, OutputLevel: 2}, true},
		{"lookup, no level-0 input", Options{ChangelogProducer: "lookup"}, Job{Inputs: []File{l3}, OutputLevel: 4}, false},
		{"input producer", Options{ChangelogProducer: "input", NumLevels: 6}, Job{Inputs: []File{l0}, OutputLevel: 5}, false},
		{"none with deletion vectors", Options{DeletionVectors: true, NumLevels: 6}, Job{Inputs: []File{l0}, OutputLevel: 5}, false},
	} {
		if got := c.job.ProducesChangelog(&c.opts); got != c.want {
			t.Errorf("%s: ProducesChangelog = %v, want %v", c.name, got, c.want)
		}
	}
}

// LookupMergeTreeCompactRewriter.upgradeStrategy: a level-0 file moved to a
// level whose file.format.per.level format differs is rewritten, even for
// deduplicate without sequence.field at the max level; non-lookup tables
// and same-format levels keep the relabel.
func TestLevel0UpgradeRewritesAcrossFormats(t *testing.T) {
	zero := int64(0)
	f := File{Name: "a", Level: 0, DeleteRowCount: &zero}
	perLevel := map[int]string{0: "avro"}
	for _, c := range []struct {
		name        string
		opts        Options
		outputLevel int
		want        bool
	}{
		{"DV table, avro level 0 into parquet max level", Options{DeletionVectors: true, MergeEngine: "deduplicate", FileFormat: "parquet", LevelFormats: perLevel}, 5, true},
		{"DV table, avro level 0 into parquet level 3", Options{DeletionVectors: true, MergeEngine: "deduplicate", FileFormat: "parquet", LevelFormats: perLevel}, 3, true},
		{"DV table, same formats", Options{DeletionVectors: true, MergeEngine: "deduplicate", FileFormat: "parquet"}, 5, false},
		{"DV table, level 3 also avro", Options{DeletionVectors: true, MergeEngine: "deduplicate", FileFormat: "parquet", LevelFormats: map[int]string{0: "avro", 3: "avro"}}, 3, false},
		{"not a lookup table", Options{MergeEngine: "deduplicate", FileFormat: "parquet", LevelFormats: perLevel}, 5, false},
	} {
		if got := c.opts.rewritesLevel0Upgrade(f, c.outputLevel, 5); got != c.want {
			t.Errorf("%s: rewritesLevel0Upgrade = %v, want %v", c.name, got, c.want)
		}
	}
}
