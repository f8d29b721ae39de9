package planner

import (
	"slices"
	"testing"
	"time"
)

type appendVector struct {
	Task struct {
		MinFileNum         int   `json:"minFileNum"`
		Target             int64 `json:"target"`
		CompactionFileSize int64 `json:"compactionFileSize"`
		ForceRewriteAll    bool  `json:"forceRewriteAll"`
		Full               bool  `json:"full"`
		Files              []struct {
			Name string `json:"name"`
			Size int64  `json:"size"`
			Seq  int64  `json:"seq"`
		} `json:"files"`
	} `json:"task"`
	Picked []string `json:"picked"`
}

func checkAppendVectors(t *testing.T, path string) int {
	t.Helper()
	return eachVector(t, path, func(line int, text string, v appendVector) bool {
		opts := DefaultOptions(false)
		opts.Behavior = Behavior14 // recorded from 1.4.2
		opts.Bucket = 1
		opts.MinFileNum = v.Task.MinFileNum
		opts.TargetFileSize = v.Task.Target
		opts.SmallFileRatio = float64(v.Task.CompactionFileSize) / float64(v.Task.Target)
		opts.ForceRewriteAllFiles = v.Task.ForceRewriteAll
		if opts.CompactionFileSize() != v.Task.CompactionFileSize {
			t.Fatalf("%s:%d: cannot express compactionFileSize %d", path, line, v.Task.CompactionFileSize)
		}
		if v.Task.Full {
			opts.Strategy = StrategyFull
		}
		b := Bucket{Bucket: 0}
		for _, tf := range v.Task.Files {
			b.Files = append(b.Files, File{Name: tf.Name, Size: tf.Size, MinSeq: tf.Seq, MaxSeq: tf.Seq, RowCount: 1})
		}
		got := []string{}
		if j := planBucketedAppend(&b, opts); j != nil {
			for _, f := range j.Inputs {
				got = append(got, f.Name)
			}
		}
		if !slices.Equal(got, v.Picked) {
			t.Errorf("%s:%d: got %v, Java %v\n  %s", path, line, got, v.Picked, text)
		}
		return true
	})
}

func TestAppendVectorsOracleSample(t *testing.T) {
	if n := checkAppendVectors(t, "testdata/oracle_append_vectors_sample.jsonl"); n < 300 {
		t.Fatalf("only %d append vectors", n)
	}
}

// TestAppendVectorsExtra checks a file named by COMPACTD_EXTRA_APPEND_VECTORS;
// it skips when the variable is unset.
func TestAppendVectorsExtra(t *testing.T) {
	checkExtraVectors(t, "COMPACTD_EXTRA_APPEND_VECTORS", checkAppendVectors)
}

type unawareVector struct {
	Task struct {
		Options map[string]string `json:"options"`
		Files   []struct {
			Name string `json:"name"`
			Size int64  `json:"size"`
		} `json:"files"`
	} `json:"task"`
	Tasks [][]string `json:"tasks"`
}

func checkUnawareVectors(t *testing.T, path string) int {
	t.Helper()
	return eachVector(t, path, func(line int, text string, v unawareVector) bool {
		m := map[string]string{"bucket": "-1"}
		for k, val := range v.Task.Options {
			m[k] = val
		}
		opts, err := ParseOptions(m, false)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		opts.Behavior = Behavior14 // recorded from 1.4.2
		var view View
		view.Buckets = []Bucket{{}}
		for _, tf := range v.Task.Files {
			view.Buckets[0].Files = append(view.Buckets[0].Files, File{Name: tf.Name, Size: tf.Size, RowCount: 1})
		}
		got := [][]string{}
		for _, j := range Plan(view, nil, opts, time.Time{}).Jobs {
			names := []string{}
			for _, f := range j.Inputs {
				names = append(names, f.Name)
			}
			got = append(got, names)
		}
		want := v.Tasks
		if want == nil {
			want = [][]string{}
		}
		if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
			t.Errorf("%s:%d: got %v, Java %v\n  %s", path, line, got, want, text)
		}
		return true
	})
}

func TestUnawareVectorsOracleSample(t *testing.T) {
	if n := checkUnawareVectors(t, "testdata/oracle_unaware_vectors_sample.jsonl"); n < 200 {
		t.Fatalf("only %d unaware vectors", n)
	}
}

// TestUnawareVectorsExtra checks a file named by
// COMPACTD_EXTRA_UNAWARE_VECTORS; it skips when the variable is unset.
func TestUnawareVectorsExtra(t *testing.T) {
	checkExtraVectors(t, "COMPACTD_EXTRA_UNAWARE_VECTORS", checkUnawareVectors)
}
