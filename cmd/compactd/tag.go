package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/maint"
)

func newTagCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tag",
		Short: "Create, delete, list and expire tags (tag/tag-<name>) as Paimon writes them",
	}
	cmd.AddCommand(newTagCreateCmd(), newTagDeleteCmd(), newTagListCmd(), newTagExpireCmd(), newTagAutoCmd())
	return cmd
}

func newTagCreateCmd() *cobra.Command {
	var snapshot int64
	var retained string
	cmd := &cobra.Command{
		Use:   "create <warehouse> <db.table> <name>",
		Short: "Tag a snapshot (default: the latest); refuses an existing tag name",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			o := maint.CreateTagOptions{Snapshot: snapshot}
			if retained != "" {
				d, err := parseUserDuration(retained)
				if err != nil {
					return fmt.Errorf("--time-retained: %w", err)
				}
				o.TimeRetained = &d
			}
			tag, err := maint.CreateTag(ctx, t, args[2], o)
			if err != nil {
				return err
			}
			fmt.Printf("%s: created tag %s on snapshot %d\n", t.FullName(), tag.Name, tag.ID)
			return nil
		},
	}
	cmd.Flags().Int64Var(&snapshot, "snapshot", 0, "snapshot id to tag (default: latest)")
	cmd.Flags().StringVar(&retained, "time-retained", "", "tag TTL, e.g. 1h, 7d, 30 min (default: tag.default-time-retained)")
	return cmd
}

func newTagDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "delete <warehouse> <db.table> <name>",
		Short: "Delete a tag (its files are left to orphan cleanup)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			if err := maint.DeleteTag(ctx, t, args[2]); err != nil {
				return err
			}
			fmt.Printf("%s: deleted tag %s\n", t.FullName(), args[2])
			return nil
		},
	}
}

func newTagListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list <warehouse> <db.table>",
		Short: "List tags by snapshot id",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			tags, err := maint.ListTags(ctx, t)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(os.Stdout)
				for _, tg := range tags {
					row := map[string]any{"name": tg.Name, "snapshot": tg.ID, "schemaId": tg.SchemaID,
						"commitTime": time.UnixMilli(tg.TimeMillis).UTC(), "recordCount": tg.TotalRecordCount}
					if tg.CreateTime != nil {
						row["createTime"] = tg.CreateTime.Format("2006-01-02T15:04:05.999999999")
					}
					if tg.TimeRetained != nil {
						row["timeRetained"] = tg.TimeRetained.String()
					}
					if err := enc.Encode(row); err != nil {
						return err
					}
				}
				return nil
			}
			for _, tg := range tags {
				extra := ""
				if tg.CreateTime != nil && tg.TimeRetained != nil {
					extra = fmt.Sprintf("  created %s, retained %s", tg.CreateTime.Format("2006-01-02 15:04:05"), tg.TimeRetained)
				}
				fmt.Printf("%s\tsnapshot %d\t%d rows%s\n", tg.Name, tg.ID, tg.TotalRecordCount, extra)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per tag")
	return cmd
}

func newTagExpireCmd() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "expire <warehouse> <db.table>",
		Short: "Delete tags past tag.num-retained-max (automatic tags) or their time-retained",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			rep, err := maint.ExpireTags(ctx, t, time.Now(), dryRun)
			if err != nil {
				return err
			}
			verb := "deleted"
			if dryRun {
				verb = "would delete"
			}
			for _, e := range rep.Expired {
				fmt.Printf("%s tag %s: %s\n", verb, e.Name, e.Reason)
			}
			fmt.Printf("%s: %s %d tags\n", t.FullName(), verb, len(rep.Expired))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report, delete nothing")
	return cmd
}

func newTagAutoCmd() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "auto <warehouse> <db.table>",
		Short: "Create automatic tags (tag.automatic-creation) and expire tags, as Paimon's committer does for non-write-only tables",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			rep, err := maint.RunTagAutoManager(ctx, t, time.Now(), dryRun)
			if err != nil {
				return err
			}
			create, del := "created", "deleted"
			if dryRun {
				create, del = "would create", "would delete"
			}
			for _, c := range rep.Created {
				fmt.Printf("%s tag %s on snapshot %d\n", create, c.Name, c.Snapshot)
			}
			for _, e := range rep.Expired {
				fmt.Printf("%s tag %s: %s\n", del, e.Name, e.Reason)
			}
			fmt.Printf("%s: %s %d tags, %s %d\n", t.FullName(), create, len(rep.Created), del, len(rep.Expired))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report, change nothing")
	return cmd
}
