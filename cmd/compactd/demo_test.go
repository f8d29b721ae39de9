package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's first command (make demo = scripts/demo.sh) works on a
// fresh warehouse and, piped, prints plain text without terminal escapes
// (issue 18: it printed ESC[1m into logs).
func TestDemoRunsAndPrintsPlainTextWhenPiped(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", "bin/compactd", "./cmd/compactd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	demo := exec.Command("bash", "scripts/demo.sh", filepath.Join(t.TempDir(), "wh"))
	demo.Dir = root
	out, err := demo.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	if strings.ContainsRune(string(out), '\x1b') {
		t.Errorf("piped demo output holds terminal escapes:\n%q", out)
	}
	if !strings.Contains(string(out), "rows before and after compaction are identical") {
		t.Errorf("demo output:\n%s", out)
	}
}
