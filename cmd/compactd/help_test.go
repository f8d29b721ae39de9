package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
)

// Every command a user runs shows an Example: block in its help (issue 18).
func TestEveryCommandHasAnExample(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && !c.Hidden && c.Name() != "help" && c.Parent() != nil && c.Parent().Name() != "completion" && c.Example == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	for path := range examples {
		found := false
		var find func(c *cobra.Command)
		find = func(c *cobra.Command) {
			if c.CommandPath() == path {
				found = true
			}
			for _, sub := range c.Commands() {
				find(sub)
			}
		}
		find(newRootCmd())
		if !found {
			t.Errorf("example for %q, which is no command", path)
		}
	}
}

// Paimon's procedure names run the same commands.
func TestPaimonProcedureNames(t *testing.T) {
	ctx := context.Background()
	wh := filepath.Join(t.TempDir(), "wh")
	oneRowTable(t, wh)
	for _, args := range [][]string{
		{"expire_snapshots", wh, "db.t", "--dry-run"},
		{"remove_orphan_files", wh, "db.t", "--dry-run"},
		{"create_tag", wh, "db.t", "t1"},
		{"tag", "delete", wh, "db.t", "t1"},
		{"tag", "create", wh, "db.t", "t2"},
		{"delete_tag", wh, "db.t", "t2"},
		{"rollback_to", wh, "db.t", "--to-snapshot", "1"},
	} {
		if err := run(ctx, args...); err != nil {
			t.Errorf("compactd %v: %v", args, err)
		}
	}
	if err := run(ctx, "delete_tag", wh, "db.t", "t2"); err == nil {
		t.Error("delete_tag of a deleted tag succeeded")
	}
}
