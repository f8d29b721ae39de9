package orphan

import (
	"testing"
	"time"
)

func TestSelect(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	cutoff := now.Add(-DefaultOlderThan)
	old, young := cutoff.Add(-time.Minute), cutoff.Add(time.Minute)
	const root = "/wh/db.db/t"
	bucket := root + "/dt=1/bucket-0"
	tests := []struct {
		name  string
		kind  DirKind
		dir   string
		file  string
		mod   time.Time
		ref   bool
		dataP string
		want  bool
	}{
		{"an unreferenced old data file is deleted", DirBucket, bucket, "data-1b2c-0.parquet", old, false, "", true},
		{"a referenced data file is kept", DirBucket, bucket, "data-1b2c-0.parquet", old, true, "", false},
		{"a data file younger than the cutoff is kept", DirBucket, bucket, "data-1b2c-0.parquet", young, false, "", false},
		{"a data file modified exactly at the cutoff is kept", DirBucket, bucket, "data-1b2c-0.parquet", cutoff, false, "", false},
		{"an unreferenced changelog file is deleted", DirBucket, bucket, "changelog-9-1.orc", old, false, "", true},
		{"an unreferenced extra file index is deleted", DirBucket, bucket, "data-1b2c-0.parquet.index", old, false, "", true},
		{"a deletion-vector index file in the bucket directory is deleted", DirBucket, bucket, "index-77-0", old, false, "", true},
		{"a file of unknown name in a bucket directory is kept", DirBucket, bucket, "_SUCCESS", old, false, "", false},
		{"a managed blob pack is kept", DirBucket, bucket, "data-1-0.managed.blob", old, false, "", false},
		{"a custom data-file.prefix is recognised", DirBucket, bucket, "part-1-0.parquet", old, false, "part-", true},
		{"with a custom prefix the default data- name is not recognised", DirBucket, bucket, "data-1-0.parquet", old, false, "part-", false},
		{"an unreferenced manifest is deleted", DirManifest, root + "/manifest", "manifest-ab-3", old, false, "", true},
		{"an unreferenced manifest list is deleted", DirManifest, root + "/manifest", "manifest-list-ab-4", old, false, "", true},
		{"an unreferenced index manifest is deleted", DirManifest, root + "/manifest", "index-manifest-ab-0", old, false, "", true},
		{"a foreign file in manifest/ is kept", DirManifest, root + "/manifest", "notes.txt", old, false, "", false},
		{"an unreferenced index file is deleted", DirIndex, root + "/index", "index-ab-0", old, false, "", true},
		{"an unreferenced global index file is deleted", DirIndex, root + "/index", "bitmap-global-index-67adb389.index", old, false, "", true},
		{"a referenced global index file is kept", DirIndex, root + "/index", "bitmap-global-index-67adb389.index", old, true, "", false},
		{"an unreferenced statistics file is deleted", DirStatistics, root + "/statistics", "stat-ab-0", old, false, "", true},
		{"a hidden temporary file of an interrupted write is deleted", DirManifest, root + "/manifest", ".manifest-ab-3.5f1d.tmp", old, false, "", true},
		{"a young hidden temporary file is kept", DirManifest, root + "/manifest", ".manifest-ab-3.5f1d.tmp", young, false, "", false},
		{"a snapshot file is never an orphan", DirSnapshot, root + "/snapshot", "snapshot-3", old, false, "", false},
		{"hint files are never orphans", DirSnapshot, root + "/snapshot", "EARLIEST", old, false, "", false},
		{"a temporary file in snapshot/ is deleted", DirSnapshot, root + "/snapshot", ".snapshot-7.0c1e.tmp", old, false, "", true},
		{"a long-lived changelog file is never an orphan", DirSnapshot, root + "/changelog", "changelog-4", old, false, "", false},
		{"a file outside the table root is never selected", DirBucket, "/wh/db.db/other/bucket-0", "data-1-0.parquet", old, false, "", false},
		{"a sibling table sharing the root prefix is never selected", DirBucket, root + "2/bucket-0", "data-1-0.parquet", old, false, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := File{Path: tc.dir + "/" + tc.file, Name: tc.file, Size: 10, ModTime: tc.mod}
			in := SelectInput{
				Root: root, Cutoff: cutoff, DataFilePrefix: tc.dataP,
				Listings:   []Listing{{Dir: tc.dir, Kind: tc.kind, Files: []File{f}}},
				Referenced: map[string]bool{},
			}
			if tc.ref {
				in.Referenced[tc.file] = true
			}
			got := len(Select(in)) == 1
			if got != tc.want {
				t.Fatalf("selected=%v, want %v", got, tc.want)
			}
		})
	}
}

func TestCutoff(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		olderThan time.Duration
		force     bool
		wantErr   bool
	}{
		{"the default age of one day is accepted", DefaultOlderThan, false, false},
		{"one hour is accepted", time.Hour, false, false},
		{"under one hour is refused", 59 * time.Minute, false, true},
		{"under one hour is accepted when forced", time.Minute, true, false},
		{"a cutoff at now is refused even when forced", 0, true, true},
		{"a cutoff in the future is refused even when forced", -time.Hour, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Cutoff(now, tc.olderThan, tc.force)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err=%v, wantErr=%v", err, tc.wantErr)
			}
			if err == nil && !c.Equal(now.Add(-tc.olderThan)) {
				t.Fatalf("cutoff %v", c)
			}
		})
	}
}
