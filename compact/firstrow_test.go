package compact_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/planner"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// writeCommits writes one commit per element of commits, each a list of
// keys, with values naming the commit; the b column carries random hex of
// pad characters (incompressible, to size files).
func writeCommits(t *testing.T, tb *table.Table, rng *rand.Rand, user string, pad int, commits ...[]int64) {
	t.Helper()
	ctx := context.Background()
	w, err := write.NewWriter(ctx, tb, user)
	if err != nil {
		t.Fatal(err)
	}
	for c, keys := range commits {
		for _, k := range keys {
			b := make([]byte, pad/2)
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			row := table.Row{k, "p0", int64(c), fmt.Sprintf("%s-%d-%x", user, c, b), int64(k)}
			if err := w.Write(table.RowKindInsert, row); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// storedAbove0 counts the records stored at levels >= 1 per key.
func storedAbove0(t *testing.T, tb *table.Table) (records int64, byLevel map[int32]int64) {
	t.Helper()
	fs := latestFileSet(t, tb)
	byLevel = map[int32]int64{}
	for _, b := range fs.Buckets() {
		for _, e := range b.Files {
			if e.File.Level > 0 {
				records += e.File.RowCount
				byLevel[e.File.Level] += e.File.RowCount
			}
		}
	}
	return records, byLevel
}

func keyRange(from, to, step int64) []int64 {
	var out []int64
	for k := from; k < to; k += step {
		out = append(out, k)
	}
	return out
}

// A minor compaction of a first-row table merges level-0 files into a level
// below the top. Readers take levels >= 1 of first-row tables raw (Java
// reads such splits without merging, and so does compactd's scan), so the
// compaction must drop every key a higher level already holds — on both
// merge paths, and also for large level-0 files that overlap nothing, which
// a plain compaction would only move up by metadata.
func TestFirstRowMinorCompactionDropsKeysHigherLevelsHold(t *testing.T) {
	cases := []struct {
		name string
		opts map[string]string
		// top are the keys of the first commit (compacted to the top level),
		// later the keys of the five later commits.
		top   []int64
		later [][]int64
		pad   int
		// upgrades: the later files overlap nothing and are large, so a plain
		// compaction would upgrade them.
		upgrades bool
	}{
		{
			name:  "overlapping level-0 files rewriting keys of the top level (issue 12)",
			opts:  map[string]string{},
			top:   keyRange(0, 2000, 1),
			later: [][]int64{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}},
			pad:   16,
		},
		{
			name:  "overlapping level-0 files with new keys between held ones",
			opts:  map[string]string{},
			top:   keyRange(0, 2000, 2),
			later: [][]int64{keyRange(0, 50, 1), keyRange(25, 75, 1), {1, 3, 4001}, keyRange(0, 10, 3), {7, 3000, 1999}},
			pad:   16,
		},
		{
			name:     "large level-0 files that overlap nothing are rewritten, not upgraded",
			opts:     map[string]string{"target-file-size": "8kb"},
			top:      keyRange(0, 4000, 2),
			later:    [][]int64{keyRange(0, 40, 1), keyRange(400, 440, 1), keyRange(800, 840, 1), keyRange(1200, 1240, 1), keyRange(1600, 1640, 1)},
			pad:      400,
			upgrades: true,
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(12, uint64(i)))
			opts := map[string]string{"merge-engine": "first-row", "bucket": "1",
				"compaction.max-size-amplification-percent": "100000"}
			for k, v := range tc.opts {
				opts[k] = v
			}
			tb := newTable(t, opts)
			writeCommits(t, tb, rng, "first", tc.pad, tc.top)
			if _, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true, CommitUser: "c"}); err != nil {
				t.Fatal(err)
			}
			topRows := scanRows(t, tb)
			writeCommits(t, tb, rng, "later", tc.pad, tc.later...)

			held := map[int64]bool{}
			for _, k := range tc.top {
				held[k] = true
			}
			newKeys := map[int64]bool{}
			for _, keys := range tc.later {
				for _, k := range keys {
					if !held[k] {
						newKeys[k] = true
					}
				}
			}

			rowDir := filepath.Join(t.TempDir(), "copy")
			expiretest.CopyDir(t, tb.Path(), rowDir)
			rowTb, err := table.OpenPath(ctx, fileio.NewLocal(), rowDir)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{CommitUser: "c"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := compact.Run(ctx, reopen(t, rowTb), compact.Options{CommitUser: "c", RowPath: true}); err != nil {
				t.Fatal(err)
			}
			if len(sum.Jobs) != 1 || sum.Jobs[0].Job.OutputLevel != 4 {
				t.Fatalf("want one minor job to level 4, got %+v", sum.Plan.Jobs)
			}
			job := sum.Jobs[0].Job
			for _, f := range job.Upgrades() {
				if f.Level == 0 {
					t.Errorf("level-0 file %s was upgraded without a rewrite", f.Name)
				}
			}
			if tc.upgrades {
				singles := 0
				for _, s := range job.Steps {
					if s.Kind == planner.StepRewrite && len(s.Sections) == 1 && len(s.Sections[0]) == 1 && len(s.Sections[0][0]) == 1 {
						singles++
					}
				}
				if singles < len(tc.later) {
					t.Fatalf("the scenario should rewrite large level-0 files one by one; steps %v", job.Steps)
				}
			}

			for _, path := range []struct {
				name string
				tb   *table.Table
			}{{"batch path", tb}, {"row path", rowTb}} {
				records, byLevel := storedAbove0(t, path.tb)
				if want := int64(len(held) + len(newKeys)); records != want {
					t.Errorf("%s: %d records at levels >= 1 (%v), want %d: one per key", path.name, records, byLevel, want)
				}
				if byLevel[4] != int64(len(newKeys)) {
					t.Errorf("%s: level 4 holds %d records, want the %d new keys", path.name, byLevel[4], len(newKeys))
				}
				got := scanRows(t, path.tb)
				if len(got) != len(held)+len(newKeys) {
					t.Errorf("%s: scan returns %d rows, want %d", path.name, len(got), len(held)+len(newKeys))
				}
				// Every row of the top level is still read, unchanged.
				for _, r := range topRows {
					if _, ok := slices.BinarySearch(got, r); !ok {
						t.Fatalf("%s: row %s of the top level is no longer read", path.name, r)
					}
				}
			}
			if got, want := scanRows(t, tb), scanRows(t, rowTb); !slices.Equal(got, want) {
				t.Fatalf("batch path rows differ from the row path's:\nbatch %v\nrow   %v", got, want)
			}
			if gm, wm := liveMetas(t, tb), liveMetas(t, rowTb); !reflect.DeepEqual(gm, wm) {
				t.Fatalf("file metadata differs:\nbatch %v\nrow   %v", gm, wm)
			}
		})
	}
}
