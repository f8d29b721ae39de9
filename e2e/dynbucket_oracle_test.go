package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// dynCase is one dynamic-bucket (bucket=-1) primary-key table of
// TestDynamicBucketTablesCompactAsJava.
type dynCase struct {
	name  string
	spec  fixtures.Spec
	parts []string // partition values of dt; nil: unpartitioned
	// row is the row key k gets in commit c of round r (nil: not written).
	row     func(r, c, k int) map[string]any
	deletes bool // the scripts delete keys (not partial-update / aggregation)
	dv      bool
}

// dynRoundKeys are the keys rounds 0..2 write: round 0 keys 0..599, later
// rounds some of them again and 100 new ones each.
func dynRoundKeys(r int) []int {
	var ks []int
	if r == 0 {
		for k := range 600 {
			ks = append(ks, k)
		}
		return ks
	}
	for k := 0; k < 600+100*(r-1); k += 3 + r {
		ks = append(ks, k)
	}
	for k := 600 + 100*(r-1); k < 600+100*r; k++ {
		ks = append(ks, k)
	}
	return ks
}

// dynValue is the value round r first writes for key k: in round 0 256
// incompressible characters, so that the files of a full compaction are
// much larger than the level-0 files of a later round and the universal
// pick leaves them out (a minor compaction); short later.
func dynValue(r, k int) string {
	if r > 0 {
		return fmt.Sprintf("r%d-%d", r, k)
	}
	rnd := rand.New(rand.NewPCG(uint64(k), 17))
	var b strings.Builder
	for range 16 {
		fmt.Fprintf(&b, "%016x", rnd.Uint64())
	}
	return b.String()
}

func dynCases() []dynCase {
	base := func(extra map[string]string) map[string]string {
		o := map[string]string{
			// Small buckets, so that 600 keys fill several of them.
			"dynamic-bucket.target-row-num":             "100",
			"dynamic-bucket.initial-buckets":            "2",
			"dynamic-bucket.max-buckets":                "-1",
			"write-only":                                "true",
			"num-sorted-run.compaction-trigger":         "3",
			"compaction.max-size-amplification-percent": "100000",
		}
		for k, v := range extra {
			o[k] = v
		}
		return o
	}
	part := func(s fixtures.Spec) fixtures.Spec {
		s.Columns = append([]fixtures.Column{{Name: "dt", Type: "STRING NOT NULL"}}, s.Columns...)
		s.PrimaryKeys = append([]string{"dt"}, s.PrimaryKeys...)
		s.PartitionKeys = []string{"dt"}
		return s
	}
	kv := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
		PrimaryKeys: []string{"k"}, Bucket: -1,
	}
	dedupRow := func(r, c, k int) map[string]any {
		switch {
		case c == 0:
			return map[string]any{"k": k, "v": dynValue(r, k)}
		case c == 1 && k%7 == 0:
			return map[string]any{"k": k, "v": fmt.Sprintf("r%d-c1-%d", r, k)}
		case c == 1 && k%11 == 3:
			return map[string]any{"k": k, "_kind": "-D"}
		case c == 2 && k%5 == 1:
			return map[string]any{"k": k, "v": fmt.Sprintf("r%d-c2-%d", r, k)}
		}
		return nil
	}
	dedup := kv
	dedup.Options = base(nil)
	dv := part(kv)
	dv.Options = base(map[string]string{"deletion-vectors.enabled": "true"})
	pu := part(fixtures.Spec{
		Columns: []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"},
			{Name: "a", Type: "BIGINT"}, {Name: "b", Type: "STRING"}},
		PrimaryKeys: []string{"k"}, Bucket: -1,
		Options: base(map[string]string{"merge-engine": "partial-update", "changelog-producer": "lookup"}),
	})
	agg := part(fixtures.Spec{
		Columns: []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"},
			{Name: "n", Type: "BIGINT"}, {Name: "s", Type: "STRING"}},
		PrimaryKeys: []string{"k"}, Bucket: -1,
		Options: base(map[string]string{"merge-engine": "aggregation",
			"fields.n.aggregate-function": "sum", "fields.s.aggregate-function": "last_non_null_value"}),
	})
	return []dynCase{
		{name: "deduplicate_unpartitioned", spec: dedup, row: dedupRow, deletes: true},
		{name: "deletion_vectors_partitioned", spec: dv, parts: []string{"a", "b"}, row: dedupRow, deletes: true, dv: true},
		{name: "partial_update_partitioned", spec: pu, parts: []string{"a", "b"}, row: func(r, c, k int) map[string]any {
			switch {
			case c == 0:
				return map[string]any{"k": k, "a": int64(k*10 + r), "b": dynValue(r, k)}
			case c == 1 && k%7 == 0:
				return map[string]any{"k": k, "b": fmt.Sprintf("r%d-b-%d", r, k)}
			case c == 2 && k%5 == 1:
				return map[string]any{"k": k, "a": int64(-k - r)}
			}
			return nil
		}},
		{name: "aggregation_partitioned", spec: agg, parts: []string{"a", "b"}, row: func(r, c, k int) map[string]any {
			switch {
			case c == 0:
				return map[string]any{"k": k, "n": int64(k), "s": dynValue(r, k)}
			case c == 1 && k%7 == 0:
				return map[string]any{"k": k, "n": int64(1000)}
			case c == 2 && k%5 == 1:
				return map[string]any{"k": k, "n": int64(-3), "s": fmt.Sprintf("r%d-c2-%d", r, k)}
			}
			return nil
		}},
	}
}

