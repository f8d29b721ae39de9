package compact_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

func bigint(nullable bool) table.DataType {
	return table.DataType{Root: table.TypeBigInt, Nullable: nullable}
}
func str(nullable bool) table.DataType {
	return table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: nullable}
}

// newTable creates db.t with columns k BIGINT, p STRING (partition), a, b, c.
func newTable(t *testing.T, opts map[string]string) *table.Table {
	t.Helper()
	fields := table.RowType{
		{ID: 0, Name: "k", Type: bigint(false)},
		{ID: 1, Name: "p", Type: str(false)},
		{ID: 2, Name: "a", Type: bigint(true)},
		{ID: 3, Name: "b", Type: str(true)},
		{ID: 4, Name: "c", Type: bigint(true)},
	}
	if opts["bucket"] == "" {
		opts["bucket"] = "2"
	}
	s, err := table.NewTableSchema(0, fields, 4, []string{"p"}, []string{"k", "p"}, opts, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(context.Background(), fileio.NewLocal(), t.TempDir(), "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func scanRows(t *testing.T, tb *table.Table) []string {
	t.Helper()
	ctx := context.Background()
	tb = reopen(t, tb)
	sc, err := scan.New(ctx, tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	err = sc.Each(ctx, func(r table.Row) error {
		b, err := scan.AppendJSON(nil, sc.ReadType(), r)
		rows = append(rows, string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(rows)
	return rows
}

func reopen(t *testing.T, tb *table.Table) *table.Table {
	t.Helper()
	t2, err := table.OpenPath(context.Background(), tb.FileIO(), tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	return t2
}

// writeRandom commits `commits` batches of random upserts and deletes.
func writeRandom(t *testing.T, tb *table.Table, rng *rand.Rand, user string, commits, rowsPerCommit, keys int, deletes bool) {
	t.Helper()
	writeRandomRows(t, tb, rng, user, commits, rowsPerCommit, keys, deletes, nil)
}

// writeRandomRows is writeRandom with extra appending further columns to
// each row (a table whose schema evolved).
func writeRandomRows(t *testing.T, tb *table.Table, rng *rand.Rand, user string, commits, rowsPerCommit, keys int, deletes bool, extra func(table.Row) table.Row) {
	t.Helper()
	ctx := context.Background()
	w, err := write.NewWriter(ctx, tb, user)
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c < commits; c++ {
		for i := 0; i < rowsPerCommit; i++ {
			k := int64(rng.IntN(keys))
			row := table.Row{k, fmt.Sprintf("p%d", k%3), nil, nil, nil}
			if rng.IntN(4) > 0 {
				row[2] = int64(rng.IntN(1000))
			}
			if rng.IntN(4) > 0 {
				row[3] = fmt.Sprintf("s%d", rng.IntN(100))
			}
			row[4] = int64(c*rowsPerCommit + i)
			if extra != nil {
				row = extra(row)
			}
			kind := table.RowKindInsert
			if deletes && rng.IntN(8) == 0 {
				kind = table.RowKindDelete
			}
			if err := w.Write(kind, row); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// latestFileSet is the live file set of tb's latest snapshot, read afresh.
func latestFileSet(t *testing.T, tb *table.Table) *table.FileSet {
	t.Helper()
	ctx := context.Background()
	tb = reopen(t, tb)
	s, err := tb.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tb.FileSet(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func maxRuns(t *testing.T, tb *table.Table) (runs int, buckets int) {
	t.Helper()
	fs := latestFileSet(t, tb)
	for _, b := range fs.Buckets() {
		runs = max(runs, len(b.Runs))
		buckets++
	}
	return runs, buckets
}

func TestCompactionKeepsTheRowsOfEveryEngine(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("COMPACTD_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (set COMPACTD_SEED to reproduce)", seed)
	cases := []struct {
		name    string
		opts    map[string]string
		deletes bool
	}{
		{"deduplicate", map[string]string{}, true},
		{"deduplicate ignoring deletes", map[string]string{"ignore-delete": "true"}, true},
		{"partial-update", map[string]string{"merge-engine": "partial-update"}, false},
		{"partial-update with a sequence group", map[string]string{"merge-engine": "partial-update", "fields.c.sequence-group": "a,b"}, true},
		{"aggregation", map[string]string{"merge-engine": "aggregation", "fields.a.aggregate-function": "sum", "fields.b.aggregate-function": "max", "fields.c.aggregate-function": "last_non_null_value"}, false},
		{"sequence.field", map[string]string{"sequence.field": "c"}, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			tb := newTable(t, tc.opts)
			writeRandom(t, tb, rng, "writer", 12, 40, 60, tc.deletes)
			before := scanRows(t, tb)
			ctx := context.Background()
			// Minor compactions until the planner has nothing left to do.
			for n := 0; ; n++ {
				sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if sum.Snapshot == 0 {
					break
				}
				if n > 20 {
					t.Fatal("planner keeps finding work")
				}
			}
			if got := scanRows(t, tb); !slices.Equal(got, before) {
				t.Fatalf("rows changed by minor compaction:\nbefore %v\nafter  %v", before, got)
			}
			if runs, _ := maxRuns(t, tb); runs > 5 {
				t.Fatalf("a bucket still has %d sorted runs, over the trigger of 5", runs)
			}
			sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := scanRows(t, tb); !slices.Equal(got, before) {
				t.Fatalf("rows changed by full compaction (snapshot %d)", sum.Snapshot)
			}
			if runs, buckets := maxRuns(t, tb); runs != 1 || buckets == 0 {
				t.Fatalf("after full compaction: max %d runs over %d buckets, want 1", runs, buckets)
			}
		})
	}
}

func TestCompactionRebasesOverAConcurrentWriter(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tb := newTable(t, map[string]string{})
	writeRandom(t, tb, rng, "writer", 6, 30, 50, true)
	var writerSnapshot int64
	sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true, BeforeCommit: func() {
		writeRandom(t, tb, rng, "late-writer", 1, 30, 80, false)
		s, _ := reopen(t, tb).LatestSnapshot(ctx)
		writerSnapshot = s.ID
	}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Snapshot != writerSnapshot+1 || sum.Abandoned != 0 {
		t.Fatalf("compaction committed snapshot %d (abandoned %d), want %d right after the writer's", sum.Snapshot, sum.Abandoned, writerSnapshot+1)
	}
	// The writer's rows are live: a second full compaction sees its level-0
	// files and the scan equals a scan of the table before it.
	before := scanRows(t, tb)
	s, _ := reopen(t, tb).Snapshot(ctx, writerSnapshot)
	if s.CommitUser != "late-writer" {
		t.Fatalf("snapshot %d by %s", writerSnapshot, s.CommitUser)
	}
	if _, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true}); err != nil {
		t.Fatal(err)
	}
	if got := scanRows(t, tb); !slices.Equal(got, before) {
		t.Fatal("rows changed by the second compaction")
	}
}

// snapshotThief lets a writer take the id of the first snapshot a commit
// publishes through it, just before the commit's own exclusive create.
type snapshotThief struct {
	fileio.FileIO
	steal func()
	done  bool
}

func (s *snapshotThief) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if !s.done && strings.Contains(p, "/snapshot/snapshot-") {
		s.done = true
		s.steal()
	}
	return s.FileIO.WriteExclusive(ctx, p, data)
}

// A commit that loses its snapshot id to a concurrent writer rebases, and
// the summary counts it (the daemon's compactd_commit_rebases_total).
func TestCompactionCountsTheRebasesOfItsCommit(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	tb := newTable(t, map[string]string{})
	writeRandom(t, tb, rng, "writer", 6, 30, 50, false)
	thief := &snapshotThief{FileIO: tb.FileIO(), steal: func() { writeRandom(t, tb, rng, "late-writer", 1, 10, 50, false) }}
	ours, err := table.OpenPath(ctx, thief, tb.Path())
	if err != nil {
		t.Fatal(err)
	}
	sum, err := compact.Run(ctx, ours, compact.Options{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if !thief.done || sum.Snapshot == 0 || sum.Commits != (compact.CommitStats{Rebases: 1}) {
		t.Fatalf("snapshot %d, commit stats %+v: want one rebase past the late writer's snapshot", sum.Snapshot, sum.Commits)
	}
	s, err := reopen(t, tb).Snapshot(ctx, sum.Snapshot-1)
	if err != nil || s.CommitUser != "late-writer" {
		t.Fatalf("snapshot before ours: %+v, %v; want the late writer's", s, err)
	}
}

// liveAndOnDisk returns the data files of the table's latest snapshot and
// the data files in its bucket directories.
func liveAndOnDisk(t *testing.T, tb *table.Table) (live, disk []string) {
	t.Helper()
	fs := latestFileSet(t, tb)
	for _, b := range fs.Buckets() {
		for i := range b.Files {
			live = append(live, b.Files[i].File.FileName)
		}
	}
	err := filepath.Walk(tb.Path(), func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(info.Name(), "data-") {
			disk = append(disk, info.Name())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(live)
	sort.Strings(disk)
	return live, disk
}

func TestCompactionAbandonsJobsWhoseInputsAConcurrentCompactionTook(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	tb := newTable(t, map[string]string{})
	writeRandom(t, tb, rng, "writer", 6, 30, 50, true)
	before := scanRows(t, tb)
	_, diskBefore := liveAndOnDisk(t, tb)
	var other *compact.Summary
	sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true, MaxRebases: 1, BeforeCommit: func() {
		var err error
		if other, err = compact.Run(ctx, reopen(t, tb), compact.Options{Full: true}); err != nil {
			t.Error(err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if other == nil || other.Snapshot == 0 || sum.Snapshot != 0 || sum.Abandoned != other.Buckets {
		t.Fatalf("want the concurrent compaction to win and ours to abandon every job: other=%+v ours snapshot=%d abandoned=%d", other, sum.Snapshot, sum.Abandoned)
	}
	if sum.Commits != (compact.CommitStats{Conflicts: 1}) {
		t.Fatalf("commit stats %+v, want the one conflict that abandoned the jobs", sum.Commits)
	}
	if got := scanRows(t, tb); !slices.Equal(got, before) {
		t.Fatal("rows changed")
	}
	// Only the winner's outputs were added to the directories.
	live, disk := liveAndOnDisk(t, tb)
	want := append(slices.Clone(diskBefore), live...)
	sort.Strings(want)
	want = slices.Compact(want)
	if !slices.Equal(disk, want) {
		t.Fatalf("abandoned outputs were left behind:\non disk %v\nwant    %v", disk, want)
	}
}

func TestCompactionOfACorruptFileFailsNamingItAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	tb := newTable(t, map[string]string{"bucket": "1"})
	writeRandom(t, tb, rng, "writer", 4, 20, 30, false)
	live, _ := liveAndOnDisk(t, tb)
	victim := ""
	filepath.Walk(tb.Path(), func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == live[0] {
			victim = p
		}
		return nil
	})
	data, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	snapBefore, _ := reopen(t, tb).LatestSnapshotID(ctx)
	_, diskBefore := liveAndOnDisk(t, tb)
	_, err = compact.Run(ctx, reopen(t, tb), compact.Options{Full: true})
	if err == nil || !strings.Contains(err.Error(), live[0]) {
		t.Fatalf("want an error naming %s, got %v", live[0], err)
	}
	snapAfter, _ := reopen(t, tb).LatestSnapshotID(ctx)
	_, diskAfter := liveAndOnDisk(t, tb)
	if snapAfter != snapBefore || !slices.Equal(diskAfter, diskBefore) {
		t.Fatalf("failed compaction changed the table: snapshot %d -> %d, files %d -> %d", snapBefore, snapAfter, len(diskBefore), len(diskAfter))
	}
}

func TestUnsupportedTablesAreRefusedBeforeAnyWrite(t *testing.T) {
	for _, tc := range []struct{ opts, overrides map[string]string }{
		{map[string]string{"deletion-vectors.enabled": "true", "merge-engine": "first-row"}, nil},
		{map[string]string{"deletion-vectors.enabled": "true", "pk-clustering-override": "true"}, nil},
		// Java rejects these schemas; compactd refuses the last two.
		{map[string]string{"deletion-vectors.enabled": "true", "changelog-producer": "full-compaction"}, nil},
		{map[string]string{"merge-engine": "first-row", "changelog-producer": "full-compaction"}, nil},
		{map[string]string{"force-lookup": "true", "changelog-producer": "full-compaction"}, nil},
		{map[string]string{"changelog-producer": "lookup", "changelog-file.format": "avro"}, nil},
		{map[string]string{"merge-engine": "aggregation"}, map[string]string{"fields.a.aggregate-function": "no_such_function"}},
	} {
		tb := newTable(t, tc.opts)
		writeRandom(t, tb, rand.New(rand.NewPCG(1, 1)), "w", 2, 5, 5, false)
		id, _ := reopen(t, tb).LatestSnapshotID(context.Background())
		_, err := compact.Run(context.Background(), reopen(t, tb), compact.Options{Full: true, Overrides: tc.overrides})
		if err == nil {
			t.Fatalf("%v: compaction was not refused", tc.opts)
		}
		if id2, _ := reopen(t, tb).LatestSnapshotID(context.Background()); id2 != id {
			t.Fatalf("%v: refused compaction committed snapshot %d", tc.opts, id2)
		}
		if !strings.Contains(err.Error(), "db.t") && !strings.Contains(err.Error(), "db.db/t") {
			t.Fatalf("error does not name the table: %v", err)
		}
	}
	// force-lookup tables are compacted through the lookup merge, as Java
	// does (e2e TestForceLookupMinorCompactionMatchesJava).
	for _, tc := range []struct{ opts, overrides map[string]string }{
		{map[string]string{"force-lookup": "true"}, nil},
		{map[string]string{"force-lookup": "true", "merge-engine": "first-row"}, nil},
		{map[string]string{"force-lookup": "true", "merge-engine": "partial-update"}, nil},
		{map[string]string{"force-lookup": "true", "merge-engine": "aggregation", "fields.a.aggregate-function": "sum"}, nil},
		{map[string]string{"force-lookup": "true", "sequence.field": "c"}, nil},
		{map[string]string{"merge-engine": "aggregation"}, map[string]string{"force-lookup": "true"}},
		// Deletion-vector tables of every engine Java allows them with.
		{map[string]string{"deletion-vectors.enabled": "true"}, nil},
		{map[string]string{"deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"}, nil},
		{map[string]string{"deletion-vectors.enabled": "true", "merge-engine": "partial-update"}, nil},
		{map[string]string{"deletion-vectors.enabled": "true", "merge-engine": "aggregation", "fields.a.aggregate-function": "sum"}, nil},
		{map[string]string{"deletion-vectors.enabled": "true", "sequence.field": "c"}, nil},
	} {
		opts := tc.opts
		tb := newTable(t, opts)
		writeRandom(t, tb, rand.New(rand.NewPCG(1, 1)), "w", 2, 5, 5, false)
		if _, err := compact.Run(context.Background(), reopen(t, tb), compact.Options{Full: true, Overrides: tc.overrides}); err != nil {
			t.Errorf("%v: %v", opts, err)
		}
	}
}

// evolveSchema commits schema-<id+1> of tb with extra columns appended and
// options set (nil value: removed), and reopens the table. It writes what
// an ALTER TABLE would (or, for options Java refuses, a hand-edited schema).
func evolveSchema(t *testing.T, tb *table.Table, extra []table.DataField, set map[string]*string) *table.Table {
	t.Helper()
	s := tb.Schema()
	fields := append(slices.Clone(s.Fields), extra...)
	highest := s.HighestFieldID
	for _, f := range extra {
		highest = max(highest, f.ID)
	}
	opts := map[string]string{}
	for k, v := range s.Options {
		opts[k] = v
	}
	for k, v := range set {
		if v == nil {
			delete(opts, k)
		} else {
			opts[k] = *v
		}
	}
	s1, err := table.NewTableSchema(s.ID+1, fields, highest, s.PartitionKeys, s.PrimaryKeys, opts, nil, s.TimeMillis)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s1.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tb.Path(), "schema", table.SchemaFileName(s1.ID)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return reopen(t, tb)
}

// dirState records every entry below root (kind, size, mtime, content).
func dirState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		st := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st += " " + string(data)
		}
		out[p] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ptr(s string) *string { return &s }

// Tables whose schema Java rejects, whose data compactd cannot read, or
// whose compaction Java does more for are refused up front, with an error
// naming the table and the option or column, and the table directory is
// left exactly as it was (issue 12 item 8).
func TestTablesCompactdDoesNotUnderstandAreRefusedNamingTheOptionAndNothingIsWritten(t *testing.T) {
	vector := table.DataType{Root: table.TypeVector, Nullable: true, Length: 2, Element: &table.DataType{Root: table.TypeFloat, Nullable: true}}
	nestedVector := table.DataType{Root: table.TypeRow, Nullable: true, Fields: []table.DataField{{ID: 6, Name: "emb", Type: vector}}}
	for _, c := range []struct {
		name   string
		create map[string]string
		extra  []table.DataField
		set    map[string]*string
		want   string
	}{
		{name: "bucket=0", create: map[string]string{"bucket": "1"}, set: map[string]*string{"bucket": ptr("0")}, want: "bucket=0"},
		{name: "bucket=-3", create: map[string]string{"bucket": "1"}, set: map[string]*string{"bucket": ptr("-3")}, want: "bucket=-3"},
		{name: "vector column", extra: []table.DataField{{ID: 5, Name: "v", Type: vector}}, want: "column v of type VECTOR<FLOAT, 2>"},
		{name: "nested vector column", extra: []table.DataField{{ID: 5, Name: "r", Type: nestedVector}}, want: "column r of type"},
		{name: "pk-btree", create: map[string]string{"deletion-vectors.enabled": "true", "pk-btree.index.columns": "a"}, want: "pk-btree.index.columns=a"},
		{name: "pk-bitmap", create: map[string]string{"deletion-vectors.enabled": "true", "pk-bitmap.index.columns": "b"}, want: "pk-bitmap.index.columns=b"},
		{name: "pk-multivalue", create: map[string]string{"deletion-vectors.enabled": "true", "pk-multivalue.index.columns": "b"}, want: "pk-multivalue.index.columns=b"},
		// Full-text and vector indexes are valid on first-row tables
		// without deletion vectors, which compactd otherwise compacts.
		{name: "pk-full-text", create: map[string]string{"merge-engine": "first-row", "pk-full-text.index.columns": "b"}, want: "pk-full-text.index.columns=b"},
		// Java writes these levels in another format; compactd writes Parquet only.
		{name: "per-level format of the top level", create: map[string]string{"file.format.per.level": "0:avro,5:avro"}, want: "file.format.per.level=0:avro,5:avro makes level-5 files avro"},
		{name: "per-level format of level 1", create: map[string]string{"file.format.per.level": "1:orc"}, want: "makes level-1 files orc"},
		{name: "per-level format under a 3-level table", create: map[string]string{"num-levels": "3", "file.format.per.level": "2:AVRO"}, want: "makes level-2 files avro"},
		{name: "unparsable per-level format", create: map[string]string{"file.format.per.level": "avro"}, want: "file.format.per.level"},
		{name: "file.format=avro", set: map[string]*string{"file.format": ptr("avro")}, want: "file.format=avro"},
		// ORC files are read, but the output would have to be ORC.
		// Postponed buckets: what compactd does not reproduce of Java's.
		{name: "postpone merge-on-read", set: map[string]*string{"bucket": ptr("-2"), "postpone.merge-on-read": ptr("true")}, want: "postpone.merge-on-read=true"},
		{name: "postpone with the mod bucket function", set: map[string]*string{"bucket": ptr("-2"), "bucket-function.type": ptr("mod")}, want: "bucket-function.type=mod"},
		{name: "postpone with a bad default bucket number", set: map[string]*string{"bucket": ptr("-2"), "postpone.default-bucket-num": ptr("0")}, want: "postpone.default-bucket-num"},
		{name: "pk-vector", create: map[string]string{"merge-engine": "first-row"}, extra: []table.DataField{{ID: 5, Name: "v", Type: vector}},
			set: map[string]*string{"pk-vector.index.columns": ptr("v"), "fields.v.pk-vector.index.type": ptr("hnsw")}, want: "pk-vector.index.columns=v"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			opts := map[string]string{}
			for k, v := range c.create {
				opts[k] = v
			}
			tb := newTable(t, opts)
			writeRandom(t, tb, rand.New(rand.NewPCG(7, 8)), "w", 3, 10, 10, false)
			if c.extra != nil || c.set != nil {
				tb = evolveSchema(t, tb, c.extra, c.set)
			}
			before := dirState(t, tb.Path())
			_, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true})
			if err == nil {
				t.Fatal("compaction was not refused")
			}
			if !strings.Contains(err.Error(), tb.Path()) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error naming the table %s and %s, got: %v", tb.Path(), c.want, err)
			}
			if err := compact.Supported(reopen(t, tb), nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Supported (the daemon's check) does not refuse it: %v", err)
			}
			if strings.Contains(c.name, "vector column") {
				// scan refuses VECTOR columns up front too, instead of
				// failing in the middle of its output.
				if _, err := scan.New(ctx, reopen(t, tb), nil); !errors.Is(err, scan.ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("scan of a VECTOR table: %v", err)
				}
			}
			after := dirState(t, tb.Path())
			for p, s := range after {
				if before[p] != s {
					t.Errorf("%s was written", p)
				}
			}
			for p := range before {
				if _, ok := after[p]; !ok {
					t.Errorf("%s was deleted", p)
				}
			}
		})
	}
}

// Append tables keep deletion vectors per file group (combined by file
// name with DELETE entries); compactd refuses to compact them rather than
// drop their vectors.
func TestDeletionVectorAppendTableIsRefused(t *testing.T) {
	fields := table.RowType{{ID: 0, Name: "k", Type: bigint(false)}, {ID: 1, Name: "v", Type: str(true)}}
	s, err := table.NewTableSchema(0, fields, 1, nil, nil, map[string]string{"bucket": "-1", "deletion-vectors.enabled": "true"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(context.Background(), fileio.NewLocal(), t.TempDir(), "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	if err := compact.Supported(tb, nil); err == nil || !strings.Contains(err.Error(), "append table") || !strings.Contains(err.Error(), "db.t") {
		t.Fatalf("Supported = %v, want the append-table refusal naming db.t", err)
	}
}

// A level-0-only format override is what Java's writers use to write Avro
// level-0 files into a Parquet table; compactd reads them and writes the
// output level's Parquet, so Supported accepts it, and a per-level Parquet
// entry or a level beyond num-levels changes nothing.
func TestPerLevelFormatsCompactdWritesAreAccepted(t *testing.T) {
	for _, spec := range []string{"0:avro", "0:avro,1:parquet,5:PARQUET", "0:avro,7:orc", "0:orc"} {
		tb := newTable(t, map[string]string{"file.format.per.level": spec})
		if err := compact.Supported(reopen(t, tb), nil); err != nil {
			t.Errorf("file.format.per.level=%s: %v", spec, err)
		}
	}
	// An ORC table (issue #21) is written in ORC; a Parquet level of it
	// is not what compactd would write.
	if err := compact.Supported(reopen(t, newTable(t, map[string]string{"file.format": "orc", "file.format.per.level": "0:avro,1:orc"})), nil); err != nil {
		t.Errorf("file.format=orc: %v", err)
	}
	if err := compact.Supported(reopen(t, newTable(t, map[string]string{"file.format": "orc", "file.format.per.level": "3:parquet"})), nil); err == nil || !strings.Contains(err.Error(), "level-3 files parquet") {
		t.Errorf("file.format=orc with 3:parquet: %v", err)
	}
	// ORC options Java's writer refuses are refused before anything is
	// written, naming the option.
	for k, v := range map[string]string{"orc.compress": "LZO", "orc.row.index.stride": "500", "orc.stripe.size": "64mb"} {
		if err := compact.Supported(reopen(t, newTable(t, map[string]string{"file.format": "orc", k: v})), nil); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("file.format=orc with %s=%s: %v", k, v, err)
		}
	}
	// An override changing num-levels counts: level 7 is then written.
	tb := newTable(t, map[string]string{"file.format.per.level": "0:avro,7:orc"})
	if err := compact.Supported(reopen(t, tb), map[string]string{"num-levels": "8"}); err == nil || !strings.Contains(err.Error(), "level-7 files orc") {
		t.Errorf("num-levels=8 override with 7:orc: %v", err)
	}
}

// A plan-only PlanTable (`plan`, the daemon's observation) lets the
// manifest entries go before planning: the plan and the planner's view
// are the same as with the entries kept, and nothing can execute it.
func TestPlanOnlyPlansTheSameAndCannotExecute(t *testing.T) {
	ctx := context.Background()
	tb := newTable(t, map[string]string{"num-sorted-run.compaction-trigger": "3"})
	writeRandom(t, tb, rand.New(rand.NewPCG(7, 7)), "w", 6, 200, 500, true)
	now := time.Now()
	full, plan, _, err := compact.PlanTable(ctx, tb, compact.Options{}, now)
	if err != nil {
		t.Fatal(err)
	}
	only, planOnly, _, err := compact.PlanTable(ctx, tb, compact.Options{PlanOnly: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Jobs) == 0 {
		t.Fatal("test table has nothing to plan")
	}
	if !reflect.DeepEqual(plan, planOnly) {
		t.Fatalf("plan-only plan differs:\n%+v\n%+v", planOnly, plan)
	}
	if !reflect.DeepEqual(full.View.Buckets, only.View.Buckets) {
		t.Fatal("plan-only view differs")
	}
	if compact.PostponedOf(full.FileSet, "") != compact.PostponedOf(only.FileSet, "") {
		t.Fatal("plan-only postponed counts differ")
	}
	j := plan.Jobs[0]
	if _, ok := full.Entry(j.ID(), j.Inputs[0].Name); !ok {
		t.Fatal("full view lacks an input's entry")
	}
	if _, ok := only.Entry(j.ID(), j.Inputs[0].Name); ok {
		t.Fatal("plan-only view still finds entries")
	}
	if _, err := compact.Run(ctx, tb, compact.Options{PlanOnly: true}); err == nil || !strings.Contains(err.Error(), "plan-only") {
		t.Fatalf("Run with PlanOnly = %v, want a refusal", err)
	}
}

// manifestReads counts the manifest and manifest-list files opened through
// it while armed.
type manifestReads struct {
	fileio.FileIO
	mu    sync.Mutex
	armed bool
	paths []string
}

func (m *manifestReads) Open(ctx context.Context, p string) (fileio.Reader, error) {
	m.mu.Lock()
	if m.armed && strings.Contains(p, "/manifest/") {
		m.paths = append(m.paths, path.Base(p))
	}
	m.mu.Unlock()
	return m.FileIO.Open(ctx, p)
}

func (m *manifestReads) arm() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.armed = true
	return slices.Clone(m.paths)
}

func (m *manifestReads) read() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.paths)
}

// The commit takes the live files from the plan, reading no manifest again,
// only while the latest snapshot is the one planned from; after a
// concurrent commit it reads the new snapshot's manifests, checks against
// them and rebases as before.
func TestCompactionCommitRereadsManifestsOnlyWhenTheSnapshotChanged(t *testing.T) {
	ctx := context.Background()
	for _, concurrent := range []bool{false, true} {
		t.Run(fmt.Sprintf("concurrent=%v", concurrent), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			tb := newTable(t, map[string]string{})
			writeRandom(t, tb, rng, "writer", 6, 30, 50, true)
			reads := &manifestReads{FileIO: tb.FileIO()}
			ours, err := table.OpenPath(ctx, reads, tb.Path())
			if err != nil {
				t.Fatal(err)
			}
			var writerSnapshot int64
			sum, err := compact.Run(ctx, ours, compact.Options{Full: true, BeforeCommit: func() {
				if concurrent {
					writeRandom(t, tb, rng, "late-writer", 1, 30, 80, false)
					s, _ := reopen(t, tb).LatestSnapshot(ctx)
					writerSnapshot = s.ID
				}
				reads.arm()
			}})
			if err != nil {
				t.Fatal(err)
			}
			got := reads.read()
			if !concurrent {
				if len(got) != 0 || sum.Commits != (compact.CommitStats{}) {
					t.Fatalf("commit on the planned snapshot read %v (commit stats %+v), want no manifest read", got, sum.Commits)
				}
				return
			}
			if len(got) == 0 {
				t.Fatal("commit after a concurrent writer read no manifest: it cannot have checked the writer's files")
			}
			if sum.Snapshot != writerSnapshot+1 || sum.Abandoned != 0 {
				t.Fatalf("compaction committed snapshot %d (abandoned %d), want %d right after the writer's", sum.Snapshot, sum.Abandoned, writerSnapshot+1)
			}
			// The files the writer added are live after our snapshot.
			files := func(id int64) []string {
				s, err := reopen(t, tb).Snapshot(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				fs, err := reopen(t, tb).FileSet(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, b := range fs.Buckets() {
					for i := range b.Files {
						names = append(names, b.Files[i].File.FileName)
					}
				}
				return names
			}
			before := files(writerSnapshot - 1)
			live, _ := liveAndOnDisk(t, tb)
			added := 0
			for _, f := range files(writerSnapshot) {
				if slices.Contains(before, f) {
					continue
				}
				added++
				if !slices.Contains(live, f) {
					t.Fatalf("the late writer's file %s is not live after the compaction's commit", f)
				}
			}
			if added == 0 {
				t.Fatal("the late writer added no file")
			}
		})
	}
}
