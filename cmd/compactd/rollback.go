package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/maint"
)

func init() {
	extraCommands = append(extraCommands, newRollbackCmd)
}

func newRollbackCmd() *cobra.Command {
	var toSnapshot int64
	var toTag string
	cmd := &cobra.Command{
		Use:   "rollback <warehouse> <db.table> --to-snapshot N | --to-tag T",
		Short: "Roll the table back as Paimon's rollback_to does (stop writers first)",
		Long: `Delete every snapshot newer than the target (newest first), the tags of those snapshots and
newer long-lived changelogs, and point LATEST at the target. Rolling back to a tag whose snapshot
expired writes the snapshot back from the tag. Metadata only: data files and manifests the removed
snapshots used become orphans, deleted by "compactd orphan".`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			bySnap, byTag := cmd.Flags().Changed("to-snapshot"), cmd.Flags().Changed("to-tag")
			if bySnap == byTag {
				return errors.New("give exactly one of --to-snapshot and --to-tag")
			}
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			var res maint.RollbackResult
			if bySnap {
				res, err = maint.RollbackToSnapshot(ctx, t, toSnapshot)
			} else {
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
	return cmd
}
