package expire_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

const fixtures = "../../shared/fixtures/paimon-cpp/parquet"

func copyTable(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(fixtures, name+".db", name)
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	dst := filepath.Join(t.TempDir(), name)
	expiretest.CopyDir(t, src, dst)
	return dst
}

// javaEarliest is where a Java reader starts: EARLIEST if that snapshot
// exists, else the smallest listed id.
func javaEarliest(ctx context.Context, fs fileio.FileIO, root string) (int64, []int64, error) {
	ids, err := table.ListIDs(ctx, fs, root+"/snapshot", "snapshot-")
	if err != nil || len(ids) == 0 {
		return 0, ids, err
	}
	if b, err := fileio.ReadFile(ctx, fs, root+"/snapshot/EARLIEST"); err == nil {
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil && slices.Contains(ids, n) {
			return n, ids, nil
		}
	}
	return ids[0], ids, nil
}

// checkReadable opens the table with the table package and verifies that
// every snapshot from the Java earliest has its manifest lists, manifests,
// live data and extra files, index manifest and index files.
func checkReadable(t *testing.T, root string) {
	t.Helper()
	ctx := context.Background()
	fs := fileio.NewLocal()
	tbl, err := table.OpenPath(ctx, fs, root)
	if err != nil {
		t.Fatal(err)
	}
	earliest, ids, err := javaEarliest(ctx, fs, root)
	if err != nil {
		t.Fatal(err)
	}
	must := func(id int64, p string) {
		if ok, err := fileio.Exists(ctx, fs, p); err != nil || !ok {
			t.Fatalf("snapshot %d: missing %s (%v)", id, p, err)
		}
	}
	for _, id := range ids {
		if id < earliest {
			continue
		}
		s, err := tbl.Snapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		must(id, tbl.Paths().ManifestPath(s.BaseManifestList))
		must(id, tbl.Paths().ManifestPath(s.DeltaManifestList))
		adds, _, manifests, err := tbl.LiveEntries(ctx, s)
		if err != nil {
			t.Fatalf("snapshot %d: %v", id, err)
		}
		for _, m := range manifests {
			must(id, tbl.Paths().ManifestPath(m.FileName))
		}
		for i := range adds {
			p, err := tbl.DataFilePath(&adds[i])
			if err != nil {
				t.Fatal(err)
			}
			must(id, p)
			for _, x := range adds[i].File.ExtraFiles {
				xp, _ := tbl.Paths().ExtraFilePath(adds[i].Partition, adds[i].Bucket, &adds[i].File, x)
				must(id, xp)
			}
		}
		idx, err := tbl.IndexEntries(ctx, s)
		if err != nil {
			t.Fatalf("snapshot %d: %v", id, err)
		}
		for i := range idx {
			p, _ := tbl.Paths().IndexFileOf(idx[i].Partition, idx[i].Bucket, &idx[i].IndexFile)
			must(id, p)
		}
		if s.Statistics != nil {
			must(id, tbl.Paths().StatisticsPath(*s.Statistics))
		}
	}
}

func latestTime(t *testing.T, root string) (time.Time, int64) {
	ctx := context.Background()
	tbl, err := table.OpenPath(ctx, fileio.NewLocal(), root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tbl.LatestSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return time.UnixMilli(s.TimeMillis), s.ID
}

func expireAll(now time.Time) expire.RunOptions {
	o := expire.DefaultOptions()
	o.RetainMin, o.TimeRetained = 1, 0
	return expire.RunOptions{Options: o, Now: now.Add(time.Minute)}
}

func TestRunOnJavaTables(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{
		"pk_09", "pk_table_with_alter_table", "pk_dv_index_in_data_no_external", "pk_compact_lookup",
		"pk_with_bitmap_dv", "append_complex_data", "append_with_global_index", "data_evolution_with_index", "append_table_row_tracking_with_compact", "pk_table_scan_and_read_mor",
	} {
		t.Run(name, func(t *testing.T) {
			root := copyTable(t, name)
			now, latest := latestTime(t, root)
			tbl, err := table.OpenPath(ctx, fileio.NewLocal(), root)
			if err != nil {
				t.Fatal(err)
			}
			dry := expireAll(now)
			dry.DryRun = true
			drep, err := expire.Run(ctx, reach.TableSource(tbl), dry)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := expire.Run(ctx, reach.TableSource(tbl), expireAll(now))
			if err != nil {
				t.Fatal(err)
			}
			drep.DryRun = false
			if fmt.Sprint(drep) != fmt.Sprint(rep) {
				t.Fatalf("dry run and run differ:\n%+v\n%+v", drep, rep)
			}
			if rep.End != latest || len(rep.Snapshots) == 0 {
				t.Fatalf("End %d (latest %d), expired %v", rep.End, latest, rep.Snapshots)
			}
			if len(rep.Protected) != 0 {
				t.Fatalf("the plan named files that retained snapshots still reach: %v", rep.Protected)
			}
			checkReadable(t, root)
			ids, _ := table.ListIDs(ctx, fileio.NewLocal(), root+"/snapshot", "snapshot-")
			if !slices.Equal(ids, []int64{latest}) {
				t.Fatalf("snapshots left %v", ids)
			}
			if b, _ := os.ReadFile(root + "/snapshot/EARLIEST"); string(b) != strconv.FormatInt(latest, 10) {
				t.Fatalf("EARLIEST %q", b)
			}
			t.Logf("expired %v: %d data, %d manifests, %d lists, %d index files, %d index manifests",
				rep.Snapshots, len(rep.DataFiles), len(rep.Manifests), len(rep.ManifestLists), len(rep.IndexFiles), len(rep.IndexManifests))
		})
	}
}

func listRel(t *testing.T, root string) []string {
	all, err := expiretest.AllFiles(context.Background(), fileio.NewLocal(), root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		all[i] = strings.TrimPrefix(all[i], root)
	}
	return all
}

// For every crash point of an expiration of a Java-written table, the table
// stays readable from its earliest snapshot and a rerun converges.
func TestRunOnJavaTablesCrashAtEveryStep(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"pk_09", "pk_dv_index_in_data_no_external"} {
		t.Run(name, func(t *testing.T) {
			refRoot := copyTable(t, name)
			now, _ := latestTime(t, refRoot)
			o := expireAll(now)
			o.Parallelism = 1
			tbl, err := table.OpenPath(ctx, fileio.NewLocal(), refRoot)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := expire.Run(ctx, reach.TableSource(tbl), o); err != nil {
				t.Fatal(err)
			}
			want := listRel(t, refRoot)
			for k := 1; ; k++ {
				root := copyTable(t, name)
				ffs := &expiretest.FailingFS{FileIO: fileio.NewLocal(), FailAt: k}
				tbl, err := table.OpenPath(ctx, ffs, root)
				if err != nil {
					t.Fatal(err)
				}
				_, err = expire.Run(ctx, reach.TableSource(tbl), o)
				if err == nil {
					if k < 5 {
						t.Fatalf("finished after %d operations", k)
					}
					break
				}
				if !errors.Is(err, expiretest.ErrInjected) {
					t.Fatal(err)
				}
				checkReadable(t, root)
				tbl, err = table.OpenPath(ctx, fileio.NewLocal(), root)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := expire.Run(ctx, reach.TableSource(tbl), o); err != nil {
					t.Fatalf("rerun after crash at %d: %v", k, err)
				}
				if got := listRel(t, root); !slices.Equal(got, want) {
					t.Fatalf("crash at op %d then rerun:\n got %v\nwant %v", k, got, want)
				}
			}
		})
	}
}
