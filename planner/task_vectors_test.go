package planner

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
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
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n, line := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var v taskVector
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
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
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTaskVectorsOracleSample(t *testing.T) {
	if n := checkTaskVectors(t, "testdata/oracle_task_vectors_sample.jsonl"); n < 300 {
		t.Fatalf("only %d task vectors", n)
	}
}

// TestTaskVectorsExtra checks a task vector file named by
// COMPACTD_EXTRA_TASK_VECTORS; it skips when the variable is unset.
func TestTaskVectorsExtra(t *testing.T) {
	path := os.Getenv("COMPACTD_EXTRA_TASK_VECTORS")
	if path == "" {
		t.Skip("COMPACTD_EXTRA_TASK_VECTORS not set")
	}
	n := checkTaskVectors(t, path)
	if n == 0 {
		t.Fatalf("%s holds no vectors", path)
	}
	t.Log(fmt.Sprintf("%d task vectors match", n))
}
