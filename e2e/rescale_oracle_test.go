package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/rescale"
	"github.com/compactd/compactd/table"
)

const (
	rsP1 = "2024-01-01" // the partition rescaled
	rsP2 = "2024-01-02" // a partition left alone
)

func rescaleSpec(bucket int, opts map[string]string) []byte {
	return fixtures.Spec{
		Columns: []fixtures.Column{
			{Name: "dt", Type: "STRING NOT NULL"},
			{Name: "id", Type: "INT NOT NULL"},
			{Name: "v", Type: "STRING"},
		},
		PrimaryKeys:   []string{"dt", "id"},
		PartitionKeys: []string{"dt"},
		Bucket:        bucket,
		Options:       opts,
	}.JSON()
}

// rescaleRows are three commits into both partitions: 60 keys each, a
// third of them updated, every tenth deleted.
func rescaleRows(user string) []byte {
	var c1, c2, c3 []string
	for _, dt := range []string{rsP1, rsP2} {
		for id := 0; id < 60; id++ {
			c1 = append(c1, fmt.Sprintf("%s:%d:a%d", dt, id, id))
			if id%3 == 0 {
				c2 = append(c2, fmt.Sprintf("%s:%d:b%d", dt, id, id))
			}
			if id%10 == 0 {
				c3 = append(c3, fmt.Sprintf("-%s:%d:x", dt, id))
			}
		}
	}
	return commitsJSONL(user, c1, c2, c3)
}

// updateAll writes every key 0..69 of dt (old, deleted and new ones) with
// value tag+id, in one commit.
func updateAll(user, dt, tag string) []byte {
	var c []string
	for id := 0; id < 70; id++ {
		c = append(c, fmt.Sprintf("%s:%d:%s%d", dt, id, tag, id))
	}
	return commitsJSONL(user, c)
}

// alterBucket writes the table's next schema with bucket = n, as Java's
// ALTER TABLE SET ('bucket' = 'n') does (SchemaManager.commitChanges: the
// same fields and keys, the option replaced, id + 1); the interop harness
// has no ALTER verb.
func alterBucket(t *testing.T, wh, name string, n int) {
	t.Helper()
	tb := openLocal(t, wh, name)
	s := tb.Schema()
	opts := map[string]string{}
	for k, v := range s.Options {
		opts[k] = v
	}
	opts["bucket"] = fmt.Sprint(n)
	next, err := table.NewTableSchema(s.ID+1, s.Fields, s.HighestFieldID, s.PartitionKeys, s.PrimaryKeys, opts, s.Comment, s.TimeMillis+1)
	if err != nil {
		t.Fatal(err)
	}
	data, err := next.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.FileIO().WriteExclusive(context.Background(), tb.Paths().SchemaPath(next.ID), data); err != nil {
		t.Fatal(err)
	}
}

func writeReq(wh, tbl, rowsFile string) interop.BatchRequest {
	f := flags(wh, tbl)
	f["rows"] = rowsFile
	return interop.BatchRequest{Verb: "write", Flags: f}
}

func req(verb, wh, tbl string, extra ...string) interop.BatchRequest {
	f := flags(wh, tbl)
	for i := 0; i+1 < len(extra); i += 2 {
		f[extra[i]] = extra[i+1]
	}
	return interop.BatchRequest{Verb: verb, Flags: f}
}

// filesOf is the rows of Java's $files (real buckets only).
func filesOf(t *testing.T, what string, r interop.BatchResult) []interop.Row {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: %v", what, r.Err)
	}
	return rowsOf(t, r)
}

