package main

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// BenchmarkReadORCBatches reads every live data file of bench.wide_orc in
// the warehouse $COMPACTD_BENCH_ORC_WAREHOUSE on the batch path compaction
// uses (no merge, no write), to profile the ORC read side alone:
//
//	compactd-bench gen -warehouse W -table bench.wide_orc -schema wide_orc -rows 1000000 -runs 8
//	COMPACTD_BENCH_ORC_WAREHOUSE=W go test ./cmd/compactd-bench -run - -bench ReadORCBatches -cpuprofile cpu.prof
func BenchmarkReadORCBatches(b *testing.B) {
	wh := os.Getenv("COMPACTD_BENCH_ORC_WAREHOUSE")
	if wh == "" {
		b.Skip("COMPACTD_BENCH_ORC_WAREHOUSE unset: no generated wide_orc table to read")
	}
	ctx := context.Background()
	t, err := table.Open(ctx, fileio.NewLocal(), wh, "bench", "wide_orc")
	if err != nil {
		b.Fatal(err)
	}
	snap, err := t.LatestSnapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	fs, err := t.FileSet(ctx, snap)
	if err != nil {
		b.Fatal(err)
	}
	s := t.Schema()
	schema := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
	codec, err := datafile.NewKVCodec(schema)
	if err != nil {
		b.Fatal(err)
	}
	var paths []string
	for _, bk := range fs.Buckets() {
		for i := range bk.Files {
			p, err := t.DataFilePath(&bk.Files[i])
			if err != nil {
				b.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	batch := codec.NewBatch()
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range paths {
			r, err := datafile.OpenKeyValueBatches(ctx, fileio.NewLocal(), p, schema, schema, codec)
			if err != nil {
				b.Fatal(err)
			}
			for {
				batch.Reset()
				err := r.Next(batch, scan.BatchSize)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			r.Close()
		}
	}
}
