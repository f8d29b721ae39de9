package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// The human form of inspect reads cleanly (issue 18): no trailing comma
// after the last column, "1 file" not "1 files", no snapshot table header
// without snapshots, commit times with the same (millisecond) precision.
func TestInspectTextIsTidy(t *testing.T) {
	ctx := context.Background()
	wh := filepath.Join(t.TempDir(), "wh")
	oneRowTable(t, wh)
	tb, err := table.Open(ctx, fileio.NewLocal(), wh, "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := buildInspect(ctx, tb)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printInspect(&out, rep)
	text := out.String()
	if !strings.Contains(text, "schema 0: id BIGINT NOT NULL, v BIGINT\n") {
		t.Errorf("schema line:\n%s", text)
	}
	if !strings.Contains(text, "bucket 0: 1 file, ") || !strings.Contains(text, ", 1 sorted run") || strings.Contains(text, "1 files") {
		t.Errorf("bucket line:\n%s", text)
	}
	if !regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z `).MatchString(text) {
		t.Errorf("commit time is not to the millisecond:\n%s", text)
	}
	rep.Snapshots = nil
	out.Reset()
	printInspect(&out, rep)
	if strings.Contains(out.String(), "COMMIT USER") || !strings.Contains(out.String(), "Snapshots (0)\n  (none") {
		t.Errorf("empty snapshot list:\n%s", out.String())
	}
}
