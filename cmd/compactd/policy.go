package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/table"
)

// findTable opens "db.table" in the first configured warehouse that
// watches and holds it.
func findTable(ctx context.Context, cfg *policy.Config, name string) (*table.Table, error) {
	if _, _, ok := strings.Cut(name, "."); !ok {
		return nil, fmt.Errorf("table name %q: want <database>.<table>", name)
	}
	var errs []string
	for _, w := range cfg.Warehouses {
		if !w.Selects(name) {
			continue
		}
		t, err := openTable(ctx, cfg.WarehousePath(w), name)
		if err == nil {
			return t, nil
		}
		errs = append(errs, err.Error())
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("table %s: no configured warehouse watches it", name)
	}
	return nil, fmt.Errorf("table %s: %s", name, strings.Join(errs, "; "))
}

func newPolicyCmd() *cobra.Command {
	var configFile string
	root := &cobra.Command{Use: "policy", Short: "Show and set per-table maintenance policies"}
	root.PersistentFlags().StringVar(&configFile, "config", "compactd.yaml", "config file")

	var asJSON bool
	show := &cobra.Command{
		Use:   "show <db.table>",
		Short: "Print the effective policy of a table, each value with where it came from (override, table, config, default)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := policy.LoadConfig(configFile)
			if err != nil {
				return err
			}
			t, err := findTable(ctx, cfg, args[0])
			if err != nil {
				return err
			}
			store, err := policy.LoadStore(cfg.PolicyPath())
			if err != nil {
				return err
			}
			e := policy.Resolve(args[0], t.Schema().EffectiveOptions(), cfg.Defaults, store.Overrides(args[0]))
			var problems []string
			for _, k := range policy.Kinds {
				if _, err := e.Job(k); err != nil {
					problems = append(problems, err.Error())
				}
			}
			if asJSON {
				return writeJSON(os.Stdout, map[string]any{"table": args[0], "path": t.Path(),
					"values": e.Sorted(), "problems": problems}, false)
			}
			fmt.Fprintf(os.Stdout, "%s (%s)\n", args[0], t.Path())
			tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
			for _, v := range e.Sorted() {
				src := string(v.Source)
				if v.Note != "" {
					src += " (" + v.Note + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Key, v.Value, src)
			}
			tw.Flush()
			for _, p := range problems {
				fmt.Fprintln(os.Stdout, "invalid:", p)
			}
			return nil
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	set := &cobra.Command{
		Use:   "set <db.table> key=value...",
		Short: "Persist policy overrides of a table (key= removes one); the running daemon picks them up",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := policy.LoadConfig(configFile)
			if err != nil {
				return err
			}
			// Malformed arguments are reported with the invalid values.
			changes, parseErr := policy.ParseAssignments(args[1:])
			t, err := findTable(ctx, cfg, args[0])
			if err != nil {
				return err
			}
			opts := t.Schema().EffectiveOptions()
			next, err := policy.Update(cfg.PolicyPath(), args[0], changes, func(m map[string]string) error {
				return errors.Join(parseErr, policy.ValidateValues(m, opts))
			})
			if err != nil {
				return fmt.Errorf("policy for %s not changed:\n%w", args[0], err)
			}
			fmt.Fprintf(os.Stdout, "%s: %d overrides in %s\n", args[0], len(next), cfg.PolicyPath())
			return nil
		},
	}

	keys := &cobra.Command{
		Use:   "keys",
		Short: "List the policy keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e := policy.Resolve("", nil, nil, nil)
			tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tDEFAULT\tMEANING")
			for _, k := range policy.Keys() {
				def, help := e.Values[k].Value, policy.Help(k)
				if policy.IsPaimonKey(k) {
					def, help = "(Paimon's)", "Paimon table option"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", k, def, help)
			}
			return tw.Flush()
		},
	}
	root.AddCommand(show, set, keys)
	return root
}
