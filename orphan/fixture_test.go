package orphan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

const fixtures = "../../shared/fixtures/paimon-cpp/parquet"

func copyTable(t *testing.T, db, name string) string {
	t.Helper()
	src := filepath.Join(fixtures, db, name)
	dst := filepath.Join(t.TempDir(), name)
	expiretest.CopyDir(t, src, dst)
	return dst
}

// referencedPaths lists, through the table package, every file each
// snapshot, tag and branch snapshot of the table uses.
func referencedPaths(t *testing.T, root string) []string {
	t.Helper()
	ctx := context.Background()
	fs := fileio.NewLocal()
	tbl, err := table.OpenPath(ctx, fs, root)
	if err != nil {
		t.Fatal(err)
	}
	var snaps []*table.Snapshot
	metaRoots := []string{root}
	if ents, _ := fs.List(ctx, root+"/branch"); len(ents) > 0 {
		for _, e := range ents {
			metaRoots = append(metaRoots, e.Path)
		}
	}
	for _, mr := range metaRoots {
		ids, err := table.ListIDs(ctx, fs, mr+"/snapshot", "snapshot-")
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			b, err := fileio.ReadFile(ctx, fs, table.SnapshotPath(mr, id))
			if err != nil {
				t.Fatal(err)
			}
			s, err := table.ParseSnapshot(b)
			if err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, s)
		}
	}
	var out []string
	p := tbl.Paths()
	for _, s := range snaps {
		out = append(out, p.ManifestPath(s.BaseManifestList), p.ManifestPath(s.DeltaManifestList))
		adds, _, manifests, err := tbl.LiveEntries(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range manifests {
			out = append(out, p.ManifestPath(m.FileName))
		}
		for i := range adds {
			dp, _ := tbl.DataFilePath(&adds[i])
			out = append(out, dp)
			for _, x := range adds[i].File.ExtraFiles {
				xp, _ := p.ExtraFilePath(adds[i].Partition, adds[i].Bucket, &adds[i].File, x)
				out = append(out, xp)
			}
		}
		idx, err := tbl.IndexEntries(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		for i := range idx {
			ip, _ := p.IndexFileOf(idx[i].Partition, idx[i].Bucket, &idx[i].IndexFile)
			out = append(out, ip)
		}
		if s.IndexManifest != nil {
			out = append(out, p.ManifestPath(*s.IndexManifest))
		}
	}
	return out
}

func plant(t *testing.T, path string, mod time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
}

func TestRunOnJavaTables(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ db, name, bucket string }{
		{"pk_09.db", "pk_09", "f1=10/bucket-0"},
		{"pk_dv_index_in_data_no_external.db", "pk_dv_index_in_data_no_external", ""},
		{"append_table_with_append_pt_branch.db", "append_table_with_append_pt_branch", ""},
		{"pk_dv_index_not_in_data_with_external.db", "pk_dv_index_not_in_data_with_external", ""},
		{"append_with_global_index.db", "append_with_global_index", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyTable(t, tc.db, tc.name)
			now := time.Now().Add(72 * time.Hour)
			refs := referencedPaths(t, root)
			if len(refs) == 0 {
				t.Fatal("no referenced files found")
			}
			bucket := tc.bucket
			if bucket == "" {
				// any existing bucket directory
				_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
					if bucket == "" && err == nil && info.IsDir() && strings.HasPrefix(info.Name(), "bucket-") {
						bucket, _ = filepath.Rel(root, p)
					}
					return nil
				})
			}
			old := now.Add(-48 * time.Hour)
			orphans := []string{
				root + "/" + bucket + "/data-00000000-dead-beef-0000-000000000000-0.parquet",
				root + "/" + bucket + "/.data-x-0.parquet.1234.tmp",
				root + "/manifest/manifest-00000000-dead-beef-0000-000000000000-0",
				root + "/manifest/manifest-list-00000000-dead-beef-0000-000000000000-0",
				root + "/index/index-00000000-dead-beef-0000-000000000000-0",
			}
			for _, p := range orphans {
				plant(t, p, old)
			}
			keep := []string{root + "/" + bucket + "/data-00000000-young-0.parquet"}
			plant(t, keep[0], now.Add(-10*time.Minute))
			if bucket == "" {
				// Data lives in external paths only: a data-like file at the
				// table root is outside every bucket directory and stays.
				orphans, keep = orphans[2:], append(keep, orphans[:2]...)
			}
			tbl, err := table.OpenPath(ctx, fileio.NewLocal(), root)
			if err != nil {
				t.Fatal(err)
			}
			dry, err := orphan.RunTable(ctx, tbl, orphan.RunOptions{Now: now, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := orphan.RunTable(ctx, tbl, orphan.RunOptions{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if len(dry.Files) != len(rep.Files) || dry.Bytes != rep.Bytes {
				t.Fatalf("dry run %d/%d, run %d/%d", len(dry.Files), dry.Bytes, len(rep.Files), rep.Bytes)
			}
			for _, p := range refs {
				if !strings.HasPrefix(p, root+"/") {
					continue // external data paths of the fixture point outside it
				}
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("referenced file deleted: %v", err)
				}
			}
			for _, p := range orphans {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("orphan %s survived", p)
				}
			}
			for _, p := range keep {
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("%s deleted", p)
				}
			}
			t.Logf("deleted %d files, %d bytes", len(rep.Files), rep.Bytes)
		})
	}
}