// checkJavaLayout checks Java's $files of a partition: every real-bucket
// file in a bucket below n at level top, and (when n > 0) every bucket
// 0..n-1 present.
func checkJavaLayout(t *testing.T, what string, files []interop.Row, dt string, n int64, top int64) (postponed int) {
	t.Helper()
	seen := map[int64]bool{}
	for _, f := range files {
		if !strings.Contains(fmt.Sprint(f["partition"]), dt) {
			continue
		}
		b, _ := f["bucket"].(int64)
		if b < 0 {
			postponed++
			continue
		}
		seen[b] = true
		if b >= n || f["level"] != top {
			t.Errorf("%s: Java lists %v in bucket %v at level %v; want buckets < %d at level %d", what, f["file_path"], f["bucket"], f["level"], n, top)
		}
	}
	if int64(len(seen)) != n {
		t.Errorf("%s: Java lists files in buckets %v of partition %s, want all of 0..%d", what, seen, dt, n-1)
	}
	return postponed
}

func expectRows(t *testing.T, rows []string, dt string, replace []byte) []string {
	t.Helper()
	var out []string
	for _, r := range rows {
		if !strings.Contains(r, `"dt":"`+dt+`"`) {
			out = append(out, r)
		}
	}
	var lines []byte
	for _, l := range strings.Split(strings.TrimSpace(string(replace)), "\n") {
		// The write script's rows are canonical rows plus _kind/_user/_commit.
		l = l[:strings.Index(l, `,"_kind"`)] + "}"
		lines = append(lines, l...)
		lines = append(lines, '\n')
	}
	rs, err := interop.ParseRows(lines)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, canon(t, rs)...)
	slices.Sort(out)
	return out
}

