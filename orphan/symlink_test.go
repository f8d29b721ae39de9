package orphan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/table"
)

// Issue 12 item 4: a symbolic link inside a table directory (a linked
// index/, statistics/ or manifest/ directory, a linked bucket or partition
// directory, a linked data file), pointing outside the table, makes orphan
// cleanup fail with an error naming the link, delete nothing inside the
// table and nothing outside it. On the previous code, cleanup followed the
// linked metadata directories and deleted the orphan-looking files it found
// outside the table.
func TestOrphanRefusesSymlinksInTheTable(t *testing.T) {
	ctx := context.Background()
	old := time.Now().Add(-time.Hour)
	// moveOut moves a directory of the table outside and links it back.
	moveOut := func(t *testing.T, root, rel, outside string) string {
		t.Helper()
		target := filepath.Join(outside, filepath.Base(rel))
		if err := os.Rename(filepath.Join(root, rel), target); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
		return target
	}
	// linkTo makes root/rel a link to a new directory outside holding files.
	linkTo := func(t *testing.T, root, rel, outside string, files ...string) {
		t.Helper()
		target := filepath.Join(outside, "linked")
		for _, f := range files {
			plant(t, filepath.Join(target, f), old)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		link string // relative to the table root
		make func(t *testing.T, root, outside string)
	}{
		{"a linked manifest directory", "manifest", func(t *testing.T, root, outside string) {
			dir := moveOut(t, root, "manifest", outside)
			plant(t, filepath.Join(dir, "manifest-00000000-dead-beef-0000-000000000000-0"), old)
		}},
		{"a linked index directory", "index", func(t *testing.T, root, outside string) {
			dir := moveOut(t, root, "index", outside)
			plant(t, filepath.Join(dir, "index-00000000-dead-beef-0000-000000000000-0"), old)
		}},
		{"a linked statistics directory", "statistics", func(t *testing.T, root, outside string) {
			linkTo(t, root, "statistics", outside, "stat-00000000-dead-beef-0000-000000000000-0")
		}},
		{"a linked bucket directory", "f1=10/bucket-7", func(t *testing.T, root, outside string) {
			linkTo(t, root, "f1=10/bucket-7", outside, "data-00000000-dead-beef-0000-000000000000-0.parquet")
		}},
		{"a linked partition directory", "f1=99", func(t *testing.T, root, outside string) {
			linkTo(t, root, "f1=99", outside, "bucket-0/data-00000000-dead-beef-0000-000000000000-0.parquet")
		}},
		{"a linked data file", "f1=10/bucket-0/data-00000000-dead-beef-0000-000000000000-0.parquet", func(t *testing.T, root, outside string) {
			victim := filepath.Join(outside, "victim.parquet")
			plant(t, victim, old)
			if err := os.Symlink(victim, filepath.Join(root, "f1=10/bucket-0/data-00000000-dead-beef-0000-000000000000-0.parquet")); err != nil {
				t.Fatal(err)
			}
		}},
		// Directories are listed one entry at a time: the orphan listed
		// before the link is already a candidate when the link stops the
		// run, and must not be deleted either.
		{"a linked data file listed after an orphan of its directory", "f1=10/bucket-0/data-ffffffff-dead-beef-0000-000000000000-0.parquet", func(t *testing.T, root, outside string) {
			plant(t, filepath.Join(root, "f1=10/bucket-0/data-00000000-0000-beef-0000-000000000000-0.parquet"), old)
			victim := filepath.Join(outside, "victim.parquet")
			plant(t, victim, old)
			if err := os.Symlink(victim, filepath.Join(root, "f1=10/bucket-0/data-ffffffff-dead-beef-0000-000000000000-0.parquet")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a link in the branch directory", "branch/branch-x", func(t *testing.T, root, outside string) {
			linkTo(t, root, "branch/branch-x", outside, "schema/schema-0")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := copyTable(t, "pk_09.db", "pk_09")
			outside := t.TempDir()
			// A genuine orphan too, so that cleanup has work to do.
			plant(t, filepath.Join(root, "f1=20/bucket-0/data-00000000-feed-beef-0000-000000000000-0.parquet"), old)
			c.make(t, root, outside)
			beforeTable, beforeOutside := expiretest.Tree(t, root), expiretest.Tree(t, outside)
			_, err := orphanRun(ctx, root)
			if diff := expiretest.DiffTrees(beforeOutside, expiretest.Tree(t, outside)); diff != "" {
				t.Errorf("files outside the table changed:\n%s", diff)
			}
			if diff := expiretest.DiffTrees(beforeTable, expiretest.Tree(t, root)); diff != "" {
				t.Errorf("the table changed:\n%s", diff)
			}
			var de *table.DamagedError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), filepath.Join(root, c.link)) {
				t.Fatalf("want a DamagedError naming %s, got %v", filepath.Join(root, c.link), err)
			}
		})
	}
}
