package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/deletionvector"
	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/maint"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/table/reach"
)

// fileKeys are the primary keys (column k) of a data file's rows by
// position.
func fileKeys(t *testing.T, tb *table.Table, b *table.BucketFiles, e *manifest.Entry) []int64 {
	t.Helper()
	keys, err := readKeys(tb, b, e)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestJavaAndPypaimonReadTheDeletionVectorsCompactdCommits: Java writes a
// two-bucket deletion-vector table (32-bit and deletion-vectors.bitmap64),
// compacts it fully and deletes rows so that its own vectors exist. compactd
// then marks chosen rows deleted through the maintainer (growing Java's
// vectors and adding vectors to files that had none) and commits one
// COMPACT snapshot with both buckets' index changes. Java's read, pypaimon's
// read (32-bit only: pypaimon 2.1.0 refuses 64-bit vectors, Java's own
// included, which the test pins) and compactd's scan return exactly Java's
// earlier rows without the chosen ones; then a Java writer commits and Java compacts on top of
// compactd's index files without error, reading the expected rows.
func TestJavaAndPypaimonReadTheDeletionVectorsCompactdCommits(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	py := interop.Python(t)
	const rows = 4000
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	script := func(name string, lines []map[string]any) string {
		var out []byte
		for _, l := range lines {
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			out = append(append(out, b...), '\n')
		}
		p := filepath.Join(dir, name)
		if err := writeFile(p, out); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var c1, c2, c3 []map[string]any
	for k := range rows {
		c1 = append(c1, map[string]any{"k": k, "v": k})
		if k%50 == 7 { // Java's own deletion vectors
			c2 = append(c2, map[string]any{"k": k, "_kind": "-D"})
		}
	}
	for k := rows; k < rows+1000; k++ { // new keys: files without vectors
		c2 = append(c2, map[string]any{"k": k, "v": k})
	}
	for k := range 40 { // after compactd: updates, some of rows compactd deleted
		c3 = append(c3, map[string]any{"k": k * 3, "v": -k, "_user": "writer-3"})
	}
	f1, f2, f3 := script("c1.jsonl", c1), script("c2.jsonl", c2), script("c3.jsonl", c3)
	names := []string{"db.dv32", "db.dv64"}
	var reqs []interop.BatchRequest
	for i, name := range names {
		spec := fixtures.Spec{
			Columns:     []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "BIGINT"}},
			PrimaryKeys: []string{"k"},
			Bucket:      2,
			Options: map[string]string{"deletion-vectors.enabled": "true",
				"deletion-vectors.bitmap64": fmt.Sprint(i == 1), "write-only": "true"},
		}
		specFile := filepath.Join(dir, name+".spec.json")
		if err := writeFile(specFile, spec.JSON()); err != nil {
			t.Fatal(err)
		}
		cf, w1, w2 := flags(wh, name), flags(wh, name), flags(wh, name)
		cf["spec"], w1["rows"], w2["rows"] = specFile, f1, f2
		reqs = append(reqs,
			interop.BatchRequest{Verb: "create", Flags: cf},
			interop.BatchRequest{Verb: "write", Flags: w1},
			interop.BatchRequest{Verb: "compact", Flags: flags(wh, name)},
			interop.BatchRequest{Verb: "write", Flags: w2},
			interop.BatchRequest{Verb: "compact", Flags: withOpt(flags(wh, name), "full", "false")},
			interop.BatchRequest{Verb: "read", Flags: flags(wh, name)})
	}
	res := batch(t, j, reqs)
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("Java step %d: %v", i, r.Err)
		}
	}
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			javaBefore := rowsOf(t, res[6*i+5])
			if len(javaBefore) != rows-rows/50+1000 {
				t.Fatalf("Java reads %d rows before", len(javaBefore))
			}
			// pypaimon 2.1.0 reads 32-bit vectors only: it refuses Java's
			// own 64-bit table ("Invalid magic number"), so for bitmap64 the
			// check is that it refuses compactd's alike.
			b64 := i == 1
			pyBefore, pyErr := py.ReadErr(ctx, wh, name)
			if b64 != (pyErr != nil) {
				t.Fatalf("pypaimon read of Java's table: %d rows, %v", len(pyBefore), pyErr)
			}
			tb := openLocal(t, wh, name)
			s, err := tb.LatestSnapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := tb.FileSet(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			deleted := map[int64]bool{}
			javaVectors, grown, fresh := 0, 0, 0
			var changes []table.IndexChange
			for _, b := range fs.Buckets() {
				m, err := deletionvector.Load(ctx, tb, b)
				if err != nil {
					t.Fatal(err)
				}
				javaVectors += len(m.Cardinalities())
				for fi := range b.Files {
					e := &b.Files[fi]
					had := m.DeletionVectorOf(e.File.FileName)
					for p, k := range fileKeys(t, tb, b, e) {
						if had.IsDeleted(int64(p)) || k%3 != 0 && k%11 != 5 {
							continue
						}
						if err := m.NotifyNewDeletion(e.File.FileName, int64(p)); err != nil {
							t.Fatal(err)
						}
						deleted[k] = true
					}
					if had != nil {
						grown++
					} else {
						fresh++
					}
				}
				ch, _, err := m.Write(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if ch == nil {
					t.Fatalf("bucket %d: nothing to write", b.Bucket)
				}
				changes = append(changes, *ch)
			}
			if javaVectors == 0 || grown == 0 || fresh == 0 || len(changes) != 2 || len(deleted) == 0 {
				t.Fatalf("Java wrote %d vectors; %d grown, %d new; %d changes; %d rows deleted", javaVectors, grown, fresh, len(changes), len(deleted))
			}
			t.Logf("%d of Java's vectors grown, %d new; %d rows deleted", grown, fresh, len(deleted))
			if _, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd-test",
				CommitIdentifier: table.BatchCommitIdentifier, IndexChanges: changes}); err != nil {
				t.Fatal(err)
			}
			var want []interop.Row
			for _, r := range javaBefore {
				if !deleted[r["k"].(int64)] {
					want = append(want, r)
				}
			}
			got, err := py.ReadErr(ctx, wh, name)
			switch {
			case b64 && (err == nil || !strings.Contains(err.Error(), "Invalid magic number")):
				t.Fatalf("pypaimon read compactd's 64-bit vectors unlike Java's: %v", err)
			case !b64 && err != nil:
				t.Fatalf("pypaimon read: %v", err)
			case !b64:
				diffRows(t, "pypaimon after compactd's deletions", canon(t, want), canon(t, got))
			}
			res := batch(t, j, []interop.BatchRequest{{Verb: "read", Flags: flags(wh, name)}})
			diffRows(t, "Java after compactd's deletions", canon(t, want), canon(t, rowsOf(t, res[0])))
			diffRows(t, "compactd after its deletions", canon(t, want), canon(t, compactdRows(t, wh, name)))

			// Java writes and compacts on top of compactd's index files.
			w3 := flags(wh, name)
			w3["rows"] = f3
			res = batch(t, j, []interop.BatchRequest{
				{Verb: "write", Flags: w3},
				{Verb: "compact", Flags: flags(wh, name)},
				{Verb: "read", Flags: flags(wh, name)}})
			for i, r := range res {
				if r.Err != nil {
					t.Fatalf("Java on top, step %d: %v", i, r.Err)
				}
			}
			model := map[int64]interop.Row{}
			for _, r := range want {
				model[r["k"].(int64)] = r
			}
			for _, l := range c3 {
				k := int64(l["k"].(int))
				model[k] = interop.Row{"k": k, "v": int64(l["v"].(int))}
			}
			var final []interop.Row
			for _, r := range model {
				final = append(final, r)
			}
			diffRows(t, "Java after its compaction on top of compactd's", canon(t, final), canon(t, rowsOf(t, res[2])))
			if slices.Equal(canon(t, final), canon(t, want)) {
				t.Fatal("the last commit changed nothing; the check proves nothing")
			}
		})
	}
}

