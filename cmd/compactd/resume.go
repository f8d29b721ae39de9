package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

func newResumeCmd() *cobra.Command {
	var configFile, warehouse string
	cmd := &cobra.Command{
		Use:   "resume <db.table>",
		Short: "Resume a table the daemon halted after a permanent error",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := policy.LoadConfig(configFile)
			if err != nil {
				return err
			}
			if warehouse != "" {
				warehouse = cfg.Resolve(warehouse)
			}
			recs, err := sched.Resume(cfg.StatePath(), args[0], warehouse)
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				return fmt.Errorf("table %s is not halted (state dir %s)", args[0], cfg.StatePath())
			}
			for _, r := range recs {
				fmt.Fprintf(os.Stdout, "resumed %s in %s (halted %s: %s)\n", r.Table, r.Warehouse, r.Time.Format("2006-01-02T15:04:05Z"), r.Reason)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "compactd.yaml", "config file")
	cmd.Flags().StringVar(&warehouse, "warehouse", "", "only in this warehouse")
	return cmd
}
