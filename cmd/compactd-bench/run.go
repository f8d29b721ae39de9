package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// config is what `compactd-bench run` measures.
type config struct {
	Work     string
	Compactd string
	Sizes    []int64
	Runs     int
	// Repeat is how often each compaction measurement is repeated; reports
	// give medians and, for ratios, the range over the repetitions.
	Repeat   int
	Schemas  []string
	Java     bool
	JavaOpts string
	S3       bool
	S3Rows   int64
	// S3Schemas are the schemas compacted on S3; S3Latency and S3MiBps
	// shape the proxy in front of the server.
	S3Schemas  []string
	S3Latency  time.Duration
	S3MiBps    float64
	S3Log      string
	Expire     [][2]int
	Plan       [][2]int
	PlannerGo  bool
	Out        string
	KeepMaster bool
	DVRows     int64
	// ChangelogRows is the base size of the changelog benchmark (0: skip).
	ChangelogRows int64
	// DuckPython is a Python with the duckdb package (empty: no DuckDB
	// reference); DuckScript the query script it runs.
	DuckPython, DuckScript string
	// DuckCheckRows: tables up to this many input rows get DuckDB's output
	// row-checked against compactd's.
	DuckCheckRows int64
	// FleetBuckets is the bucket count (= units) of the fleet benchmark
	// (0: skip), FleetRows and FleetRuns its table's rows and commits; PG
	// is the PostgreSQL URL its fleets coordinate through.
	FleetBuckets, FleetRuns int
	FleetRows               int64
	PG                      string
}

func parsePairs(s string) ([][2]int, error) {
	var out [][2]int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		a, b, ok := strings.Cut(p, ":")
		x, err1 := strconv.Atoi(a)
		y, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || x <= 0 || y <= 0 {
			return nil, fmt.Errorf("%q: want N:M[,N:M...]", s)
		}
		out = append(out, [2]int{x, y})
	}
	return out, nil
}

func parseSizes(s string) ([]int64, error) {
	var out []int64
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(p, "_", ""), 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("size %q: want a positive row count", p)
		}
		out = append(out, n)
	}
	return out, nil
}

