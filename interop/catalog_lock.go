package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// LockHolder is a running lock-hold verb: a Java snapshot commit paused inside Java Paimon's
// catalog lock, between RenamingSnapshotCommit's exists-check and its write (see
// interop/README.md). Locked waits until it holds the lock, Proceed lets it write, Wait
// collects whether it wrote.
type LockHolder struct {
	tb     testing.TB
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdin  io.WriteCloser
	lines  chan []byte
	stderr lockedBuffer
	done   chan error
	once   sync.Once
}

// StartLockHolder starts lock-hold for snapshot snapshotID of table ("db.t") in warehouse,
// which it writes with the bytes snapshotJSON once it may proceed (and only if the snapshot
// did not exist when it checked). The oracle must have been given catalog options with a lock
// (WithCatalogOptions(server.CatalogOptions(key))). The process is killed when the test ends.
func (j *JavaOracle) StartLockHolder(warehouse, table string, snapshotID int64, snapshotJSON []byte) *LockHolder {
	j.tb.Helper()
	h, err := j.StartLockHolderErr(context.Background(), warehouse, table, snapshotID, snapshotJSON)
	if err != nil {
		j.tb.Fatalf("interop: %v", err)
	}
	h.tb = j.tb
	j.tb.Cleanup(h.Close)
	return h
}

// StartLockHolderErr is StartLockHolder returning errors; the caller must Close it.
func (j *JavaOracle) StartLockHolderErr(ctx context.Context, warehouse, table string, snapshotID int64, snapshotJSON []byte) (*LockHolder, error) {
	dir, err := os.MkdirTemp("", "compactd-lock-hold-")
	if err != nil {
		return nil, fmt.Errorf("lock-hold temp dir: %w", err)
	}
	f := filepath.Join(dir, "snapshot.json")
	if err := os.WriteFile(f, snapshotJSON, 0o644); err != nil {
		return nil, fmt.Errorf("lock-hold snapshot file: %w", err)
	}
	h := &LockHolder{lines: make(chan []byte, 4), done: make(chan error, 1)}
	p, err := j.startVerb(ctx, "lock-hold", []string{
		"--warehouse", warehouse, "--table", table,
		"--snapshot-id", strconv.FormatInt(snapshotID, 10), "--snapshot-file", f,
	}, &h.stderr)
	if err != nil {
		return nil, err
	}
	cmd, stdout := p.cmd, p.stdout
	h.cmd, h.cancel, h.stdin = p.cmd, p.cancel, p.stdin
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			h.lines <- bytes.Clone(sc.Bytes())
		}
		close(h.lines)
		err := cmd.Wait()
		_ = os.RemoveAll(dir)
		if err != nil {
			err = fmt.Errorf("java oracle lock-hold %s snapshot %d: %w\n%s", table, snapshotID, err, tail(h.stderr.String(), 4000))
		}
		h.done <- err
	}()
	return h, nil
}

// next returns the next stdout line, or the process's error when it ended without one.
func (h *LockHolder) next(ctx context.Context) ([]byte, error) {
	select {
	case line, ok := <-h.lines:
		if ok {
			return line, nil
		}
		err := <-h.done
		h.done <- err // for Wait and Close
		if err == nil {
			err = errors.New("java oracle lock-hold: ended early")
		}
		return nil, err
	case <-ctx.Done():
		return nil, fmt.Errorf("lock-hold: %w", ctx.Err())
	}
}

// LockedErr waits until the holder holds the lock and returns whether the snapshot existed at
// its check.
func (h *LockHolder) LockedErr(ctx context.Context) (exists bool, err error) {
	line, err := h.next(ctx)
	if err != nil {
		return false, err
	}
	var v struct {
		Locked *bool `json:"locked"`
		Exists bool  `json:"exists"`
	}
	if err := json.Unmarshal(line, &v); err != nil {
		return false, fmt.Errorf("lock-hold: line %q: %w", line, err)
	}
	if v.Locked == nil || !*v.Locked {
		return false, fmt.Errorf("lock-hold: unexpected line %q", line)
	}
	return v.Exists, nil
}

// Locked is LockedErr failing the test (call it from the test's goroutine).
func (h *LockHolder) Locked() (exists bool) {
	h.tb.Helper()
	exists, err := h.LockedErr(context.Background())
	if err != nil {
		h.tb.Fatalf("interop: %v", err)
	}
	return exists
}

// ProceedErr lets the holder write (if the snapshot did not exist) and release the lock.
func (h *LockHolder) ProceedErr() error {
	if _, err := io.WriteString(h.stdin, "proceed\n"); err != nil {
		return fmt.Errorf("lock-hold proceed: %w", err)
	}
	return nil
}

// Proceed is ProceedErr failing the test.
func (h *LockHolder) Proceed() {
	h.tb.Helper()
	if err := h.ProceedErr(); err != nil {
		h.tb.Fatalf("interop: %v", err)
	}
}

