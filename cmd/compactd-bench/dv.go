package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// The deletion-vector benchmark (issue #14): a narrow deduplicate table
// with deletion-vectors.enabled whose base is one fully compacted sorted run
// at the top level, then dvUpdateRuns level-0 runs that each update one key
// in sixteen of the base. A minor compaction of that table is the one a
// dedicated compaction job runs all day beside write-only writers: the
// level-0 runs merge into the level below the top, every updated key is
// looked up in the top level and its old row is marked in that file's
// deletion vector. The full compaction after it rewrites everything into
// the top level without deletion vectors.

// dvUpdateRuns is the number of level-0 update runs on top of the base.
const dvUpdateRuns = 8

// dvOptions are the extra table options of the deletion-vector schema.
var dvOptions = map[string]string{"deletion-vectors.enabled": "true"}

// genUpdates writes runs commits into an existing narrow table generated
// with rows records in baseRuns runs: commit r updates the keys k of the
// base key range with k%16 == r, one level-0 file per commit. newKeys > 0
// adds that many keys above the base key range, split between the commits
// (key baseKeys+j goes to commit j%runs), so a compaction of the runs has
// keys it inserts as well as keys it updates (see updateShape).
func genUpdates(ctx context.Context, warehouse, db, name string, rows int64, baseRuns, runs int, newKeys int64, seed uint64) (int64, error) {
	fio, err := fileio.For(ctx, warehouse)
	if err != nil {
		return 0, err
	}
	t, err := table.Open(ctx, fio, warehouse, db, name)
	if err != nil {
		return 0, err
	}
	fields := t.Schema().Fields
	w, err := write.NewWriter(ctx, t, "bench-updates")
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x51afd6c3e2b4a9f1))
	keys := keysPerRun(rows, baseRuns) * int64(baseRuns)
	var total int64
	for r := 0; r < runs; r++ {
		for k := int64(r % 16); k < keys; k += 16 {
			row := make(table.Row, len(fields))
			row[0] = k
			fillRow(fields, row, rng)
			if err := w.Write(table.RowKindInsert, row); err != nil {
				return 0, fmt.Errorf("write %s update run %d: %w", t.FullName(), r, err)
			}
			total++
		}
		for j := int64(r); j < newKeys; j += int64(runs) {
			row := make(table.Row, len(fields))
			row[0] = keys + j
			fillRow(fields, row, rng)
			if err := w.Write(table.RowKindInsert, row); err != nil {
				return 0, fmt.Errorf("write %s update run %d: %w", t.FullName(), r, err)
			}
			total++
		}
		if _, err := w.Commit(ctx); err != nil {
			return 0, fmt.Errorf("commit %s update run %d: %w", t.FullName(), r, err)
		}
	}
	return total, nil
}

// dvFacts counts the deletion vectors of the table's latest snapshot: data
// files with a vector and the rows they delete.
type dvFacts struct {
	Files   int
	Deleted int64
}

func deletionVectorFacts(ctx context.Context, warehouse, name string) (dvFacts, error) {
	var f dvFacts
	t, s, err := openLatest(ctx, warehouse, name)
	if err != nil {
		return f, err
	}
	entries, err := t.IndexEntries(ctx, s)
	if err != nil {
		return f, err
	}
	for _, e := range entries {
		if e.IndexFile.IndexType != manifest.IndexTypeDeletionVectors {
			continue
		}
		for _, dv := range e.IndexFile.DeletionVectors {
			f.Files++
			if dv.Cardinality != nil {
				f.Deleted += *dv.Cardinality
			}
		}
	}
	return f, nil
}

// dvMaster returns the cached deletion-vector table of rows base records:
// generated, fully compacted by compactd, then dvUpdateRuns update runs.
func (r *runner) dvMaster(ctx context.Context, rows int64) (string, error) {
	wh := filepath.Join(r.c.Work, fmt.Sprintf("narrowdv-%d-r%d", rows, r.c.Runs), "wh")
	done := filepath.Join(filepath.Dir(wh), "done")
	if _, err := os.Stat(done); err == nil {
		return wh, nil
	}
	if err := os.RemoveAll(filepath.Dir(wh)); err != nil {
		return "", err
	}
	const name = "bench.narrowdv"
	slog.Info("generating", "schema", "narrowdv", "rows", rows)
	if _, err := measure(ctx, nil, r.self, "gen", "-warehouse", wh, "-table", name, "-schema", "narrow", "-dv",
		"-rows", fmt.Sprint(rows), "-runs", fmt.Sprint(r.c.Runs)); err != nil {
		return "", err
	}
	if _, err := measure(ctx, nil, r.c.Compactd, "compact", wh, name, "--full"); err != nil {
		return "", fmt.Errorf("base compaction: %w", err)
	}
	if _, err := measure(ctx, nil, r.self, "genupdates", "-warehouse", wh, "-table", name,
		"-rows", fmt.Sprint(rows), "-base-runs", fmt.Sprint(r.c.Runs), "-runs", fmt.Sprint(dvUpdateRuns)); err != nil {
		return "", err
	}
	return wh, os.WriteFile(done, nil, 0o644)
}