func runAll(ctx context.Context, fl *flag.FlagSet, args []string) error {
	var c config
	var sizes, schemas, expireS, planS string
	fl.StringVar(&c.Work, "work", ".cache/bench", "scratch directory (tables are cached here between runs)")
	fl.StringVar(&c.Compactd, "compactd", "bin/compactd", "compactd binary")
	fl.StringVar(&sizes, "rows", "1000000,10000000", "row counts of the compaction benchmark, comma-separated")
	fl.IntVar(&c.Runs, "runs", 8, "sorted runs (level-0 files) per table")
	fl.IntVar(&c.Repeat, "repeat", 3, "repetitions of each compaction measurement (medians and min–max ratios are reported)")
	fl.StringVar(&schemas, "schemas", "narrow,wide,widepu", "schemas: narrow, wide, widepu; narrow_orc, wide_orc, widepu_orc write ORC data files")
	fl.BoolVar(&c.Java, "java", true, "measure Java Paimon's compaction (needs interop/install.sh)")
	fl.StringVar(&c.JavaOpts, "java-opts", "", "JVM flags for the Java compaction (empty: JVM defaults)")
	fl.BoolVar(&c.S3, "s3", false, "measure the narrow compaction on the S3 server of $COMPACTD_TEST_S3_ENDPOINT too")
	fl.Int64Var(&c.S3Rows, "s3-rows", 1_000_000, "row count of the S3 comparison (must be one of -rows)")
	var s3Schemas string
	fl.StringVar(&s3Schemas, "s3-schemas", "narrow,wide", "schemas compacted on S3")
	fl.DurationVar(&c.S3Latency, "s3-latency", 20*time.Millisecond, "latency the shaping proxy adds to every S3 request")
	fl.Float64Var(&c.S3MiBps, "s3-mibps", 100, "bandwidth cap of the shaping proxy, MiB/s over all connections (0: none)")
	fl.StringVar(&c.S3Log, "s3-log", "", "append a line per request through the shaping proxy to this file (start, duration, kind, path)")
	fl.StringVar(&expireS, "expire", "1000:100000,10000:1000000", "expiration sizes snapshots:files, comma-separated (empty: skip)")
	fl.StringVar(&planS, "plan", "100:100,1000:100", "PlanTable sizes buckets:files-per-bucket (empty: skip)")
	fl.BoolVar(&c.PlannerGo, "planner-bench", true, "run go test -bench BenchmarkPlan ./planner")
	fl.StringVar(&c.Out, "out", "", "write the markdown report here too")
	fl.BoolVar(&c.KeepMaster, "keep", true, "keep generated tables in -work for the next run")
	fl.Int64Var(&c.DVRows, "dv-rows", 10_000_000, "base records of the deletion-vector benchmark (0: skip)")
	fl.Int64Var(&c.ChangelogRows, "changelog-rows", 10_000_000, "base records of the changelog benchmark (0: skip)")
	fl.StringVar(&c.DuckPython, "duckdb", "", "Python interpreter with the duckdb package: DuckDB as a second reference (empty: skip)")
	fl.StringVar(&c.DuckScript, "duckdb-script", "scripts/bench-duckdb.py", "DuckDB's side of the compaction benchmark")
	fl.Int64Var(&c.DuckCheckRows, "duckdb-check-rows", 2_000_000, "row-check DuckDB's output against compactd's up to this many input rows")
	fl.IntVar(&c.FleetBuckets, "fleet-buckets", 64, "buckets (one unit each) of the fleet benchmark's table (0: skip)")
	fl.Int64Var(&c.FleetRows, "fleet-rows", 2_000_000, "rows of the fleet benchmark's table")
	fl.IntVar(&c.FleetRuns, "fleet-runs", 6, "commits (level-0 files per bucket) of the fleet benchmark's table")
	fl.StringVar(&c.PG, "pg", os.Getenv("COMPACTD_PG_DSN"), "PostgreSQL URL for the fleet benchmark (scripts/db-servers.sh)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	var err error
	if c.Sizes, err = parseSizes(sizes); err != nil {
		return err
	}
	if c.Expire, err = parsePairs(expireS); err != nil {
		return err
	}
	if c.Plan, err = parsePairs(planS); err != nil {
		return err
	}
	for _, s := range strings.Split(schemas, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if _, err := benchFields(s); err != nil {
				return err
			}
			c.Schemas = append(c.Schemas, s)
		}
	}
	for _, s := range strings.Split(s3Schemas, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if _, err := benchFields(s); err != nil {
				return err
			}
			c.S3Schemas = append(c.S3Schemas, s)
		}
	}
	if c.Work, err = filepath.Abs(c.Work); err != nil {
		return err
	}
	if c.Compactd, err = filepath.Abs(c.Compactd); err != nil {
		return err
	}
	r := &runner{c: c}
	report, err := r.all(ctx)
	fmt.Print(report)
	if c.Out != "" && report != "" {
		if werr := os.WriteFile(c.Out, []byte(report), 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

type runner struct {
	c    config
	self string
	out  strings.Builder
}

func (r *runner) printf(format string, a ...any) {
	fmt.Fprintf(&r.out, format, a...)
}

func (r *runner) all(ctx context.Context) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	r.self = self
	if err := os.MkdirAll(r.c.Work, 0o755); err != nil {
		return "", err
	}
	r.machine(ctx)
	steps := []func(context.Context) error{r.compaction, r.deletionVectors, r.changelogs, r.planning, r.expiration, r.s3, r.fleet}
	var errs []error
	for _, step := range steps {
		if err := step(ctx); err != nil {
			if ctx.Err() != nil {
				return r.out.String(), err
			}
			slog.Error("benchmark step failed", "err", err)
			r.printf("\n**FAILED:** %v\n", strings.ReplaceAll(err.Error(), "\n", " "))
			errs = append(errs, err)
		}
	}
	return r.out.String(), errors.Join(errs...)
}

func firstLine(ctx context.Context, name string, args ...string) string {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return "?"
	}
	s := strings.TrimSpace(string(out))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func (r *runner) machine(ctx context.Context) {
	cpu := "?"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	r.printf("## Machine\n\n")
	r.printf("- date: %s\n", time.Now().UTC().Format(time.RFC3339))
	r.printf("- CPU: %s, %d cores (GOMAXPROCS %d); memory %s; load average at start %s\n", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0), mem, load)
	r.printf("- %s; %s\n", runtime.Version(), firstLine(ctx, "java", "-version"))
	if r.c.Java {
		heap := "?"
		if out, err := exec.CommandContext(ctx, "java", "-XX:+PrintFlagsFinal", "-version").Output(); err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				if f := strings.Fields(l); len(f) >= 4 && f[1] == "MaxHeapSize" {
					if n, err := strconv.ParseInt(f[3], 10, 64); err == nil {
						heap = fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
					}
				}
			}
		}
		opts := r.c.JavaOpts
		if opts == "" {
			opts = "none (JVM defaults)"
		}
		r.printf("- JVM flags for Java compaction: %s; default max heap %s\n", opts, heap)
	}
	r.printf("\n")
}

