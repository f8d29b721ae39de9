package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactd/compactd/fixtures"
)

// TestHarnessWritesAndInspectsDeletionVectorTables pins the oracle verbs the deletion-vector
// proof needs, on both bitmap widths:
//   - write-only writers on a deletion-vector table leave level-0 files only, which Java's
//     batch read skips (the table reads empty) and no file has a vector;
//   - a compacting writer (write --options write-only=false --wait-compaction true) works on a
//     deletion-vector table (its lookup needs an IOManager) and leaves vectors: dvs reports them
//     as DeletionVector.read finds them, equal to the index manifest's cardinality;
//   - Java's read applies them (it equals the naive model) and read --ignore-deletion-vectors
//     returns exactly the hidden rows more;
//   - pypaimon reads what Java reads;
//   - a full compaction leaves no vector and the same rows.
func TestHarnessWritesAndInspectsDeletionVectorTables(t *testing.T) {
	ctx := context.Background()
	j := Java(t)
	py := Python(t)
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	// Keys 0..59; six write-only commits of two users, then six by a compacting writer that
	// rewrites a third of the keys and deletes some.
	var first, second bytes.Buffer
	model := map[int64]int64{}
	line := func(buf *bytes.Buffer, m map[string]any) {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	for c := range 6 {
		for k := int64(c * 10); k < int64(c*10+10); k++ {
			line(&first, map[string]any{"k": k, "v": k, "_user": fmt.Sprintf("w%d", c%2), "_commit": c})
			model[k] = k
		}
	}
	for c := range 6 {
		for k := int64(c); k < 60; k += 3 {
			if k%7 == 0 {
				line(&second, map[string]any{"k": k, "_kind": "-D", "_commit": c})
				delete(model, k)
				continue
			}
			v := 1000*int64(c+1) + k
			line(&second, map[string]any{"k": k, "v": v, "_commit": c})
			model[k] = v
		}
	}
	firstFile := writeTemp(t, dir, "first.jsonl", first.Bytes())
	secondFile := writeTemp(t, dir, "second.jsonl", second.Bytes())
	var want []Row
	for k := range int64(60) {
		if v, ok := model[k]; ok {
			want = append(want, Row{"k": k, "v": v})
		}
	}
	compacting := WriteOptions{Options: map[string]string{"write-only": "false"}, WaitCompaction: true}
	var reqs []BatchRequest
	for _, b64 := range []string{"false", "true"} {
		spec := fixtures.Spec{
			Columns:     []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "BIGINT"}},
			PrimaryKeys: []string{"k"},
			Bucket:      1,
			Options: map[string]string{"deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": b64,
				"write-only": "true"},
		}
		name := "db.dv" + b64
		common := map[string]string{"warehouse": wh, "table": name}
		second := with(common, "rows", secondFile)
		f := compacting.Flags()
		for i := 0; i+1 < len(f); i += 2 {
			second[f[i][2:]] = f[i+1]
		}
		reqs = append(reqs,
			BatchRequest{Verb: "create", Flags: with(common, "spec", writeTemp(t, dir, name+".json", spec.JSON()), "rows", firstFile)},
			BatchRequest{Verb: "dvs", Flags: common},
			BatchRequest{Verb: "read", Flags: common},
			BatchRequest{Verb: "write", Flags: second},
			BatchRequest{Verb: "dvs", Flags: common},
			BatchRequest{Verb: "read", Flags: common},
			BatchRequest{Verb: "read", Flags: with(common, "ignore-deletion-vectors", "true")},
			BatchRequest{Verb: "compact", Flags: common},
			BatchRequest{Verb: "dvs", Flags: common},
			BatchRequest{Verb: "read", Flags: common},
		)
	}
	res, err := j.Batch(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	const per = 10
	for i, b64 := range []string{"false", "true"} {
		t.Run("bitmap64="+b64, func(t *testing.T) {
			r := res[i*per : (i+1)*per]
			for k, x := range r {
				if x.Err != nil {
					t.Fatalf("%s: %v", reqs[i*per+k].Verb, x.Err)
				}
			}
			dvs := func(x BatchResult) []DVFile {
				files, err := ParseDVFiles(joinLines(x.Lines))
				if err != nil {
					t.Fatal(err)
				}
				return files
			}
			rows := func(x BatchResult) []Row {
				rows, err := ParseRows(joinLines(x.Lines))
				if err != nil {
					t.Fatal(err)
				}
				return rows
			}
			// Write-only: six level-0 files per user commit, nothing visible, no vector.
			files := dvs(r[1])
			if len(files) != 6 {
				t.Errorf("write-only writers left %d files, want 6 level-0 files: %+v", len(files), files)
			}
			for _, f := range files {
				if f.Level != 0 || f.DV != nil {
					t.Errorf("write-only writer left %+v, want level 0 without a vector", f)
				}
			}
			if got := rows(r[2]); len(got) != 0 {
				t.Errorf("Java read %d rows of a level-0-only deletion-vector table, want none (batch scans skip level 0)", len(got))
			}
			// The compacting writer left vectors.
			var total int64
			withDV := 0
			for _, f := range dvs(r[4]) {
				if f.DV == nil {
					continue
				}
				withDV++
				total += *f.DV
				if f.Level == 0 {
					t.Errorf("level-0 file with a deletion vector: %+v", f)
				}
				if f.DVMeta == nil || *f.DVMeta != *f.DV {
					t.Errorf("%s: vector holds %d positions, index manifest says %v", f.File, *f.DV, f.DVMeta)
				}
			}
			if withDV == 0 || total == 0 {
				t.Fatalf("the compacting writer left no deletion vector: %+v", dvs(r[4]))
			}
			got := rows(r[5])
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Java read after the compacting writer:\n got %v\nwant %v", got, want)
			}
			if raw := rows(r[6]); int64(len(raw)) != int64(len(got))+total {
				t.Errorf("read ignoring deletion vectors: %d rows, want %d read + %d deleted positions", len(raw), len(got), total)
			}
			pyRows, err := py.ReadErr(ctx, wh, "db.dv"+b64)
			if err != nil {
				t.Fatalf("pypaimon: %v", err)
			}
			if !reflect.DeepEqual(pyRows, got) {
				t.Errorf("pypaimon read:\n got %v\nwant %v", pyRows, got)
			}
			for _, f := range dvs(r[8]) {
				if f.DV != nil {
					t.Errorf("deletion vector after a full compaction: %+v", f)
				}
			}
			if after := rows(r[9]); !reflect.DeepEqual(after, want) {
				t.Errorf("Java read after full compaction:\n got %v\nwant %v", after, want)
			}
		})
	}
}
