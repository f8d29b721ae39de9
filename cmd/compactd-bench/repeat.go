package main

import (
	"fmt"
	"slices"
	"time"
)

// medianRow folds the repetitions of one compaction measurement: every
// measurement becomes the median of its wall time, CPU time and peak RSS
// (each taken separately), and the repetitions stay for ratio ranges.
func medianRow(reps []compactionRow) compactionRow {
	x := reps[0]
	x.reps = reps
	x.go_ = medianOf(reps, func(r compactionRow) measurement { return r.go_ })
	x.java = medianOf(reps, func(r compactionRow) measurement { return r.java })
	x.floor = medianOf(reps, func(r compactionRow) measurement { return r.floor })
	x.duck.one = medianOf(reps, func(r compactionRow) measurement { return r.duck.one })
	x.duck.two = medianOf(reps, func(r compactionRow) measurement { return r.duck.two })
	x.scan = medianOf(reps, func(r compactionRow) measurement { return r.scan })
	return x
}

func median[T int64 | time.Duration](v []T) T {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func medianOf(reps []compactionRow, f func(compactionRow) measurement) measurement {
	var wall, cpu []time.Duration
	var rss []int64
	for _, r := range reps {
		m := f(r)
		wall, cpu, rss = append(wall, m.Wall), append(cpu, m.CPU), append(rss, m.MaxRSS)
	}
	return measurement{Wall: median(wall), CPU: median(cpu), MaxRSS: median(rss)}
}

// spread is a ratio a/b over the repetitions (each repetition's tools ran
// back to back on the same machine load): "median [min–max]".
func spread(reps []compactionRow, f func(compactionRow) (a, b float64)) string {
	var v []float64
	for _, r := range reps {
		if a, b := f(r); b > 0 {
			v = append(v, a/b)
		}
	}
	if len(v) == 0 {
		return "-"
	}
	slices.Sort(v)
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	if len(v) == 1 {
		return fmt.Sprintf("%.2f", med)
	}
	return fmt.Sprintf("%.2f [%.2f–%.2f]", med, v[0], v[len(v)-1])
}
