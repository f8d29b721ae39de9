package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/orphan"
	"github.com/compactd/compactd/table/reach"
)

func newExpireCmd() *cobra.Command {
	var dryRun, asJSON bool
	var retainMin, retainMax, limit int
	var retained time.Duration
	cmd := &cobra.Command{
		Use:   "expire <warehouse> <db.table>",
		Short: "Expire old snapshots as Paimon does and delete the files only they referenced",
		Long: `Expire snapshots by the table's snapshot.num-retained.min/max, snapshot.time-retained and
snapshot.expire.limit (flags override them). When changelog.num-retained.min/max or
changelog.time-retained outlive the snapshot retention, the changelog of expired snapshots is kept
in changelog/ and expired afterwards by those options, as Paimon does. Tags, consumers and branches protect what they need.
Files are deleted in an order that is safe if the process dies at any point; a re-run finishes the job.
Nothing is deleted, and the exit status is non-zero, when a metadata file that anything kept still
reaches is missing, unreadable or corrupt.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var observe func(string, error)
			if !dryRun && !asJSON {
				p := newDeleteProgress(os.Stderr, isTerminal(os.Stderr), "expire "+args[1])
				observe = p.observe
				defer p.done()
			}
			t, err := openTableObserved(ctx, args[0], args[1], observe)
			if err != nil {
				return err
			}
			if err := t.Options().ExpirationErr(); err != nil {
				return err
			}
			o := expire.FromTable(t.Options())
			if cmd.Flags().Changed("retain-min") {
				o.RetainMin = retainMin
			}
			if cmd.Flags().Changed("retain-max") {
				o.RetainMax = retainMax
			}
			if cmd.Flags().Changed("time-retained") {
				o.TimeRetained = retained
			}
			if cmd.Flags().Changed("limit") {
				o.Limit = limit
			}
			// Unset changelog.* options follow overridden snapshot values.
			o = o.Resolve()
			rep, err := expire.Run(ctx, reach.TableSource(t), expire.RunOptions{Options: o, Now: time.Now(), DryRun: dryRun})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(os.Stdout, rep, false)
			}
			verb := "expired"
			if dryRun {
				verb = "would expire"
			}
			if len(rep.Snapshots) == 0 {
				fmt.Printf("%s: nothing to expire (snapshots %d..%d)\n", t.FullName(), rep.Earliest, rep.Latest)
			} else {
				fmt.Printf("%s: %s %d snapshots (%d..%d), earliest is now %d; files: %d data, %d manifests, %d manifest lists, %d index, %d index manifests, %d statistics\n",
					t.FullName(), verb, len(rep.Snapshots), rep.Snapshots[0], rep.Snapshots[len(rep.Snapshots)-1], rep.End,
					rep.Counts.DataFiles, rep.Counts.Manifests, rep.Counts.ManifestLists, rep.Counts.IndexFiles, rep.Counts.IndexManifests, rep.Counts.Statistics)
			}
			if n := len(rep.ChangelogsWritten); n > 0 {
				fmt.Printf("%s: kept the changelog of %d expired snapshots in changelog/\n", t.FullName(), n)
			}
			if c := rep.Changelog; len(c.Changelogs) > 0 {
				fmt.Printf("%s: %s %d long-lived changelogs (%d..%d), earliest is now %d; files: %d data, %d manifests, %d manifest lists\n",
					t.FullName(), verb, len(c.Changelogs), c.Changelogs[0], c.Changelogs[len(c.Changelogs)-1], c.End,
					c.Counts.DataFiles, c.Counts.Manifests, c.Counts.ManifestLists)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report what would be deleted, delete nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().IntVar(&retainMin, "retain-min", 10, "override snapshot.num-retained.min")
	cmd.Flags().IntVar(&retainMax, "retain-max", 0, "override snapshot.num-retained.max")
	cmd.Flags().Var(newDuration(&retained, time.Hour), "time-retained", "override snapshot.time-retained (e.g. 1h, 7d, 36h)")
	cmd.Flags().IntVar(&limit, "limit", 50, "override snapshot.expire.limit")
	return cmd
}

func newOrphanCmd() *cobra.Command {
	var o orphan.RunOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "orphan <warehouse> <db.table>",
		Short: "Delete files no snapshot, tag, branch or consumer references, older than a safety margin",
		Long: `Delete files in the table directory that no snapshot, tag or long-lived changelog of any branch
references and that are older than --older-than. Nothing is deleted, and the exit status is non-zero,
when any metadata file they reach is missing, unreadable or corrupt, or when the table directory
holds a symbolic link (Paimon never creates one).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var observe func(string, error)
			if !o.DryRun && !asJSON {
				p := newDeleteProgress(os.Stderr, isTerminal(os.Stderr), "orphan "+args[1])
				observe = p.observe
				defer p.done()
			}
			t, err := openTableObserved(ctx, args[0], args[1], observe)
			if err != nil {
				return err
			}
			o.Now = time.Now()
			rep, err := orphan.RunTable(ctx, t, o)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(os.Stdout, rep, false)
			}
			verb := "deleted"
			if o.DryRun {
				verb = "would delete"
			}
			for _, f := range rep.Files {
				fmt.Printf("%s %s (%d bytes, modified %s)\n", verb, f.Path, f.Size, f.ModTime.UTC().Format(time.RFC3339))
			}
			if more := rep.Count() - len(rep.Files); more > 0 {
				fmt.Printf("… and %d more files (the report lists the first %d)\n", more, orphan.SampleLimit)
			}
			fmt.Printf("%s: %s %d orphan files, %d bytes (cutoff %s); %d empty directories\n",
				t.FullName(), verb, rep.Count(), rep.Bytes, rep.Cutoff.UTC().Format(time.RFC3339), len(rep.Dirs))
			return nil
		},
	}
	cmd.Flags().Var(newDuration(&o.OlderThan, orphan.DefaultOlderThan), "older-than", "only files older than this, e.g. 1d, 36h (at least 1h unless --force)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "allow --older-than under 1h")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "list what would be deleted, delete nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
