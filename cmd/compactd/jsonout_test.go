package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// Every --json output follows one contract (docs/json.md, issue 18):
// lowerCamelCase keys and no nulls (empty lists are []), whatever the
// command. Keys of maps keyed by data (table options, partition values)
// are the data's own.
func TestEveryJSONOutputFollowsTheContract(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bin := compactdBinary(t)
	wh := filepath.Join(dir, "wh")
	fields := table.RowType{
		{ID: 0, Name: "dt", Type: table.DataType{Root: table.TypeVarChar, Length: 1 << 31 / 2}},
		{ID: 1, Name: "id", Type: table.DataType{Root: table.TypeBigInt}},
		{ID: 2, Name: "v", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
	}
	s, err := table.NewTableSchema(0, fields, 2, []string{"dt"}, []string{"dt", "id"},
		map[string]string{"bucket": "2", "write-only": "true", "partition.timestamp-formatter": "yyyyMMdd"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := write.CreateTable(ctx, fileio.NewLocal(), wh, "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 6 {
		w, err := write.NewWriter(ctx, tbl, "test")
		if err != nil {
			t.Fatal(err)
		}
		for k := range 20 {
			if err := w.Write(table.RowKindInsert, table.Row{[]string{"20200101", "20991231"}[k%2], int64(k), int64(c)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runs := [][]string{
		{"version", "--json"},
		{"inspect", "--json", wh, "db.t"},
		{"doctor", "--json", wh, "db.t"},
		{"plan", "--json", wh, "db.t"},
		{"compact", "--dry-run", "--json", wh, "db.t"},
		{"expire", "--dry-run", "--json", wh, "db.t"},
		{"orphan", "--dry-run", "--json", wh, "db.t"},
		{"partition", "expire", "--dry-run", "--json", "--expiration-time", "30d", wh, "db.t"},
		{"rescale", "--dry-run", "--json", "--bucket-num", "2", wh, "db.t"},
		{"compact", "--json", wh, "db.t"},
		{"tag", "create", wh, "db.t", "t1"},
		{"tag", "list", "--json", wh, "db.t"},
		{"expire", "--json", "--time-retained", "1ms", wh, "db.t"},
	}
	key := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	for _, args := range runs {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("compactd %v: %v", args, err)
		}
		if !slicesContain(args, "--json") {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<24)
		docs := 0
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			docs++
			if args[0] == "inspect" { // indented: one document
				line = string(out)
			}
			var v any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("compactd %v: not JSON: %v\n%s", args, err, out)
			}
			walkJSON(t, args, "", v, key)
			if args[0] == "inspect" {
				break
			}
		}
		if docs == 0 {
			t.Errorf("compactd %v printed no JSON", args)
		}
	}
}

// dataKeyed are the fields whose object keys are data, not contract keys.
var dataKeyed = map[string]bool{"options": true}

func walkJSON(t *testing.T, args []string, path string, v any, key *regexp.Regexp) {
	switch x := v.(type) {
	case nil:
		t.Errorf("compactd %v: %s is null", args, path)
	case map[string]any:
		for k, e := range x {
			if !dataKeyed[lastKey(path)] && !key.MatchString(k) {
				t.Errorf("compactd %v: key %s.%s is not lowerCamelCase", args, path, k)
			}
			walkJSON(t, args, path+"."+k, e, key)
		}
	case []any:
		for _, e := range x {
			walkJSON(t, args, path+"[]", e, key)
		}
	}
}

func lastKey(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[i+1:]
	}
	return path
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
