package compact_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// liveMetas lists the live files' metadata with what legitimately differs
// between two compactions of the same input (names, sizes, times) cleared.
func liveMetas(t *testing.T, tb *table.Table) []string {
	t.Helper()
	fs := latestFileSet(t, tb)
	var out []string
	for _, b := range fs.Buckets() {
		for _, e := range b.Files {
			m := e.File
			m.FileName, m.FileSize, m.CreationTime = "", 0, nil
			j, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%x/%d %s", b.Partition, b.Bucket, j))
		}
	}
	sort.Strings(out)
	return out
}

// The batch path must produce what the row path produces: the same rows and
// the same file metadata (keys, statistics, sequence ranges, levels, counts)
// for every merge engine, for minor and full compactions, and for inputs
// written under an older schema (read through the row reader and converted).
func TestBatchPathCompactsExactlyLikeTheRowPath(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("COMPACTD_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (set COMPACTD_SEED to reproduce)", seed)
	cases := []struct {
		name    string
		opts    map[string]string
		deletes bool
		evolve  bool
		// onTop first compacts fully, then writes more commits, so the minor
		// compaction merges level 0 below a top level holding many of its
		// keys (first-row drops those: the higher-level lookup).
		onTop bool
	}{
		{"deduplicate", map[string]string{}, true, false, false},
		{"deduplicate ignoring deletes", map[string]string{"ignore-delete": "true"}, true, false, false},
		{"first-row", map[string]string{"merge-engine": "first-row"}, false, false, false},
		{"first-row below a compacted top level", map[string]string{"merge-engine": "first-row", "compaction.max-size-amplification-percent": "100000"}, false, false, true},
		{"partial-update", map[string]string{"merge-engine": "partial-update"}, false, false, false},
		{"partial-update with a sequence group", map[string]string{"merge-engine": "partial-update", "fields.c.sequence-group": "a,b"}, true, false, false},
		{"aggregation", map[string]string{"merge-engine": "aggregation", "fields.a.aggregate-function": "sum", "fields.b.aggregate-function": "max", "fields.c.aggregate-function": "last_non_null_value"}, false, false, false},
		{"sequence.field", map[string]string{"sequence.field": "c"}, true, false, false},
		{"stats modes", map[string]string{"metadata.stats-mode": "full", "fields.b.stats-mode": "truncate(2)", "fields.c.stats-mode": "counts"}, true, false, false},
		{"deduplicate over an added column", map[string]string{}, true, true, false},
		{"partial-update over an added column", map[string]string{"merge-engine": "partial-update"}, false, true, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			tb := newTable(t, tc.opts)
			if !tc.onTop {
				writeRandom(t, tb, rng, "writer", 8, 60, 80, tc.deletes)
			} else {
				// A top level much larger than the later level-0 files keeps
				// it out of the universal pick.
				writeRandom(t, tb, rng, "writer", 8, 1000, 4000, tc.deletes)
				if _, err := compact.Run(context.Background(), reopen(t, tb), compact.Options{Full: true, CommitUser: "c"}); err != nil {
					t.Fatal(err)
				}
				// Four commits, not five: with five, a bucket that gets
				// rows in every commit holds 6 runs, over the trigger, and
				// Java's pick then may take the top level too (about 1 seed
				// in 20), leaving no job below it to test.
				writeRandom(t, tb, rng, "writer-later", 4, 12, 4000, tc.deletes)
			}
			if tc.evolve {
				tb = addColumn(t, tb)
				writeRandomRows(t, tb, rng, "writer2", 4, 60, 80, tc.deletes, func(row table.Row) table.Row {
					var d any
					if rng.IntN(3) > 0 {
						d = fmt.Sprintf("d%d", rng.IntN(50))
					}
					return append(row, d)
				})
			}
			rowDir := filepath.Join(t.TempDir(), "copy")
			expiretest.CopyDir(t, tb.Path(), rowDir)
			rowTb, err := table.OpenPath(context.Background(), fileio.NewLocal(), rowDir)
			if err != nil {
				t.Fatal(err)
			}
			before := scanRows(t, tb)
			ctx := context.Background()
			for _, full := range []bool{false, true} {
				sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: full, CommitUser: "c"})
				if err != nil {
					t.Fatalf("batch path (full=%v): %v", full, err)
				}
				if _, err := compact.Run(ctx, reopen(t, rowTb), compact.Options{Full: full, CommitUser: "c", RowPath: true}); err != nil {
					t.Fatalf("row path (full=%v): %v", full, err)
				}
				got, want := scanRows(t, tb), scanRows(t, rowTb)
				if !slices.Equal(got, want) {
					t.Fatalf("full=%v: batch path rows differ from the row path's:\nbatch %v\nrow   %v", full, got, want)
				}
				// first-row tables hide level 0 from batch reads: rows appear as
				// compaction lifts them.
				if tc.opts["merge-engine"] != "first-row" && !slices.Equal(got, before) {
					t.Fatalf("full=%v: rows changed by compaction:\nbefore %v\nafter  %v", full, before, got)
				}
				if tc.onTop && !full {
					// Both read what Java reads: each key once (no key at two
					// levels >= 1; compactd's scan reads them raw, as Java).
					if n := len(keysOf(t, got)); n != len(got) {
						t.Fatalf("minor compaction stored %d keys %d times", n, len(got))
					}
					below := 0
					for _, j := range sum.Jobs {
						if j.Job.OutputLevel == 4 {
							below++
						}
					}
					if below == 0 {
						t.Fatalf("no job of the minor compaction went to level 4: %v", sum.Plan.Jobs)
					}
					records, byLevel := storedAbove0(t, tb)
					if records != int64(len(got)) {
						t.Fatalf("after the minor compaction levels >= 1 hold %v records for %d keys; want one per key", byLevel, len(got))
					}
				}
				gm, wm := liveMetas(t, tb), liveMetas(t, rowTb)
				if !reflect.DeepEqual(gm, wm) {
					t.Fatalf("full=%v: file metadata differs:\nbatch %v\nrow   %v", full, gm, wm)
				}
			}
		})
	}
}