// master returns the cached generated warehouse of a schema and size,
// generating it when missing.
func (r *runner) master(ctx context.Context, schema string, rows int64) (string, time.Duration, error) {
	wh := filepath.Join(r.c.Work, fmt.Sprintf("%s-%d-r%d", schema, rows, r.c.Runs), "wh")
	done := filepath.Join(filepath.Dir(wh), "done")
	if _, err := os.Stat(done); err == nil {
		return wh, 0, nil
	}
	if err := os.RemoveAll(filepath.Dir(wh)); err != nil {
		return "", 0, err
	}
	slog.Info("generating", "schema", schema, "rows", rows)
	m, err := measure(ctx, nil, r.self, "gen", "-warehouse", wh, "-table", "bench."+schema, "-schema", schema,
		"-rows", fmt.Sprint(rows), "-runs", fmt.Sprint(r.c.Runs))
	if err != nil {
		return "", 0, err
	}
	return wh, m.Wall, os.WriteFile(done, nil, 0o644)
}

// bucketFacts reads the live files of the table's latest snapshot.
type bucketFacts struct {
	Files    int
	Rows     int64
	Bytes    int64
	MaxLevel int32
	Snapshot int64
	Kind     table.CommitKind
}

// openLatest opens warehouse's table name ("db.t") and its latest snapshot.
func openLatest(ctx context.Context, warehouse, name string) (*table.Table, *table.Snapshot, error) {
	fio, err := fileio.For(ctx, warehouse)
	if err != nil {
		return nil, nil, err
	}
	db, tbl, _ := strings.Cut(name, ".")
	t, err := table.Open(ctx, fio, warehouse, db, tbl)
	if err != nil {
		return nil, nil, err
	}
	s, err := t.LatestSnapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	return t, s, nil
}

func facts(ctx context.Context, warehouse, name string) (bucketFacts, error) {
	var f bucketFacts
	t, s, err := openLatest(ctx, warehouse, name)
	if err != nil {
		return f, err
	}
	fs, err := t.FileSet(ctx, s)
	if err != nil {
		return f, err
	}
	f.Snapshot, f.Kind = s.ID, s.CommitKind
	for _, b := range fs.Buckets() {
		for _, e := range b.Files {
			f.Files++
			f.Rows += e.File.RowCount
			f.Bytes += e.File.FileSize
			f.MaxLevel = max(f.MaxLevel, e.File.Level)
		}
	}
	return f, nil
}

func (r *runner) javaArgv(ctx context.Context, verb string, flags ...string) ([]string, error) {
	java := filepath.Join("interop", "java", "target")
	cp, err := os.ReadFile(filepath.Join(java, "classpath.txt"))
	if err != nil {
		return nil, fmt.Errorf("the Java oracle is not built (run bash interop/install.sh): %w", err)
	}
	classes, err := filepath.Abs(filepath.Join(java, "classes"))
	if err != nil {
		return nil, err
	}
	argv := []string{"java"}
	argv = append(argv, strings.Fields(r.c.JavaOpts)...)
	argv = append(argv, "-cp", classes+":"+strings.TrimSpace(string(cp)), "compactd.interop.Main", verb)
	return append(argv, flags...), nil
}

type compactionRow struct {
	schema              string
	rows                int64
	in                  bucketFacts
	gen                 time.Duration
	go_, java, floor    measurement
	haveJava, haveFloor bool
	outGo, outJava      bucketFacts
	duck                duckResult
	haveDuck            bool
	scan                measurement     // compactd scan of the input, JSON lines to /dev/null
	reps                []compactionRow // the repetitions this row is the median of
}

func mib(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }

