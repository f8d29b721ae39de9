package maint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

const fixtureDir = "../../shared/fixtures/paimon-cpp/parquet"

// copyFixture copies a Java-written table to a temp dir and opens it.
func copyFixture(t *testing.T, rel string) *table.Table {
	t.Helper()
	src := filepath.Join(fixtureDir, rel)
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("fixture %s: %v", src, err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, r), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, r), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := table.OpenPath(context.Background(), fileio.NewLocal(), dst)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

const morTable = "pk_table_scan_and_read_mor.db/pk_table_scan_and_read_mor" // snapshots 1-5, partitions f1=10, f1=20

func TestCreateTagWritesSnapshotJSONAndIsExclusive(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	tag, err := CreateTag(ctx, tb, "v1", CreateTagOptions{Snapshot: 3})
	if err != nil {
		t.Fatal(err)
	}
	if tag.ID != 3 || tag.CreateTime != nil || tag.TimeRetained != nil {
		t.Fatalf("tag %+v", tag)
	}
	// Without a TTL the tag file is what Java 1.4.2's createTag wrote for
	// the same snapshot of the same table (testdata; snapshot.toJson() of
	// its own Snapshot class, without the legacy fields of the fixture).
	assertSameBytes(t, tb.Paths().TagPath("v1"), "testdata/java-1.4.2-tag-of-snapshot-3")
	if _, err := CreateTag(ctx, tb, "v1", CreateTagOptions{Snapshot: 1}); !errors.Is(err, ErrTagExists) {
		t.Fatalf("second create: %v, want ErrTagExists", err)
	}
	if again, _ := tb.Tag(ctx, "v1"); again.ID != 3 {
		t.Fatal("an existing tag was replaced")
	}
	latest, err := CreateTag(ctx, tb, "head", CreateTagOptions{})
	if err != nil || latest.ID != 5 {
		t.Fatalf("tag of the latest snapshot: %+v %v", latest, err)
	}
	for _, bad := range []string{"", "  ", "a/b"} {
		if _, err := CreateTag(ctx, tb, bad, CreateTagOptions{}); err == nil {
			t.Errorf("tag name %q accepted", bad)
		}
	}
	if _, err := CreateTag(ctx, tb, "nope", CreateTagOptions{Snapshot: 42}); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("tag of a missing snapshot: %v", err)
	}
}

func TestCreateTagWithTTLWritesJavaTimeFields(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	old := time.Local
	time.Local = time.UTC
	defer func() { time.Local = old }()
	// The creation time of the tag Java 1.4.2 wrote (testdata), with
	// createTag(name, 2, Duration.ofMillis(129600500)) on a JVM in UTC.
	now := time.Date(2026, 11, 29, 12, 19, 19, 290190034, time.UTC)
	d := 36*time.Hour + 500*time.Millisecond
	if _, err := CreateTag(ctx, tb, "ttl", CreateTagOptions{Snapshot: 2, TimeRetained: &d, Now: now}); err != nil {
		t.Fatal(err)
	}
	// Jackson's JavaTimeModule: LocalDateTime as an array with nanos,
	// Duration as decimal seconds; both after the snapshot's keys.
	assertSameBytes(t, tb.Paths().TagPath("ttl"), "testdata/java-1.4.2-tag-of-snapshot-2-ttl")
	got, err := tb.Tag(ctx, "ttl")
	if err != nil || got.ID != 2 || *got.TimeRetained != d {
		t.Fatalf("%+v %v", got, err)
	}
	// tag.default-time-retained applies when no TTL is given.
	tb2 := copyFixture(t, morTable)
	tb2.Options().Raw["tag.default-time-retained"] = "2 h"
	dt, err := CreateTag(ctx, tb2, "dflt", CreateTagOptions{Now: now})
	if err != nil || dt.TimeRetained == nil || *dt.TimeRetained != 2*time.Hour {
		t.Fatalf("default TTL: %+v %v", dt, err)
	}
}

