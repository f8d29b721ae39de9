package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// The fleet benchmark (issue #20): compaction units per minute of a fleet
// of `compactd daemon --coordinator` processes on this machine, 1 replica
// against 3, on one generated table of many buckets, each bucket its own
// unit (buckets-per-unit 1) with a few level-0 files to merge.

// fleetShape is one fleet measured.
type fleetShape struct {
	replicas, workers int
}

// fleetRow is one fleet's measurement.
type fleetRow struct {
	shape fleetShape
	// units counts the compaction units that committed a snapshot;
	// perReplica them by replica.
	units      int
	perReplica []int
	// span runs from the first unit's start to the last unit's end (the
	// unit log's clock_timestamp()s), wall from the replicas' start to
	// the backlog's end (start-up, election and discovery included).
	span, wall time.Duration
	// cpu is the replicas' user + system time.
	cpu time.Duration
	// peak is the most compaction units that ran at once; mean their
	// average run.
	peak int
	mean time.Duration
}

func (r *runner) fleet(ctx context.Context) error {
	if r.c.FleetBuckets <= 0 {
		return nil
	}
	r.printf("## 5. Fleet: compaction units per minute, 1 vs 3 replicas\n\n")
	if r.c.PG == "" {
		return errors.New("fleet: no PostgreSQL URL (-pg, or $COMPACTD_PG_DSN from scripts/db-servers.sh env)")
	}
	master := filepath.Join(r.c.Work, fmt.Sprintf("fleet-%d-b%d-r%d", r.c.FleetRows, r.c.FleetBuckets, r.c.FleetRuns), "wh")
	if _, err := os.Stat(filepath.Join(filepath.Dir(master), "done")); err != nil {
		if err := os.RemoveAll(filepath.Dir(master)); err != nil {
			return err
		}
		slog.Info("generating the fleet table", "rows", r.c.FleetRows, "buckets", r.c.FleetBuckets)
		if _, err := measure(ctx, nil, r.self, "gen", "-warehouse", master, "-table", "bench.fleet", "-schema", "narrow",
			"-rows", fmt.Sprint(r.c.FleetRows), "-runs", fmt.Sprint(r.c.FleetRuns), "-buckets", fmt.Sprint(r.c.FleetBuckets)); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(master), "done"), nil, 0o644); err != nil {
			return err
		}
	}
	in, err := facts(ctx, master, "bench.fleet")
	if err != nil {
		return err
	}
	r.printf("One narrow deduplicate table of %d buckets, %d rows in %d level-0 files (%d commits, %s MiB): every bucket is one unit "+
		"(`buckets-per-unit: 1`), so %d units, each a merge of about %d rows. Each fleet gets a fresh copy and a PostgreSQL schema of its own; "+
		"its replicas are `compactd daemon --coordinator` processes with the given `workers`, and the clock runs from the first unit's start "+
		"to the last unit's end in the fleet's unit log (the wall column adds start-up, election and discovery). CPU is the replicas' user + system time.\n\n",
		r.c.FleetBuckets, in.Rows, in.Files, r.c.FleetRuns, mib(in.Bytes), r.c.FleetBuckets, in.Rows/int64(max(r.c.FleetBuckets, 1)))
	r.printf("| replicas × workers | units | span s | units/min | wall s | CPU s | CPU/span | units at once (peak) | mean unit s | units per replica |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var errs []error
	var base float64
	for _, sh := range []fleetShape{{1, 1}, {3, 1}, {1, 3}} {
		row, err := r.fleetOne(ctx, master, sh)
		if err != nil {
			errs = append(errs, fmt.Errorf("fleet of %d×%d: %w", sh.replicas, sh.workers, err))
			continue
		}
		perMin := float64(row.units) / row.span.Minutes()
		speed := ""
		if sh == (fleetShape{1, 1}) {
			base = perMin
		} else if base > 0 {
			speed = fmt.Sprintf(" (%.2f×)", perMin/base)
		}
		r.printf("| %d × %d | %d | %.1f | %.0f%s | %.1f | %.1f | %.2f | %d | %.3f | %v |\n", sh.replicas, sh.workers, row.units, row.span.Seconds(),
			perMin, speed, row.wall.Seconds(), row.cpu.Seconds(), row.cpu.Seconds()/row.span.Seconds(), row.peak, row.mean.Seconds(), row.perReplica)
	}
	r.printf("\n")
	return errors.Join(errs...)
}

