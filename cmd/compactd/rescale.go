package main

import (
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/rescale"
)

func newRescaleCmd() *cobra.Command {
	var o rescale.Options
	var partition string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rescale <warehouse> <db.table> --bucket-num N [--partition k=v,...]",
		Short: "Change the bucket count of partitions of a primary-key table as Paimon's rescale procedure does",
		Long: `Rewrite the rows of the selected partitions (every partition without --partition) into N
buckets, routed with Paimon's hash of the bucket key, and commit them as one OVERWRITE snapshot
of those partitions. The files are one sorted run per bucket at the top level.

A fixed-bucket table is rescaled to its own 'bucket' option only: ALTER TABLE ... SET ('bucket' =
'N') first (Java's writers then refuse the partitions still written with the old count), then
rescale them. A postpone-bucket table (bucket = -2) takes any N >= 1; rows still in bucket-postpone
stay there. Dynamic-bucket (-1) and append tables are refused.

If anything commits into a real bucket of a rescaled partition after the rescale read it, the
commit fails and the table is left as it was (Paimon's commit.strict-mode.last-safe-snapshot);
run it again. No changelog is written, as Paimon's overwrite commits none.`,
		Example: `  compactd rescale /data/warehouse db.orders --bucket-num 8 --partition dt=2024-01-01 --dry-run
  compactd rescale s3://lake/wh db.events --bucket-num 16 --partition dt=2024-01-01,hr=3 --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if !cmd.Flags().Changed("bucket-num") {
				return errors.New("--bucket-num is required")
			}
			spec, err := rescale.ParsePartitionSpec(partition)
			if err != nil {
				return err
			}
			o.Partition = spec
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			res, err := rescale.Run(ctx, t, o)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(os.Stdout, res, false)
			}
			if res.DryRun {
				fmt.Fprintf(os.Stdout, "%s: would rescale at snapshot %d to %d buckets (output level %d):\n", res.Table, res.ReadSnapshot, res.BucketNum, res.OutputLevel)
			} else {
				fmt.Fprintf(os.Stdout, "%s: committed snapshot %d (OVERWRITE) from snapshot %d: %d buckets (level %d)\n", res.Table, res.Snapshot, res.ReadSnapshot, res.BucketNum, res.OutputLevel)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "PARTITION\tBUCKETS\tFILES IN\tROWS IN\tBYTES IN\tFILES OUT\tROWS OUT\tBYTES OUT\tPOSTPONED FILES")
			for _, p := range res.Partitions {
				part := p.Partition
				if part == "" {
					part = "-"
				}
				fmt.Fprintf(tw, "%s\t%d -> %d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", part, p.FromBuckets, p.ToBuckets, p.FilesIn, p.RowsIn, p.BytesIn, p.FilesOut, p.RowsOut, p.BytesOut, p.PostponedFiles)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&o.BucketNum, "bucket-num", 0, "bucket count of the rescaled partitions (required)")
	cmd.Flags().StringVar(&partition, "partition", "", "only partitions matching k=v[,k=v...] (or the path k=v/k=v); default every partition")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "report what would be rewritten, write nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
