package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Exit statuses: 0 ok, 1 failure, 2 a command line compactd cannot run
// (with the usage of the command).
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "compactd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args  []string
		code  int
		usage string
	}{
		{[]string{"version"}, 0, ""},
		{[]string{"compact", dir}, 2, "compactd compact <warehouse> <db.table>"},
		{[]string{"compact", "--no-such-flag", dir, "db.t"}, 2, "compactd compact <warehouse> <db.table>"},
		{[]string{"no-such-command"}, 2, "Available Commands"},
		{[]string{"tag", "create"}, 2, "Usage:"},
		{[]string{"compact", filepath.Join(dir, "missing"), "db.t"}, 1, ""},
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
		if c.usage == "" && strings.Contains(string(out), "Usage:") {
			t.Errorf("compactd %v: a failure that is not a usage error prints the usage:\n%s", c.args, out)
		}
	}
}