func rate(rows int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(rows)/d.Seconds())
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// compaction measures compactd, Java and the floor on copies of each
// generated table.
func (r *runner) compaction(ctx context.Context) error {
	if len(r.c.Schemas) == 0 || len(r.c.Sizes) == 0 {
		return nil // -schemas "" or -rows "": only the other sections
	}
	var rows []compactionRow
	scratch := filepath.Join(r.c.Work, "scratch")
	defer os.RemoveAll(scratch)
	var errs []error
	for _, schema := range r.c.Schemas {
		for _, n := range r.c.Sizes {
			var reps []compactionRow
			for rep := 0; rep < max(r.c.Repeat, 1); rep++ {
				row, err := r.compactOne(ctx, schema, n, scratch, rep == 0)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s %d rows: %w", schema, n, err))
					break
				}
				reps = append(reps, row)
			}
			if len(reps) > 0 {
				rows = append(rows, medianRow(reps))
			}
		}
	}
	r.printf("## 1. Full compaction of one bucket (%d sorted runs)\n\n", r.c.Runs)
	r.printf("narrow and wide: deduplicate; input rows are the records of the level-0 files (keys overlap across runs; about 1 in 5 records updates an older key). ")
	r.printf("widepu: the multi-stream wide table (partial-update, %d streams of %d columns, one sequence group each; every key has one record per stream). ", puStreams, puGroup)
	r.printf("Throughput = input rows / wall time of the whole process (JVM start-up included for Java). RSS = peak resident set size (`/usr/bin/time -v`). CPU = user + system time of the process (robust against other load on the machine; wall time is not).\n\n")
	r.printf("| schema | input rows | input MiB | files in → out | tool | wall s | CPU s | rows/s (wall) | rows/s (CPU) | peak RSS MiB |\n")
	r.printf("|---|---|---|---|---|---|---|---|---|---|\n")
	line := func(x compactionRow, tool string, m measurement) {
		r.printf("| %s | %d | %s | %d → %d | %s | %.1f | %.1f | %s | %s | %s |\n", x.schema, x.in.Rows, mib(x.in.Bytes), x.in.Files, x.outGo.Files,
			tool, m.Wall.Seconds(), m.CPU.Seconds(), rate(x.in.Rows, m.Wall), rate(x.in.Rows, m.CPU), mib(m.MaxRSS))
	}
	for _, x := range rows {
		line(x, "compactd", x.go_)
		if x.haveJava {
			line(x, "Java Paimon", x.java)
		}
		if x.haveFloor {
			line(x, "floor (decode+encode)", x.floor)
		}
		line(x, "compactd scan (JSON lines to /dev/null)", x.scan)
		if x.haveDuck {
			line(x, "DuckDB 1 thread", x.duck.one)
			line(x, "DuckDB 2 threads", x.duck.two)
		}
	}
	r.printf("\nScan (target: batch path ≤ the compaction's CPU): compactd scan CPU / compactd compaction CPU:")
	for _, x := range rows {
		r.printf(" %s %s;", x.schema, spread(x.reps, func(y compactionRow) (float64, float64) { return y.scan.CPU.Seconds(), y.go_.CPU.Seconds() }))
	}
	r.printf("\n")
	r.printf("\nRatios, median [min–max] over %d repetitions (each repetition runs every tool back to back; the table above gives medians). Targets: throughput ≥ 4× Java, RSS ≤ 1/4 of Java, time ≤ 1.15× floor:\n\n", max(r.c.Repeat, 1))
	r.printf("| schema | input rows | compactd/Java throughput (wall) | (CPU) | compactd/Java peak RSS | compactd/floor time (wall) | (CPU) |\n|---|---|---|---|---|---|---|\n")
	for _, x := range rows {
		tw, tc, rss, fw, fc := "-", "-", "-", "-", "-"
		if x.haveJava {
			tw = spread(x.reps, func(y compactionRow) (float64, float64) { return y.java.Wall.Seconds(), y.go_.Wall.Seconds() })
			tc = spread(x.reps, func(y compactionRow) (float64, float64) { return y.java.CPU.Seconds(), y.go_.CPU.Seconds() })
			rss = spread(x.reps, func(y compactionRow) (float64, float64) { return float64(y.go_.MaxRSS), float64(y.java.MaxRSS) })
		}
		if x.haveFloor {
			fw = spread(x.reps, func(y compactionRow) (float64, float64) { return y.go_.Wall.Seconds(), y.floor.Wall.Seconds() })
			fc = spread(x.reps, func(y compactionRow) (float64, float64) { return y.go_.CPU.Seconds(), y.floor.CPU.Seconds() })
		}
		r.printf("| %s | %d | %s | %s | %s | %s | %s |\n", x.schema, x.in.Rows, tw, tc, rss, fw, fc)
	}
	r.duckReport(rows)
	r.printf("\nOutput check: ")
	for _, x := range rows {
		r.printf("%s/%d: compactd wrote %d rows at level %d", x.schema, x.rows, x.outGo.Rows, x.outGo.MaxLevel)
		if x.haveJava {
			r.printf(", Java %d rows at level %d", x.outJava.Rows, x.outJava.MaxLevel)
			if x.outJava.Rows != x.outGo.Rows {
				r.printf(" (**MISMATCH**)")
			}
		}
		r.printf("; ")
	}
	r.printf("\n\nRSS growth with rows (compactd peak RSS, MiB): ")
	for _, schema := range r.c.Schemas {
		r.printf("%s:", schema)
		for _, x := range rows {
			if x.schema == schema {
				r.printf(" %d rows → %s", x.rows, mib(x.go_.MaxRSS))
			}
		}
		r.printf("; ")
	}
	r.printf("\n\n")
	var gen []string
	for _, x := range rows {
		if x.gen > 0 {
			gen = append(gen, fmt.Sprintf("%s/%d %.1f s", x.schema, x.rows, x.gen.Seconds()))
		}
	}
	if len(gen) > 0 {
		r.printf("Generation with compactd's writer (one commit per run, not part of the comparison): %s.\n\n", strings.Join(gen, "; "))
	}
	return errors.Join(errs...)
}

