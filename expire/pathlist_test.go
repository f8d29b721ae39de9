package expire_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
)

func TestPathListSpillsKeepsOrderAndDeduplicates(t *testing.T) {
	defer expire.SetSpillAfter(100)()
	l := expire.NewPathList()
	defer l.Close()
	var want []string
	for i := range 1000 {
		p := fmt.Sprintf("/t/p=%d\n/bucket-0/data-%d.parquet", i%7, i)
		want = append(want, p)
		for range 1 + i%3 { // duplicates are dropped
			if err := l.Add(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if l.Len() != len(want) {
		t.Fatalf("Len %d, want %d", l.Len(), len(want))
	}
	for range 2 { // the list can be read more than once
		got, err := l.Strings()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("read back %d paths, not the %d added in order", len(got), len(want))
		}
	}
}

// An expiration whose data files spill to disk deletes exactly what one
// that keeps them in memory deletes, and reports the same.
func TestRunWithSpooledDataFilesMatchesInMemory(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 8; seed++ {
		run := func(spill int) (expire.Report, []string) {
			defer expire.SetSpillAfter(spill)()
			fs := expiretest.NewMemFS()
			sim := history(t, fs, "/wh/db.db/t", seed, 40, seed%2 == 0, seed%3 == 0)
			o := opts(sim, 2, 1<<30, 30, 0)
			o.CleanEmptyDirectories = true
			rep, err := expire.Run(ctx, sim.Source(), o)
			if err != nil {
				t.Fatal(err)
			}
			if err := sim.CheckReadable(ctx); err != nil {
				t.Fatal(err)
			}
			all, err := expiretest.AllFiles(ctx, fs, "/wh/db.db/t")
			if err != nil {
				t.Fatal(err)
			}
			return rep, all
		}
		memRep, memFiles := run(1 << 16)
		spoolRep, spoolFiles := run(1)
		if memRep.Counts.DataFiles == 0 {
			t.Fatalf("seed %d: nothing to delete, the test proves nothing", seed)
		}
		if fmt.Sprint(memRep) != fmt.Sprint(spoolRep) {
			t.Fatalf("seed %d: reports differ:\n%+v\n%+v", seed, memRep, spoolRep)
		}
		if !slices.Equal(memFiles, spoolFiles) {
			t.Fatalf("seed %d: the tables differ after expiry", seed)
		}
	}
}
