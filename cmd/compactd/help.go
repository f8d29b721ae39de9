package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the Example: blocks of every command, by command path, in
// one place so that they read as one manual (TestEveryCommandHasAnExample
// keeps the list complete).
var examples = map[string]string{
	"compactd inspect":           "compactd inspect /data/warehouse shop.orders\ncompactd inspect s3://lake/warehouse shop.orders --json",
	"compactd list":              "compactd list /data/warehouse\ncompactd --catalog jdbc:postgresql://db:5432/paimon --catalog-option catalog-key=prod list /data/warehouse",
	"compactd scan":              "compactd scan /data/warehouse shop.orders | head\ncompactd scan --snapshot 42 /data/warehouse shop.orders",
	"compactd plan":              "compactd plan /data/warehouse shop.orders\ncompactd plan --full --partition dt=2024-01-01 /data/warehouse shop.orders --json",
	"compactd compact":           "compactd compact /data/warehouse shop.orders\ncompactd compact --full --partition dt=2024-01-01 /data/warehouse shop.orders\ncompactd compact --dry-run --json /data/warehouse shop.orders",
	"compactd daemon":            "compactd daemon --config /etc/compactd/compactd.yaml\ncompactd daemon --config compactd.yaml --listen 127.0.0.1:9464",
	"compactd doctor":            "compactd doctor /data/warehouse shop.orders\ncompactd doctor s3://lake/warehouse shop.orders --json --skip-orphans",
	"compactd example":           "compactd example ./example-warehouse && compactd plan ./example-warehouse shop.orders",
	"compactd expire":            "compactd expire /data/warehouse shop.orders --dry-run\ncompactd expire /data/warehouse shop.orders --time-retained 7d --json",
	"compactd orphan":            "compactd orphan /data/warehouse shop.orders --dry-run\ncompactd orphan /data/warehouse shop.orders --older-than 1d",
	"compactd partition expire":  "compactd partition expire /data/warehouse shop.orders --dry-run\ncompactd partition expire /data/warehouse shop.orders --expiration-time 30d",
	"compactd policy show":       "compactd policy show shop.orders --config compactd.yaml --json",
	"compactd policy set":        "compactd policy set shop.orders compact.schedule='@every 5m' full-compaction.enabled=true --config compactd.yaml",
	"compactd policy keys":       "compactd policy keys",
	"compactd rescale":           "compactd rescale /data/warehouse shop.orders --bucket-num 8 --partition dt=2024-01-01 --dry-run\ncompactd rescale /data/warehouse shop.orders --bucket-num 8 --partition dt=2024-01-01",
	"compactd resume":            "compactd resume shop.orders --config compactd.yaml",
	"compactd rollback":          "compactd rollback /data/warehouse shop.orders --to-snapshot 41\ncompactd rollback /data/warehouse shop.orders --to-tag nightly-2024-01-01",
	"compactd tag create":        "compactd tag create /data/warehouse shop.orders nightly-2024-01-01\ncompactd tag create /data/warehouse shop.orders before-backfill --snapshot 41 --time-retained 7d",
	"compactd tag delete":        "compactd tag delete /data/warehouse shop.orders before-backfill",
	"compactd tag list":          "compactd tag list /data/warehouse shop.orders --json",
	"compactd tag expire":        "compactd tag expire /data/warehouse shop.orders --dry-run",
	"compactd tag auto":          "compactd tag auto /data/warehouse shop.orders --dry-run",
	"compactd version":           "compactd version\ncompactd version --json\ncompactd --version",
	"compactd create_tag":        "compactd create_tag /data/warehouse shop.orders nightly-2024-01-01",
	"compactd delete_tag":        "compactd delete_tag /data/warehouse shop.orders nightly-2024-01-01",
	"compactd expire_partitions": "compactd expire_partitions /data/warehouse shop.orders --expiration-time 30d --dry-run",
}

// procedureAliases are Paimon's procedure names for the commands that do
// what the procedure does (expire_snapshots, remove_orphan_files, ...).
var procedureAliases = map[string]string{
	"compactd expire":   "expire_snapshots",
	"compactd orphan":   "remove_orphan_files",
	"compactd rollback": "rollback_to",
}

// procedureCommands are Paimon procedure names of subcommands (create_tag
// is `tag create`): top-level commands of their own, built by the same
// constructor.
var procedureCommands = map[string]func() *cobra.Command{
	"create_tag":        newTagCreateCmd,
	"delete_tag":        newTagDeleteCmd,
	"expire_partitions": newPartitionExpireCmd,
}

// decorate sets the examples and aliases on root's command tree and adds
// the procedure-named commands.
func decorate(root *cobra.Command) {
	for name, build := range procedureCommands {
		c := build()
		orig := c.Name()
		c.Use = name + strings.TrimPrefix(c.Use, orig)
		c.Short += " (Paimon's procedure name; the same as `" + procedureTarget(name) + "`)"
		root.AddCommand(c)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if ex, ok := examples[c.CommandPath()]; ok {
			c.Example = indent(ex)
		}
		if a, ok := procedureAliases[c.CommandPath()]; ok {
			c.Aliases = append(c.Aliases, a)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func procedureTarget(name string) string {
	switch name {
	case "create_tag":
		return "tag create"
	case "delete_tag":
		return "tag delete"
	default:
		return "partition expire"
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
