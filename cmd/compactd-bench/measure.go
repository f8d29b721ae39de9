package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/compactd/compactd/fileio"
)

// measurement is one child process run under /usr/bin/time -v.
type measurement struct {
	Wall   time.Duration
	CPU    time.Duration // user + system
	MaxRSS int64         // bytes
	Stdout string
}

var (
	rssRe  = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
	wallRe = regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([0-9:.]+)`)
	userRe = regexp.MustCompile(`User time \(seconds\): ([0-9.]+)`)
	sysRe  = regexp.MustCompile(`System time \(seconds\): ([0-9.]+)`)
)

// parseCPU reads user + system time from GNU time's -v report.
func parseCPU(report string) (time.Duration, error) {
	var total float64
	for _, re := range []*regexp.Regexp{userRe, sysRe} {
		m := re.FindStringSubmatch(report)
		if m == nil {
			return 0, fmt.Errorf("no %s in time -v output", re)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return time.Duration(total * float64(time.Second)), nil
}

// parseTimeV reads GNU time's -v report: peak RSS in bytes and wall time.
func parseTimeV(report string) (rss int64, wall time.Duration, err error) {
	m := rssRe.FindStringSubmatch(report)
	if m == nil {
		return 0, 0, fmt.Errorf("no \"Maximum resident set size\" in time -v output")
	}
	kb, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, 0, err
	}
	w := wallRe.FindStringSubmatch(report)
	if w == nil {
		return 0, 0, fmt.Errorf("no wall clock time in time -v output")
	}
	// h:mm:ss or m:ss.ss
	var secs float64
	for _, part := range strings.Split(w[1], ":") {
		v, err := strconv.ParseFloat(part, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("wall clock %q: %w", w[1], err)
		}
		secs = secs*60 + v
	}
	return kb * 1024, time.Duration(secs * float64(time.Second)), nil
}

// measure runs argv under /usr/bin/time -v with extra environment entries.
// The wall time is the parent's own clock (finer than time's 10 ms).
func measure(ctx context.Context, env []string, argv ...string) (measurement, error) {
	report, err := os.CreateTemp("", "compactd-bench-time-*")
	if err != nil {
		return measurement{}, err
	}
	report.Close()
	defer os.Remove(report.Name())
	cmd := exec.CommandContext(ctx, "/usr/bin/time", append([]string{"-v", "-o", report.Name()}, argv...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	wall := time.Since(start)
	if runErr != nil {
		return measurement{}, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), runErr, tail(stderr.String(), 2000))
	}
	text, err := os.ReadFile(report.Name())
	if err != nil {
		return measurement{}, err
	}
	rss, _, err := parseTimeV(string(text))
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	cpu, err := parseCPU(string(text))
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return measurement{Wall: wall, CPU: cpu, MaxRSS: rss, Stdout: stdout.String()}, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// upload copies every file under the local directory src to dst (any store
// fileio.For accepts), keeping relative paths.
func upload(ctx context.Context, src, dst string) (int, error) {
	fio, err := fileio.For(ctx, dst)
	if err != nil {
		return 0, err
	}
	n := 0
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := fileio.WriteFile(ctx, fio, fileio.Join(dst, filepath.ToSlash(rel)), data); err != nil {
			return fmt.Errorf("upload %s: %w", p, err)
		}
		n++
		return nil
	})
	return n, err
}

// copyDir copies a directory tree with cp -a (keeps mtimes; fast).
func copyDir(ctx context.Context, src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "cp", "-a", src, dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp -a %s %s: %w: %s", src, dst, err, out)
	}
	// Write the copy back before the measured run: left dirty, its
	// writeback competes with the run's own writes. Two CPU profiles of the
	// wide table's compaction (2M rows) charged the output's write(2) calls
	// 0.52 s of 3.9 s right after the copy and 0.22 s of 3.3 s after a sync.
	// sync(2) reports no error; a failed writeback only leaves the noise.
	syscall.Sync()
	return nil
}

// removeTree deletes every file under dir in any store (object stores have
// no directories to delete; local ones keep empty directories).
func removeTree(ctx context.Context, fio fileio.FileIO, dir string) error {
	ents, err := fio.List(ctx, dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir {
			err = removeTree(ctx, fio, e.Path)
		} else {
			err = fio.Delete(ctx, e.Path)
		}
		if err != nil {
			return fmt.Errorf("remove %s: %w", e.Path, err)
		}
	}
	return nil
}
