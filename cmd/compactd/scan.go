package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
)

func newScanCmd() *cobra.Command {
	var snapshot int64
	cmd := &cobra.Command{
		Use:   "scan <warehouse> <db.table>",
		Short: "Print a table's rows as Paimon's batch read returns them, as JSON lines",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			var s *table.Snapshot
			if cmd.Flags().Changed("snapshot") {
				if snapshot <= 0 {
					return &usageError{cmd, fmt.Errorf("--snapshot %d: snapshot ids start at 1 (leave it out to read the latest)", snapshot)}
				}
				if s, err = t.Snapshot(ctx, snapshot); err != nil {
					if !errors.Is(err, fileio.ErrNotExist) {
						return err
					}
					ids, lerr := t.SnapshotIDs(ctx)
					switch {
					case lerr != nil:
						return err
					case len(ids) == 0:
						return fmt.Errorf("table %s has no snapshot %d: it has no snapshots", t.FullName(), snapshot)
					default:
						return fmt.Errorf("table %s has no snapshot %d: it has %d snapshots, %d to %d", t.FullName(), snapshot, len(ids), ids[0], ids[len(ids)-1])
					}
				}
			}
			sc, err := scan.New(ctx, t, s)
			if err != nil {
				return err
			}
			out := bufio.NewWriterSize(os.Stdout, 1<<16)
			defer out.Flush()
			// EachJSON writes the batch path's rows straight from the
			// column vectors (#19); each line is encoded as AppendJSON does.
			return sc.EachJSON(ctx, func(line []byte) error {
				if _, err := out.Write(line); err != nil {
					return err
				}
				return out.WriteByte('\n')
			})
		},
	}
	cmd.Flags().Int64Var(&snapshot, "snapshot", 0, "snapshot id to read (default: the latest)")
	return cmd
}
