package scan_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// The batch path of a scan returns exactly the rows of the record path, in
// the same order: over a bucket of several overlapping sorted runs (one per
// commit) with updates, deletes and nulls, for each kind of merge, and for
// an append bucket of several files.
func TestScanBatchPathMatchesRecordPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		pk   []string
		opts map[string]string
	}{
		{"deduplicate", []string{"k"}, nil},
		{"partial-update", []string{"k"}, map[string]string{"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"}},
		{"aggregation force-lookup", []string{"k"}, map[string]string{"merge-engine": "aggregation", "fields.n.aggregate-function": "sum", "force-lookup": "true"}},
		{"append", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			fields := table.RowType{
				{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}},
				{ID: 1, Name: "n", Type: table.DataType{Root: table.TypeBigInt, Nullable: true}},
				{ID: 2, Name: "s", Type: table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true}},
			}
			opts := map[string]string{"bucket": "1"}
			if c.pk == nil {
				opts["bucket"] = "-1"
			}
			for k, v := range c.opts {
				opts[k] = v
			}
			s, err := table.NewTableSchema(0, fields, 1, nil, c.pk, opts, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := write.CreateTable(ctx, fileio.NewLocal(), t.TempDir(), "db", "t", s)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(19, 7))
			const runs, keys = 4, 3000
			for run := range runs {
				var w interface {
					Write(table.RowKind, table.Row) error
					Commit(context.Context) (*table.Snapshot, error)
				}
				if c.pk == nil {
					w = &appendCommit{t: tb, r: write.NewAppendRoller(ctx, tb, table.EmptyBinaryRow(), 0, int64(run*keys), manifest.FileSourceAppend)}
				} else if w, err = write.NewWriter(ctx, tb, fmt.Sprint("w", run)); err != nil {
					t.Fatal(err)
				}
				for range keys {
					k := rng.Int64N(2 * keys)
					row := table.Row{k, rng.Int64N(100), fmt.Sprintf("r%d-%d", run, k)}
					if rng.IntN(5) == 0 {
						row[1] = nil
					}
					if rng.IntN(7) == 0 {
						row[2] = nil
					}
					kind := table.RowKindInsert
					if c.pk != nil && c.opts["merge-engine"] != "aggregation" && rng.IntN(6) == 0 {
						kind = table.RowKindDelete
					}
					if err := w.Write(kind, row); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := w.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			read := func(recordPath bool) []string {
				sc, err := scan.New(ctx, reopen(t, tb), nil)
				if err != nil {
					t.Fatal(err)
				}
				if recordPath {
					scan.ForceRecordPath(sc)
				} else if !scan.BatchPath(sc) {
					t.Fatal("the scan does not take the batch path")
				}
				var rows []string
				if err := sc.Each(ctx, func(r table.Row) error {
					rows = append(rows, fmt.Sprintf("%#v", r))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return rows
			}
			want, got := read(true), read(false)
			if c.opts["merge-engine"] != "first-row" && len(want) < keys {
				t.Fatalf("only %d rows: the table does not exercise the merge", len(want))
			}
			if !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("batch path row %d = %s, record path %s (%d and %d rows)", i, got[i], want[i], len(got), len(want))
					}
				}
				t.Fatalf("batch path %d rows, record path %d", len(got), len(want))
			}
		})
	}
}

// appendCommit writes rows of an append table as one file, committed as
// one APPEND snapshot (write.Writer takes primary-key tables only).
type appendCommit struct {
	t *table.Table
	r *write.AppendRoller
}

func (a *appendCommit) Write(_ table.RowKind, row table.Row) error { return a.r.Write(row) }

func (a *appendCommit) Commit(ctx context.Context) (*table.Snapshot, error) {
	metas, err := a.r.Close()
	if err != nil {
		return nil, err
	}
	var entries []manifest.Entry
	for _, m := range metas {
		entries = append(entries, manifest.Entry{Kind: manifest.FileKindAdd, Partition: table.EmptyBinaryRow(), Bucket: 0, TotalBuckets: -1, File: m})
	}
	res, err := a.t.Commit(ctx, table.CommitRequest{Kind: table.CommitAppend, CommitUser: "append", CommitIdentifier: entries[0].File.MinSequenceNumber + 1, Entries: entries})
	if err != nil {
		return nil, err
	}
	return res.Snapshot, nil
}
