package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// Exit statuses: 0 ok, 1 failure, 2 a command line compactd cannot run
// (with the usage of the command).
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bin := compactdBinary(t)
	wh := filepath.Join(dir, "wh")
	oneRowTable(t, wh)
	for _, c := range []struct {
		args  []string
		code  int
		usage string
		says  string
	}{
		{[]string{"scan", wh, "db.t"}, 0, "", ""},
		{[]string{"scan", "--snapshot", "1", wh, "db.t"}, 0, "", ""},
		{[]string{"scan", "--snapshot", "0", wh, "db.t"}, 2, "compactd scan", "snapshot ids start at 1"},
		{[]string{"scan", "--snapshot", "-5", wh, "db.t"}, 2, "compactd scan", "snapshot ids start at 1"},
		{[]string{"scan", "--snapshot", "99", wh, "db.t"}, 1, "", "has no snapshot 99: it has 1 snapshots, 1 to 1"},
		{[]string{"scan", filepath.Join(dir, "nowhere"), "db.t"}, 1, "", "no such directory"},
		{[]string{"scan", wh, "db.nope"}, 1, "", "not found"},
		// doctor: 0 with warnings (never compacted), 1 once a finding is an error.
		{[]string{"doctor", wh, "db.t"}, 0, "", "WARN  compaction"},
		{[]string{"version"}, 0, "", ""},
		{[]string{"compact", dir}, 2, "compactd compact <warehouse> <db.table>", "accepts 2 arg(s)"},
		{[]string{"compact", "--no-such-flag", dir, "db.t"}, 2, "compactd compact <warehouse> <db.table>", "unknown flag"},
		{[]string{"no-such-command"}, 2, "Available Commands", "unknown command"},
		{[]string{"tag", "create"}, 2, "Usage:", ""},
		{[]string{"compact", filepath.Join(dir, "missing"), "db.t"}, 1, "", "no such directory"},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code {
			t.Errorf("compactd %v: exit %d, want %d\n%s", c.args, code, c.code, out)
		}
		if c.usage != "" && !strings.Contains(string(out), c.usage) {
			t.Errorf("compactd %v: output lacks the usage %q:\n%s", c.args, c.usage, out)
		}
		if !strings.Contains(string(out), c.says) {
			t.Errorf("compactd %v: output lacks %q:\n%s", c.args, c.says, out)
		}
		if c.usage == "" && strings.Contains(string(out), "Usage:") {
			t.Errorf("compactd %v: a failure that is not a usage error prints the usage:\n%s", c.args, out)
		}
	}
}

// The doctor exits 1 once a finding is an error (a file the latest snapshot
// needs is gone), after printing every finding.
func TestDoctorExitsOneOnAnError(t *testing.T) {
	bin := compactdBinary(t)
	wh := filepath.Join(t.TempDir(), "wh")
	oneRowTable(t, wh)
	files, _ := filepath.Glob(filepath.Join(wh, "db.db", "t", "bucket-0", "data-*"))
	if len(files) != 1 {
		t.Fatalf("%d data files", len(files))
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "doctor", wh, "db.t").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "ERROR files: 1 of the 1 data files") || !strings.Contains(string(out), "-> ") {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
}

// oneMoreCommit commits one more row to db.t in wh.
func oneMoreCommit(t *testing.T, wh string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := table.Open(ctx, fileio.NewLocal(), wh, "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	w, err := write.NewWriter(ctx, tbl, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(table.RowKindInsert, table.Row{int64(2), int64(2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// oneRowTable creates db.t in wh with one committed row.
func oneRowTable(t *testing.T, wh string) {
	t.Helper()
	ctx := context.Background()
	fields := table.RowType{
		{ID: 0, Name: "id", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
	}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"id"}, map[string]string{"bucket": "1"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := write.CreateTable(ctx, fileio.NewLocal(), wh, "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	w, err := write.NewWriter(ctx, tbl, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(table.RowKindInsert, table.Row{int64(1), int64(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}