func TestRunOnJavaTableCrashAtEveryStep(t *testing.T) {
	ctx := context.Background()
	now := time.Now().Add(72 * time.Hour)
	setup := func() string {
		root := copyTable(t, "pk_09.db", "pk_09")
		for i, p := range []string{"f1=10/bucket-0/data-orphan-%d.parquet", "manifest/manifest-orphan-%d", "index/index-orphan-%d"} {
			for j := 0; j < 2; j++ {
				plant(t, root+"/"+strings.Replace(p, "%d", string(rune('a'+i+j)), 1), now.Add(-48*time.Hour))
			}
		}
		plant(t, root+"/f1=77/bucket-0/data-orphan-z.parquet", now.Add(-48*time.Hour))
		return root
	}
	rel := func(root string) []string {
		all, err := expiretest.AllFiles(ctx, fileio.NewLocal(), root)
		if err != nil {
			t.Fatal(err)
		}
		for i := range all {
			all[i] = strings.TrimPrefix(all[i], root)
		}
		return all
	}
	refRoot := setup()
	refs := referencedPaths(t, refRoot)
	if _, err := orphan.Run(ctx, expireSource(t, fileio.NewLocal(), refRoot), orphan.RunOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	want := rel(refRoot)
	if _, err := os.Stat(refRoot + "/f1=77"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("emptied partition directory kept")
	}
	for k := 1; ; k++ {
		root := setup()
		_, err := orphan.Run(ctx, expireSource(t, &expiretest.FailingFS{FileIO: fileio.NewLocal(), FailAt: k}, root), orphan.RunOptions{Now: now, Parallelism: 1})
		if err == nil {
			if k < 5 {
				t.Fatalf("finished after %d operations", k)
			}
			break
		}
		if !errors.Is(err, expiretest.ErrInjected) {
			t.Fatal(err)
		}
		for _, p := range refs {
			if _, err := os.Stat(strings.Replace(p, refRoot, root, 1)); err != nil {
				t.Fatalf("crash at %d: referenced file lost: %v", k, err)
			}
		}
		if _, err := orphan.Run(ctx, expireSource(t, fileio.NewLocal(), root), orphan.RunOptions{Now: now}); err != nil {
			t.Fatal(err)
		}
		if got := rel(root); !slices.Equal(got, want) {
			t.Fatalf("crash at %d then rerun:\n got %v\nwant %v", k, got, want)
		}
	}
}

func expireSource(t *testing.T, fs fileio.FileIO, root string) reach.Source {
	tbl, err := table.OpenPath(context.Background(), fs, root)
	if err != nil {
		t.Fatal(err)
	}
	return reach.TableSource(tbl)
}
