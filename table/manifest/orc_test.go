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

// TestORCMetadataOfPaimon14 decodes the three ORC metadata files Java
// Paimon 1.4.2 writes with manifest.format=orc (testdata/orc-1.4, from a
// deletion-vector table: three commits by a compacting writer): the index
// manifest's DELETION_VECTORS entry with its range and cardinality (a
// nested ARRAY<ROW> in ORC), the manifest's 20-field _FILE rows and the
// 13-field manifest-list rows.
func TestORCMetadataOfPaimon14(t *testing.T) {
	t.Parallel()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "orc-1.4", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "ORC") {
			t.Fatalf("%s is not ORC", name)
		}
		return b
	}
	ix, err := DecodeIndex(read("index-manifest"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ix) != 1 || ix[0].Kind != FileKindAdd || ix[0].Bucket != 0 || ix[0].IndexFile.IndexType != "DELETION_VECTORS" ||
		ix[0].IndexFile.FileName != "index-1586edfd-a9fc-49de-b4e0-47d8ceee4f20-0" || ix[0].IndexFile.FileSize != 43 || ix[0].IndexFile.RowCount != 1 {
		t.Fatalf("index entries %+v", ix)
	}
	dv := ix[0].IndexFile.DeletionVectors
	if len(dv) != 1 || dv[0].DataFileName != "data-2a9bc312-9b2c-43c8-aa1f-ab0edb54e95a-0.parquet" || dv[0].Offset != 1 || dv[0].Length != 34 ||
		dv[0].Cardinality == nil || *dv[0].Cardinality != 7 {
		t.Fatalf("deletion vector ranges %+v", dv)
	}
	es, err := Decode(read("manifest"))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 4 || es[3].Kind != FileKindAdd || es[3].File.Level != 5 || es[3].File.RowCount != 20 ||
		es[3].File.FileSource == nil || *es[3].File.FileSource != FileSourceCompact || es[0].Kind != FileKindDelete {
		t.Fatalf("entries %+v", es)
	}
	ls, err := DecodeList(read("manifest-list"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 5 || ls[1].NumAddedFiles != 1 || ls[1].NumDeletedFiles != 1 || ls[1].MinBucket == nil || *ls[1].MinBucket != 0 ||
		ls[1].MaxLevel == nil || ls[1].FileSize != 2925 {
		t.Fatalf("manifest list %+v", ls)
	}
}