// markRows is one compactd job per selected bucket: it marks deleted every
// row (of every file) whose key del selects, and returns the buckets'
// index changes and the keys deleted.
func markRows(t *testing.T, tb *table.Table, buckets func(int32) bool, del func(int64) bool) ([]table.IndexChange, map[int64]bool) {
	t.Helper()
	r, deleted := markRowsErr(tb, buckets, del)
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.changes, deleted
}

// TestExpireAndOrphanKeepTheDeletionVectorsRetainedSnapshotsAndTagsUse:
// on a Java-written deletion-vector table, compactd commits vectors in
// three snapshots (all buckets, tagged; then bucket 0; then bucket 1).
// Expiring all but the latest snapshot, compactd deletes exactly the files
// Paimon's expiry deletes (the index files only expired snapshots used),
// and Java still reads the latest snapshot and the tag as before. Orphan
// cleanup selects exactly what Paimon's selects (an old planted index file
// and index manifest, never a live one), and after it every index file the
// latest snapshot and the tag reference exists and Java reads both alike.
func TestExpireAndOrphanKeepTheDeletionVectorsRetainedSnapshotsAndTagsUse(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	wh := t.TempDir()
	const name = "db.dvexp"
	var c1, c2 []string
	for k := range 1000 {
		c1 = append(c1, fmt.Sprintf(`{"k":%d,"v":%d}`, k, k))
		if k%40 == 3 {
			c2 = append(c2, fmt.Sprintf(`{"k":%d,"_kind":"-D","_user":"w2"}`, k))
		}
	}
	spec := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "BIGINT"}},
		PrimaryKeys: []string{"k"},
		Bucket:      2,
		Options:     map[string]string{"deletion-vectors.enabled": "true", "write-only": "true"},
	}
	cf, w2 := flags(wh, name), flags(wh, name)
	cf["spec"] = tempFile(t, "spec.json", spec.JSON())
	cf["rows"] = tempFile(t, "c1.jsonl", []byte(strings.Join(c1, "\n")+"\n"))
	w2["rows"] = tempFile(t, "c2.jsonl", []byte(strings.Join(c2, "\n")+"\n"))
	res := batch(t, j, []interop.BatchRequest{
		{Verb: "create", Flags: cf},
		{Verb: "compact", Flags: flags(wh, name)},
		{Verb: "write", Flags: w2},
		{Verb: "compact", Flags: withOpt(flags(wh, name), "full", "false")},
	})
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("Java step %d: %v", i, r.Err)
		}
	}
	tb := openLocal(t, wh, name)
	commit := func(changes []table.IndexChange) int64 {
		t.Helper()
		if len(changes) == 0 {
			t.Fatal("no index change")
		}
		r, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd-test",
			CommitIdentifier: table.BatchCommitIdentifier, IndexChanges: changes})
		if err != nil {
			t.Fatal(err)
		}
		return r.Snapshot.ID
	}
	all, _ := markRows(t, tb, func(int32) bool { return true }, func(k int64) bool { return k%5 == 0 })
	if len(all) != 2 {
		t.Fatalf("%d buckets changed", len(all))
	}
	tagged := commit(all)
	if _, err := maint.CreateTag(ctx, tb, "mid", maint.CreateTagOptions{Snapshot: tagged}); err != nil {
		t.Fatal(err)
	}
	b0, _ := markRows(t, tb, func(b int32) bool { return b == 0 }, func(k int64) bool { return k%7 == 1 })
	commit(b0)
	b1, _ := markRows(t, tb, func(b int32) bool { return b == 1 }, func(k int64) bool { return k%7 == 1 })
	latest := commit(b1)

	reads := []interop.BatchRequest{readReq(wh, name, "snapshot", fmt.Sprint(latest)), readReq(wh, name, "tag", "mid")}
	res = batch(t, j, append(slices.Clone(reads), interop.BatchRequest{Verb: "expire", Flags: map[string]string{
		"warehouse": wh, "table": name, "retain-min": "1", "retain-max": "1", "time-retained-ms": "0"}}))
	before := [][]string{okRows(t, "read latest", res[0]), okRows(t, "read tag", res[1])}
	if slices.Equal(before[0], before[1]) {
		t.Fatal("the tag reads as the latest snapshot; the test proves little")
	}
	javaExpired := pathsOf(t, "Java expire", res[2])

	eo := expire.DefaultOptions()
	eo.RetainMin, eo.RetainMax, eo.TimeRetained = 1, 1, 0
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
	if len(rep.IndexFiles) == 0 || len(rep.IndexManifests) == 0 {
		t.Fatalf("expiry deleted %d index files, %d index manifests; the test proves little", len(rep.IndexFiles), len(rep.IndexManifests))
	}

	// Plant an old index file and index manifest nothing references.
	ref := liveIndexFiles(t, tb, latest, "mid")
	var anyIndex, anyIndexManifest string
	for p := range ref {
		if strings.Contains(p, "/index/") {
			anyIndex = p
		} else {
			anyIndexManifest = p
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	planted := []string{plantCopy(t, anyIndex, "index-", "", old), plantCopy(t, anyIndexManifest, "index-manifest-", "", old)}
	cutoff := time.Now().Add(-time.Hour)
	res = batch(t, j, append(slices.Clone(reads), orphanReq(wh, name, cutoff)))
	for i := range before {
		diffRows(t, "Java reads "+reads[i].Flags["snapshot"]+reads[i].Flags["tag"]+" after compactd's expiry", before[i], okRows(t, "read", res[i]))
	}
	javaOrphans := pathsOf(t, "Java orphans", res[2])
	if want := relTo(t, tb.Path(), planted); !slices.Equal(javaOrphans, want) {
		t.Fatalf("Paimon's orphans %v, want the planted files %v", javaOrphans, want)
	}
	o := orphan.RunOptions{Now: time.Now(), OlderThan: time.Hour}
	o.DryRun = true
	dry, err := orphan.RunTable(ctx, tb, o)
	if err != nil {
		t.Fatal(err)
	}
	var ps []string
	for _, f := range dry.Files {
		ps = append(ps, f.Path)
	}
	if got := relTo(t, tb.Path(), ps); !slices.Equal(got, javaOrphans) {
		t.Fatalf("compactd's orphan dry run selects %v, Paimon %v", got, javaOrphans)
	}
	o.DryRun = false
	if _, err := orphan.RunTable(ctx, tb, o); err != nil {
		t.Fatal(err)
	}
	for p := range ref {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("orphan cleanup deleted a live index file: %v", err)
		}
	}
	for _, p := range planted {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("planted orphan %s left: %v", p, err)
		}
	}
	res = batch(t, j, reads)
	for i := range before {
		diffRows(t, "Java reads after orphan cleanup", before[i], okRows(t, "read", res[i]))
	}
}

