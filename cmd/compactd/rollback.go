package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/maint"
)

func newRollbackCmd() *cobra.Command {
	var toSnapshot int64
	var toTag, toTime string
	cmd := &cobra.Command{
		Use:   "rollback <warehouse> <db.table> --to-snapshot N | --to-tag T | --to-timestamp TS",
		Short: "Roll the table back as Paimon's rollback_to does (stop writers first)",
		Long: `Delete every snapshot newer than the target (newest first), the tags of those snapshots and
newer long-lived changelogs, and point LATEST at the target. Rolling back to a tag whose snapshot
expired writes the snapshot back from the tag. Metadata only: data files and manifests the removed
snapshots used become orphans, deleted by "compactd orphan".`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			bySnap, byTag, byTime := cmd.Flags().Changed("to-snapshot"), cmd.Flags().Changed("to-tag"), cmd.Flags().Changed("to-timestamp")
			n := 0
			for _, b := range []bool{bySnap, byTag, byTime} {
				if b {
					n++
				}
			}
			if n != 1 {
				return errors.New("give exactly one of --to-snapshot, --to-tag and --to-timestamp")
			}
			if cliCatalog.metastore() == "rest" {
				// A REST catalog keeps the table's latest snapshot itself and
				// rolls back through its own API; deleting snapshot files
				// under it would leave the catalog pointing at one gone.
				return fmt.Errorf("rollback of %s through a REST catalog: compactd does not implement the catalog's rollback API; roll back with a Paimon client", args[1])
			}
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			var res maint.RollbackResult
			switch {
			case bySnap:
				res, err = maint.RollbackToSnapshot(ctx, t, toSnapshot)
			case byTime:
				ts, perr := parseTimestamp(toTime)
				if perr != nil {
					return fmt.Errorf("--to-timestamp: %w", perr)
				}
				res, err = maint.RollbackToTimestamp(ctx, t, ts)
			default:
				res, err = maint.RollbackToTag(ctx, t, toTag)
			}
			if err != nil {
				return err
			}
			fmt.Printf("%s: rolled back to snapshot %d; deleted snapshots %v, tags %v, changelogs %v",
				t.FullName(), res.Snapshot, res.DeletedSnapshots, res.DeletedTags, res.DeletedChangelogs)
			if res.Recreated {
				fmt.Printf("; snapshot %d restored from the tag", res.Snapshot)
			}
			fmt.Println()
			return nil
		},
	}
	cmd.Flags().Int64Var(&toSnapshot, "to-snapshot", 0, "snapshot id to roll back to")
	cmd.Flags().StringVar(&toTag, "to-tag", "", "tag to roll back to")
	cmd.Flags().StringVar(&toTime, "to-timestamp", "", "roll back to the newest snapshot committed at or before this time (epoch millis or RFC 3339)")
	return cmd
}

// parseTimestamp reads epoch milliseconds or an RFC 3339 time.
func parseTimestamp(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	return time.Parse(time.RFC3339Nano, s)
}