// devNull wraps argv so that its standard output goes to /dev/null (GNU
// time measures the exec'd process itself), instead of being collected.
func devNull(argv ...string) []string {
	return append([]string{"sh", "-c", `exec "$@" > /dev/null`, "sh"}, argv...)
}

// compactOne measures every tool once on fresh copies of the table;
// check: also row-check DuckDB's output (the first repetition).
func (r *runner) compactOne(ctx context.Context, schema string, n int64, scratch string, check bool) (compactionRow, error) {
	x := compactionRow{schema: schema, rows: n}
	master, gen, err := r.master(ctx, schema, n)
	if err != nil {
		return x, err
	}
	x.gen = gen
	name := "bench." + schema
	if x.in, err = facts(ctx, master, name); err != nil {
		return x, err
	}
	wh := filepath.Join(scratch, "wh")
	// compactd
	if err := copyDir(ctx, master, wh); err != nil {
		return x, err
	}
	slog.Info("compactd compact --full", "schema", schema, "rows", x.in.Rows)
	if x.go_, err = measure(ctx, nil, r.c.Compactd, "compact", wh, name, "--full"); err != nil {
		return x, err
	}
	if x.outGo, err = facts(ctx, wh, name); err != nil {
		return x, err
	}
	if x.outGo.Kind != table.CommitCompact {
		return x, fmt.Errorf("compactd did not commit a COMPACT snapshot (latest is %s)", x.outGo.Kind)
	}
	// DuckDB, while compactd's output is still in wh for the row check.
	// It reads Parquet only: ORC tables are compared with Java alone, and
	// the floor (the Parquet batch path) is not measured for them either.
	_, isORC := baseSchema(schema)
	if r.c.DuckPython != "" && !isORC {
		slog.Info("DuckDB", "schema", schema, "rows", x.in.Rows)
		if x.duck, err = r.duckdb(ctx, schema, master, wh, name, scratch, x.in.Rows, check); err != nil {
			return x, fmt.Errorf("DuckDB: %w", err)
		}
		x.haveDuck = true
	}
	// Java
	if r.c.Java {
		if err := copyDir(ctx, master, wh); err != nil {
			return x, err
		}
		argv, err := r.javaArgv(ctx, "compact", "--warehouse", wh, "--table", name)
		if err != nil {
			return x, err
		}
		slog.Info("Java compact", "schema", schema, "rows", x.in.Rows)
		if x.java, err = measure(ctx, nil, argv...); err != nil {
			return x, err
		}
		if x.outJava, err = facts(ctx, wh, name); err != nil {
			return x, err
		}
		x.haveJava = true
	}
	if isORC {
		return x, r.scanOne(ctx, &x, master, name, wh)
	}
	// floor
	if err := copyDir(ctx, master, wh); err != nil {
		return x, err
	}
	slog.Info("floor", "schema", schema, "rows", x.in.Rows)
	if x.floor, err = measure(ctx, nil, r.self, "floor", "-warehouse", wh, "-table", name); err != nil {
		return x, err
	}
	var fr floorResult
	if err := json.Unmarshal([]byte(x.floor.Stdout), &fr); err != nil {
		return x, fmt.Errorf("floor output %q: %w", x.floor.Stdout, err)
	}
	if fr.Rows != x.in.Rows {
		return x, fmt.Errorf("floor copied %d rows, the table has %d", fr.Rows, x.in.Rows)
	}
	x.haveFloor = true
	return x, r.scanOne(ctx, &x, master, name, wh)
}