// dvRow is one tool's minor and full compaction of the DV table.
type dvRow struct {
	tool        string
	minor, full measurement
	afterMinor  dvFacts
	out         bucketFacts
}

// deletionVectors measures compactd's and Java's minor-then-full
// compaction of the deletion-vector table on fresh copies.
func (r *runner) deletionVectors(ctx context.Context) error {
	if r.c.DVRows <= 0 {
		return nil
	}
	master, err := r.dvMaster(ctx, r.c.DVRows)
	if err != nil {
		return err
	}
	const name = "bench.narrowdv"
	in, err := facts(ctx, master, name)
	if err != nil {
		return err
	}
	wh := filepath.Join(r.c.Work, "scratch-dv", "wh")
	defer os.RemoveAll(filepath.Dir(wh))
	steps := map[string][2][]string{
		"compactd": {{r.c.Compactd, "compact", wh, name}, {r.c.Compactd, "compact", wh, name, "--full"}},
	}
	tools := []string{"compactd"}
	if r.c.Java {
		minor, err := r.javaArgv(ctx, "compact", "--warehouse", wh, "--table", name, "--full", "false")
		if err != nil {
			return err
		}
		full, err := r.javaArgv(ctx, "compact", "--warehouse", wh, "--table", name)
		if err != nil {
			return err
		}
		steps["Java"] = [2][]string{minor, full}
		tools = append(tools, "Java")
	}
	var rows []dvRow
	for _, tool := range tools {
		x := dvRow{tool: tool}
		if err := copyDir(ctx, master, wh); err != nil {
			return err
		}
		slog.Info("DV minor compaction", "tool", tool, "rows", in.Rows)
		if x.minor, err = measure(ctx, nil, steps[tool][0]...); err != nil {
			return fmt.Errorf("%s minor compaction: %w", tool, err)
		}
		if x.afterMinor, err = deletionVectorFacts(ctx, wh, name); err != nil {
			return err
		}
		slog.Info("DV full compaction", "tool", tool, "rows", in.Rows)
		if x.full, err = measure(ctx, nil, steps[tool][1]...); err != nil {
			return fmt.Errorf("%s full compaction: %w", tool, err)
		}
		if x.out, err = facts(ctx, wh, name); err != nil {
			return err
		}
		rows = append(rows, x)
	}
	r.printf("\n## Deletion-vector table: minor then full compaction\n\n")
	r.printf("narrow deduplicate table, `deletion-vectors.enabled=true`: %d records in %d files (a compacted top level + %d level-0 update runs, 1 key in 16 each)\n\n", in.Rows, in.Files, dvUpdateRuns)
	r.printf("| tool | step | wall s | CPU s | rows/s (CPU) | peak RSS MiB | files with a DV after | DV rows after |\n|---|---|---|---|---|---|---|---|\n")
	for _, x := range rows {
		r.printf("| %s | minor | %.1f | %.1f | %s | %s | %d | %d |\n", x.tool, x.minor.Wall.Seconds(), x.minor.CPU.Seconds(),
			rate(in.Rows, x.minor.CPU), mib(x.minor.MaxRSS), x.afterMinor.Files, x.afterMinor.Deleted)
		r.printf("| %s | full | %.1f | %.1f | %s | %s | - | - |\n", x.tool, x.full.Wall.Seconds(), x.full.CPU.Seconds(),
			rate(in.Rows, x.full.CPU), mib(x.full.MaxRSS))
	}
	if len(rows) == 2 {
		g, j := rows[0], rows[1]
		r.printf("\ncompactd/Java CPU throughput: minor %s, full %s; peak RSS compactd/Java: minor %s, full %s\n",
			ratio(j.minor.CPU.Seconds(), g.minor.CPU.Seconds()), ratio(j.full.CPU.Seconds(), g.full.CPU.Seconds()),
			ratio(float64(g.minor.MaxRSS), float64(j.minor.MaxRSS)), ratio(float64(g.full.MaxRSS), float64(j.full.MaxRSS)))
		var errs []error
		if g.out.Rows != j.out.Rows {
			errs = append(errs, fmt.Errorf("DV table: compactd's full compaction kept %d rows, Java's %d", g.out.Rows, j.out.Rows))
		}
		if g.afterMinor != j.afterMinor {
			errs = append(errs, fmt.Errorf("DV table after the minor compaction: compactd has %d files with %d deleted rows in deletion vectors, Java %d files with %d",
				g.afterMinor.Files, g.afterMinor.Deleted, j.afterMinor.Files, j.afterMinor.Deleted))
		}
		if err := errors.Join(errs...); err != nil {
			r.printf("\nCHECK FAILED: %v\n", err)
			return err
		}
	}
	return nil
}
