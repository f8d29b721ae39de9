// Command compactd-bench measures compactd side by side with Java Paimon:
// full compaction of one large bucket (compactd, Java, and a decode/encode
// "floor"), planning, snapshot expiration at scale, S3 against local
// disk, and a fleet's units per minute with 1 and 3 replicas. `make bench` (scripts/bench.sh) runs `compactd-bench run`; the other
// verbs are the pieces it runs in child processes under /usr/bin/time -v.
//
//	compactd-bench gen    -warehouse W -table db.t -schema narrow|wide -rows N [-runs 8] [-dv] [-buckets 1]
//	compactd-bench genupdates -warehouse W -table db.t -rows N -base-runs 8 [-runs 8] [-new-keys K]
//	compactd-bench setoptions -warehouse W -table db.t -set k=v[,k=v...]
//	compactd-bench floor  -warehouse W -table db.t
//	compactd-bench genexpire -warehouse W -table db.t -snapshots S -files F
//	compactd-bench genplan -warehouse W -table db.t -buckets B -files F
//	compactd-bench genorphan -warehouse W -table db.t -buckets B -files F -orphans O
//	compactd-bench plan   -warehouse W -table db.t [-n 3]
//	compactd-bench compact -warehouse W -table db.t [-full=false] [-cpuprofile F] [-memprofile F] [-trace F]
//	compactd-bench scan   -warehouse W -table db.t [-cpuprofile F]
//	compactd-bench upload -src DIR -dst s3://bucket/prefix
//	compactd-bench run    [flags]   (see -h)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "compactd-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: compactd-bench gen|genupdates|setoptions|floor|genexpire|genplan|genorphan|plan|upload|run [flags]")
	}
	verb, args := args[0], args[1:]
	fl := flag.NewFlagSet(verb, flag.ContinueOnError)
	warehouse := fl.String("warehouse", "", "warehouse path (local or s3://)")
	name := fl.String("table", "", "table as db.name")
	out := json.NewEncoder(os.Stdout)
	split := func() (string, string, error) {
		db, tbl, ok := strings.Cut(*name, ".")
		if *warehouse == "" || !ok {
			return "", "", errors.New("-warehouse and -table db.name are required")
		}
		return db, tbl, nil
	}
	open := func() (*table.Table, error) {
		db, tbl, err := split()
		if err != nil {
			return nil, err
		}
		fio, err := fileio.For(ctx, *warehouse)
		if err != nil {
			return nil, err
		}
		return table.Open(ctx, fio, *warehouse, db, tbl)
	}
	switch verb {
	case "gen":
		var spec genSpec
		fl.StringVar(&spec.Schema, "schema", "narrow", "narrow (BIGINT key + 3 columns) or wide (30 columns)")
		fl.Int64Var(&spec.Rows, "rows", 1_000_000, "records in the level-0 files (approximately)")
		fl.IntVar(&spec.Runs, "runs", 8, "commits, each one level-0 file (sorted run)")
		fl.Uint64Var(&spec.Seed, "seed", 1, "random seed")
		fl.BoolVar(&spec.DV, "dv", false, "deletion-vectors.enabled=true")
		fl.IntVar(&spec.Buckets, "buckets", 1, "fixed buckets")
		if err := fl.Parse(args); err != nil {
			return err
		}
		db, tbl, err := split()
		if err != nil {
			return err
		}
		n, err := generate(ctx, *warehouse, db, tbl, spec)
		if err != nil {
			return err
		}
		return out.Encode(map[string]any{"rows": n})
	case "genupdates":
		rows := fl.Int64("rows", 1_000_000, "-rows the table was generated with")
		baseRuns := fl.Int("base-runs", 8, "-runs the table was generated with")
		runs := fl.Int("runs", dvUpdateRuns, "update commits, each one level-0 file")
		newKeys := fl.Int64("new-keys", 0, "keys above the base key range inserted by the update commits, in all")
		seed := fl.Uint64("seed", 2, "random seed")
		if err := fl.Parse(args); err != nil {
			return err
		}
		db, tbl, err := split()
		if err != nil {
			return err
		}
		n, err := genUpdates(ctx, *warehouse, db, tbl, *rows, *baseRuns, *runs, *newKeys, *seed)
		if err != nil {
			return err
		}
		return out.Encode(map[string]any{"rows": n})
	case "setoptions":
		// The changelog benchmark's variants, for profiling one by hand.
		set := fl.String("set", "", "k=v[,k=v...] to set in schema-0 (k= removes k)")
		if err := fl.Parse(args); err != nil {
			return err
		}
		opts, err := parseOptions(*set)
		if err != nil {
			return err
		}
		return setTableOptions(ctx, *warehouse, *name, opts)
	case "floor":
		if err := fl.Parse(args); err != nil {
			return err
		}
		t, err := open()
		if err != nil {
			return err
		}
		res, err := floor(ctx, t)
		if err != nil {
			return err
		}
		return out.Encode(res)
	case "genexpire":
		snaps := fl.Int("snapshots", 1000, "snapshots")
		files := fl.Int("files", 100_000, "data files named by the delta manifests in all")
		if err := fl.Parse(args); err != nil {
			return err
		}
		db, tbl, err := split()
		if err != nil {
			return err
		}
		_, err = genExpire(ctx, *warehouse, db, tbl, *snaps, *files)
		return err
	case "genplan":
		buckets := fl.Int("buckets", 100, "buckets")
		files := fl.Int("files", 100, "files per bucket")
		if err := fl.Parse(args); err != nil {
			return err
		}
		db, tbl, err := split()
		if err != nil {
			return err
		}
		_, err = genPlan(ctx, *warehouse, db, tbl, *buckets, *files)
		return err
	case "genorphan":
		buckets := fl.Int("buckets", 100, "buckets")
		files := fl.Int("files", 1000, "referenced data files per bucket")
		orphans := fl.Int("orphans", 10, "unreferenced data files per bucket")
		if err := fl.Parse(args); err != nil {
			return err
		}
		db, tbl, err := split()
		if err != nil {
			return err
		}
		_, err = genOrphan(ctx, *warehouse, db, tbl, *buckets, *files, *orphans)
		return err
	case "plan":
		n := fl.Int("n", 3, "repetitions")
		if err := fl.Parse(args); err != nil {
			return err
		}
		t, err := open()
		if err != nil {
			return err
		}
		var best time.Duration
		var jobs int
		for i := 0; i < *n; i++ {
			start := time.Now()
			_, plan, _, err := compact.PlanTable(ctx, t, compact.Options{}, time.Now())
			if err != nil {
				return err
			}
			if d := time.Since(start); i == 0 || d < best {
				best = d
			}
			jobs = len(plan.Jobs)
		}
		return out.Encode(map[string]any{"bestSeconds": best.Seconds(), "jobs": jobs})
	case "upload":
		src := fl.String("src", "", "local directory")
		dst := fl.String("dst", "", "destination directory (s3://bucket/prefix)")
		if err := fl.Parse(args); err != nil {
			return err
		}
		n, err := upload(ctx, *src, *dst)
		if err != nil {
			return err
		}
		return out.Encode(map[string]any{"files": n})
	case "scan":
		// compactd scan's work (every row as a JSON line, to a discarding
		// writer) in this process, for profiling.
		cpu := fl.String("cpuprofile", "", "write a CPU profile here")
		if err := fl.Parse(args); err != nil {
			return err
		}
		t, err := open()
		if err != nil {
			return err
		}
		stop, err := startRecording(*cpu, pprof.StartCPUProfile, pprof.StopCPUProfile)
		if err != nil {
			return err
		}
		defer stop()
		sc, err := scan.New(ctx, t, nil)
		if err != nil {
			return err
		}
		var rows, bytes int64
		if err := sc.EachJSON(ctx, func(line []byte) error {
			rows++
			bytes += int64(len(line)) + 1
			return nil
		}); err != nil {
			return err
		}
		return out.Encode(map[string]any{"rows": rows, "bytes": bytes})
	case "compact":
		// compactd's compaction in this process, for profiling.
		cpu := fl.String("cpuprofile", "", "write a CPU profile here")
		heap := fl.String("memprofile", "", "write a heap (alloc) profile here at the end")
		peak := fl.String("peakprofile", "", "write the heap profile taken near the peak of the live heap here")
		traceOut := fl.String("trace", "", "write a runtime execution trace here (go tool trace: which goroutines keep the cores busy)")
		rowPath := fl.Bool("row-path", false, "merge record by record (the batch path's reference)")
		full := fl.Bool("full", true, "full compaction (false: compactd's own pick, e.g. the lookup compaction of level 0)")
		if err := fl.Parse(args); err != nil {
			return err
		}
		t, err := open()
		if err != nil {
			return err
		}
		stopCPU, err := startRecording(*cpu, pprof.StartCPUProfile, pprof.StopCPUProfile)
		if err != nil {
			return err
		}
		defer stopCPU()
		stopTrace, err := startRecording(*traceOut, trace.Start, trace.Stop)
		if err != nil {
			return err
		}
		defer stopTrace()
		if *peak != "" {
			stop := watchPeak(*peak)
			defer stop()
		}
		sum, err := compact.Run(ctx, t, compact.Options{Full: *full, RowPath: *rowPath})
		if err != nil {
			return err
		}
		if *heap != "" {
			f, err := os.Create(*heap)
			if err != nil {
				return err
			}
			defer f.Close()
			// The profile shows the heap as of the last completed GC: without
			// one, the allocations since are missing.
			runtime.GC()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				return err
			}
		}
		return out.Encode(map[string]any{"rowsIn": sum.RowsIn, "rowsOut": sum.RowsOut, "seconds": sum.Duration.Seconds()})
	case "run":
		return runAll(ctx, fl, args)
	}
	return fmt.Errorf("unknown verb %q", verb)
}

// startRecording creates path and starts a recording into it (a CPU profile,
// an execution trace); the returned stop ends it and closes the file. An
// empty path records nothing.
func startRecording(path string, start func(io.Writer) error, stop func()) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		stop()
		f.Close()
	}, nil
}