// WaitErr waits for the holder to end and returns whether it wrote the snapshot.
func (h *LockHolder) WaitErr(ctx context.Context) (written bool, err error) {
	line, err := h.next(ctx)
	if err != nil {
		return false, err
	}
	var v struct {
		Written *bool `json:"written"`
	}
	if err := json.Unmarshal(line, &v); err != nil {
		return false, fmt.Errorf("lock-hold: line %q: %w", line, err)
	}
	if v.Written == nil {
		return false, fmt.Errorf("lock-hold: unexpected line %q", line)
	}
	select {
	case err := <-h.done:
		h.done <- err
		if err != nil {
			return *v.Written, err
		}
	case <-ctx.Done():
		return *v.Written, fmt.Errorf("lock-hold exit: %w", ctx.Err())
	}
	return *v.Written, nil
}

// Wait is WaitErr failing the test.
func (h *LockHolder) Wait() (written bool) {
	h.tb.Helper()
	written, err := h.WaitErr(context.Background())
	if err != nil {
		h.tb.Fatalf("interop: %v", err)
	}
	return written
}

// Close kills the process if it still runs (Java's lock row then stays until it expires:
// lock.acquire-timeout after it was taken). Safe to call more than once.
func (h *LockHolder) Close() {
	h.once.Do(func() {
		_ = h.stdin.Close()
		h.cancel()
		for range h.lines { // drain, so the reader goroutine ends
		}
	})
}

// LoopWriter is one Java writer of RunWriters: the write verb in its own JVM with its own
// commit user, writing Rows (rows.jsonl as for Write, without "_user") again and again.
type LoopWriter struct {
	Warehouse, Table string
	// CommitUser is the writer's commit user (required: each writer needs its own).
	CommitUser string
	Rows       []byte
	// Repeat is the number of passes over Rows; with Duration 0 means "until Duration".
	Repeat int
	// Duration keeps the writer passing over Rows until it has elapsed (at least one pass).
	Duration time.Duration
	// Options are dynamic options for the writer (e.g. commit.max-retries).
	Options map[string]string
}

// LoopResult is what one writer committed.
type LoopResult struct {
	User string
	// Identifiers are the commit identifiers of its commits, in order: each one is a snapshot
	// with this commit user and identifier (until expired), whether or not the writer failed
	// later.
	Identifiers []int64
	Err         error
}

// RunWriters runs the writers concurrently, each in its own JVM (so their commits contend for
// the catalog lock as separate Java jobs do), and waits for all of them. The error joins the
// writers' errors.
func (j *JavaOracle) RunWriters(ctx context.Context, writers []LoopWriter) ([]LoopResult, error) {
	res := make([]LoopResult, len(writers))
	var wg sync.WaitGroup
	for i, w := range writers {
		res[i].User = w.CommitUser
		if w.CommitUser == "" {
			res[i].Err = fmt.Errorf("writer %d: no commit user", i)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].Identifiers, res[i].Err = j.runLoopWriter(ctx, w)
		}()
	}
	wg.Wait()
	var errs []error
	for _, r := range res {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return res, errors.Join(errs...)
}

func (j *JavaOracle) runLoopWriter(ctx context.Context, w LoopWriter) ([]int64, error) {
	dir, err := os.MkdirTemp("", "compactd-loop-writer-")
	if err != nil {
		return nil, fmt.Errorf("writer %s: %w", w.CommitUser, err)
	}
	defer os.RemoveAll(dir)
	rows := filepath.Join(dir, "rows.jsonl")
	if err := os.WriteFile(rows, w.Rows, 0o644); err != nil {
		return nil, fmt.Errorf("writer %s: %w", w.CommitUser, err)
	}
	flags := []string{"--warehouse", w.Warehouse, "--table", w.Table, "--rows", rows,
		"--commit-user", w.CommitUser, "--report-commits", "true", "--tmp-dir", dir}
	if w.Repeat > 0 {
		flags = append(flags, "--repeat", strconv.Itoa(w.Repeat))
	}
	if w.Duration > 0 {
		flags = append(flags, "--duration-ms", strconv.FormatInt(w.Duration.Milliseconds(), 10))
	}
	flags = append(flags, WriteOptions{Options: w.Options}.Flags()...)
	out, runErr := j.Run(ctx, nil, "write", flags...)
	var ids []int64
	for _, line := range bytes.Split(out, []byte("\n")) {
		var c struct {
			User       string `json:"user"`
			Identifier *int64 `json:"identifier"`
		}
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &c) != nil || c.Identifier == nil {
			continue
		}
		if c.User != w.CommitUser {
			return ids, fmt.Errorf("writer %s: commit line of user %q", w.CommitUser, c.User)
		}
		ids = append(ids, *c.Identifier)
	}
	if runErr != nil {
		return ids, fmt.Errorf("writer %s: %w", w.CommitUser, runErr)
	}
	return ids, nil
}
