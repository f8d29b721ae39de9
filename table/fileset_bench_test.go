package table

import (
	"fmt"
	"testing"

	"github.com/compactd/compactd/table/manifest"
)

// BenchmarkMergeEntries folds 100k ADDs of which a tenth are deleted again,
// the shape `compactd plan` folds at 100k files (docs/perf.md).
func BenchmarkMergeEntries(b *testing.B) {
	const files = 100_000
	part := []byte{0, 0, 0, 0, 0, 0, 0, 0}
	var entries []manifest.Entry
	for i := range files {
		entries = append(entries, manifest.Entry{Kind: manifest.FileKindAdd, Partition: part, Bucket: int32(i % 1000),
			File: manifest.DataFileMeta{FileName: fmt.Sprintf("data-%d.parquet", i), Level: 1, MinKey: make([]byte, 16), MaxKey: make([]byte, 16)}})
	}
	for i := 0; i < files; i += 10 {
		d := entries[i]
		d.Kind = manifest.FileKindDelete
		entries = append(entries, d)
	}
	b.ReportAllocs()
	for b.Loop() {
		adds, _, err := MergeEntries(entries)
		if err != nil || len(adds) != files-files/10 {
			b.Fatalf("%d adds, %v", len(adds), err)
		}
	}
}