// fleetOne runs one fleet on a fresh copy of master until compactd's
// planner finds nothing left to compact.
func (r *runner) fleetOne(ctx context.Context, master string, sh fleetShape) (fleetRow, error) {
	row := fleetRow{shape: sh}
	dir := filepath.Join(r.c.Work, fmt.Sprintf("fleet-run-%dx%d", sh.replicas, sh.workers))
	if err := os.RemoveAll(dir); err != nil {
		return row, err
	}
	defer os.RemoveAll(dir)
	wh := filepath.Join(dir, "wh")
	if err := copyDir(ctx, master, wh); err != nil {
		return row, err
	}
	admin, err := pgx.Connect(ctx, r.c.PG)
	if err != nil {
		return row, fmt.Errorf("connect %s: %w", r.c.PG, err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	schema := fmt.Sprintf("compactd_bench_fleet_%d_%d", os.Getpid(), rand.Uint32())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return row, err
	}
	defer admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA IF EXISTS "+schema+" CASCADE") //nolint:errcheck // best effort
	sep := "?"
	if strings.Contains(r.c.PG, "?") {
		sep = "&"
	}
	url := r.c.PG + sep + "search_path=" + schema
	cfg := filepath.Join(dir, "compactd.yaml")
	// Expiration and orphan cleanup are scheduled rarely: the units
	// measured are compactions.
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `workers: %d
tick: 200ms
discovery-interval: 1s
state-dir: %s
coordinator:
  heartbeat: 1s
  buckets-per-unit: 1
warehouses:
  - path: %s
defaults:
  compact.schedule: "@every 1s"
  expire.schedule: "@every 24h"
  orphan.schedule: "@every 24h"
`, sh.workers, filepath.Join(dir, "state"), wh), 0o644); err != nil {
		return row, err
	}
	start := time.Now()
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			if p.ProcessState == nil {
				_ = p.Process.Kill()
				_ = p.Wait()
			}
		}
	}()
	for i := 0; i < sh.replicas; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return row, err
		}
		addr := ln.Addr().String()
		ln.Close()
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("r%d.log", i)))
		if err != nil {
			return row, err
		}
		defer logf.Close()
		p := exec.CommandContext(ctx, r.c.Compactd, "daemon", "--config", cfg, "--coordinator", url, "--replica-id", fmt.Sprintf("r%d", i), "--listen", addr)
		p.Stdout, p.Stderr = logf, logf
		if err := p.Start(); err != nil {
			return row, err
		}
		procs = append(procs, p)
	}
	db, tn, _ := strings.Cut("bench.fleet", ".")
	for {
		t, err := table.Open(ctx, fileio.NewLocal(), wh, db, tn)
		if err != nil {
			return row, err
		}
		_, plan, _, err := compact.PlanTable(ctx, t, compact.Options{}, time.Now())
		if err != nil {
			return row, err
		}
		if len(plan.Jobs) == 0 {
			break
		}
		if time.Since(start) > 15*time.Minute {
			return row, fmt.Errorf("%d bucket jobs left after 15 minutes (logs in %s)", len(plan.Jobs), dir)
		}
		select {
		case <-ctx.Done():
			return row, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	row.wall = time.Since(start)
	for _, p := range procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			return row, fmt.Errorf("replica: %w (logs in %s)", err, dir)
		}
		row.cpu += p.ProcessState.UserTime() + p.ProcessState.SystemTime()
	}
	var first, last time.Time
	if err := admin.QueryRow(ctx, `SELECT count(*), min(started), max(finished) FROM `+schema+`.compactd_fleet_unit
		WHERE kind = 'compact' AND snapshot IS NOT NULL`).Scan(&row.units, &first, &last); err != nil {
		return row, fmt.Errorf("read the unit log: %w", err)
	}
	row.span = last.Sub(first)
	var meanSec float64
	if err := admin.QueryRow(ctx, `WITH u AS (SELECT started, finished FROM `+schema+`.compactd_fleet_unit WHERE kind = 'compact' AND snapshot IS NOT NULL)
		SELECT (SELECT max((SELECT count(*) FROM u b WHERE b.started <= a.started AND a.started < b.finished)) FROM u a),
		(SELECT avg(extract(epoch FROM finished - started))::float8 FROM u)`).Scan(&row.peak, &meanSec); err != nil {
		return row, fmt.Errorf("read the unit log: %w", err)
	}
	row.mean = time.Duration(meanSec * float64(time.Second))
	rows, err := admin.Query(ctx, `SELECT count(*) FROM `+schema+`.compactd_fleet_unit WHERE kind = 'compact' AND snapshot IS NOT NULL GROUP BY replica`)
	if err != nil {
		return row, err
	}
	defer rows.Close()
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			return row, err
		}
		row.perReplica = append(row.perReplica, n)
	}
	slices.Sort(row.perReplica)
	if row.units == 0 || row.span <= 0 {
		return row, fmt.Errorf("no unit committed (logs in %s)", dir)
	}
	return row, rows.Err()
}
