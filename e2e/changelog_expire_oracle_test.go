package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// tableFiles lists every regular file under a table directory, relative.
func tableFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			r, _ := filepath.Rel(root, p)
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// javaExpiry splits the oracle's expire output into deleted and created
// paths, and the contents of the created files and of every hint.
func javaExpiry(t *testing.T, r interop.BatchResult) (deleted, created []string, contents map[string]string) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("Java expire: %v", r.Err)
	}
	contents = map[string]string{}
	for _, row := range rowsOf(t, r) {
		if p, ok := row["path"].(string); ok {
			deleted = append(deleted, p)
		}
		if p, ok := row["created"].(string); ok {
			created = append(created, p)
			contents[p], _ = row["content"].(string)
		}
		if p, ok := row["hint"].(string); ok {
			contents[p], _ = row["content"].(string)
		}
	}
	return deleted, created, contents
}

func idsIn(files []string, prefix string) []int64 {
	var out []int64
	for _, f := range files {
		if n, ok := strings.CutPrefix(f, prefix); ok {
			if id, err := strconv.ParseInt(n, 10, 64); err == nil {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestDecoupledChangelogExpiryAgainstJava proves the decoupled changelog
// lifecycle on tables Java wrote with changelog-producer input (writers
// write the changelog), full-compaction and lookup with deletion vectors
// (compacting writers) and none (the APPEND files are the changelog), with
// a tag and, in the last round, a consumer
// with consumer.changelog-only: over rounds of Java writes,
//   - compactd's snapshot expiry followed by its changelog expiry leaves
//     exactly the files Paimon's (ExpireSnapshotsImpl then
//     ExpireChangelogImpl, on a copy with the same options) leaves: every
//     snapshot, long-lived changelog, hint, manifest and data file;
//   - afterwards Java reads the latest snapshot and the tag, and streams
//     from the earliest remaining changelog, with the rows (and row kinds)
//     it read before;
//   - a consumer at snapshot N keeps changelog N and later although
//     snapshot expiry went past it;
//   - compactd's orphan cleanup then deletes exactly what Paimon's would
//     (nothing), so nothing a long-lived changelog needs, and Java's reads
//     are unchanged.
//
// The three tables advance in lockstep so that each step is one JVM.
func TestDecoupledChangelogExpiryAgainstJava(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	retention := map[string]string{
		"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3", "snapshot.time-retained": "1 h",
		"changelog.num-retained.min": "2", "changelog.num-retained.max": "8", "changelog.time-retained": "1 h",
		"consumer.changelog-only": "true",
	}
	type clCase struct {
		producer  string
		compacted bool // writers compact (and wait for it)
		bucket    int
		wh, root  string
		tb        *table.Table
		eo        expire.Options
		from      int64
		want      [][]string
		javaLeft  []string
		contents  map[string]string
		dv        bool
		// retention overrides the common retention
		retention map[string]string
		retJSON   string
		consumer  int64
		clExpired bool
	}
	cases := []*clCase{{producer: "input", bucket: 2}, {producer: "full-compaction", compacted: true, bucket: 1},
		// Old changelogs: the changelog window is changelog.num-retained.min.
		{producer: "none", compacted: true, bucket: 1, retention: map[string]string{"changelog.time-retained": "1 ms", "changelog.num-retained.min": "4"}},
		{producer: "lookup", compacted: true, bucket: 2, dv: true}}
	for _, c := range cases {
		r := maps.Clone(retention)
		maps.Copy(r, c.retention)
		c.retention = r
		b, _ := json.Marshal(r)
		c.retJSON = string(b)
	}
	const tbl = "db.cl"
	write := func(c *clCase, round int, n int) interop.BatchRequest {
		var commits [][]string
		for k := 0; k < n; k++ {
			var rows []string
			for r := 0; r < 3; r++ {
				dt := []string{"2024-01-01", "2024-01-02"}[r%2]
				rows = append(rows, fmt.Sprintf("%s:%d:r%dc%d", dt, (round*3+k+r)%5, round, k))
			}
			if k == 1 {
				rows = append(rows, fmt.Sprintf("-2024-01-01:%d:x", (round+k)%5))
			}
			commits = append(commits, rows)
		}
		f := flags(c.wh, tbl)
		f["rows"] = tempFile(t, "rows.jsonl", commitsJSONL(fmt.Sprint("w", round), commits...))
		f["options"] = `{"write-only":"true"}`
		if c.compacted {
			f["options"], f["wait-compaction"] = `{"write-only":"false"}`, "true"
		}
		return interop.BatchRequest{Verb: "write", Flags: f}
	}
	javaExpire := func(c *clCase) interop.BatchRequest {
		f := flags(c.wh, tbl)
		f["options"], f["report-created"] = c.retJSON, "true"
		return interop.BatchRequest{Verb: "expire", Flags: f}
	}
	reads := func(c *clCase) []interop.BatchRequest {
		s := flags(c.wh, tbl)
		s["from"] = strconv.FormatInt(c.from, 10)
		// The reader must know the changelog is decoupled to read changelog/.
		s["options"] = c.retJSON
		return []interop.BatchRequest{readReq(c.wh, tbl), readReq(c.wh, tbl, "tag", "t1"), {Verb: "expire-stream", Flags: s}}
	}
	const nreads = 3
	checkReads := func(c *clCase, what string, res []interop.BatchResult) {
		t.Helper()
		for i, r := range res {
			diffRows(t, fmt.Sprintf("%s: Java read %d %s", c.producer, i, what), c.want[i], okRows(t, what, r))
		}
	}
	run := func(reqs []interop.BatchRequest) []interop.BatchResult {
		t.Helper()
		t0 := time.Now()
		res := batch(t, j, reqs)
		t.Logf("%d oracle requests in %s", len(reqs), time.Since(t0).Round(time.Millisecond))
		return res
	}

	// Setup and each round: one batch of [reads after the previous
	// compactd expiry, writes, Java's expiry (on a copy)] for every table,
	// then one of the reads before compactd's expiry.
	const rounds = 3
	for round := 0; round < rounds; round++ {
		var reqs []interop.BatchRequest
		per := make([]int, len(cases)) // index of each case's first request
		for i, c := range cases {
			per[i] = len(reqs)
			switch round {
			case 0:
				c.wh = t.TempDir()
				spec := maintSpec()
				spec.Bucket = c.bucket
				// The table itself retains everything (Java's compacting
				// writers expire on commit); the expiry runs pass the
				// retention above.
				spec.Options = map[string]string{
					"changelog-producer":        c.producer,
					"snapshot.num-retained.min": "1000", "snapshot.num-retained.max": "1000",
				}
				if c.producer == "full-compaction" {
					spec.Options["full-compaction.delta-commits"] = "1"
				}
				if c.dv {
					// Index manifests (deletion vectors) that expired
					// snapshots and long-lived changelogs share.
					spec.Options["deletion-vectors.enabled"] = "true"
				}
				cr := write(c, 0, 5)
				cr.Verb, cr.Flags["spec"] = "create", tempFile(t, "spec.json", spec.JSON())
				tag := flags(c.wh, tbl)
				tag["name"], tag["snapshot"] = "t1", "2"
				reqs = append(reqs, cr, interop.BatchRequest{Verb: "tag", Flags: tag})
			default:
				reqs = append(reqs, reads(c)...)
				n := 3
				if round == rounds-1 {
					n = 6 // far enough past the consumer for the window to reach it
					ids, err := c.tb.SnapshotIDs(ctx)
					if err != nil {
						t.Fatal(err)
					}
					c.consumer = ids[0]
					if err := os.MkdirAll(filepath.Join(c.root, "consumer"), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(c.root, "consumer", "consumer-reader"), fmt.Appendf(nil, `{"nextSnapshot":%d}`, c.consumer), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				reqs = append(reqs, write(c, round, n))
			}
			reqs = append(reqs, javaExpire(c))
		}
		res := run(reqs)
		for i, c := range cases {
			r := res[per[i]:]
			if round > 0 {
				checkReads(c, fmt.Sprintf("after compactd's expiry of round %d", round-1), r[:nreads])
				r = r[nreads:]
			}
			for k, x := range r[:len(r)-1] {
				if x.Err != nil {
					t.Fatalf("%s round %d: step %d: %v", c.producer, round, k, x.Err)
				}
			}
			if round == 0 {
				c.tb = openLocal(t, c.wh, tbl)
				c.root = c.tb.Path()
				merged := map[string]string{}
				for k, v := range c.tb.Options().Raw {
					merged[k] = v
				}
				for k, v := range c.retention {
					merged[k] = v
				}
				eo, err := expire.OptionsFromTable(merged)
				if err != nil {
					t.Fatal(err)
				}
				if !eo.ChangelogDecoupled || eo.ProduceChangelog != (c.producer != "none") {
					t.Fatalf("%s: options %+v: want decoupled, producing %v", c.producer, eo, c.producer != "none")
				}
				c.eo = eo
			}
			if i < len(cases)-1 {
				r = res[per[i]:per[i+1]]
			}
			deleted, created, contents := javaExpiry(t, r[len(r)-1])
			c.contents = contents
			before := tableFiles(t, c.root)
			left := slices.Concat(slices.DeleteFunc(slices.Clone(before), func(p string) bool { return slices.Contains(deleted, p) }), created)
			slices.Sort(left)
			c.javaLeft = slices.Compact(left)
			// Stream from the earliest snapshot or changelog that survives.
			from := slices.Concat(idsIn(c.javaLeft, "changelog/changelog-"), idsIn(c.javaLeft, "snapshot/snapshot-"))
			slices.Sort(from)
			c.from = from[0]
		}
		reqs = nil
		for _, c := range cases {
			reqs = append(reqs, reads(c)...)
		}
		res = run(reqs)
		for i, c := range cases {
			c.want = make([][]string, nreads)
			for k := range nreads {
				c.want[k] = okRows(t, c.producer+" read before compactd's expiry", res[i*nreads+k])
			}
			if len(c.want[2]) == 0 {
				t.Fatalf("%s round %d: the stream from %d read nothing", c.producer, round, c.from)
			}
			rep, err := expire.Run(ctx, reach.TableSource(c.tb), expire.RunOptions{Options: c.eo, Now: time.Now()})
			if err != nil {
				t.Fatalf("%s round %d: %v", c.producer, round, err)
			}
			c.clExpired = c.clExpired || len(rep.Changelog.Changelogs) > 0
			if got := tableFiles(t, c.root); !slices.Equal(got, c.javaLeft) {
				t.Fatalf("%s round %d: after compactd's expiry the table holds\n%v\nafter Paimon's\n%v\nonly compactd: %v\nonly Paimon: %v",
					c.producer, round, got, c.javaLeft, minus(got, c.javaLeft), minus(c.javaLeft, got))
			}
			// Long-lived changelogs and hints hold what Java writes, byte for byte.
			for p, want := range c.contents {
				got, err := os.ReadFile(filepath.Join(c.root, p))
				if err != nil || string(got) != want {
					t.Fatalf("%s round %d: %s holds\n%s\n(%v), Paimon writes\n%s", c.producer, round, p, got, err, want)
				}
			}
			if c.consumer > 0 {
				cls := idsIn(tableFiles(t, c.root), "changelog/changelog-")
				snaps, _ := c.tb.SnapshotIDs(ctx)
				if len(cls) == 0 || cls[0] > c.consumer || snaps[0] <= c.consumer {
					t.Fatalf("%s: a consumer at %d (changelog-only): changelogs left %v, snapshots %v; want changelog %d kept and snapshots past it expired",
						c.producer, c.consumer, cls, snaps, c.consumer)
				}
			}
		}
	}

	// The last reads after compactd's expiry, with Paimon's orphan
	// detection; then compactd's orphan cleanup and the reads once more.
	var reqs []interop.BatchRequest
	for _, c := range cases {
		if !c.clExpired {
			t.Fatalf("%s: no round expired a long-lived changelog: the test proves little", c.producer)
		}
		reqs = append(reqs, reads(c)...)
		reqs = append(reqs, orphanReq(c.wh, tbl, time.Time{}))
	}
	res := run(reqs)
	reqs = nil
	for i, c := range cases {
		r := res[i*(nreads+1):]
		checkReads(c, "after compactd's last expiry", r[:nreads])
		javaOrphans := pathsOf(t, "Java orphans", r[nreads])
		orep, err := orphan.RunTable(ctx, c.tb, orphan.RunOptions{Now: time.Now().Add(time.Second), OlderThan: time.Millisecond, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range orep.Files {
			got = append(got, f.Path)
		}
		if got := relTo(t, c.root, got); !slices.Equal(got, javaOrphans) {
			t.Fatalf("%s: compactd's orphan cleanup deleted %v, Paimon's would delete %v", c.producer, got, javaOrphans)
		}
		reqs = append(reqs, reads(c)...)
	}
	res = run(reqs)
	for i, c := range cases {
		checkReads(c, "after compactd's orphan cleanup", res[i*nreads:(i+1)*nreads])
		index, changelog := false, false
		for _, id := range idsIn(tableFiles(t, c.root), "changelog/changelog-") {
			cl, err := table.ReadSnapshotFile(ctx, c.tb.FileIO(), table.ChangelogFilePath(c.root, id))
			if err != nil {
				t.Fatal(err)
			}
			index = index || cl.IndexManifest != nil
			changelog = changelog || cl.ChangelogManifestList != nil
		}
		if c.dv && !index {
			t.Fatal("deletion vectors: no long-lived changelog names an index manifest")
		}
		if changelog != (c.producer != "none") {
			t.Fatalf("%s: a long-lived changelog with changelog files: %v", c.producer, changelog)
		}
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