// script is round r of a case: three commits of user "round<r>" over the
// round's keys in every partition.
func (c *dynCase) script(t *testing.T, r int) []byte {
	parts := c.parts
	if parts == nil {
		parts = []string{""}
	}
	var rows []map[string]any
	for commit := range 3 {
		for _, dt := range parts {
			for _, k := range dynRoundKeys(r) {
				m := c.row(r, commit, k)
				if m == nil {
					continue
				}
				m["_user"], m["_commit"] = fmt.Sprintf("round%d", r), commit
				if dt != "" {
					m["dt"] = dt
				}
				rows = append(rows, m)
			}
		}
	}
	return jsonl(t, rows)
}

// hashIndex are the HASH entries of a table's latest index manifest as
// "partition/bucket/file/size/rows" texts, sorted, and the index
// manifest's name.
func hashIndex(t *testing.T, wh, name string) (entries []string, indexManifest string) {
	t.Helper()
	ctx := context.Background()
	tb := openLocal(t, wh, name)
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := tb.IndexEntries(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range idx {
		if f := e.IndexFile; f.IndexType == manifest.IndexTypeHash {
			entries = append(entries, fmt.Sprintf("%x/%d/%s/%d/%d", e.Partition, e.Bucket, f.FileName, f.FileSize, f.RowCount))
		}
	}
	slices.Sort(entries)
	if s.IndexManifest != nil {
		indexManifest = *s.IndexManifest
	}
	return entries, indexManifest
}

// keyBuckets maps each row's key (partition and k) to its "_bucket",
// failing on a key read from two buckets.
func keyBuckets(t *testing.T, what string, rows []interop.Row) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, r := range rows {
		k := fmt.Sprintf("%v/%v", r["dt"], r["k"])
		b, ok := r["_bucket"].(int64)
		if !ok {
			t.Fatalf("%s: row without _bucket: %v", what, r)
		}
		if old, dup := out[k]; dup {
			t.Fatalf("%s: key %s read from buckets %d and %d", what, k, old, b)
		}
		out[k] = b
	}
	return out
}

// withoutBucket drops "_bucket" from rows (copies).
func withoutBucket(rows []interop.Row) []interop.Row {
	out := make([]interop.Row, len(rows))
	for i, r := range rows {
		c := interop.Row{}
		for k, v := range r {
			if k != "_bucket" {
				c[k] = v
			}
		}
		out[i] = c
	}
	return out
}

