package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
)

// TestPostponedRowsBecomeVisible: Java writers put rows of a bucket=-2
// table into bucket-postpone, where Java's batch read does not see them;
// after compactd's compaction Java reads every row, merged by key in each
// writer's commit order.
func TestPostponedRowsBecomeVisible(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	spec := fixtures.Spec{
		Columns:       []fixtures.Column{{Name: "dt", Type: "STRING NOT NULL"}, {Name: "id", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
		PrimaryKeys:   []string{"dt", "id"},
		PartitionKeys: []string{"dt"},
		Bucket:        -2,
		Options:       map[string]string{"postpone.default-bucket-num": "3"},
	}
	var rows []map[string]any
	want := map[string]interop.Row{}
	for w := range 3 {
		user := fmt.Sprintf("writer-%d", w)
		for c := range 3 {
			for _, dt := range []string{"a", "b"} {
				for i := range 50 {
					id := w*1000 + i
					v := fmt.Sprintf("%s-c%d-%d", user, c, i)
					rows = append(rows, map[string]any{"dt": dt, "id": id, "v": v, "_user": user, "_commit": c})
					want[fmt.Sprintf("%s/%d", dt, id)] = interop.Row{"dt": dt, "id": int64(id), "v": v}
				}
			}
		}
	}
	wh := filepath.Join(t.TempDir(), "warehouse")
	j.Create(wh, "db.t", spec, nil)
	j.Write(wh, "db.t", jsonl(t, rows))
	if got := j.Read(wh, "db.t"); len(got) != 0 {
		t.Fatalf("Java reads %d rows before the postponed compaction, want 0", len(got))
	}
	sum, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Postponed.Snapshot == 0 || sum.Postponed.Files == 0 {
		t.Fatalf("nothing postponed was moved: %+v", sum.Postponed)
	}
	var wantRows []interop.Row
	for _, r := range want {
		wantRows = append(wantRows, r)
	}
	diffRows(t, "Java read after compactd's postponed compaction", canon(t, wantRows), canon(t, j.Read(wh, "db.t")))
	diffRows(t, "compactd scan", canon(t, wantRows), canon(t, compactdRows(t, wh, "db.t")))
	for _, f := range j.Files(wh, "db.t") {
		t.Logf("file %v", f)
	}
}
