package planner

import (
	"cmp"
	"slices"
	"testing"
)

// taskVector is one MergeTreeCompactTask run recorded from Java Paimon:
// a unit of files with int keys and the upgrade/rewrite calls it made.
type taskVector struct {
	Task struct {
		OutputLevel     int   `json:"outputLevel"`
		MaxLevel        int   `json:"maxLevel"`
		MinFileSize     int64 `json:"minFileSize"`
		ForceRewriteAll bool  `json:"forceRewriteAll"`
		Files           []struct {
			Name  string `json:"name"`
			Level int    `json:"level"`
			Size  int64  `json:"size"`
			Min   int    `json:"min"`
			Max   int    `json:"max"`
			Dels  *int64 `json:"dels"`
		} `json:"files"`
	} `json:"task"`
	Steps []string `json:"steps"`
}

// intKey encodes an int so that bytes.Compare orders like the int
// (sign bit flipped, big endian).
func intKey(v int) []byte {
	u := uint32(int32(v)) ^ 0x80000000
	return []byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}
}

func formatSteps(steps []Step) []string {
	out := []string{}
	for _, s := range steps {
		if s.Kind == StepUpgrade {
			out = append(out, "upgrade "+s.File.Name)
		} else {
			out = append(out, "rewrite "+formatSections(s.Sections))
		}
	}
	return out
}

func checkTaskVectors(t *testing.T, path string) int {
	t.Helper()
	return eachVector(t, path, func(line int, text string, v taskVector) bool {
		files := make([]File, len(v.Task.Files))
		for i, tf := range v.Task.Files {
			files[i] = File{Name: tf.Name, Level: tf.Level, Size: tf.Size,
				MinKey: intKey(tf.Min), MaxKey: intKey(tf.Max), DeleteRowCount: tf.Dels}
		}
		steps := mergeTreeSteps(PartitionSections(files, func(a, b []byte) int { return cmp.Compare(string(a), string(b)) }), taskParams{
			outputLevel:          v.Task.OutputLevel,
			maxLevel:             v.Task.MaxLevel,
			minFileSize:          v.Task.MinFileSize,
			forceRewriteAllFiles: v.Task.ForceRewriteAll,
		})
		if got := formatSteps(steps); !slices.Equal(got, v.Steps) {
			t.Errorf("%s:%d:\n got  %q\n Java %q", path, line, got, v.Steps)
		}
		return true
	})
}

func TestTaskVectorsOracleSample(t *testing.T) {
	if n := checkTaskVectors(t, "testdata/oracle_task_vectors_sample.jsonl"); n < 300 {
		t.Fatalf("only %d task vectors", n)
	}
}

// TestTaskVectorsExtra checks a task vector file named by
// COMPACTD_EXTRA_TASK_VECTORS; it skips when the variable is unset.
func TestTaskVectorsExtra(t *testing.T) {
	checkExtraVectors(t, "COMPACTD_EXTRA_TASK_VECTORS", checkTaskVectors)
}
