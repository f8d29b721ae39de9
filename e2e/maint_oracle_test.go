package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/fixtures"
	"github.com/compactd/compactd/interop"
	"github.com/compactd/compactd/maint"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// maintSpec is a tiny partitioned primary-key table. write-only keeps Java's
// writer from compacting, so every commit is exactly one APPEND snapshot and
// snapshot ids are predictable.
func maintSpec() fixtures.Spec {
	return fixtures.Spec{
		Columns: []fixtures.Column{
			{Name: "dt", Type: "STRING NOT NULL"},
			{Name: "id", Type: "INT NOT NULL"},
			{Name: "v", Type: "STRING"},
		},
		PrimaryKeys:   []string{"dt", "id"},
		PartitionKeys: []string{"dt"},
		Bucket:        1,
		Options:       map[string]string{"write-only": "true"},
	}
}

// commitsJSONL renders commits of rows "dt:id:v" (a "-" prefix deletes) as
// the oracle's write script for user.
func commitsJSONL(user string, commits ...[]string) []byte {
	var b strings.Builder
	for c, rows := range commits {
		for _, r := range rows {
			kind := "+I"
			if strings.HasPrefix(r, "-") {
				kind, r = "-D", r[1:]
			}
			f := strings.SplitN(r, ":", 3)
			id, _ := strconv.Atoi(f[1])
			fmt.Fprintf(&b, `{"dt":%q,"id":%d,"v":%q,"_kind":%q,"_user":%q,"_commit":%d}`+"\n", f[0], id, f[2], kind, user, c+1)
		}
	}
	return []byte(b.String())
}

func tempFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := writeFile(p, data); err != nil {
		t.Fatal(err)
	}
	return p
}

func readReq(wh, tbl string, extra ...string) interop.BatchRequest {
	f := flags(wh, tbl)
	for i := 0; i+1 < len(extra); i += 2 {
		f[extra[i]] = extra[i+1]
	}
	return interop.BatchRequest{Verb: "read", Flags: f}
}

func okRows(t *testing.T, what string, r interop.BatchResult) []string {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: %v", what, r.Err)
	}
	return canon(t, rowsOf(t, r))
}