// liveIndexFiles are the paths of the index manifests and index files the
// snapshot id and the tag reference.
func liveIndexFiles(t *testing.T, tb *table.Table, id int64, tag string) map[string]bool {
	t.Helper()
	ctx := context.Background()
	s, err := tb.Snapshot(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := tb.Tag(ctx, tag)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, sn := range []*table.Snapshot{s, &tg.Snapshot} {
		if sn.IndexManifest == nil {
			t.Fatalf("snapshot %d has no index manifest", sn.ID)
		}
		out[tb.Paths().ManifestPath(*sn.IndexManifest)] = true
		entries, err := tb.IndexEntries(ctx, sn)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			out[tb.Paths().IndexFilePath(e.IndexFile.FileName)] = true
		}
	}
	return out
}

// TestJavaReadsADVTableCompactdCrashedOnAtAnyStep: compactd's
// deletion-vector job and commit on a Java-written table crash (every
// store operation from the k-th on fails) at each step in turn; Java then
// reads every copy either as before or with exactly the job's rows gone.
func TestJavaReadsADVTableCompactdCrashedOnAtAnyStep(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	wh := t.TempDir()
	const name = "db.dvcrash"
	var c1 []string
	for k := range 600 {
		c1 = append(c1, fmt.Sprintf(`{"k":%d,"v":%d}`, k, k))
	}
	spec := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "BIGINT"}},
		PrimaryKeys: []string{"k"},
		Bucket:      2,
		Options:     map[string]string{"deletion-vectors.enabled": "true", "write-only": "true"},
	}
	cf := flags(wh, name)
	cf["spec"] = tempFile(t, "spec.json", spec.JSON())
	cf["rows"] = tempFile(t, "c1.jsonl", []byte(strings.Join(c1, "\n")+"\n"))
	res := batch(t, j, []interop.BatchRequest{{Verb: "create", Flags: cf}, {Verb: "compact", Flags: flags(wh, name)}, readReq(wh, name)})
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("Java step %d: %v", i, r.Err)
		}
	}
	before := okRows(t, "read", res[2])
	del := func(k int64) bool { return k%4 == 1 }
	var after []string
	for _, r := range rowsOf(t, res[2]) {
		if !del(r["k"].(int64)) {
			after = append(after, canon(t, []interop.Row{r})[0])
		}
	}
	slices.Sort(after)
	run := func(tb *table.Table) error {
		changes, _ := markRowsErr(tb, func(int32) bool { return true }, del)
		if changes.err != nil {
			return changes.err
		}
		_, err := tb.Commit(ctx, table.CommitRequest{Kind: table.CommitCompact, CommitUser: "compactd-test",
			CommitIdentifier: table.BatchCommitIdentifier, IndexChanges: changes.changes})
		return err
	}
	// Count the store operations of a whole run on a copy.
	probe := filepath.Join(t.TempDir(), "probe")
	copyDir(t, wh, probe)
	counter := &expiretest.FailingFS{FileIO: tableFIO()}
	ptb, err := table.Open(ctx, counter, probe, "db", "dvcrash")
	if err != nil {
		t.Fatal(err)
	}
	if err := run(ptb); err != nil {
		t.Fatal(err)
	}
	steps := counter.Ops
	var reqs []interop.BatchRequest
	for k := 1; k <= steps; k++ {
		cw := filepath.Join(t.TempDir(), fmt.Sprint("crash", k))
		copyDir(t, wh, cw)
		tb, err := table.Open(ctx, &expiretest.FailingFS{FileIO: tableFIO(), FailAt: k}, cw, "db", "dvcrash")
		if err != nil {
			t.Fatal(err)
		}
		if err := run(tb); err != nil && !errors.Is(err, expiretest.ErrInjected) {
			t.Fatalf("crash at %d: %v", k, err)
		}
		reqs = append(reqs, readReq(cw, name))
	}
	reqs = append(reqs, readReq(probe, name))
	res = batch(t, j, reqs)
	sawBefore, sawAfter := false, false
	for i, r := range res {
		got := okRows(t, fmt.Sprint("Java read after a crash at ", i+1), r)
		switch {
		case slices.Equal(got, before):
			sawBefore = true
		case slices.Equal(got, after):
			sawAfter = true
		default:
			t.Errorf("crash at operation %d: Java reads %d rows, neither as before (%d) nor as after (%d)", i+1, len(got), len(before), len(after))
		}
	}
	if !sawBefore || !sawAfter || len(after) == len(before) {
		t.Fatalf("crash points cover before %v, after %v", sawBefore, sawAfter)
	}
	t.Logf("%d crash points", steps)
}