// scanOne measures compactd scan of the input table (the merge-on-read a
// reader pays, against the compaction's CPU) and removes the scratch copy.
func (r *runner) scanOne(ctx context.Context, x *compactionRow, master, name, wh string) error {
	slog.Info("compactd scan", "schema", x.schema, "rows", x.in.Rows)
	var err error
	if x.scan, err = measure(ctx, nil, devNull(r.c.Compactd, "scan", master, name)...); err != nil {
		return err
	}
	return os.RemoveAll(wh)
}

// s3 runs full compactions on the loopback S3 server, directly and through
// the shaping proxy (per-request latency and a bandwidth cap, as a remote
// object store has), and on local disk, alternating, twice each (fresh
// copies every time); it reports the faster run of each: wall time on this
// shared machine varies more between two runs than loopback S3 costs.
func (r *runner) s3(ctx context.Context) error {
	if !r.c.S3 {
		return nil
	}
	endpoint, bucket := os.Getenv("COMPACTD_TEST_S3_ENDPOINT"), os.Getenv("COMPACTD_TEST_S3_BUCKET")
	if endpoint == "" || bucket == "" {
		return errors.New("-s3: COMPACTD_TEST_S3_ENDPOINT and COMPACTD_TEST_S3_BUCKET are not set (eval \"$(scripts/s3-server.sh start)\")")
	}
	sh, err := startShaper(endpoint, r.c.S3Latency, int64(r.c.S3MiBps*(1<<20)))
	if err != nil {
		return err
	}
	defer sh.Close()
	if r.c.S3Log != "" {
		f, err := os.OpenFile(r.c.S3Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		sh.log = f
	}
	var rows []s3row
	for _, schema := range r.c.S3Schemas {
		x, err := r.s3One(ctx, schema, endpoint, bucket, sh)
		if err != nil {
			return fmt.Errorf("%s: %w", schema, err)
		}
		rows = append(rows, x)
	}
	r.printf("## 4. S3 (loopback versitygw, posix backend on the same disk) vs local disk\n\n")
	r.printf("Best of 2 alternating runs each, fresh copy every run. Shaped: through a proxy on 127.0.0.1 that delays every request by %s and caps the bandwidth of all bodies together at %.0f MiB/s (`-s3-latency`, `-s3-mibps`). Requests are counted at the proxy during the shaped run; per file = all requests / (input + output data files).\n\n", r.c.S3Latency, r.c.S3MiBps)
	r.printf("| table | input rows | files in → out | local wall s | S3 wall s | shaped S3 wall s | S3/local wall | shaped/local wall | local CPU s | shaped CPU s | local RSS MiB | shaped RSS MiB | requests (shaped run) | requests per file |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range rows {
		files := x.in.Files + x.out.Files
		r.printf("| %s | %d | %d → %d | %.1f | %.1f | %.1f | %s | %s | %.1f | %.1f | %s | %s | %s | %.1f |\n", x.schema, x.in.Rows, x.in.Files, x.out.Files,
			x.local.Wall.Seconds(), x.loopback.Wall.Seconds(), x.shaped.Wall.Seconds(),
			ratio(x.loopback.Wall.Seconds(), x.local.Wall.Seconds()), ratio(x.shaped.Wall.Seconds(), x.local.Wall.Seconds()),
			x.local.CPU.Seconds(), x.shaped.CPU.Seconds(), mib(x.local.MaxRSS), mib(x.shaped.MaxRSS),
			formatCounts(x.counts), float64(total(x.counts))/float64(max(files, 1)))
	}
	r.printf("\nTarget: shaped/local wall ≤ 1.5 at 20 ms per request. (Upload of the input tables, not measured above:")
	for _, x := range rows {
		r.printf(" %s %.1f s", x.schema, x.up.Seconds())
	}
	r.printf(".)\n\n")
	return nil
}

// s3row is one schema's compaction on local disk, loopback S3 and shaped S3.
type s3row struct {
	schema                  string
	in, out                 bucketFacts
	local, loopback, shaped measurement
	counts                  map[string]int64 // requests of the best shaped run
	up                      time.Duration    // upload of the input table
}

func (r *runner) s3One(ctx context.Context, schema, endpoint, bucket string, sh *shaper) (s3row, error) {
	x := s3row{schema: schema}
	in, out, local, loopback, shaped, counts, up := &x.in, &x.out, &x.local, &x.loopback, &x.shaped, &x.counts, &x.up
	master, _, err := r.master(ctx, schema, r.c.S3Rows)
	if err != nil {
		return x, err
	}
	name := "bench." + schema
	os.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
	scratch := filepath.Join(r.c.Work, "scratch-s3")
	defer os.RemoveAll(scratch)
	best := func(a *measurement, b measurement) bool {
		if a.Wall == 0 || b.Wall < a.Wall {
			*a = b
			return true
		}
		return false
	}
	remote := func(via string, into *measurement, shapedRun bool) error {
		wh := fmt.Sprintf("s3://%s/bench-%d", bucket, time.Now().UnixNano())
		start := time.Now()
		if _, err := upload(ctx, master, wh); err != nil {
			return err
		}
		*up = time.Since(start)
		var err error
		if *in, err = facts(ctx, wh, name); err != nil {
			return err
		}
		sh.Counts() // reset
		slog.Info("compactd compact --full on S3", "schema", schema, "via", via, "rows", in.Rows)
		m, err := measure(ctx, []string{"AWS_ENDPOINT_URL_S3=" + via}, r.c.Compactd, "compact", wh, name, "--full")
		if err != nil {
			return err
		}
		c := sh.Counts()
		if best(into, m) && shapedRun {
			*counts = c
		}
		if *out, err = facts(ctx, wh, name); err != nil {
			return err
		}
		if out.Kind != table.CommitCompact {
			return fmt.Errorf("compaction on S3 did not commit a COMPACT snapshot (latest is %s)", out.Kind)
		}
		fio, err := fileio.For(ctx, wh)
		if err != nil {
			return err
		}
		return removeTree(ctx, fio, wh)
	}
	for rep := 0; rep < 2; rep++ {
		if err := copyDir(ctx, master, scratch); err != nil {
			return x, err
		}
		slog.Info("compactd compact --full on local disk", "schema", schema, "rep", rep)
		lm, err := measure(ctx, nil, r.c.Compactd, "compact", scratch, name, "--full")
		if err != nil {
			return x, err
		}
		best(local, lm)
		if err := remote(endpoint, loopback, false); err != nil {
			return x, err
		}
		if err := remote(sh.URL, shaped, true); err != nil {
			return x, err
		}
	}
	return x, nil
}

var benchLine = func(line string) bool { return strings.HasPrefix(line, "BenchmarkPlan") }

// planning reports planner.BenchmarkPlan and compact.PlanTable on
// generated metadata.
func (r *runner) planning(ctx context.Context) error {
	r.printf("## 2. Planning\n\n")
	var errs []error
	if r.c.PlannerGo {
		cmd := exec.CommandContext(ctx, "go", "test", "./planner", "-run", "^$", "-bench", "BenchmarkPlan", "-benchmem", "-count", "1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			errs = append(errs, fmt.Errorf("go test -bench BenchmarkPlan: %w: %s", err, tail(string(out), 1000)))
		} else {
			r.printf("`go test ./planner -run '^$' -bench BenchmarkPlan -benchmem` (pure planner, no I/O):\n\n```\n")
			for _, l := range strings.Split(string(out), "\n") {
				if benchLine(l) {
					r.printf("%s\n", l)
				}
			}
			r.printf("```\n\n")
		}
	}
	if len(r.c.Plan) > 0 {
		r.printf("`compact.PlanTable` on a generated table (one snapshot, one manifest; per bucket levels 1–5 and 5 overlapping level-0 files): reads the snapshot and manifest, folds the file set, builds the view and plans. Best of 3 in one process; RSS of that process.\n\n")
		r.printf("Then the CLI on the same table: `compactd plan <wh> bench.plan --json` (output to /dev/null), one process: CPU and peak RSS (target: ≤ 1 s and ≤ 200 MiB at 100k files).\n\n")
		r.printf("| buckets | files | manifest MiB | PlanTable s | jobs | RSS MiB | CLI plan CPU s | CLI plan RSS MiB | CLI µs per file |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, p := range r.c.Plan {
			dir := filepath.Join(r.c.Work, fmt.Sprintf("plan-%d-%d", p[0], p[1]))
			os.RemoveAll(dir)
			wh := filepath.Join(dir, "wh")
			if _, err := measure(ctx, nil, r.self, "genplan", "-warehouse", wh, "-table", "bench.plan", "-buckets", fmt.Sprint(p[0]), "-files", fmt.Sprint(p[1])); err != nil {
				errs = append(errs, err)
				continue
			}
			m, err := measure(ctx, nil, r.self, "plan", "-warehouse", wh, "-table", "bench.plan", "-n", "3")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			var res struct {
				BestSeconds float64
				Jobs        int
			}
			if err := json.Unmarshal([]byte(m.Stdout), &res); err != nil {
				errs = append(errs, fmt.Errorf("plan output %q: %w", m.Stdout, err))
				continue
			}
			in, err := facts(ctx, wh, "bench.plan")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			cli, err := measure(ctx, nil, devNull(r.c.Compactd, "plan", wh, "bench.plan", "--json")...)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			r.printf("| %d | %d | %.2f | %.3f | %d | %s | %.2f | %s | %.1f |\n", p[0], in.Files, dirMiB(filepath.Join(wh, "bench.db", "plan", "manifest")), res.BestSeconds, res.Jobs, mib(m.MaxRSS),
				cli.CPU.Seconds(), mib(cli.MaxRSS), cli.CPU.Seconds()*1e6/float64(max(in.Files, 1)))
			os.RemoveAll(dir)
		}
		r.printf("\n")
	}
	return errors.Join(errs...)
}

func dirMiB(dir string) float64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return float64(n) / (1 << 20)
}

