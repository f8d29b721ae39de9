package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// duckResult is DuckDB's run of the same compaction: the dedup (or the
// multi-stream partial-update merge) of the table's level-0 files to one
// zstd Parquet file, with 1 and 2 threads (scripts/bench-duckdb.py).
type duckResult struct {
	one, two measurement
	rows     int64
	// checked says the rows DuckDB wrote were compared with compactd's
	// output (as multisets over the user's columns) and matched.
	checked bool
}

// duckEngine is the query of a benchmark schema.
func duckEngine(schema string) string {
	if base, _ := baseSchema(schema); base == "widepu" {
		return "widepu"
	}
	return "dedup"
}

// livePaths lists the data files of the latest snapshot of warehouse's table.
func livePaths(ctx context.Context, warehouse, name string) ([]string, error) {
	t, s, err := openLatest(ctx, warehouse, name)
	if err != nil {
		return nil, err
	}
	fs, err := t.FileSet(ctx, s)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range fs.Buckets() {
		for i := range b.Files {
			p, err := t.DataFilePath(&b.Files[i])
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// duckdb runs DuckDB on master's input files, then, when the table has at
// most -duckdb-check-rows input rows, checks DuckDB's rows against the
// compactd output in compacted (the same table after compactd's full
// compaction).
func (r *runner) duckdb(ctx context.Context, schema, master, compacted, name, scratch string, inRows int64, check bool) (duckResult, error) {
	var res duckResult
	in, err := livePaths(ctx, master, name)
	if err != nil {
		return res, err
	}
	dir := filepath.Join(scratch, "duckdb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	inList := filepath.Join(dir, "in.json")
	if err := writeJSONFile(inList, in); err != nil {
		return res, err
	}
	out := filepath.Join(dir, "out.parquet")
	for _, threads := range []int{1, 2} {
		m, err := measure(ctx, nil, r.c.DuckPython, r.c.DuckScript, "run", "--threads", fmt.Sprint(threads),
			"--files", inList, "--out", out, "--engine", duckEngine(schema))
		if err != nil {
			return res, err
		}
		var got struct{ Rows int64 }
		if err := json.Unmarshal([]byte(m.Stdout), &got); err != nil {
			return res, fmt.Errorf("DuckDB output %q: %w", m.Stdout, err)
		}
		if threads == 1 {
			res.one, res.rows = m, got.Rows
		} else {
			res.two = m
			if got.Rows != res.rows {
				return res, fmt.Errorf("DuckDB wrote %d rows with 1 thread, %d with 2", res.rows, got.Rows)
			}
		}
	}
	if !check || inRows > r.c.DuckCheckRows {
		return res, nil
	}
	ours, err := livePaths(ctx, compacted, name)
	if err != nil {
		return res, err
	}
	oursList := filepath.Join(dir, "ours.json")
	if err := writeJSONFile(oursList, ours); err != nil {
		return res, err
	}
	b, err := exec.CommandContext(ctx, r.c.DuckPython, r.c.DuckScript, "check", "--ours", oursList, "--theirs", out,
		"--engine", duckEngine(schema)).Output()
	if err != nil {
		return res, fmt.Errorf("DuckDB check: %w", err)
	}
	var c struct{ Ours, Theirs, OnlyOurs, OnlyTheirs int64 }
	if err := json.Unmarshal(b, &c); err != nil {
		return res, fmt.Errorf("DuckDB check output %q: %w", strings.TrimSpace(string(b)), err)
	}
	if c.OnlyOurs != 0 || c.OnlyTheirs != 0 || c.Ours != c.Theirs {
		return res, fmt.Errorf("DuckDB's rows differ from compactd's: compactd %d rows, DuckDB %d; %d only in compactd's, %d only in DuckDB's",
			c.Ours, c.Theirs, c.OnlyOurs, c.OnlyTheirs)
	}
	res.checked = true
	return res, nil
}

// duckReport prints the DuckDB ratios of the compaction rows that have them.
func (r *runner) duckReport(rows []compactionRow) {
	var have []compactionRow
	for _, x := range rows {
		if x.haveDuck {
			have = append(have, x)
		}
	}
	if len(have) == 0 {
		return
	}
	r.printf("\nDuckDB (`scripts/bench-duckdb.py`: dedup by `QUALIFY row_number() OVER (PARTITION BY key ORDER BY _SEQUENCE_NUMBER DESC) = 1`; widepu: per sequence group the columns of the record with the highest group sequence; output one zstd Parquet file, unsorted; Python start-up included). ")
	r.printf("Targets: compactd CPU ≤ 0.75× DuckDB's 1-thread CPU; compactd wall ≤ DuckDB's 2-thread wall.\n\n")
	r.printf("| schema | input rows | compactd CPU / DuckDB 1-thread CPU | compactd wall / DuckDB 2-thread wall | DuckDB 2-thread CPU s | rows checked against compactd's |\n|---|---|---|---|---|---|\n")
	for _, x := range have {
		check := "no (above -duckdb-check-rows)"
		if x.duck.rows != x.outGo.Rows {
			check = fmt.Sprintf("**MISMATCH**: DuckDB wrote %d rows, compactd %d", x.duck.rows, x.outGo.Rows)
		}
		if x.duck.checked && x.duck.rows == x.outGo.Rows {
			check = fmt.Sprintf("yes, %d rows equal", x.duck.rows)
		}
		r.printf("| %s | %d | %s | %s | %.1f | %s |\n", x.schema, x.in.Rows,
			spread(x.reps, func(y compactionRow) (float64, float64) { return y.go_.CPU.Seconds(), y.duck.one.CPU.Seconds() }),
			spread(x.reps, func(y compactionRow) (float64, float64) { return y.go_.Wall.Seconds(), y.duck.two.Wall.Seconds() }),
			x.duck.two.CPU.Seconds(), check)
	}
}
