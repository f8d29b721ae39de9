package main

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

func TestParseTimeVReadsPeakRSSAndWallClock(t *testing.T) {
	report := `	Command being timed: "true"
	User time (seconds): 1.25
	System time (seconds): 0.50
	Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03.50
	Maximum resident set size (kbytes): 2048
	Exit status: 0
`
	rss, wall, err := parseTimeV(report)
	if err != nil {
		t.Fatal(err)
	}
	if rss != 2048*1024 {
		t.Errorf("rss = %d, want %d", rss, 2048*1024)
	}
	if want := time.Hour + 2*time.Minute + 3500*time.Millisecond; wall != want {
		t.Errorf("wall = %v, want %v", wall, want)
	}
	cpu, err := parseCPU(report)
	if err != nil || cpu != 1750*time.Millisecond {
		t.Errorf("cpu = %v, %v; want 1.75s", cpu, err)
	}
	if _, _, err := parseTimeV("Exit status: 0\n"); err == nil {
		t.Error("a report without the RSS line parsed")
	}
}

func TestRunKeysAreDistinctWithinARunAndOverlapAcrossRuns(t *testing.T) {
	const runs, m = 8, 1000
	seen := map[int64]int{} // key -> runs that wrote it
	var total int64
	for r := 0; r < runs; r++ {
		inRun := map[int64]bool{}
		last := int64(-1)
		err := runKeys(m, runs, r, func(k int64) error {
			if inRun[k] {
				t.Fatalf("run %d writes key %d twice", r, k)
			}
			if k <= last {
				t.Fatalf("run %d: key %d after %d, want ascending", r, k, last)
			}
			last = k
			inRun[k] = true
			seen[k]++
			total++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	updated := 0
	for _, n := range seen {
		if n > 1 {
			updated++
		}
	}
	if updated == 0 {
		t.Error("no key is written by two runs: the merge would have nothing to deduplicate")
	}
	if want := keysPerRun(total, runs); want < m-1 || want > m+1 {
		t.Errorf("keysPerRun(%d, %d) = %d, want about %d", total, runs, want, m)
	}
}

func TestFloorRewritesEveryRecordOfTheGeneratedTable(t *testing.T) {
	ctx := context.Background()
	for _, schema := range []string{"narrow", "wide", "widepu"} {
		t.Run(schema, func(t *testing.T) {
			wh := t.TempDir()
			n, err := generate(ctx, wh, "bench", schema, genSpec{Schema: schema, Rows: 3000, Runs: 4, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := table.Open(ctx, fileio.NewLocal(), wh, "bench", schema)
			if err != nil {
				t.Fatal(err)
			}
			f, err := facts(ctx, wh, "bench."+schema)
			if err != nil {
				t.Fatal(err)
			}
			if f.Files != 4 || f.Rows != n {
				t.Fatalf("generated %d files with %d rows, want 4 files (one per run) with %d", f.Files, f.Rows, n)
			}
			res, err := floor(ctx, tbl)
			if err != nil {
				t.Fatal(err)
			}
			if res.Rows != n || res.Files != 4 || res.BytesOut == 0 {
				t.Errorf("floor = %+v, want %d rows from 4 files", res, n)
			}
			// The floor's outputs are deleted again: only the 4 inputs remain.
			dir := filepath.Join(wh, "bench.db", schema, "bucket-0")
			left, err := filepath.Glob(filepath.Join(dir, "data-*"))
			if err != nil || len(left) != 4 {
				t.Errorf("bucket-0 holds %d data files after the floor, want 4 (%v)", len(left), err)
			}
			// And compaction of the generated table deduplicates the updates.
			sum, err := compact.Run(ctx, tbl, compact.Options{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			if sum.RowsIn != n || sum.RowsOut >= n {
				t.Errorf("compaction read %d rows and wrote %d; want %d read and fewer written", sum.RowsIn, sum.RowsOut, n)
			}
			if schema == "widepu" {
				// One row per key, every stream's sequence group filled.
				if sum.RowsOut != n/puStreams {
					t.Errorf("widepu compaction wrote %d rows, want one per key (%d)", sum.RowsOut, n/puStreams)
				}
				sc, err := scan.New(ctx, tbl, nil)
				if err != nil {
					t.Fatal(err)
				}
				err = sc.Each(ctx, func(r table.Row) error {
					for st := 0; st < puStreams; st++ {
						if r[1+st*puGroup] == nil {
							return fmt.Errorf("key %v lacks stream %d's columns: %v", r[0], st, r)
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestGeneratedExpirationMetadataExpiresAllButTheLatest(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	const snaps, files = 20, 2000 // more data files than a report lists
	tbl, err := genExpire(ctx, wh, "bench", "exp", snaps, files)
	if err != nil {
		t.Fatal(err)
	}
	o, err := expire.OptionsFromTable(tbl.Options().Raw)
	if err != nil {
		t.Fatal(err)
	}
	o.RetainMin, o.RetainMax, o.TimeRetained, o.Limit = 1, 1, time.Millisecond, snaps
	rep, err := expire.Run(ctx, reach.TableSource(tbl), expire.RunOptions{Options: o, Now: time.Now(), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Snapshots) != snaps-1 {
		t.Errorf("expired %d snapshots, want %d", len(rep.Snapshots), snaps-1)
	}
	// Every file but the latest snapshot's 100 was deleted by a later
	// snapshot; the report counts them all and lists the first SampleLimit.
	if want := files - files/snaps; rep.Counts.DataFiles != want {
		t.Errorf("would delete %d data files, want %d", rep.Counts.DataFiles, want)
	}
	if len(rep.DataFiles) != expire.SampleLimit {
		t.Errorf("the report lists %d data files, want the first %d", len(rep.DataFiles), expire.SampleLimit)
	}
	f, err := facts(ctx, wh, "bench.exp")
	if err != nil {
		t.Fatal(err)
	}
	if f.Files != files/snaps {
		t.Errorf("latest snapshot has %d live files, want %d", f.Files, files/snaps)
	}
}

func TestGeneratedPlanTableHasAJobPerBucket(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	tbl, err := genPlan(ctx, wh, "bench", "plan", 4, 30)
	if err != nil {
		t.Fatal(err)
	}
	_, plan, _, err := compact.PlanTable(ctx, tbl, compact.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Jobs) != 4 {
		t.Errorf("planned %d jobs, want one per bucket (4): %+v", len(plan.Jobs), plan.Errors)
	}
}

func TestRemoveTreeDeletesEveryFileBelowTheDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fio := fileio.NewLocal()
	for _, p := range []string{"a/b/c.txt", "a/d.txt", "e.txt"} {
		if err := fileio.WriteFile(ctx, fio, fileio.Join(dir, p), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeTree(ctx, fio, dir); err != nil {
		t.Fatal(err)
	}
	var left []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

// The fleet benchmark's table: -buckets spreads the rows over that many
// buckets, each commit one level-0 file in every bucket, so every bucket
// is a unit with work.
func TestGeneratedTableOfManyBucketsHasARunPerCommitInEveryBucket(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	n, err := generate(ctx, wh, "bench", "fleet", genSpec{Schema: "narrow", Rows: 4000, Runs: 3, Seed: 7, Buckets: 8})
	if err != nil {
		t.Fatal(err)
	}
	tbl, s, err := openLatest(ctx, wh, "bench.fleet")
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FileSet(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	bs := fs.Buckets()
	for _, b := range bs {
		if len(b.Files) != 3 || b.TotalBuckets != 8 {
			t.Errorf("bucket %d: %d files of %d buckets, want 3 of 8", b.Bucket, len(b.Files), b.TotalBuckets)
		}
		for _, f := range b.Files {
			rows += f.File.RowCount
		}
	}
	if len(bs) != 8 || rows != n {
		t.Fatalf("%d buckets with %d rows, want 8 with %d", len(bs), rows, n)
	}
}
