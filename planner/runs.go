package planner

import (
	"cmp"
	"fmt"
	"slices"
)

// LevelRun is one sorted run with its level (Paimon's LevelSortedRun).
type LevelRun struct {
	Level int
	// Files of the run, in key order (a level-0 run has exactly one file).
	Files []File
}

// Size is the total size of the run's files.
func (r LevelRun) Size() int64 {
	var n int64
	for _, f := range r.Files {
		n += f.Size
	}
	return n
}

// level0Less orders level-0 files newest first, as Levels' TreeSet does
// (Paimon >= 1.3): maxSeq descending, then minSeq ascending, then creation
// time ascending, then file name.
func level0Compare(a, b File) int {
	if a.MaxSeq != b.MaxSeq {
		return cmp.Compare(b.MaxSeq, a.MaxSeq)
	}
	if c := cmp.Compare(a.MinSeq, b.MinSeq); c != 0 {
		return c
	}
	if c := a.CreationTime.Compare(b.CreationTime); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// OverlapError reports two files of one level >= 1 whose key ranges overlap,
// which Paimon treats as a bug; the bucket must not be compacted.
type OverlapError struct {
	Level int
	A, B  string
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("level %d: key ranges of %s and %s overlap", e.Level, e.A, e.B)
}

// Levels is a bucket's LSM shape.
type Levels struct {
	// NumLevels is max(options num-levels, highest file level + 1).
	NumLevels int
	// Runs is Levels.levelSortedRuns: level-0 files newest first, then each
	// non-empty level in ascending order.
	Runs []LevelRun
}

// MaxLevel is NumLevels-1.
func (l *Levels) MaxLevel() int { return l.NumLevels - 1 }

// NonEmptyHighestLevel is the highest level holding files, 0 if only level 0
// has files, -1 if the bucket is empty.
func (l *Levels) NonEmptyHighestLevel() int {
	if len(l.Runs) == 0 {
		return -1
	}
	return l.Runs[len(l.Runs)-1].Level
}

// BuildLevels arranges a bucket's files into sorted runs as Paimon's Levels
// does on restore. Files of a level >= 1 are sorted by min key and must not
// overlap (next.minKey > prev.maxKey), else an *OverlapError is returned.
func BuildLevels(files []File, numLevels int, compareKeys func(a, b []byte) int) (Levels, error) {
	maxFileLevel := -1
	var l0 []File
	for _, f := range files {
		if f.Level < 0 {
			return Levels{}, fmt.Errorf("file %s: negative level %d", f.Name, f.Level)
		}
		maxFileLevel = max(maxFileLevel, f.Level)
		if f.Level == 0 {
			l0 = append(l0, f)
		}
	}
	n := max(numLevels, maxFileLevel+1)
	if n < 2 {
		return Levels{}, fmt.Errorf("number of levels must be at least 2, got %d", n)
	}
	out := Levels{NumLevels: n}
	slices.SortFunc(l0, level0Compare)
	out.Runs = make([]LevelRun, 0, len(l0)+n-1)
	for _, f := range l0 {
		out.Runs = append(out.Runs, LevelRun{Level: 0, Files: []File{f}})
	}
	if maxFileLevel <= 0 {
		return out, nil
	}
	byLevel := make([][]File, n)
	for _, f := range files {
		if f.Level > 0 {
			byLevel[f.Level] = append(byLevel[f.Level], f)
		}
	}
	for lvl := 1; lvl < n; lvl++ {
		fs := byLevel[lvl]
		if len(fs) == 0 {
			continue
		}
		slices.SortFunc(fs, func(a, b File) int { return compareKeys(a.MinKey, b.MinKey) })
		for i := 1; i < len(fs); i++ {
			if compareKeys(fs[i].MinKey, fs[i-1].MaxKey) <= 0 {
				return Levels{}, &OverlapError{Level: lvl, A: fs[i-1].Name, B: fs[i].Name}
			}
		}
		out.Runs = append(out.Runs, LevelRun{Level: lvl, Files: fs})
	}
	return out, nil
}

// runFiles flattens runs into their files, in run order.
func runFiles(runs []LevelRun) []File {
	n := 0
	for _, r := range runs {
		n += len(r.Files)
	}
	out := make([]File, 0, n)
	for _, r := range runs {
		out = append(out, r.Files...)
	}
	return out
}
