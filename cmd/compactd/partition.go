package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/maint"
)

func newPartitionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "partition",
		Short: "Partition maintenance",
	}
	cmd.AddCommand(newPartitionExpireCmd())
	return cmd
}

func newPartitionExpireCmd() *cobra.Command {
	var dryRun, asJSON bool
	var expiration string
	cmd := &cobra.Command{
		Use:   "expire <warehouse> <db.table>",
		Short: "Drop partitions older than partition.expiration-time with an OVERWRITE commit, as Paimon does",
		Long: `Select partitions by the table's partition.expiration-strategy (values-time: the time parsed
from the partition values with partition.timestamp-pattern/-formatter; update-time: the newest file's
creation time) against now minus partition.expiration-time, at most partition.expiration-max-num, and
commit OVERWRITE snapshots (partition.expiration-batch-size partitions each) that delete all their
files. The files are deleted physically when snapshot expiration removes the older snapshots.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			o, err := t.Options().PartitionExpiration()
			if err != nil {
				return fmt.Errorf("%s: %w", t.FullName(), err)
			}
			if expiration != "" {
				if o.ExpirationTime, err = parseUserDuration(expiration); err != nil {
					return fmt.Errorf("--expiration-time: %w", err)
				}
			}
			rep, err := maint.ExpirePartitions(ctx, t, maint.PartitionExpireRunOptions{Options: &o, Now: time.Now(), DryRun: dryRun})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(os.Stdout, rep, false)
			}
			verb := "dropped"
			if dryRun {
				verb = "would drop"
			}
			for _, p := range rep.Partitions {
				fmt.Printf("%s %s (%d files, %d rows)\n", verb, p.Spec, p.Files, p.Rows)
			}
			fmt.Printf("%s: %s %d partitions", t.FullName(), verb, len(rep.Partitions))
			if len(rep.Snapshots) > 0 {
				fmt.Printf(" in snapshots %v", rep.Snapshots)
			}
			fmt.Println()
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report, commit nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&expiration, "expiration-time", "", "override partition.expiration-time (e.g. 7d)")
	return cmd
}