func TestDeleteAndExpireTags(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	if err := DeleteTag(ctx, tb, "missing"); !errors.Is(err, ErrTagNotFound) {
		t.Fatalf("delete of a missing tag: %v", err)
	}
	hour := time.Hour
	now := time.Now()
	mk := func(name string, snap int64, ttl *time.Duration, at time.Time) {
		if _, err := CreateTag(ctx, tb, name, CreateTagOptions{Snapshot: snap, TimeRetained: ttl, Now: at}); err != nil {
			t.Fatal(err)
		}
	}
	mk("old-ttl", 1, &hour, now.Add(-2*hour))
	mk("young-ttl", 2, &hour, now.Add(-30*time.Minute))
	mk("no-ttl", 3, nil, now)
	rep, err := ExpireTags(ctx, tb, now, true)
	if err != nil || len(rep.Expired) != 1 || rep.Expired[0].Name != "old-ttl" {
		t.Fatalf("dry run: %+v %v", rep, err)
	}
	if names, _ := tb.TagNames(ctx); len(names) != 3 {
		t.Fatalf("the dry run deleted tags: %v", names)
	}
	if _, err := ExpireTags(ctx, tb, now, false); err != nil {
		t.Fatal(err)
	}
	if names, _ := tb.TagNames(ctx); !slices.Equal(names, []string{"no-ttl", "young-ttl"}) {
		t.Fatalf("tags left %v", names)
	}
	if err := DeleteTag(ctx, tb, "no-ttl"); err != nil {
		t.Fatal(err)
	}
	tags, err := ListTags(ctx, tb)
	if err != nil || len(tags) != 1 || tags[0].Name != "young-ttl" {
		t.Fatalf("%v %v", tags, err)
	}
}

func TestRollbackToSnapshot(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	for name, snap := range map[string]int64{"a": 2, "b": 3, "c": 4, "d": 5} {
		if _, err := CreateTag(ctx, tb, name, CreateTagOptions{Snapshot: snap}); err != nil {
			t.Fatal(err)
		}
	}
	manifests, _ := os.ReadDir(filepath.Join(tb.Path(), "manifest"))
	res, err := RollbackToSnapshot(ctx, tb, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.DeletedSnapshots, []int64{5, 4}) || !slices.Equal(res.DeletedTags, []string{"d", "c"}) || res.Recreated {
		t.Fatalf("%+v", res)
	}
	ids, _ := tb.SnapshotIDs(ctx)
	if !slices.Equal(ids, []int64{1, 2, 3}) {
		t.Fatalf("snapshots left %v", ids)
	}
	if id, ok, _ := tb.ReadLatestHint(ctx); !ok || id != 3 {
		t.Fatalf("LATEST %d %v", id, ok)
	}
	if names, _ := tb.TagNames(ctx); !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("tags left %v", names)
	}
	after, _ := os.ReadDir(filepath.Join(tb.Path(), "manifest"))
	if len(after) != len(manifests) {
		t.Fatal("rollback deleted manifests; it must leave them to orphan cleanup")
	}
	if _, err := RollbackToSnapshot(ctx, tb, 9); !errors.Is(err, fileio.ErrNotExist) {
		t.Fatalf("rollback to a missing snapshot: %v", err)
	}
}

