package main

import (
	"fmt"
	"math/big"
	"math/rand/v2"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// The example is the multi-stream "wide table" compactd exists for: three
// streams each own a column group of one partial-update table, commit as
// separate write-only writers and never compact.
func newExampleCmd() *cobra.Command {
	var orders, commits int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "example <warehouse>",
		Short: "Create the example warehouse: a partial-update wide table fed by three write-only writers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			fio, err := fileio.For(ctx, args[0])
			if err != nil {
				return err
			}
			str := func(nullable bool) table.DataType {
				return table.DataType{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: nullable}
			}
			bigint := func(nullable bool) table.DataType { return table.DataType{Root: table.TypeBigInt, Nullable: nullable} }
			fields := table.RowType{
				{ID: 0, Name: "order_id", Type: bigint(false)},
				{ID: 1, Name: "dt", Type: str(false)},
				{ID: 2, Name: "status", Type: str(true)},
				{ID: 3, Name: "status_ts", Type: bigint(true)},
				{ID: 4, Name: "amount", Type: table.DataType{Root: table.TypeDecimal, Precision: 10, Scale: 2, Nullable: true}},
				{ID: 5, Name: "pay_ts", Type: bigint(true)},
				{ID: 6, Name: "address", Type: str(true)},
				{ID: 7, Name: "ship_ts", Type: bigint(true)},
			}
			opts := map[string]string{
				"bucket":                          "2",
				"file.format":                     "parquet",
				"merge-engine":                    "partial-update",
				"fields.status_ts.sequence-group": "status",
				"fields.pay_ts.sequence-group":    "amount",
				"fields.ship_ts.sequence-group":   "address",
				"write-only":                      "true",
			}
			s, err := table.NewTableSchema(0, fields, 7, []string{"dt"}, []string{"order_id", "dt"}, opts, nil, 0)
			if err != nil {
				return err
			}
			t, err := write.CreateTable(ctx, fio, args[0], "shop", "orders", s)
			if err != nil {
				return err
			}
			rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
			statuses := []string{"created", "paid", "packed", "shipped", "delivered"}
			streams := []struct {
				user string
				fill func(row table.Row, id int64, ts int64)
			}{
				{"status-stream", func(r table.Row, id, ts int64) {
					r[2], r[3] = statuses[rng.IntN(len(statuses))], ts
				}},
				{"payment-stream", func(r table.Row, id, ts int64) {
					r[4] = table.Decimal{Unscaled: big.NewInt(rng.Int64N(100000)), Precision: 10, Scale: 2}
					r[5] = ts
				}},
				{"shipping-stream", func(r table.Row, id, ts int64) {
					r[6], r[7] = fmt.Sprintf("%d Harbour Street", 1+rng.IntN(500)), ts
				}},
			}
			writers := make([]*write.Writer, len(streams))
			for i, st := range streams {
				if writers[i], err = write.NewWriter(ctx, t, st.user); err != nil {
					return err
				}
			}
			for c := 0; c < commits; c++ {
				for i, st := range streams {
					for n := 0; n < orders/commits; n++ {
						id := int64(rng.IntN(orders))
						row := make(table.Row, len(fields))
						row[0], row[1] = id, fmt.Sprintf("2026-11-%02d", 27+id%3)
						// Event times arrive out of order: a stream's late
						// update must not overwrite a newer one.
						st.fill(row, id, int64(c*1000+rng.IntN(1500)))
						if err := writers[i].Write(table.RowKindInsert, row); err != nil {
							return err
						}
					}
					if _, err := writers[i].Commit(ctx); err != nil {
						return err
					}
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s with %d commits from 3 writers\n", t.Path(), commits*len(streams))
			return nil
		},
	}
	cmd.Flags().IntVar(&orders, "orders", 2000, "number of distinct orders")
	cmd.Flags().IntVar(&commits, "commits", 6, "commits per writer")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed")
	return cmd
}
