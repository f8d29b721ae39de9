package orphan_test

import (
	"bytes"
	"context"
	"errors"
	gobuild "go/build"
	"os"
	"strings"
	"testing"

	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/table"
)

// Issue 13 item 1: expire and orphan read snapshot and tag files through
// table's codec, the one compaction and tag maintenance use, so a file
// that codec refuses stops them before any deletion, as damage. (With
// expire's own lenient decoder, which read only ids and file names, both
// went on and deleted on the strength of a file compactd does not
// understand.)
func TestASnapshotOrTagFileTheCodecRefusesIsDamage(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		breakIt func(t *testing.T, root string) string // returns the broken file
	}{
		{"a tag with an unknown commit kind", func(t *testing.T, root string) string {
			s := latestOf(t, root)
			data, err := os.ReadFile(table.SnapshotPath(root, s.ID))
			if err != nil {
				t.Fatal(err)
			}
			bogus := bytes.Replace(data, []byte(`"commitKind" : "`+string(s.CommitKind)+`"`), []byte(`"commitKind" : "MERGE"`), 1)
			if bytes.Equal(bogus, data) {
				t.Fatalf("no commitKind in %s", data)
			}
			p := root + "/tag/tag-bogus"
			if err := os.MkdirAll(root+"/tag", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, bogus, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"a retained snapshot with a duplicate key", func(t *testing.T, root string) string {
			s := latestOf(t, root)
			p := table.SnapshotPath(root, s.ID)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			dup := bytes.Replace(data, []byte("{"), []byte(`{"id" : 1, `), 1)
			if err := os.WriteFile(p, dup, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		for _, op := range []struct {
			name string
			run  func(ctx context.Context, root string) error
		}{
			{"expire", func(ctx context.Context, root string) error { _, err := strictExpire(ctx, root); return err }},
			{"orphan", func(ctx context.Context, root string) error { _, err := orphanRun(ctx, root); return err }},
		} {
			t.Run(c.name+"/"+op.name, func(t *testing.T) {
				root := copyTable(t, "pk_09.db", "pk_09")
				plantOrphan(t, root)
				broken := c.breakIt(t, root)
				before := expiretest.Tree(t, root)
				err := op.run(ctx, root)
				if diff := expiretest.DiffTrees(before, expiretest.Tree(t, root)); diff != "" {
					t.Errorf("%s changed the table (err %v):\n%s", op.name, err, diff)
				}
				var de *table.DamagedError
				if !errors.As(err, &de) || !strings.Contains(err.Error(), broken) {
					t.Fatalf("want a *table.DamagedError naming %s, got %v", broken, err)
				}
			})
		}
	}
}

// orphan and expire share the metadata model and the reachability walk
// through table and table/reach; neither imports the other.
func TestOrphanDoesNotImportExpire(t *testing.T) {
	for _, dir := range []string{".", "../expire"} {
		pkg, err := gobuild.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			if imp == "github.com/compactd/compactd/expire" || imp == "github.com/compactd/compactd/orphan" {
				t.Errorf("package %s imports %s", pkg.Name, imp)
			}
		}
	}
}
