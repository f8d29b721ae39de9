package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
)

// Without a terminal, progress is plain lines: the first job, then at most
// one line per progressEvery, and the last job; no terminal escapes or
// carriage returns.
func TestProgressIsPlainLinesWithoutATerminal(t *testing.T) {
	var out bytes.Buffer
	p := newJobProgress(&out, false, "db.t")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return clock }
	r := &compact.JobResult{RowsIn: 1500, BytesIn: 3 << 20, BytesOut: 1 << 20}
	for done := 1; done <= 10; done++ {
		p.update(done, 10, r)
		clock = clock.Add(3 * time.Second)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// Jobs at 0 s, 12 s (4th), 24 s (8th), and the 10th.
	if len(lines) != 4 || strings.ContainsAny(out.String(), "\r\x1b") {
		t.Fatalf("progress lines:\n%q", out.String())
	}
	if want := "compact db.t: 10/10 buckets, 15.0k rows, 30.0 MiB in, 10.0 MiB out"; lines[3] != want {
		t.Fatalf("last line %q, want %q", lines[3], want)
	}
}

// On a terminal it is a bar that ends with a newline.
func TestProgressBarOnATerminal(t *testing.T) {
	var out bytes.Buffer
	p := newJobProgress(&out, true, "db.t")
	r := &compact.JobResult{RowsIn: 10, BytesIn: 100}
	for done := 1; done <= 3; done++ {
		p.update(done, 3, r)
	}
	s := out.String()
	if !strings.Contains(s, "3/3") || !strings.Contains(s, "compacting db.t") || !strings.HasSuffix(s, "\n") {
		t.Fatalf("bar output %q", s)
	}
}

// Deletions are counted from the table's storage operations: only
// successful deletes, a line at the first and then every progressEvery.
func TestDeleteProgressCountsSuccessfulDeletes(t *testing.T) {
	var out bytes.Buffer
	p := newDeleteProgress(&out, false, "expire db.t")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return clock }
	for i := range 30 {
		p.observe(fileio.OpDelete, nil)
		p.observe(fileio.OpList, nil)
		p.observe(fileio.OpDelete, errors.New("denied"))
		if i == 14 {
			clock = clock.Add(progressEvery)
		}
	}
	p.done()
	if got, want := out.String(), "expire db.t: 1 file deleted so far\nexpire db.t: 16 files deleted so far\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if p.deleted != 30 {
		t.Fatalf("counted %d deletes, want 30", p.deleted)
	}
}

// The expire command shows its deletions on stderr (not a terminal here:
// plain lines), and its report on stdout.
func TestExpireShowsDeletionProgress(t *testing.T) {
	bin := compactdBinary(t)
	wh := filepath.Join(t.TempDir(), "wh")
	oneRowTable(t, wh)
	for range 3 {
		oneMoreCommit(t, wh)
	}
	cmd := exec.Command(bin, "expire", wh, "db.t", "--retain-min", "1", "--retain-max", "1", "--time-retained", "1ms")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("expire: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "expire db.t: 1 file deleted so far") || !strings.Contains(stdout.String(), "expired 3 snapshots") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}