type markResult struct {
	changes []table.IndexChange
	err     error
}

// markRowsErr is markRows returning errors instead of failing the test
// (the store may be failing on purpose).
func markRowsErr(tb *table.Table, buckets func(int32) bool, del func(int64) bool) (markResult, map[int64]bool) {
	ctx := context.Background()
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		return markResult{err: err}, nil
	}
	fs, err := tb.FileSet(ctx, s)
	if err != nil {
		return markResult{err: err}, nil
	}
	var out markResult
	deleted := map[int64]bool{}
	for _, b := range fs.Buckets() {
		if !buckets(b.Bucket) {
			continue
		}
		m, err := deletionvector.Load(ctx, tb, b)
		if err != nil {
			return markResult{err: err}, nil
		}
		for fi := range b.Files {
			e := &b.Files[fi]
			keys, err := readKeys(tb, b, e)
			if err != nil {
				return markResult{err: err}, nil
			}
			had := m.DeletionVectorOf(e.File.FileName)
			for p, k := range keys {
				if del(k) && !had.IsDeleted(int64(p)) {
					if err := m.NotifyNewDeletion(e.File.FileName, int64(p)); err != nil {
						return markResult{err: err}, nil
					}
					deleted[k] = true
				}
			}
		}
		ch, _, err := m.Write(ctx)
		if err != nil {
			return markResult{err: err}, nil
		}
		if ch != nil {
			out.changes = append(out.changes, *ch)
		}
	}
	return out, deleted
}

func readKeys(tb *table.Table, b *table.BucketFiles, e *manifest.Entry) ([]int64, error) {
	ctx := context.Background()
	path, err := tb.Paths().DataFilePath(b.Partition, b.Bucket, &e.File)
	if err != nil {
		return nil, err
	}
	fs, err := tb.SchemaByID(ctx, e.File.SchemaID)
	if err != nil {
		return nil, err
	}
	s := datafile.Schema{Fields: fs.Fields, KeyNames: fs.TrimmedPrimaryKeys()}
	r, err := datafile.OpenKeyValue(ctx, tb.FileIO(), path, s, s)
	if err != nil {
		return nil, err
	}
	kvs, err := merge.Collect(r)
	if err != nil {
		return nil, err
	}
	keys := make([]int64, len(kvs))
	for i, kv := range kvs {
		keys[i] = kv.Key[0].(int64)
	}
	return keys, nil
}