// TestRescaleAgainstJava proves `compactd rescale` with Java Paimon as the
// oracle. Java writes two partitioned primary-key tables with bucket=2
// (one plain, write-only; one with deletion vectors, compacted by Java so
// that vectors exist), the test ALTERs their bucket to 4 (the next schema
// file, as Java's ALTER writes it) and compactd rescales one partition to
// 4:
//   - before the rescale Java refuses to write that partition ("a new
//     bucket num 4, but the previous bucket num is 2"): the rescale is
//     what makes it writable again;
//   - compactd refuses --bucket-num 3 (not the table's bucket) and a
//     dynamic-bucket table, changing nothing;
//   - after it Java and pypaimon read the same rows as before, Java lists
//     the partition's files in buckets 0..3 at the top level and no
//     deletion vector is left;
//   - Java then writes every key of the partition (and new ones): its
//     read has exactly one row per key with the new value, so Java's
//     writer put every key into the bucket compactd put it in (a key in
//     another bucket would be read twice), with a newer sequence number;
//     Java compacts on top and reads the same;
//   - the other partition keeps its 2 buckets and Java's writer still
//     refuses it, as Paimon does until it is rescaled too;
//   - a Java commit into the partition between compactd's read and its
//     commit fails the rescale; the table is as Java left it.
func TestRescaleAgainstJava(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	wh := t.TempDir()
	specFx := tempFile(t, "fx.json", rescaleSpec(2, map[string]string{"write-only": "true"}))
	specDV := tempFile(t, "dv.json", rescaleSpec(2, map[string]string{"write-only": "true", "deletion-vectors.enabled": "true"}))
	specDyn := tempFile(t, "dyn.json", rescaleSpec(-1, nil))
	rows1 := tempFile(t, "rows1.jsonl", rescaleRows("w1"))
	rowsDV2 := tempFile(t, "dv2.jsonl", commitsJSONL("w2", []string{rsP1 + ":5:c5", rsP1 + ":8:c8", rsP2 + ":9:c9", "-" + rsP1 + ":12:x"}))
	create := func(tbl, spec string) interop.BatchRequest {
		r := req("create", wh, tbl, "spec", spec, "rows", rows1)
		return r
	}
	res := batch(t, j, []interop.BatchRequest{
		create("db.fx", specFx), create("db.dv", specDV),
		// The harness cannot write dynamic-bucket tables (Java needs the
		// bucket from its assigner); rescale refuses them before reading.
		req("create", wh, "db.dyn", "spec", specDyn),
		req("compact", wh, "db.dv"),
		writeReq(wh, "db.dv", rowsDV2),
		req("compact", wh, "db.dv", "full", "false"),
		req("dvs", wh, "db.dv"),
	})
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("setup step %d: %v", i, r.Err)
		}
	}
	dvFiles, err := interop.ParseDVFiles(bytes.Join(res[6].Lines, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	vectors := 0
	for _, f := range dvFiles {
		if f.DV != nil && strings.Contains(f.Partition, rsP1) {
			vectors++
		}
		if f.Level == 0 {
			t.Fatalf("Java's compaction left level-0 file %s; the DV table's rows would not all be visible", f.File)
		}
	}
	if vectors == 0 {
		t.Fatal("Java's minor compaction wrote no deletion vector in the partition; the DV case would prove nothing")
	}
	for _, tbl := range []string{"db.fx", "db.dv"} {
		alterBucket(t, wh, tbl, 4)
	}
	update1 := updateAll("w3", rsP1, "u")
	update2 := updateAll("w3", rsP2, "u")
	upd1 := tempFile(t, "u1.jsonl", update1)
	upd2 := tempFile(t, "u2.jsonl", update2)
	res = batch(t, j, []interop.BatchRequest{
		writeReq(wh, "db.fx", upd1),
		readReq(wh, "db.fx"), readReq(wh, "db.dv"),
	})
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "new bucket num 4, but the previous bucket num is 2") {
		t.Fatalf("Java wrote the 2-bucket partition after ALTER bucket=4: %v; the test assumes Java refuses", res[0].Err)
	}
	before := map[string][]string{"db.fx": okRows(t, "Java read fx", res[1]), "db.dv": okRows(t, "Java read dv", res[2])}

	// Refusals change nothing.
	fx := openLocal(t, wh, "db.fx")
	fxSnap := latestID(t, fx)
	if _, err := rescale.Run(ctx, fx, rescale.Options{BucketNum: 3, Partition: map[string]string{"dt": rsP1}}); err == nil || !strings.Contains(err.Error(), "bucket=4") {
		t.Fatalf("rescale of a bucket=4 table to 3: %v", err)
	}
	if _, err := rescale.Run(ctx, openLocal(t, wh, "db.dyn"), rescale.Options{BucketNum: 4}); err == nil || !strings.Contains(err.Error(), "dynamic-bucket") {
		t.Fatalf("rescale of a bucket=-1 table: %v", err)
	}
	if latestID(t, fx) != fxSnap {
		t.Fatal("a refused rescale committed")
	}

	for _, tbl := range []string{"db.fx", "db.dv"} {
		r, err := rescale.Run(ctx, openLocal(t, wh, tbl), rescale.Options{BucketNum: 4, Partition: map[string]string{"dt": rsP1}})
		if err != nil {
			t.Fatalf("rescale %s: %v", tbl, err)
		}
		if len(r.Partitions) != 1 || r.Partitions[0].FromBuckets != 2 || r.Partitions[0].ToBuckets != 4 {
			t.Fatalf("rescale %s: %+v", tbl, r)
		}
	}
	py := interop.Python(t)
	res = batch(t, j, []interop.BatchRequest{
		readReq(wh, "db.fx"), readReq(wh, "db.dv"), req("files", wh, "db.fx"), req("dvs", wh, "db.dv"), req("files", wh, "db.dv"),
	})
	top := int64(openLocal(t, wh, "db.fx").Options().NumLevels - 1)
	for i, tbl := range []string{"db.fx", "db.dv"} {
		diffRows(t, "Java read of "+tbl+" after the rescale", before[tbl], okRows(t, "Java read", res[i]))
		diffRows(t, "pypaimon read of "+tbl+" after the rescale", before[tbl], canon(t, py.Read(wh, tbl)))
	}
	for _, c := range []struct {
		tbl string
		i   int
	}{{"db.fx", 2}, {"db.dv", 4}} {
		files := filesOf(t, "Java $files of "+c.tbl, res[c.i])
		checkJavaLayout(t, c.tbl+" "+rsP1, files, rsP1, 4, top)
		for _, f := range files {
			if strings.Contains(fmt.Sprint(f["partition"]), rsP2) {
				if b, _ := f["bucket"].(int64); b > 1 {
					t.Errorf("%s: the other partition has a file in bucket %d", c.tbl, b)
				}
			}
		}
	}
	dvAfter, err := interop.ParseDVFiles(bytes.Join(res[3].Lines, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range dvAfter {
		if strings.Contains(f.Partition, rsP1) && (f.DV != nil || f.DVMeta != nil) {
			t.Errorf("db.dv: rescaled file %s has a deletion vector", f.File)
		}
	}
	// Java compacts the rescaled partition only: its writer refuses the
	// other one, still at 2 buckets, for compaction as for writes.
	res = batch(t, j, []interop.BatchRequest{
		writeReq(wh, "db.fx", upd1), writeReq(wh, "db.dv", upd1),
		writeReq(wh, "db.fx", upd2),
		readReq(wh, "db.fx"), readReq(wh, "db.dv"),
		req("compact", wh, "db.fx", "partition", "dt="+rsP1), req("compact", wh, "db.dv", "partition", "dt="+rsP1),
		readReq(wh, "db.fx"), readReq(wh, "db.dv"), req("files", wh, "db.fx"),
	})
	for i := 0; i <= 1; i++ {
		if res[i].Err != nil {
			t.Fatalf("Java write into the rescaled partition: %v", res[i].Err)
		}
	}
	if res[2].Err == nil || !strings.Contains(res[2].Err.Error(), "previous bucket num is 2") {
		t.Fatalf("Java write into the partition still at 2 buckets: %v; Paimon refuses it until it is rescaled", res[2].Err)
	}
	for i, tbl := range []string{"db.fx", "db.dv"} {
		want := expectRows(t, before[tbl], rsP1, update1)
		// A deletion-vector table's batch read skips level 0: Java's
		// write-only writes show after Java's compaction.
		afterWrite := want
		if tbl == "db.dv" {
			afterWrite = before[tbl]
		}
		diffRows(t, "Java read of "+tbl+" after Java's writes on top", afterWrite, okRows(t, "Java read", res[3+i]))
		if res[5+i].Err != nil {
			t.Fatalf("Java compaction of %s: %v", tbl, res[5+i].Err)
		}
		diffRows(t, "Java read of "+tbl+" after Java's compaction on top", want, okRows(t, "Java read", res[7+i]))
	}
	checkJavaLayout(t, "db.fx after Java's compaction", filesOf(t, "Java $files", res[9]), rsP1, 4, top)

	// A Java commit into the partition while compactd rescales it (again):
	// the rescale fails and the table is as Java left it.
	upd3 := updateAll("w4", rsP1, "z")
	fx = openLocal(t, wh, "db.fx")
	var javaSnap int64
	_, err = rescale.Run(ctx, fx, rescale.Options{BucketNum: 4, Partition: map[string]string{"dt": rsP1}, BeforeCommit: func() {
		j.Write(wh, "db.fx", upd3)
		javaSnap = latestID(t, fx)
	}})
	var conflict *table.ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("rescale with a concurrent Java commit into the partition: %v, want a conflict", err)
	}
	if latestID(t, fx) != javaSnap {
		t.Fatalf("latest snapshot %d, want Java's %d", latestID(t, fx), javaSnap)
	}
	want := expectRows(t, before["db.fx"], rsP1, upd3)
	diffRows(t, "Java read after the failed rescale", want, canon(t, j.Read(wh, "db.fx")))
}

// TestRescalePostponeBucketTableAgainstJava: a table Java wrote with
// bucket=2 is ALTERed to bucket=-2 (Java allows fixed → postpone), so its
// partitions hold rows in real buckets, and Java's writers then write into
// bucket-postpone (the harness has no postpone compaction, and Java 1.4.2's
// postpone.batch-write-fixed-bucket is a Flink sink feature the core
// writer does not have). compactd rescales one partition to 3 buckets
// while a Java writer commits into its bucket-postpone: the rescale
// commits, Java reads the real-bucket rows as before, lists the partition
// in buckets 0..2 at the top level, and every bucket-postpone file (the
// concurrent writer's too) is still there.
func TestRescalePostponeBucketTableAgainstJava(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	j := interop.Java(t)
	wh := t.TempDir()
	spec := tempFile(t, "pp.json", rescaleSpec(2, map[string]string{"write-only": "true"}))
	rows1 := tempFile(t, "rows1.jsonl", rescaleRows("w1"))
	res := batch(t, j, []interop.BatchRequest{req("create", wh, "db.pp", "spec", spec, "rows", rows1)})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	alterBucket(t, wh, "db.pp", -2)
	post1 := tempFile(t, "p1.jsonl", updateAll("w2", rsP1, "p"))
	res = batch(t, j, []interop.BatchRequest{writeReq(wh, "db.pp", post1), readReq(wh, "db.pp")})
	if res[0].Err != nil {
		t.Fatalf("Java write into the postpone table: %v", res[0].Err)
	}
	before := okRows(t, "Java read", res[1])
	// Java's $files lists real buckets only; the manifests say what is in
	// bucket-postpone.
	postponed := postponedFiles(t, wh, "db.pp", rsP1)
	if postponed == 0 {
		t.Fatal("Java's write left no bucket-postpone file; the test would prove nothing")
	}
	pp := openLocal(t, wh, "db.pp")
	if _, err := rescale.Run(ctx, pp, rescale.Options{Partition: map[string]string{"dt": rsP1}}); err == nil || !strings.Contains(err.Error(), "needs the bucket number") {
		t.Fatalf("rescale of a postpone table without N: %v", err)
	}
	post2 := updateAll("w3", rsP1, "q")
	r, err := rescale.Run(ctx, pp, rescale.Options{BucketNum: 3, Partition: map[string]string{"dt": rsP1}, BeforeCommit: func() {
		j.Write(wh, "db.pp", post2)
	}})
	if err != nil {
		t.Fatalf("rescale with a concurrent Java write into bucket-postpone: %v", err)
	}
	if r.Snapshot != r.ReadSnapshot+2 || r.Partitions[0].FromBuckets != 2 || r.Partitions[0].PostponedFiles != postponed {
		t.Fatalf("result %+v (Java's postponed files: %d)", r, postponed)
	}
	res = batch(t, j, []interop.BatchRequest{readReq(wh, "db.pp"), req("files", wh, "db.pp")})
	diffRows(t, "Java read after the rescale", before, okRows(t, "Java read", res[0]))
	diffRows(t, "pypaimon read after the rescale", before, canon(t, interop.Python(t).Read(wh, "db.pp")))
	top := int64(pp.Options().NumLevels - 1)
	files := filesOf(t, "Java $files", res[1])
	checkJavaLayout(t, "db.pp "+rsP1, files, rsP1, 3, top)
	if got := postponedFiles(t, wh, "db.pp", rsP1); got <= postponed {
		t.Fatalf("%d bucket-postpone files in the partition after the rescale, want the %d before and the concurrent writer's", got, postponed)
	}
	for _, f := range files {
		if strings.Contains(fmt.Sprint(f["partition"]), rsP2) {
			if b, _ := f["bucket"].(int64); b > 1 {
				t.Errorf("the other partition has a file in bucket %d", b)
			}
		}
	}
}

// postponedFiles counts the live bucket-postpone files of partition dt
// that are on disk.
func postponedFiles(t *testing.T, wh, name, dt string) int {
	t.Helper()
	tb := openLocal(t, wh, name)
	s, err := tb.LatestSnapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tb.FileSet(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range fs.Buckets() {
		if b.Bucket != table.BucketPostpone {
			continue
		}
		for i := range b.Files {
			p, err := tb.DataFilePath(&b.Files[i])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p, "dt="+dt+"/") {
				continue
			}
			if _, err := tb.FileIO().Stat(context.Background(), p); err != nil {
				t.Fatalf("bucket-postpone file %s: %v", p, err)
			}
			n++
		}
	}
	return n
}
