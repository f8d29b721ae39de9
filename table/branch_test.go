package table

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
)

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func snapshotJSONFor(t *testing.T, id int64, base, delta string) string {
	t.Helper()
	b, err := Snapshot{Version: SnapshotVersion, ID: id, BaseManifestList: base, DeltaManifestList: delta,
		CommitUser: "u", CommitKind: CommitAppend}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The fail-closed readers refuse a snapshot or tag that names an empty
// base or delta manifest list: ParseSnapshot accepts "", and a walk would
// read such a file as referencing nothing, so everything it holds would
// look unreferenced to expiration and orphan cleanup.
func TestBranchReadersRefuseAnEmptyManifestListName(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	for _, c := range []struct{ name, base, delta string }{
		{"empty base list", "", "d"},
		{"empty delta list", "b", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeTestFile(t, SnapshotPath(root, 1), snapshotJSONFor(t, 1, c.base, c.delta))
			if _, err := ParseSnapshot([]byte(snapshotJSONFor(t, 1, c.base, c.delta))); err != nil {
				t.Fatalf("the codec itself accepts the file (this test is about the readers): %v", err)
			}
			if _, err := ReadSnapshotFile(ctx, fio, SnapshotPath(root, 1)); !errors.Is(err, ErrCorrupt) {
				t.Errorf("ReadSnapshotFile: want ErrCorrupt, got %v", err)
			}
			writeTestFile(t, filepath.Join(root, TagDir, TagPrefix+"t"), snapshotJSONFor(t, 1, c.base, c.delta))
			if _, err := ReadTags(ctx, fio, root); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "tag-t") {
				t.Errorf("ReadTags: want ErrCorrupt naming tag-t, got %v", err)
			}
		})
	}
}

// ListIDs, ReadTags and ReadConsumers refuse a directory or a symbolic
// link under a metadata file's name (*DamagedError) instead of skipping it.
func TestBranchReadersRefuseWhatPaimonNeverWrites(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	for _, c := range []struct {
		dir, name string
		read      func(root string) error
	}{
		{SnapshotDir, "snapshot-3", func(root string) error {
			_, err := ListIDs(ctx, fio, filepath.Join(root, SnapshotDir), snapshotPrefix)
			return err
		}},
		{TagDir, "tag-x", func(root string) error { _, err := ReadTags(ctx, fio, root); return err }},
		{ConsumerDir, "consumer-c", func(root string) error { _, err := ReadConsumers(ctx, fio, root); return err }},
	} {
		for _, link := range []bool{false, true} {
			root := t.TempDir()
			p := filepath.Join(root, c.dir, c.name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			var err error
			if link {
				err = os.Symlink(t.TempDir(), p)
			} else {
				err = os.Mkdir(p, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			var de *DamagedError
			if err := c.read(root); !errors.As(err, &de) || de.File != p {
				t.Errorf("%s (link %v): want a *DamagedError naming it, got %v", c.name, link, err)
			}
		}
	}
}

// ReadConsumers refuses a consumer file without nextSnapshot (where
// ParseConsumer reads 0, as Java does) and takes ModTime from the listing;
// ReadTags sorts by snapshot id.
func TestBranchReadersConsumersAndTagOrder(t *testing.T) {
	ctx := context.Background()
	fio := fileio.NewLocal()
	root := t.TempDir()
	writeTestFile(t, filepath.Join(root, ConsumerDir, "consumer-a"), `{"nextSnapshot":7}`)
	cs, err := ReadConsumers(ctx, fio, root)
	if err != nil || len(cs) != 1 || cs[0].ID != "a" || cs[0].NextSnapshot != 7 || cs[0].ModTime.IsZero() {
		t.Fatalf("consumers %+v, %v", cs, err)
	}
	for _, body := range []string{`{}`, `{"nextSnapshot":null}`, `{"nextSnapshot":`} {
		writeTestFile(t, filepath.Join(root, ConsumerDir, "consumer-b"), body)
		if _, err := ReadConsumers(ctx, fio, root); !errors.Is(err, ErrCorrupt) {
			t.Errorf("consumer %s: want ErrCorrupt, got %v", body, err)
		}
	}
	writeTestFile(t, filepath.Join(root, TagDir, "tag-a"), snapshotJSONFor(t, 9, "b", "d"))
	writeTestFile(t, filepath.Join(root, TagDir, "tag-b"), snapshotJSONFor(t, 2, "b", "d"))
	tags, err := ReadTags(ctx, fio, root)
	if err != nil || len(tags) != 2 || tags[0].Name != "b" || tags[1].Name != "a" {
		t.Fatalf("tags %v, %v", tags, err)
	}
}