// expiration generates metadata-only tables and times `compactd expire`.
func (r *runner) expiration(ctx context.Context) error {
	if len(r.c.Expire) == 0 {
		return nil
	}
	r.printf("## 3. Snapshot expiration at scale\n\n")
	r.printf("Generated metadata (no data files exist): snapshot i adds files/snapshots files and deletes the previous snapshot's, so the delta manifests of the expired range name every file. `compactd expire --retain-min 1 --retain-max 1 --time-retained 1ms --limit <all>` expires all but the latest snapshot; deleting the (absent) data files is part of the run.\n\n")
	r.printf("| snapshots | files | generate s | expire wall s | expire CPU s | expire RSS MiB | snapshots expired | data files deleted | manifests deleted | wall µs per file |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var errs []error
	for _, p := range r.c.Expire {
		dir := filepath.Join(r.c.Work, fmt.Sprintf("expire-%d-%d", p[0], p[1]))
		os.RemoveAll(dir)
		wh := filepath.Join(dir, "wh")
		slog.Info("generating expiration metadata", "snapshots", p[0], "files", p[1])
		g, err := measure(ctx, nil, r.self, "genexpire", "-warehouse", wh, "-table", "bench.exp", "-snapshots", fmt.Sprint(p[0]), "-files", fmt.Sprint(p[1]))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		slog.Info("compactd expire", "snapshots", p[0], "files", p[1])
		m, err := measure(ctx, nil, r.c.Compactd, "expire", wh, "bench.exp", "--retain-min", "1", "--retain-max", "1",
			"--time-retained", "1ms", "--limit", fmt.Sprint(p[0]+10), "--json")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var rep struct {
			Snapshots []int64
			// The lists of paths are bounded samples; counts are totals.
			Counts struct {
				DataFiles int
				Manifests int
			}
		}
		if err := json.NewDecoder(strings.NewReader(m.Stdout)).Decode(&rep); err != nil && !errors.Is(err, io.EOF) {
			errs = append(errs, fmt.Errorf("expire output: %w", err))
			continue
		}
		r.printf("| %d | %d | %.1f | %.2f | %.2f | %s | %d | %d | %d | %.1f |\n", p[0], p[1], g.Wall.Seconds(), m.Wall.Seconds(), m.CPU.Seconds(), mib(m.MaxRSS),
			len(rep.Snapshots), rep.Counts.DataFiles, rep.Counts.Manifests, m.Wall.Seconds()*1e6/float64(p[1]))
		os.RemoveAll(dir)
	}
	r.printf("\n")
	return errors.Join(errs...)
}
