package main

import (
	"cmp"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// `compactd plan` explains lookup compactions (issue #14): a first-row
// table with a compacted top level and new level-0 files looks the level-0
// keys up in the top level's file, and says so in text and JSON; the same
// files in a deduplicate table plan no lookup.
func TestPlanExplainsLookup(t *testing.T) {
	ctx := context.Background()
	bin := compactdBinary(t)
	for _, c := range []struct {
		engine, changelog string
		want              *lookupView
	}{
		{"first-row", "", &lookupView{Levels: []int{5}, Files: 1, FirstRow: true}},
		{"deduplicate", "", nil},
		{"deduplicate", "lookup", &lookupView{Levels: []int{5}, Files: 1}},
	} {
		t.Run(c.engine+"/"+c.changelog, func(t *testing.T) {
			wh := filepath.Join(t.TempDir(), "wh")
			fields := table.RowType{
				{ID: 0, Name: "id", Type: table.DataType{Root: table.TypeBigInt}},
				{ID: 1, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
			}
			s, err := table.NewTableSchema(0, fields, 1, nil, []string{"id"},
				map[string]string{"bucket": "1", "merge-engine": c.engine, "write-only": "true", "changelog-producer": cmp.Or(c.changelog, "none")}, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := write.CreateTable(ctx, fileio.NewLocal(), wh, "db", "t", s)
			if err != nil {
				t.Fatal(err)
			}
			commit := func(from, to int64) {
				w, err := write.NewWriter(ctx, tbl, "test")
				if err != nil {
					t.Fatal(err)
				}
				for k := from; k < to; k++ {
					if err := w.Write(table.RowKindInsert, table.Row{k, k}); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := w.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			commit(0, 50000)
			if _, err := compact.Run(ctx, tbl, compact.Options{Full: true}); err != nil {
				t.Fatal(err)
			}
			for i := int64(0); i < 5; i++ {
				commit(i*10, i*10+5)
			}
			out, err := exec.Command(bin, "plan", "--json", wh, "db.t").Output()
			if err != nil {
				t.Fatalf("plan --json: %v", err)
			}
			var got struct{ Jobs []jobView }
			if err := json.Unmarshal(out, &got); err != nil || len(got.Jobs) != 1 {
				t.Fatalf("plan --json = %s (%v), want one job", out, err)
			}
			// compact --dry-run --json returns the same plan (issue 18: it
			// returned all zeros).
			dry, err := exec.Command(bin, "compact", "--dry-run", "--json", wh, "db.t").Output()
			if err != nil {
				t.Fatalf("compact --dry-run --json: %v", err)
			}
			var dryGot struct {
				Jobs   []jobView
				DryRun bool
			}
			if err := json.Unmarshal(dry, &dryGot); err != nil || !dryGot.DryRun || !reflect.DeepEqual(dryGot.Jobs, got.Jobs) {
				t.Fatalf("compact --dry-run --json = %s (%v), want the plan's jobs %+v", dry, err, got.Jobs)
			}
			j := got.Jobs[0]
			if j.Lookup != nil {
				if j.Lookup.Bytes <= 0 {
					t.Errorf("lookup covers %d bytes", j.Lookup.Bytes)
				}
				j.Lookup.Bytes = 0
			}
			if j.OutputLevel >= 5 || !reflect.DeepEqual(j.Lookup, c.want) {
				t.Fatalf("job to level %d explains lookup %+v, want %+v", j.OutputLevel, j.Lookup, c.want)
			}
			if j.Changelog != c.changelog {
				t.Fatalf("job's changelog %q, want %q", j.Changelog, c.changelog)
			}
			text, err := exec.Command(bin, "plan", wh, "db.t").Output()
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			if has := strings.Contains(string(text), "lookup: level-0 keys are looked up in 1 files"); has != (c.want != nil) {
				t.Fatalf("plan text mentions the lookup: %v, want %v:\n%s", has, c.want != nil, text)
			}
			if has := strings.Contains(string(text), "writes changelog files"); has != (c.changelog != "") {
				t.Fatalf("plan text mentions the changelog: %v, want %v:\n%s", has, c.changelog != "", text)
			}
		})
	}
}
