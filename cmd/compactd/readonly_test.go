package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// Tables whose metadata Java writes in a codec compactd has no encoder
// for (manifest.compression=bzip2) are read but not written: Java writes
// every manifest of such a table in bzip2, and so must any writer. Every command that would change the table must exit
// non-zero naming the table, the file it was about to write and the option,
// and leave the table directory byte for byte as it was. The table is set
// up so that each command has work to do (an old orphan file, a tag past
// its retention, an old partition, snapshots to expire): a command that
// found nothing to do would prove nothing.
func TestWritesToTablesOfAnUnwritableManifestCodecAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := compactdBinary(t)
	const name = "pk_table_nested_type.pk_table_nested_type"
	for _, args := range [][]string{
		{"compact"},
		{"compact", "--full"},
		{"expire", "--retain-min", "1", "--retain-max", "1", "--time-retained", "1ms"},
		{"orphan", "--older-than", "1h"},
		{"tag", "create", "WH", name, "fresh"},
		{"tag", "delete", "WH", name, "old"},
		{"tag", "expire"},
		{"rollback", "--to-snapshot", "1"},
		{"partition", "expire", "--expiration-time", "1d"},
		{"rescale", "--bucket-num", "2"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			wh := filepath.Join(t.TempDir(), "wh")
			root := filepath.Join(wh, "pk_table_nested_type.db", "pk_table_nested_type")
			expiretest.CopyDir(t, "../../../shared/fixtures/paimon-cpp/parquet/pk_table_nested_type.db/pk_table_nested_type", root)
			expiretest.SetSchemaOption(t, root, 0, "manifest.compression", "bzip2")
			// A tag of snapshot 1 created two days ago and retained an hour.
			tb, err := table.OpenPath(ctx, fileio.NewLocal(), root)
			if err != nil {
				t.Fatal(err)
			}
			if err := tb.Writable(); err == nil || !errors.Is(err, table.ErrReadOnly) {
				t.Fatalf("Writable() = %v, want a refusal", err)
			}
			s, err := tb.Snapshot(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			created, retained := time.Now().Add(-48*time.Hour).UTC(), time.Hour
			tag, err := table.Tag{Name: "old", Snapshot: *s, CreateTime: &created, TimeRetained: &retained}.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(root, "tag"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "tag", "tag-old"), tag, 0o644); err != nil {
				t.Fatal(err)
			}
			orphanFile := filepath.Join(root, "dt=2025-04-14", "hr=10", "bucket-0", "data-orphan.parquet")
			if err := os.WriteFile(orphanFile, []byte("orphan"), 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-48 * time.Hour)
			if err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				return os.Chtimes(p, old, old)
			}); err != nil {
				t.Fatal(err)
			}
			before := expiretest.Tree(t, root)

			full := slices.Clone(args)
			if i := slices.Index(full, "WH"); i >= 0 {
				full[i] = wh
			} else {
				n := 1
				if args[0] == "tag" || args[0] == "partition" {
					n = 2
				}
				full = append(append(slices.Clone(args[:n]), wh, name), args[n:]...)
			}
			out, err := exec.Command(bin, full...).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("compactd %v: %v, want exit 1\n%s", full, err, out)
			}
			msg := string(out)
			if !strings.Contains(msg, "table "+name) && !strings.Contains(msg, "table "+root) {
				t.Errorf("output does not name the table:\n%s", msg)
			}
			// Refused before anything was planned (compact, and commits
			// that check the latest schema first) the schema file is named,
			// else the file the command was about to write or delete.
			if !strings.Contains(msg, "not supported: writing "+root+"/") &&
				!strings.Contains(msg, "not supported: writing to it: manifest.format=orc in "+root+"/schema/schema-0: ") {
				t.Errorf("output does not name the file refused:\n%s", msg)
			}
			if !strings.Contains(msg, "manifest.format=orc in "+root+"/schema/schema-0: ") || !strings.Contains(msg, "manifest.compression=bzip2: ") {
				t.Errorf("output does not name the option and the schema file setting it:\n%s", msg)
			}
			if after := expiretest.Tree(t, root); !slices.Equal(before, after) {
				t.Errorf("table changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}