// TestTagsRollbackAndPartitionExpiryAgainstJava proves issue 6's metadata
// operations on tables Java Paimon wrote, with Java reading the results:
//   - tags compactd creates (with and without a TTL) are time-travel
//     readable by Java and hold the tagged snapshot's rows;
//   - rollback to a snapshot leaves the rows Java read at that snapshot,
//     removes newer snapshots and tags, and Java keeps committing on top;
//   - rollback to a tag whose snapshot expired restores the snapshot from
//     the tag;
//   - partition expiry commits OVERWRITE snapshots after which Java reads no
//     row of the expired partitions, while time travel still sees them.
func TestTagsRollbackAndPartitionExpiryAgainstJava(t *testing.T) {
	ctx := context.Background()
	j := interop.Java(t)
	wh := t.TempDir()
	spec := tempFile(t, "spec.json", maintSpec().JSON())
	writes := commitsJSONL("w1",
		[]string{"2020-01-01:1:a", "2099-01-01:2:b"},
		[]string{"2020-01-01:1:a2", "2020-01-02:3:c", "latest:4:d"},
		[]string{"-2020-01-02:3:c", "2099-01-01:5:e", "2020-01-01:6:f"},
	)
	rows := tempFile(t, "rows.jsonl", writes)
	tables := []string{"db.rb", "db.rbtag", "db.pe"}
	var reqs []interop.BatchRequest
	for _, tbl := range tables {
		f := flags(wh, tbl)
		f["spec"], f["rows"] = spec, rows
		reqs = append(reqs, interop.BatchRequest{Verb: "create", Flags: f})
	}
	for s := 1; s <= 3; s++ {
		reqs = append(reqs, readReq(wh, "db.rb", "snapshot", strconv.Itoa(s)))
	}
	res := batch(t, j, reqs)
	for i, tbl := range tables {
		if res[i].Err != nil {
			t.Fatalf("create %s: %v", tbl, res[i].Err)
		}
	}
	at := map[int][]string{}
	for s := 1; s <= 3; s++ {
		at[s] = okRows(t, fmt.Sprintf("Java read at snapshot %d", s), res[len(tables)+s-1])
	}
	if slices.Equal(at[1], at[2]) || slices.Equal(at[2], at[3]) {
		t.Fatal("the commits did not change the rows; the test would prove nothing")
	}

	// db.rb: tags on every snapshot, then rollback to snapshot 2.
	rb := openLocal(t, wh, "db.rb")
	ttl := time.Hour
	for s, name := range map[int64]string{1: "t1", 2: "t2", 3: "t3"} {
		o := maint.CreateTagOptions{Snapshot: s}
		if name == "t1" {
			o.TimeRetained = &ttl
		}
		if _, err := maint.CreateTag(ctx, rb, name, o); err != nil {
			t.Fatalf("create tag %s: %v", name, err)
		}
	}
	if _, err := maint.CreateTag(ctx, rb, "t2", maint.CreateTagOptions{}); err == nil {
		t.Fatal("creating an existing tag succeeded")
	}
	tag1, err := rb.Tag(ctx, "t1")
	if err != nil || tag1.CreateTime == nil || tag1.TimeRetained == nil || *tag1.TimeRetained != ttl {
		t.Fatalf("tag t1 lacks its TTL fields: %+v, %v", tag1, err)
	}
	rbRes, err := maint.RollbackToSnapshot(ctx, rb, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rbRes.DeletedSnapshots, []int64{3}) || !slices.Equal(rbRes.DeletedTags, []string{"t3"}) || rbRes.Recreated {
		t.Fatalf("rollback to 2: %+v", rbRes)
	}
	if id, ok, _ := rb.ReadLatestHint(ctx); !ok || id != 2 {
		t.Fatalf("LATEST hint after rollback = %d (%v), want 2", id, ok)
	}

	// db.rbtag: tag snapshot 1, expire it, roll back to the tag.
	rt := openLocal(t, wh, "db.rbtag")
	if _, err := maint.CreateTag(ctx, rt, "old", maint.CreateTagOptions{Snapshot: 1}); err != nil {
		t.Fatal(err)
	}
	eo := expire.DefaultOptions()
	eo.RetainMin, eo.RetainMax, eo.TimeRetained = 1, 1, 0
	if rep, err := expire.Run(ctx, reach.TableSource(rt), expire.RunOptions{Options: eo, Now: time.Now()}); err != nil || !slices.Equal(rep.Snapshots, []int64{1, 2}) {
		t.Fatalf("expire: %+v, %v", rep.Snapshots, err)
	}
	tagRes, err := maint.RollbackToTag(ctx, rt, "old")
	if err != nil {
		t.Fatal(err)
	}
	if !tagRes.Recreated || !slices.Equal(tagRes.DeletedSnapshots, []int64{3}) {
		t.Fatalf("rollback to tag old: %+v", tagRes)
	}
	if id, ok, _ := rt.ReadEarliestHint(ctx); !ok || id != 1 {
		t.Fatalf("EARLIEST hint after rollback to an expired tag = %d (%v), want 1", id, ok)
	}

	// db.pe: drop partitions older than a day, one partition per commit.
	pe := openLocal(t, wh, "db.pe")
	po := maint.PartitionExpireOptions{ExpirationTime: 24 * time.Hour, Strategy: maint.StrategyValuesTime, MaxNum: 100, BatchSize: 1}
	dry, err := maint.ExpirePartitions(ctx, pe, maint.PartitionExpireRunOptions{Options: &po, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	// dt=2020-01-02 reads empty but still has live files (the insert and
	// the delete record); Paimon drops it too.
	if got := specsOf(dry.Partitions); !slices.Equal(got, []string{"dt=2020-01-01", "dt=2020-01-02"}) || len(dry.Snapshots) != 0 {
		t.Fatalf("dry run: %+v", dry)
	}
	if id, _ := pe.LatestSnapshotID(ctx); id != 3 {
		t.Fatalf("the dry run committed: latest is %d", id)
	}
	peRep, err := maint.ExpirePartitions(ctx, pe, maint.PartitionExpireRunOptions{Options: &po})
	if err != nil {
		t.Fatal(err)
	}
	if got := specsOf(peRep.Partitions); !slices.Equal(got, []string{"dt=2020-01-01", "dt=2020-01-02"}) {
		t.Fatalf("expired partitions %v, want dt=2020-01-01 and dt=2020-01-02 (2099-01-01 is young, 'latest' is not a date)", got)
	}
	if !slices.Equal(peRep.Snapshots, []int64{4, 5}) {
		t.Fatalf("partition expiry committed %v, want snapshots 4 and 5 (batch size 1)", peRep.Snapshots)
	}
	for _, id := range peRep.Snapshots {
		s, err := pe.Snapshot(ctx, id)
		if err != nil || s.CommitKind != table.CommitOverwrite {
			t.Fatalf("snapshot %d: %v, kind %v", id, err, s)
		}
	}
	if again, err := maint.ExpirePartitions(ctx, pe, maint.PartitionExpireRunOptions{Options: &po}); err != nil || len(again.Partitions) != 0 {
		t.Fatalf("a second run drops %+v (%v), want nothing", again.Partitions, err)
	}

	// One JVM reads everything back and commits on top of the rollbacks.
	more := tempFile(t, "more.jsonl", commitsJSONL("w2", []string{"2099-01-01:9:z"}))
	wrb, wrt := flags(wh, "db.rb"), flags(wh, "db.rbtag")
	wrb["rows"], wrt["rows"] = more, more
	reqs = []interop.BatchRequest{
		readReq(wh, "db.rb"),                           // 0
		readReq(wh, "db.rb", "tag", "t1"),              // 1
		readReq(wh, "db.rb", "tag", "t2"),              // 2
		{Verb: "write", Flags: wrb},                    // 3
		readReq(wh, "db.rb"),                           // 4
		readReq(wh, "db.rbtag"),                        // 5
		readReq(wh, "db.rbtag", "tag", "old"),          // 6
		{Verb: "write", Flags: wrt},                    // 7
		readReq(wh, "db.rbtag"),                        // 8
		readReq(wh, "db.pe"),                           // 9
		readReq(wh, "db.pe", "snapshot", "3"),          // 10
		{Verb: "snapshots", Flags: flags(wh, "db.pe")}, // 11
	}
	res = batch(t, j, reqs)
	diffRows(t, "Java reads db.rb after rollback to 2", at[2], okRows(t, "read db.rb", res[0]))
	diffRows(t, "Java reads tag t1 (with TTL)", at[1], okRows(t, "read tag t1", res[1]))
	diffRows(t, "Java reads tag t2", at[2], okRows(t, "read tag t2", res[2]))
	if res[3].Err != nil || res[7].Err != nil {
		t.Fatalf("Java cannot commit after a rollback: %v / %v", res[3].Err, res[7].Err)
	}
	newRow := canon(t, []interop.Row{{"dt": "2099-01-01", "id": int64(9), "v": "z"}})
	diffRows(t, "Java reads db.rb after its commit on the rollback", sortedUnion(at[2], newRow), okRows(t, "read db.rb", res[4]))
	diffRows(t, "Java reads db.rbtag after rollback to an expired tag", at[1], okRows(t, "read db.rbtag", res[5]))
	diffRows(t, "Java reads tag old", at[1], okRows(t, "read tag old", res[6]))
	diffRows(t, "Java reads db.rbtag after its commit on the rollback", sortedUnion(at[1], newRow), okRows(t, "read db.rbtag", res[8]))
	var young []string
	for _, r := range at[3] {
		if !strings.Contains(r, `"2020-`) {
			young = append(young, r)
		}
	}
	if len(young) == 0 || len(young) == len(at[3]) {
		t.Fatalf("bad test data: %v", at[3])
	}
	diffRows(t, "Java reads db.pe after partition expiry", young, okRows(t, "read db.pe", res[9]))
	diffRows(t, "Java time-travels db.pe to before the expiry", at[3], okRows(t, "read db.pe@3", res[10]))
	snaps := okRows(t, "snapshots db.pe", res[11])
	overwrites := 0
	for _, s := range snaps {
		if strings.Contains(s, `"commit_kind":"OVERWRITE"`) {
			overwrites++
		}
	}
	if len(snaps) != 5 || overwrites != 2 {
		t.Fatalf("Java's $snapshots of db.pe: %v", snaps)
	}
	for _, name := range []string{"db.rb", "db.rbtag", "db.pe"} {
		got, err := scanRows(wh, name)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]interop.BatchResult{"db.rb": res[4], "db.rbtag": res[8], "db.pe": res[9]}[name]
		diffRows(t, "compactd reads "+name, okRows(t, name, want), canon(t, got))
	}
}

func specsOf(ps []maint.ExpiredPartition) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Spec
	}
	return out
}

func sortedUnion(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return out
}
