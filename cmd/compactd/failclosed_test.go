package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// Issue 12 item 3 through the real binary: on a Java-written table whose
// latest snapshot has a broken manifest list or a missing manifest,
// `compactd expire` and `compactd orphan` exit non-zero, name the file, and
// leave the table directory byte for byte as it was.
func TestExpireAndOrphanExitNonZeroOnDamagedMetadata(t *testing.T) {
	ctx := context.Background()
	bin := compactdBinary(t)
	for _, c := range []struct {
		name string
		args []string
		// target picks the file to damage in the latest snapshot.
		target func(t *testing.T, root string, s *table.Snapshot) string
		damage expiretest.Damage
	}{
		{"expire with a truncated base manifest list", []string{"expire", "--retain-min", "1", "--retain-max", "1", "--time-retained", "1ms"},
			func(t *testing.T, root string, s *table.Snapshot) string {
				return root + "/manifest/" + s.BaseManifestList
			},
			expiretest.Truncated},
		{"orphan with a missing base manifest", []string{"orphan", "--older-than", "1h"},
			func(t *testing.T, root string, s *table.Snapshot) string {
				ms, err := manifest.ReadList(ctx, fileio.NewLocal(), root+"/manifest/"+s.BaseManifestList)
				if err != nil || len(ms) == 0 {
					t.Fatalf("base manifests: %v %v", ms, err)
				}
				return root + "/manifest/" + ms[0].FileName
			},
			expiretest.Missing},
	} {
		t.Run(c.name, func(t *testing.T) {
			wh := filepath.Join(t.TempDir(), "wh")
			root := filepath.Join(wh, "pk_09.db", "pk_09")
			expiretest.CopyDir(t, "../../../shared/fixtures/paimon-cpp/parquet/pk_09.db/pk_09", root)
			tbl, err := table.OpenPath(ctx, fileio.NewLocal(), root)
			if err != nil {
				t.Fatal(err)
			}
			s, err := tbl.LatestSnapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// Age every file, as a table that has been around for days.
			old := time.Now().Add(-48 * time.Hour)
			if err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				return os.Chtimes(p, old, old)
			}); err != nil {
				t.Fatal(err)
			}
			target := c.target(t, root, s)
			c.damage.Apply(t, target, t.TempDir())
			before := expiretest.Tree(t, root)
			args := append([]string{c.args[0], wh, "pk_09.pk_09"}, c.args[1:]...)
			out, err := exec.Command(bin, args...).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("compactd %v: %v, want a non-zero exit\n%s", args, err, out)
			}
			if !strings.Contains(string(out), filepath.Base(target)) || !strings.Contains(string(out), root) {
				t.Fatalf("output does not name the table and %s:\n%s", filepath.Base(target), out)
			}
			if diff := expiretest.DiffTrees(before, expiretest.Tree(t, root)); diff != "" {
				t.Fatalf("compactd %v changed the table:\n%s", args, diff)
			}
		})
	}
}