// checkCompactSnapshot checks that the latest snapshot is compactd's
// COMPACT and that every entry of its delta records total buckets -1, as
// Java's writers and compactions of a dynamic-bucket table do
// (AbstractFileStoreWrite: options.bucket()).
func checkCompactSnapshot(t *testing.T, wh, name string) {
	t.Helper()
	ctx := context.Background()
	tb := openLocal(t, wh, name)
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.CommitKind != table.CommitCompact {
		t.Fatalf("latest snapshot %d is %s, want compactd's COMPACT", s.ID, s.CommitKind)
	}
	list, err := manifest.ReadList(ctx, tb.FileIO(), tb.Paths().ManifestPath(s.DeltaManifestList))
	if err != nil {
		t.Fatal(err)
	}
	delta, err := tb.ReadManifests(ctx, list)
	if err != nil {
		t.Fatal(err)
	}
	if len(delta) == 0 {
		t.Fatal("empty COMPACT delta")
	}
	for _, e := range delta {
		if e.TotalBuckets != -1 {
			t.Fatalf("delta entry %s (bucket %d) has total buckets %d, want -1", e.File.FileName, e.Bucket, e.TotalBuckets)
		}
	}
}

// TestDynamicBucketTablesCompactAsJava is the dynamic-bucket proof of
// issue 17: Java writes bucket=-1 primary-key tables (deduplicate
// unpartitioned, deletion vectors, partial-update with
// changelog-producer=lookup and aggregation
// partitioned; dynamic-bucket.target-row-num=100 so 600 keys fill several
// buckets per partition; three commits), and a copy of each is kept as
// the reference that only Java touches. Then, on compactd's table and the
// reference alike:
//   - compactd's full compaction / Java's: Java reads every row in the
//     bucket it had; the HASH entries of the index manifest are exactly
//     Java's (and, without deletion vectors, the index manifest itself is
//     reused); the COMPACT delta records total buckets -1;
//   - Java writes old keys and 100 new ones (three commits), compactd's
//     minor compaction / Java's: files, rows and buckets equal the
//     reference's, the HASH entries are the writer's;
//   - Java writes old and new keys again: every old key stays in its
//     bucket (a lost or damaged HASH index would send it to another one,
//     and Java would then read it twice), rows and buckets equal the
//     reference's;
//   - Java's own full compaction on top of compactd's output reads as the
//     reference, and pypaimon and compactd's scan read what Java reads.
func TestDynamicBucketTablesCompactAsJava(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	py := interop.Python(t)
	for _, c := range dynCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			wh, ref := filepath.Join(dir, "wh"), filepath.Join(dir, "ref")
			const name = "db.t"
			scripts := make([]string, 3)
			for r := range scripts {
				scripts[r] = tempFile(t, fmt.Sprintf("round%d.jsonl", r), c.script(t, r))
			}
			specFile := tempFile(t, "spec.json", c.spec.JSON())
			write := func(w string, r int) interop.BatchRequest {
				return interop.BatchRequest{Verb: "write", Flags: withOpt(flags(w, name), "rows", scripts[r])}
			}
			readB := func(w string) interop.BatchRequest {
				return interop.BatchRequest{Verb: "read", Flags: withOpt(flags(w, name), "with-bucket", "true")}
			}
			javaCompact := func(w string, full bool) interop.BatchRequest {
				return interop.BatchRequest{Verb: "compact", Flags: withOpt(flags(w, name), "full", fmt.Sprint(full))}
			}
			// Java's steps run in one JVM per batch; a step's error fails the test.
			javaSteps := func(what string, reqs ...interop.BatchRequest) []interop.BatchResult {
				t.Helper()
				res := batch(t, j, reqs)
				for i, r := range res {
					if r.Err != nil {
						t.Fatalf("%s: Java step %d (%s): %v", what, i, reqs[i].Verb, r.Err)
					}
				}
				return res
			}
			javaSteps("round 0", interop.BatchRequest{Verb: "create", Flags: withOpt(withOpt(flags(wh, name), "spec", specFile), "rows", scripts[0])})
			copyDir(t, wh, ref)
			hash0, im0 := hashIndex(t, wh, name)
			if len(hash0) < 3 {
				t.Fatalf("Java wrote %d HASH index entries", len(hash0))
			}

			// Full compaction.
			sum, err := compact.Run(ctx, openLocal(t, wh, name), compact.Options{Full: true})
			if err != nil {
				t.Fatalf("compactd full compaction: %v", err)
			}
			if sum.Snapshot == 0 || sum.Buckets < len(hash0) {
				t.Fatalf("compactd's full compaction: snapshot %d, %d buckets of %d", sum.Snapshot, sum.Buckets, len(hash0))
			}
			checkCompactSnapshot(t, wh, name)
			hash1, im1 := hashIndex(t, wh, name)
			if !slices.Equal(hash1, hash0) {
				t.Fatalf("HASH index entries after compactd's full compaction:\n  %v\nJava's:\n  %v", hash1, hash0)
			}
			if !c.dv && im1 != im0 {
				t.Fatalf("index manifest %s after compactd's full compaction, Java's was %s", im1, im0)
			}
			// The reference is read after Java's full compaction: a batch
			// read of a deletion-vector table skips level 0, which is all
			// the writers wrote. Java's minor compaction of the reference
			// follows round 1 at once (compactd's runs between the batches).
			res := javaSteps("full compaction and round 1",
				javaCompact(ref, true), readB(ref), readB(wh), write(wh, 1), write(ref, 1), javaCompact(ref, false))
			before := rowsOf(t, res[1])
			diffRows(t, "Java read (with buckets) after compactd's full compaction", canon(t, before), canon(t, rowsOf(t, res[2])))
			buckets0 := keyBuckets(t, "Java's read after the full compaction", before)
			perPartition := map[any]map[int64]bool{}
			for _, r := range before {
				if perPartition[r["dt"]] == nil {
					perPartition[r["dt"]] = map[int64]bool{}
				}
				perPartition[r["dt"]][r["_bucket"].(int64)] = true
			}
			for p, bs := range perPartition {
				if len(bs) < 3 {
					t.Fatalf("partition %v: %d buckets, the test wants several", p, len(bs))
				}
			}
			if want := 600 * max(1, len(c.parts)); c.deletes == (len(before) == want) {
				t.Fatalf("Java reads %d rows (deletes: %v)", len(before), c.deletes)
			}

			// Minor compaction.
			hash2, _ := hashIndex(t, wh, name)
			sum, err = compact.Run(ctx, openLocal(t, wh, name), compact.Options{})
			if err != nil {
				t.Fatalf("compactd minor compaction: %v", err)
			}
			if sum.Snapshot == 0 {
				t.Fatal("compactd's minor compaction found nothing to do")
			}
			minor := 0
			for _, jr := range sum.Jobs {
				if !jr.Job.Full {
					minor++
				}
			}
			if minor == 0 {
				t.Fatalf("compactd's minor compaction only ran full jobs (%d)", len(sum.Jobs))
			}
			checkCompactSnapshot(t, wh, name)
			if hash3, _ := hashIndex(t, wh, name); !slices.Equal(hash3, hash2) {
				t.Fatalf("HASH index entries after compactd's minor compaction:\n  %v\nthe writer's:\n  %v", hash3, hash2)
			}
			if c.dv {
				// The lookup marked superseded rows: the commit combined
				// new DELETION_VECTORS entries with the HASH ones.
				tb := openLocal(t, wh, name)
				s, err := tb.LatestSnapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				idx, err := tb.IndexEntries(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				vectors := 0
				for _, e := range idx {
					if e.IndexFile.IndexType == manifest.IndexTypeDeletionVectors {
						vectors += len(e.IndexFile.DeletionVectors)
					}
				}
				if vectors == 0 {
					t.Fatal("compactd's minor compaction wrote no deletion vectors")
				}
			}
			res = javaSteps("minor compaction, round 2 and Java's full compaction on top",
				readB(wh), readB(ref),
				interop.BatchRequest{Verb: "files", Flags: flags(wh, name)}, interop.BatchRequest{Verb: "files", Flags: flags(ref, name)},
				write(wh, 2), write(ref, 2), readB(wh), readB(ref),
				javaCompact(wh, true), javaCompact(ref, true), readB(wh), readB(ref))
			mid := rowsOf(t, res[0])
			diffRows(t, "Java read (with buckets) after compactd's minor compaction", canon(t, rowsOf(t, res[1])), canon(t, mid))
			if got, want := fileLevels(rowsOf(t, res[2])), fileLevels(rowsOf(t, res[3])); !slices.Equal(got, want) {
				t.Errorf("files (partition/bucket/level/rows) after compactd's minor compaction:\n  %v\nafter Java's:\n  %v", got, want)
			}

			// The HASH index still routes every old key to its bucket.
			after := rowsOf(t, res[6])
			diffRows(t, "Java read (with buckets) after round 2 on compactd's table", canon(t, rowsOf(t, res[7])), canon(t, after))
			bucketsMid := keyBuckets(t, "Java's read after compactd's minor compaction", mid)
			moved := 0
			for k, b := range keyBuckets(t, "Java's read after round 2", after) {
				for _, was := range []map[string]int64{buckets0, bucketsMid} {
					if old, ok := was[k]; ok && old != b {
						t.Errorf("key %s moved from bucket %d to %d", k, old, b)
						moved++
					}
				}
				if moved > 10 {
					t.FailNow()
				}
			}

			// Java compacted on top of compactd's output.
			final := rowsOf(t, res[10])
			diffRows(t, "Java read after Java's full compaction on top of compactd's", canon(t, rowsOf(t, res[11])), canon(t, final))
			plain := canon(t, withoutBucket(final))
			diffRows(t, "compactd scan", plain, canon(t, compactdRows(t, wh, name)))
			diffRows(t, "pypaimon read", plain, canon(t, py.Read(wh, name)))
		})
	}
}