// addColumn commits schema-1 with a column d STRING appended, as ALTER TABLE
// ADD COLUMN does, and reopens the table.
func addColumn(t *testing.T, tb *table.Table) *table.Table {
	t.Helper()
	s := tb.Schema()
	fields := append(slices.Clone(s.Fields), table.DataField{ID: 5, Name: "d", Type: str(true)})
	s1, err := table.NewTableSchema(1, fields, 5, s.PartitionKeys, s.PrimaryKeys, s.Options, nil, s.TimeMillis)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s1.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tb.Path(), "schema", table.SchemaFileName(1)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return reopen(t, tb)
}

// Large values split batches by bytes (see datafile and merge): the result
// is still the row path's.
func TestBatchPathCompactsLargeValuesLikeTheRowPath(t *testing.T) {
	tb := newTable(t, map[string]string{"bucket": "1"})
	ctx := context.Background()
	w, err := write.NewWriter(ctx, tb, "writer")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", 300<<10/16)
	for c := range 3 {
		for k := range 60 {
			if (k+c)%3 == 0 {
				continue
			}
			row := table.Row{int64(k), "p0", int64(c), fmt.Sprintf("%d-%d-%s", c, k, big), nil}
			if err := w.Write(table.RowKindInsert, row); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rowDir := filepath.Join(t.TempDir(), "copy")
	expiretest.CopyDir(t, tb.Path(), rowDir)
	rowTb, err := table.OpenPath(ctx, fileio.NewLocal(), rowDir)
	if err != nil {
		t.Fatal(err)
	}
	before := scanRows(t, tb)
	if _, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := compact.Run(ctx, reopen(t, rowTb), compact.Options{Full: true, RowPath: true}); err != nil {
		t.Fatal(err)
	}
	got, want := scanRows(t, tb), scanRows(t, rowTb)
	if !slices.Equal(got, want) || !slices.Equal(got, before) || len(got) != 60 {
		t.Fatalf("batch path: %d rows, row path %d, before %d (want 60, all equal)", len(got), len(want), len(before))
	}
	if gm, wm := liveMetas(t, tb), liveMetas(t, rowTb); !reflect.DeepEqual(gm, wm) {
		t.Fatalf("file metadata differs:\nbatch %v\nrow   %v", gm, wm)
	}
}

// Append tables: small-file compaction on the batch path writes the row
// path's rows, in the same order, and the same file metadata, on every
// Parquet append table of the shared fixtures compactd compacts (bucketed,
// bucket -1, partitioned, altered schemas).
func TestBatchPathCompactsAppendTablesLikeTheRowPath(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join("..", "..", "shared", "fixtures", "paimon-cpp", "parquet")
	dbs, err := filepath.Glob(filepath.Join(root, "*.db", "*"))
	if err != nil || len(dbs) == 0 {
		t.Fatalf("no fixture tables under %s (%v)", root, err)
	}
	compacted := 0
	for _, dir := range dbs {
		name := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		src, err := table.OpenPath(ctx, fileio.NewLocal(), dir)
		if err != nil || src.Schema().HasPrimaryKey() || compact.Supported(src, nil) != nil {
			continue
		}
		copies := [2]*table.Table{}
		for i := range copies {
			d := filepath.Join(t.TempDir(), "t")
			expiretest.CopyDir(t, dir, d)
			if copies[i], err = table.OpenPath(ctx, fileio.NewLocal(), d); err != nil {
				t.Fatal(err)
			}
		}
		before, err := scanOrder(copies[0])
		if err != nil {
			t.Logf("%s: not scanned: %v", name, err)
			continue
		}
		// The fixtures hold few files: compact every bucket with two or more.
		over := map[string]string{"compaction.min.file-num": "2"}
		sum, errBatch := compact.Run(ctx, copies[0], compact.Options{Full: true, CommitUser: "c", Overrides: over})
		_, errRow := compact.Run(ctx, copies[1], compact.Options{Full: true, CommitUser: "c", RowPath: true, Overrides: over})
		if (errBatch == nil) != (errRow == nil) {
			t.Fatalf("%s: batch path %v, row path %v", name, errBatch, errRow)
		}
		if errBatch != nil {
			t.Logf("%s: not compacted by either path: %v", name, errBatch)
			continue
		}
		got, want := scanInOrder(t, copies[0]), scanInOrder(t, copies[1])
		if !slices.Equal(got, want) {
			t.Fatalf("%s: batch path rows (in read order) differ from the row path's", name)
		}
		sorted := slices.Clone(got)
		slices.Sort(sorted)
		slices.Sort(before)
		if !slices.Equal(sorted, before) {
			t.Fatalf("%s: compaction changed the rows: %d after, %d before", name, len(got), len(before))
		}
		if gm, wm := liveMetas(t, copies[0]), liveMetas(t, copies[1]); !reflect.DeepEqual(gm, wm) {
			t.Fatalf("%s: file metadata differs:\nbatch %v\nrow   %v", name, gm, wm)
		}
		if sum.FilesIn > 0 {
			compacted++
			t.Logf("%s: %d files -> %d", name, sum.FilesIn, sum.FilesOut)
		}
	}
	if compacted < 3 {
		t.Fatalf("only %d append fixture tables compacted; the test needs several", compacted)
	}
	t.Logf("%d append fixture tables compacted alike on both paths", compacted)
}

// scanInOrder is the table's rows as the scan returns them (append tables
// read in sequence order).
func scanInOrder(t *testing.T, tb *table.Table) []string {
	t.Helper()
	rows, err := scanOrder(reopen(t, tb))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func scanOrder(tb *table.Table) ([]string, error) {
	ctx := context.Background()
	sc, err := scan.New(ctx, tb, nil)
	if err != nil {
		return nil, err
	}
	var rows []string
	err = sc.Each(ctx, func(r table.Row) error {
		b, err := scan.AppendJSON(nil, sc.ReadType(), r)
		rows = append(rows, string(b))
		return err
	})
	return rows, err
}

// Both paths cut output files at the same rows: the size is checked every
// 1000 rows, whether rows come one by one or in batches.
func TestBatchPathRollsFilesLikeTheRowPath(t *testing.T) {
	tb := newTable(t, map[string]string{"bucket": "1"})
	ctx := context.Background()
	w, err := write.NewWriter(ctx, tb, "writer")
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 2000)
	for c := range 3 {
		for k := range 1500 {
			row := table.Row{int64(k*3 + c%2), "p0", int64(c), fmt.Sprintf("%d-%s", k, pad), nil}
			if err := w.Write(table.RowKindInsert, row); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rowDir := filepath.Join(t.TempDir(), "copy")
	expiretest.CopyDir(t, tb.Path(), rowDir)
	rowTb, err := table.OpenPath(ctx, fileio.NewLocal(), rowDir)
	if err != nil {
		t.Fatal(err)
	}
	const target = 1 << 20
	sum, err := compact.Run(ctx, reopen(t, tb), compact.Options{Full: true, TargetFileSize: target})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compact.Run(ctx, reopen(t, rowTb), compact.Options{Full: true, TargetFileSize: target, RowPath: true}); err != nil {
		t.Fatal(err)
	}
	if sum.FilesOut < 2 {
		t.Fatalf("compaction wrote %d files, want several at a %d-byte target", sum.FilesOut, target)
	}
	if gm, wm := liveMetas(t, tb), liveMetas(t, rowTb); !reflect.DeepEqual(gm, wm) {
		t.Fatalf("file metadata differs:\nbatch %v\nrow   %v", gm, wm)
	}
	if got, want := scanRows(t, tb), scanRows(t, rowTb); !slices.Equal(got, want) {
		t.Fatal("batch path rows differ from the row path's")
	}
}

// keysOf returns the distinct (k, p) keys of scanned JSON rows.
func keysOf(t *testing.T, rows []string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range rows {
		var m map[string]any
		if err := json.Unmarshal([]byte(r), &m); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprint(m["k"], "/", m["p"])] = true
	}
	return out
}
