package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/fleet"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

func newResumeCmd() *cobra.Command {
	var configFile, warehouse, coordinator string
	cmd := &cobra.Command{
		Use:   "resume <db.table>",
		Short: "Resume a table the daemon halted after a permanent error",
		Long: "Resume a table the daemon halted after a permanent error: its record is removed from the state\n" +
			"directory, or, for a fleet (coordinator.url or --coordinator), from the coordinator's database.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := policy.LoadConfig(configFile)
			if err != nil {
				return err
			}
			if warehouse != "" {
				warehouse = cfg.Resolve(warehouse)
			}
			if coordinator != "" {
				cfg.Coordinator.URL = coordinator
			}
			var recs []sched.HaltedRecord
			where := "state dir " + cfg.StatePath()
			if cfg.Coordinator.URL != "" {
				where = "the fleet's coordinator"
				recs, err = fleet.Resume(cmd.Context(), cfg.Coordinator.URL, args[0], warehouse)
			} else {
				recs, err = sched.Resume(cfg.StatePath(), args[0], warehouse)
			}
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				return fmt.Errorf("table %s is not halted (%s)", args[0], where)
			}
			for _, r := range recs {
				fmt.Fprintf(os.Stdout, "resumed %s in %s (halted %s: %s)\n", r.Table, r.Warehouse, r.Time.Format("2006-01-02T15:04:05Z"), r.Reason)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "compactd.yaml", "config file")
	cmd.Flags().StringVar(&warehouse, "warehouse", "", "only in this warehouse")
	cmd.Flags().StringVar(&coordinator, "coordinator", "", "the fleet's PostgreSQL URL (overrides coordinator.url)")
	return cmd
}