// TestDamagedHashIndexFilesAreCarriedUntouched pins what compactd does
// with a dynamic-bucket table's HASH index files: it never reads them (a
// compaction moves no key between buckets, so the key hashes of a bucket
// stay what the writers recorded) and never rewrites or deletes them. Java
// writes a table with three buckets; one HASH file is then overwritten
// with garbage and another deleted. compactd's full compaction still
// commits, the snapshot keeps the index manifest (every HASH entry as it
// was), the garbage file keeps its bytes, the deleted one is not
// recreated, nothing else appears under index/, and Java reads the rows
// it read before. (Java's own compaction of those buckets would fail:
// its writer restores the bucket's hash set from the file; and compactd's
// expire and orphan cleanup, which check every index file a snapshot
// reaches, report the missing one as damage.)
//
// It also checks that a cross-partition-update table as Java creates it
// (bucket=-1, primary key k without the partition key dt) is refused
// naming the table, and left as it was.
func TestDamagedHashIndexFilesAreCarriedUntouched(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	wh := filepath.Join(t.TempDir(), "wh")
	spec := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
		PrimaryKeys: []string{"k"}, Bucket: -1,
		Options: map[string]string{"dynamic-bucket.target-row-num": "100", "write-only": "true"},
	}
	var rows []map[string]any
	for commit := range 2 {
		for k := range 300 {
			if commit == 0 || k%4 == 0 {
				rows = append(rows, map[string]any{"k": k, "v": fmt.Sprintf("c%d-%d", commit, k), "_commit": commit})
			}
		}
	}
	cross := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "dt", Type: "STRING NOT NULL"}, {Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
		PrimaryKeys: []string{"k"}, PartitionKeys: []string{"dt"}, Bucket: -1,
	}
	res := batch(t, j, []interop.BatchRequest{
		{Verb: "create", Flags: withOpt(withOpt(flags(wh, "db.t"), "spec", tempFile(t, "spec.json", spec.JSON())), "rows", tempFile(t, "rows.jsonl", jsonl(t, rows)))},
		{Verb: "read", Flags: flags(wh, "db.t")},
		{Verb: "create", Flags: withOpt(flags(wh, "db.cross"), "spec", tempFile(t, "cross.json", cross.JSON()))},
	})
	want := rowsOf(t, res[1])
	if res[2].Err != nil {
		t.Fatal(res[2].Err)
	}

	crossTable := openLocal(t, wh, "db.cross")
	crossBefore := treeState(t, crossTable.Path())
	if err := compact.Supported(crossTable, nil); err == nil || !strings.Contains(err.Error(), "db.cross") || !strings.Contains(err.Error(), "cross-partition-update") {
		t.Fatalf("Supported of Java's cross-partition-update table: %v", err)
	}
	if _, err := compact.Run(ctx, crossTable, compact.Options{Full: true}); err == nil || !strings.Contains(err.Error(), "db.cross") {
		t.Fatalf("compaction of Java's cross-partition-update table: %v", err)
	}
	if after := treeState(t, crossTable.Path()); !slices.Equal(after, crossBefore) {
		t.Fatalf("the refused table changed:\n  %v\nwas:\n  %v", after, crossBefore)
	}

	tb := openLocal(t, wh, "db.t")
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := tb.IndexEntries(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range idx {
		if e.IndexFile.IndexType != manifest.IndexTypeHash {
			t.Fatalf("index entry %s of type %s", e.IndexFile.FileName, e.IndexFile.IndexType)
		}
		p, err := tb.Paths().IndexFileOf(e.Partition, e.Bucket, &e.IndexFile)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if len(paths) < 3 {
		t.Fatalf("Java wrote %d HASH index files, the test wants 3", len(paths))
	}
	garbage := []byte("not a hash index: compactd must not read, rewrite or delete this")
	if err := writeFile(paths[0], garbage); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(paths[1]); err != nil {
		t.Fatal(err)
	}
	indexDir := filepath.Dir(paths[0])
	indexBefore := treeState(t, indexDir)
	hashBefore, imBefore := hashIndex(t, wh, "db.t")

	sum, err := compact.Run(ctx, openLocal(t, wh, "db.t"), compact.Options{Full: true})
	if err != nil {
		t.Fatalf("compactd's full compaction with damaged HASH index files: %v", err)
	}
	if sum.Snapshot == 0 || sum.Buckets < len(paths) {
		t.Fatalf("compactd compacted %d buckets (snapshot %d), want all %d", sum.Buckets, sum.Snapshot, len(paths))
	}
	checkCompactSnapshot(t, wh, "db.t")
	if hashAfter, imAfter := hashIndex(t, wh, "db.t"); imAfter != imBefore || !slices.Equal(hashAfter, hashBefore) {
		t.Fatalf("index manifest %s %v after compactd, was %s %v", imAfter, hashAfter, imBefore, hashBefore)
	}
	if got, err := os.ReadFile(paths[0]); err != nil || string(got) != string(garbage) {
		t.Fatalf("the damaged HASH file: %q, %v", got, err)
	}
	if _, err := os.Stat(paths[1]); !os.IsNotExist(err) {
		t.Fatalf("the deleted HASH file: %v", err)
	}
	if after := treeState(t, indexDir); !slices.Equal(after, indexBefore) {
		t.Fatalf("index/ after compactd:\n  %v\nbefore:\n  %v", after, indexBefore)
	}
	res = batch(t, j, []interop.BatchRequest{{Verb: "read", Flags: flags(wh, "db.t")}})
	diffRows(t, "Java read after compactd's compaction", canon(t, want), canon(t, rowsOf(t, res[0])))
}

// TestJavaDynamicBucketWriterKeepsCommittingWhileCompactdCompacts: a Java
// writer commits new and old keys into a partitioned dynamic-bucket table
// (every commit rewrites the touched buckets' HASH index files) while
// compactd compacts it over and over, so compactd's commits rebase onto
// snapshots whose index manifest changed after compactd planned. Then a
// fresh Java writer, which loads the HASH index from the latest snapshot,
// writes old and new keys. Every Java commit is a snapshot, and the rows,
// each with its bucket, equal those of the same writes into a table nobody
// compacted: one lost or stale HASH entry would route a key elsewhere.
func TestJavaDynamicBucketWriterKeepsCommittingWhileCompactdCompacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	spec := fixtures.Spec{
		Columns:     []fixtures.Column{{Name: "dt", Type: "STRING NOT NULL"}, {Name: "k", Type: "BIGINT NOT NULL"}, {Name: "v", Type: "STRING"}},
		PrimaryKeys: []string{"dt", "k"}, PartitionKeys: []string{"dt"}, Bucket: -1,
		Options: map[string]string{"dynamic-bucket.target-row-num": "40", "write-only": "true"},
	}
	script := func(user string, commits, from int) []byte {
		var rows []map[string]any
		for c := range commits {
			for _, dt := range []string{"a", "b"} {
				for k := from + c*20; k < from+c*20+20; k++ { // new keys
					rows = append(rows, map[string]any{"dt": dt, "k": k, "v": fmt.Sprintf("%s-%d-%d", user, c, k), "_user": user, "_commit": c})
				}
				for k := c % 3; k < from+c*20; k += 7 { // old keys
					rows = append(rows, map[string]any{"dt": dt, "k": k, "v": fmt.Sprintf("%s-%d-old-%d", user, c, k), "_user": user, "_commit": c})
				}
			}
		}
		return jsonl(t, rows)
	}
	const commits = 12
	dir := t.TempDir()
	live, ref := filepath.Join(dir, "live"), filepath.Join(dir, "ref")
	j.Create(live, "db.t", spec, nil)
	j.Create(ref, "db.t", spec, nil)
	rows := script("w1", commits, 0)

	var wg sync.WaitGroup
	var written int
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		written = j.Write(live, "db.t", rows)
	}()
	compactions := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		tb, err := table.Open(ctx, tableFIO(), live, "db", "t")
		if err == nil {
			_, err = tb.LatestSnapshot(ctx)
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		sum, err := compact.Run(ctx, tb, compact.Options{Full: compactions%2 == 1})
		if err != nil {
			t.Fatalf("compaction %d: %v", compactions, err)
		}
		if sum.Snapshot != 0 {
			compactions++
		}
	}
	wg.Wait()
	if written != commits {
		t.Fatalf("the Java writer made %d commits, want %d", written, commits)
	}
	if compactions < 2 {
		t.Fatalf("only %d compactions ran while the writer committed", compactions)
	}
	if n := j.Write(ref, "db.t", rows); n != commits {
		t.Fatalf("reference writes made %d commits", n)
	}
	tb := openLocal(t, live, "db.t")
	ids, err := tb.SnapshotIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	appends := 0
	for _, id := range ids {
		sn, err := tb.Snapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sn.CommitKind == table.CommitAppend {
			appends++
		}
	}
	if appends != commits {
		t.Fatalf("the compacted table has %d APPEND snapshots, the writer made %d commits", appends, commits)
	}
	t.Logf("%d Java commits interleaved with %d compactd compactions", commits, compactions)

	final := tempFile(t, "final.jsonl", script("w2", 2, commits*20))
	readB := func(w string) interop.BatchRequest {
		return interop.BatchRequest{Verb: "read", Flags: withOpt(flags(w, "db.t"), "with-bucket", "true")}
	}
	res := batch(t, j, []interop.BatchRequest{
		{Verb: "write", Flags: withOpt(flags(live, "db.t"), "rows", final)},
		{Verb: "write", Flags: withOpt(flags(ref, "db.t"), "rows", final)},
		readB(live), readB(ref),
	})
	for i := range 2 {
		if res[i].Err != nil {
			t.Fatalf("Java's last write: %v", res[i].Err)
		}
	}
	got := rowsOf(t, res[2])
	keyBuckets(t, "Java's read of the compacted table", got)
	diffRows(t, "rows and buckets of the compacted table vs the untouched one", canon(t, rowsOf(t, res[3])), canon(t, got))
}
