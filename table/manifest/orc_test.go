package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixtureRoot = "../../../shared/fixtures/paimon-cpp"

// TestORCManifestFixtures decodes every ORC manifest and manifest list of
// the manifest.format=orc fixtures (Paimon 0.9 to 1.x, ORC Java 1.9) in
// place, and checks entries of append_09 against its data files.
func TestORCManifestFixtures(t *testing.T) {
	t.Parallel()
	dirs, _ := filepath.Glob(filepath.Join(fixtureRoot, "*", "*.db", "*", "manifest"))
	var lists, manifests int
	for _, dir := range dirs {
		names, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			p := filepath.Join(dir, n.Name())
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), "ORC") {
				continue
			}
			switch {
			case strings.HasPrefix(n.Name(), "manifest-list-"):
				if _, err := DecodeList(b); err != nil {
					t.Errorf("%s: %v", p, err)
				}
				lists++
			case strings.HasPrefix(n.Name(), "manifest-"):
				es, err := Decode(b)
				if err != nil {
					t.Errorf("%s: %v", p, err)
				}
				tableDir := filepath.Dir(dir)
				for _, e := range es {
					if e.File.FileName == "" || e.File.RowCount <= 0 || e.File.CreationTime == nil {
						t.Errorf("%s: entry %+v", p, e)
					}
					if e.Kind == FileKindAdd && filepath.Base(tableDir) == "append_09" {
						// The data file an ADD names exists in its bucket.
						matches, _ := filepath.Glob(filepath.Join(tableDir, "*", "bucket-*", e.File.FileName))
						if len(matches) != 1 {
							t.Errorf("%s: data file %s not found", p, e.File.FileName)
						}
					}
				}
				manifests++
			}
		}
	}
	if lists < 8 || manifests < 8 {
		t.Fatalf("decoded %d ORC manifest lists and %d manifests; the fixtures have more", lists, manifests)
	}
	b, err := os.ReadFile(filepath.Join(fixtureRoot, "orc/append_09.db/append_09/manifest/manifest-3ea5ee21-d399-4f1c-a749-2fc63dbf0852-1"))
	if err != nil {
		t.Fatal(err)
	}
	es, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	e := es[0] // the full compaction deletes the file commit 2 added
	if e.Kind != FileKindDelete || e.Bucket != 1 || e.TotalBuckets != 2 || e.File.FileName != "data-4e30d6c0-f109-4300-a010-4ba03047dd9d-0.orc" ||
		e.File.FileSize != 575 || e.File.RowCount != 3 || *e.File.CreationTime != 1721643142456 {
		t.Fatalf("entry 0: %+v", e)
	}
}