func TestRollbackToExpiredSnapshotGoesThroughItsTag(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	if _, err := CreateTag(ctx, tb, "keep", CreateTagOptions{Snapshot: 2}); err != nil {
		t.Fatal(err)
	}
	// Expire snapshots 1-3 by hand (metadata only is enough here).
	for _, id := range []int64{1, 2, 3} {
		if err := os.Remove(tb.Paths().SnapshotPath(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.WriteEarliestHint(ctx, 4); err != nil {
		t.Fatal(err)
	}
	res, err := RollbackToSnapshot(ctx, tb, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Recreated || !slices.Equal(res.DeletedSnapshots, []int64{5, 4}) {
		t.Fatalf("%+v", res)
	}
	ids, _ := tb.SnapshotIDs(ctx)
	if !slices.Equal(ids, []int64{2}) {
		t.Fatalf("snapshots %v", ids)
	}
	// The restored file is what Java writes from the tag
	// (taggedSnapshot.toJson(), the same bytes as its tag without a TTL).
	assertSameBytes(t, tb.Paths().SnapshotPath(2), "testdata/java-1.4.2-tag-of-snapshot-2")
	if id, ok, _ := tb.ReadEarliestHint(ctx); !ok || id != 2 {
		t.Fatalf("EARLIEST %d %v", id, ok)
	}
	if _, err := RollbackToTag(ctx, tb, "nope"); !errors.Is(err, ErrTagNotFound) {
		t.Fatalf("rollback to a missing tag: %v", err)
	}
}

func TestRollbackTrimsLongLivedChangelogs(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	dir := tb.Paths().ChangelogDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2, 3, 4} {
		data, _ := os.ReadFile(tb.Paths().SnapshotPath(id))
		if err := os.WriteFile(tb.Paths().ChangelogPath(id), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := RollbackToSnapshot(ctx, tb, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.DeletedChangelogs, []int64{4, 3}) {
		t.Fatalf("%+v", res)
	}
	if hint, _ := os.ReadFile(filepath.Join(dir, "LATEST")); string(hint) != "2" {
		t.Fatalf("changelog LATEST %q", hint)
	}
}

func TestExpirePartitionsOnJavaTable(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	// f1 is an INT partition (10, 20): its values become days of January.
	o := PartitionExpireOptions{ExpirationTime: 24 * time.Hour, Strategy: StrategyValuesTime, MaxNum: 100, TimestampPattern: "2024-01-$f1"}
	now := time.Date(2024, 1, 15, 0, 0, 0, 0, time.Local)
	before, _ := tb.LatestSnapshot(ctx)
	rep, err := ExpirePartitions(ctx, tb, PartitionExpireRunOptions{Options: &o, Now: now, CommitUser: "test-user"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Partitions) != 1 || rep.Partitions[0].Spec != "f1=10" || rep.Partitions[0].Files == 0 || len(rep.Snapshots) != 1 {
		t.Fatalf("%+v", rep)
	}
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != before.ID+1 || s.CommitKind != table.CommitOverwrite || s.CommitIdentifier != table.BatchCommitIdentifier || s.CommitUser != "test-user" {
		t.Fatalf("snapshot %+v", s)
	}
	fs, err := tb.FileSet(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Partitions) != 1 || fs.Partitions[0].Path != "f1=20" {
		t.Fatalf("live partitions after expiry: %d", len(fs.Partitions))
	}
	if s.TotalRecordCount != before.TotalRecordCount+s.DeltaRecordCount || s.DeltaRecordCount >= 0 {
		t.Fatalf("record counts: before %d, now %d, delta %d", before.TotalRecordCount, s.TotalRecordCount, s.DeltaRecordCount)
	}
	// Nothing more to do.
	again, err := ExpirePartitions(ctx, tb, PartitionExpireRunOptions{Options: &o, Now: now})
	if err != nil || len(again.Partitions) != 0 || len(again.Snapshots) != 0 {
		t.Fatalf("%+v %v", again, err)
	}
}

func TestExpirePartitionsRefusals(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	if _, err := ExpirePartitions(ctx, tb, PartitionExpireRunOptions{}); err == nil || !strings.Contains(err.Error(), "partition.expiration-time") {
		t.Fatalf("no expiration time: %v", err)
	}
	// Partitions with deletion-vector index files cannot be dropped by a
	// commit that keeps the index manifest.
	dv := copyFixture(t, "pk_table_with_alter_table.db/pk_table_with_alter_table")
	o := PartitionExpireOptions{ExpirationTime: time.Hour, Strategy: StrategyValuesTime, MaxNum: 100, TimestampPattern: "2000-01-0$key0"}
	latest, _ := dv.LatestSnapshotID(ctx)
	_, err := ExpirePartitions(ctx, dv, PartitionExpireRunOptions{Options: &o})
	if err == nil || !strings.Contains(err.Error(), "index file") {
		t.Fatalf("DV table: %v", err)
	}
	if id, _ := dv.LatestSnapshotID(ctx); id != latest {
		t.Fatal("a refused expiry committed")
	}
}

func TestExpirePartitionsBatchesWithinMaxNum(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2024, 2, 1, 0, 0, 0, 0, time.Local) // both f1=10 and f1=20 are old
	for _, tc := range []struct {
		maxNum, batch int
		want          []string
		commits       int
	}{
		{maxNum: 1, batch: 0, want: []string{"f1=10"}, commits: 1},
		{maxNum: 1, batch: 1, want: []string{"f1=10"}, commits: 1},
		{maxNum: 2, batch: 1, want: []string{"f1=10", "f1=20"}, commits: 2},
		{maxNum: 100, batch: 0, want: []string{"f1=10", "f1=20"}, commits: 1},
	} {
		tb := copyFixture(t, morTable)
		before, _ := tb.LatestSnapshotID(ctx)
		o := PartitionExpireOptions{ExpirationTime: time.Hour, Strategy: StrategyValuesTime, MaxNum: tc.maxNum, BatchSize: tc.batch, TimestampPattern: "2024-01-$f1"}
		rep, err := ExpirePartitions(ctx, tb, PartitionExpireRunOptions{Options: &o, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range rep.Partitions {
			got = append(got, p.Spec)
		}
		after, _ := tb.LatestSnapshotID(ctx)
		if !slices.Equal(got, tc.want) || len(rep.Snapshots) != tc.commits || after != before+int64(tc.commits) {
			t.Errorf("max-num %d batch %d: dropped %v in %v (latest %d -> %d)", tc.maxNum, tc.batch, got, rep.Snapshots, before, after)
		}
	}
}

func TestRollbackToTimestampPicksTheNewestSnapshotAtOrBefore(t *testing.T) {
	ctx := context.Background()
	tb := copyFixture(t, morTable)
	var times []int64
	for id := int64(1); id <= 5; id++ {
		s, err := tb.Snapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, s.TimeMillis)
	}
	if _, err := RollbackToTimestamp(ctx, tb, time.UnixMilli(times[0]-1)); err == nil {
		t.Fatal("rollback to before the first snapshot succeeded")
	}
	res, err := RollbackToTimestamp(ctx, tb, time.UnixMilli(times[3]+1))
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshot != 4 || !slices.Equal(res.DeletedSnapshots, []int64{5}) {
		t.Fatalf("%+v", res)
	}
	res, err = RollbackToTimestamp(ctx, tb, time.UnixMilli(times[1]))
	if err != nil || res.Snapshot != 2 {
		t.Fatalf("exact commit time: %+v %v", res, err)
	}
}

func assertSameBytes(t *testing.T, got, want string) {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Fatalf("%s differs from %s:\n%s\nwant\n%s", got, want, g, w)
	}
}

func TestExpirePartitionsRefusesMetastorePartitionedTables(t *testing.T) {
	tb := copyFixture(t, morTable)
	tb.Options().Raw["metastore.partitioned-table"] = "true"
	o := PartitionExpireOptions{ExpirationTime: time.Hour, Strategy: StrategyValuesTime, MaxNum: 100, TimestampPattern: "2024-01-$f1"}
	if _, err := ExpirePartitions(context.Background(), tb, PartitionExpireRunOptions{Options: &o}); err == nil || !strings.Contains(err.Error(), "metastore") {
		t.Fatalf("err %v", err)
	}
}
