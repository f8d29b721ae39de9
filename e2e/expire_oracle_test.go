package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/maint"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// orphanReq asks Paimon's LocalOrphanFilesClean (dry run) for the files it
// would delete that were last modified before olderThan (zero: any age).
func orphanReq(wh, tbl string, olderThan time.Time) interop.BatchRequest {
	f := flags(wh, tbl)
	if !olderThan.IsZero() {
		f["older-than-ms"] = strconv.FormatInt(olderThan.UnixMilli(), 10)
	}
	return interop.BatchRequest{Verb: "orphans", Flags: f}
}

func pathsOf(t *testing.T, what string, r interop.BatchResult) []string {
	t.Helper()
	var rows []string
	if r.Err != nil {
		t.Fatalf("%s: %v", what, r.Err)
	}
	for _, row := range rowsOf(t, r) {
		p, _ := row["path"].(string)
		rows = append(rows, p)
	}
	slices.Sort(rows)
	return rows
}

func relTo(t *testing.T, root string, paths ...[]string) []string {
	t.Helper()
	var out []string
	for _, ps := range paths {
		for _, p := range ps {
			r, err := filepath.Rel(root, strings.TrimPrefix(p, "file:"))
			if err != nil || strings.HasPrefix(r, "..") {
				t.Fatalf("%s is outside the table %s", p, root)
			}
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// plantCopy copies src under a fresh name of the same kind into its own
// directory with the given modification time: an uncommitted file of a
// writer (young) or the leftover of a crashed one (old).
func plantCopy(t *testing.T, src, prefix, suffix string, mtime time.Time) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(filepath.Dir(src), prefix+uuid.NewString()+"-0"+suffix)
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dst, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestExpireAndOrphanCleanupAgainstJava proves compactd's snapshot expiry
// and orphan cleanup on a table Java wrote and compacted, with a tag
// compactd created on an early snapshot:
//   - compactd's expiry deletes exactly the files Paimon's own expiry deletes
//     on a copy of the same table;
//   - afterwards Java reads every retained snapshot and the tag (time
//     travel) with the rows it read before, so no needed file is missing;
//   - with planted orphans (old copies of a data file and a manifest) and
//     uncommitted files of a live writer (young copies), compactd's dry run
//     selects exactly what Paimon's orphan detection selects at the same
//     cutoff (so nothing Paimon considers live);
//   - after compactd's cleanup Paimon finds nothing older than the cutoff
//     left to delete, every young uncommitted file is still there, and Java
//     still reads every snapshot and the tag.
//
// It runs on Avro manifests and on ORC ones (manifest.format=orc: the
// manifests expiry reads and orphan cleanup keeps are ORC).
func TestExpireAndOrphanCleanupAgainstJava(t *testing.T) {
	for _, format := range []string{"avro", "orc"} {
		t.Run("manifest.format="+format, func(t *testing.T) {
			expireAndOrphanCleanupAgainstJava(t, map[string]string{"manifest.format": format})
		})
	}
}

func expireAndOrphanCleanupAgainstJava(t *testing.T, options map[string]string) {
	ctx := context.Background()
	j := interop.Java(t)
	wh := t.TempDir()
	const tbl = "db.exp"
	spec := maintSpec()
	spec.Bucket = 2
	spec.Options = options
	var commits [][]string
	for c := 0; c < 6; c++ {
		var rows []string
		for k := 0; k < 4; k++ {
			dt := []string{"2024-01-01", "2024-01-02"}[k%2]
			rows = append(rows, fmt.Sprintf("%s:%d:c%d", dt, (c+k)%5, c))
		}
		if c == 4 {
			rows = append(rows, "-2024-01-01:0:x")
		}
		commits = append(commits, rows)
	}
	// Paimon's own full compactions between the writes, so files die in
	// several snapshots whatever the writer's asynchronous compaction does.
	f := flags(wh, tbl)
	f["spec"], f["rows"] = tempFile(t, "spec.json", spec.JSON()), tempFile(t, "rows.jsonl", commitsJSONL("w", commits[:3]...))
	w2 := flags(wh, tbl)
	w2["rows"] = tempFile(t, "rows2.jsonl", commitsJSONL("w2", commits[3:]...))
	res := batch(t, j, []interop.BatchRequest{
		{Verb: "create", Flags: f},
		{Verb: "compact", Flags: flags(wh, tbl)},
		{Verb: "write", Flags: w2},
		{Verb: "compact", Flags: flags(wh, tbl)},
	})
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("step %d: %v", i, r.Err)
		}
	}
	tb := openLocal(t, wh, tbl)
	ids, err := tb.SnapshotIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 6 {
		t.Fatalf("only %d snapshots", len(ids))
	}
	if !hasCompaction(ctx, t, tb, ids) {
		t.Fatal("no COMPACT snapshot: expiry would have no data files to delete")
	}
	if _, err := maint.CreateTag(ctx, tb, "early", maint.CreateTagOptions{Snapshot: 2}); err != nil {
		t.Fatal(err)
	}

	// Retain the last two snapshots (min = max = 2, time-retained 0);
	// everything else expires, and the tag keeps snapshot 2's files.
	const retainMax = 2
	reads := func(ids []int64) []interop.BatchRequest {
		var reqs []interop.BatchRequest
		for _, id := range ids {
			reqs = append(reqs, readReq(wh, tbl, "snapshot", strconv.FormatInt(id, 10)))
		}
		return append(reqs, readReq(wh, tbl, "tag", "early"))
	}
	retained := ids[len(ids)-retainMax:]
	reqs := append(reads(retained), interop.BatchRequest{Verb: "expire", Flags: map[string]string{
		"warehouse": wh, "table": tbl, "retain-min": strconv.Itoa(retainMax), "retain-max": strconv.Itoa(retainMax), "time-retained-ms": "0",
	}})
	res = batch(t, j, reqs)
	before := make([][]string, len(retained)+1)
	for i := range before {
		before[i] = okRows(t, "read "+reqs[i].Flags["snapshot"]+reqs[i].Flags["tag"], res[i])
	}
	javaExpired := pathsOf(t, "Java expire", res[len(res)-1])

	eo := expire.DefaultOptions()
	eo.RetainMin, eo.RetainMax, eo.TimeRetained = retainMax, retainMax, 0
	rep, err := expire.Run(ctx, reach.TableSource(tb), expire.RunOptions{Options: eo, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var snapFiles []string
	for _, id := range rep.Snapshots {
		snapFiles = append(snapFiles, tb.Paths().SnapshotPath(id))
	}
	got := relTo(t, tb.Path(), snapFiles, rep.DataFiles, rep.Manifests, rep.ManifestLists, rep.IndexFiles, rep.IndexManifests, rep.Statistics)
	if !slices.Equal(got, javaExpired) {
		t.Fatalf("compactd expired\n%v\nPaimon expires\n%v", got, javaExpired)
	}
	if len(rep.DataFiles) == 0 {
		t.Fatal("expiry deleted no data file; the test proves little")
	}
	if left, _ := tb.SnapshotIDs(ctx); !slices.Equal(left, retained) {
		t.Fatalf("snapshots left %v, want %v", left, retained)
	}

	// Plant orphans: old leftovers and young uncommitted files.
	fs, err := tb.FileSet(ctx, mustLatest(ctx, t, tb))
	if err != nil {
		t.Fatal(err)
	}
	dataPath, err := tb.DataFilePath(&fs.Buckets()[0].Files[0])
	if err != nil {
		t.Fatal(err)
	}
	manifestPath := tb.Paths().ManifestPath(fs.Manifests[0].FileName)
	now := time.Now()
	old := now.Add(-48 * time.Hour)
	oldFiles := []string{
		plantCopy(t, dataPath, "data-", filepath.Ext(dataPath), old),
		plantCopy(t, manifestPath, "manifest-", "", old),
	}
	youngFiles := []string{
		plantCopy(t, dataPath, "data-", filepath.Ext(dataPath), now),
		plantCopy(t, dataPath, "data-", filepath.Ext(dataPath), now.Add(-50*time.Minute)),
		plantCopy(t, manifestPath, "manifest-", "", now),
	}
	cutoff := now.Add(-time.Hour)

	reqs = append(reads(retained), orphanReq(wh, tbl, time.Time{}), orphanReq(wh, tbl, cutoff))
	res = batch(t, j, reqs)
	for i := range before {
		diffRows(t, "Java reads "+reqs[i].Flags["snapshot"]+reqs[i].Flags["tag"]+" after compactd's expiry", before[i], okRows(t, "read", res[i]))
	}
	javaOrphans := pathsOf(t, "Java orphans", res[len(res)-1])
	if want := relTo(t, tb.Path(), oldFiles); !slices.Equal(javaOrphans, want) {
		t.Fatalf("Paimon's orphans %v, want the planted old files %v", javaOrphans, want)
	}

	dryRun := func(o orphan.RunOptions) []string {
		t.Helper()
		o.DryRun = true
		dry, err := orphan.RunTable(ctx, tb, o)
		if err != nil {
			t.Fatal(err)
		}
		var ps []string
		for _, f := range dry.Files {
			ps = append(ps, f.Path)
		}
		return relTo(t, tb.Path(), ps)
	}
	// Without an age limit (forced) both select the young files too:
	// compactd's notion of "unreferenced" is exactly Paimon's.
	javaAnyAge := pathsOf(t, "Java orphans", res[len(res)-2])
	if want := relTo(t, tb.Path(), oldFiles, youngFiles); !slices.Equal(javaAnyAge, want) {
		t.Fatalf("Paimon's orphans of any age %v, want every planted file %v", javaAnyAge, want)
	}
	if got := dryRun(orphan.RunOptions{Now: time.Now().Add(time.Second), OlderThan: time.Millisecond, Force: true}); !slices.Equal(got, javaAnyAge) {
		t.Fatalf("compactd's forced dry run selects %v, Paimon %v", got, javaAnyAge)
	}
	o := orphan.RunOptions{Now: now, OlderThan: time.Hour}
	if got := dryRun(o); !slices.Equal(got, javaOrphans) {
		t.Fatalf("compactd's dry run selects %v, Paimon %v", got, javaOrphans)
	}
	o.DryRun = false
	if _, err := orphan.RunTable(ctx, tb, o); err != nil {
		t.Fatal(err)
	}
	for _, p := range youngFiles {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("an uncommitted young file was deleted: %v", err)
		}
	}
	for _, p := range oldFiles {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("old orphan %s survived: %v", p, err)
		}
	}

	reqs = append(reads(retained), orphanReq(wh, tbl, cutoff), orphanReq(wh, tbl, time.Time{}))
	res = batch(t, j, reqs)
	for i := range before {
		diffRows(t, "Java reads "+reqs[i].Flags["snapshot"]+reqs[i].Flags["tag"]+" after compactd's orphan cleanup", before[i], okRows(t, "read", res[i]))
	}
	if left := pathsOf(t, "Java orphans", res[len(res)-2]); len(left) != 0 {
		t.Fatalf("after compactd's cleanup Paimon still finds orphans older than the cutoff: %v", left)
	}
	// At any age, Paimon's only orphans are the young uncommitted files
	// compactd deliberately kept.
	if anyAge, want := pathsOf(t, "Java orphans", res[len(res)-1]), relTo(t, tb.Path(), youngFiles); !slices.Equal(anyAge, want) {
		t.Fatalf("Paimon's orphans of any age %v, want exactly the young files %v", anyAge, want)
	}
}

func mustLatest(ctx context.Context, t *testing.T, tb *table.Table) *table.Snapshot {
	t.Helper()
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hasCompaction(ctx context.Context, t *testing.T, tb *table.Table, ids []int64) bool {
	t.Helper()
	for _, id := range ids {
		s, err := tb.Snapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.CommitKind == table.CommitCompact {
			return true
		}
	}
	return false
}
