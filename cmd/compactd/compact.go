package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/planner"
)

type selectFlags struct {
	partition string
	bucket    int
	asJSON    bool
}

func (s *selectFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.partition, "partition", "", "only this partition, as k=v[,k=v...] or its path k=v/k=v")
	cmd.Flags().IntVar(&s.bucket, "bucket", -1, "only this bucket number")
	cmd.Flags().BoolVar(&s.asJSON, "json", false, "print JSON")
}

func (s *selectFlags) apply(o *compact.Options) {
	o.Partition = strings.ReplaceAll(s.partition, ",", "/")
	if s.bucket >= 0 {
		b := s.bucket
		o.Bucket = &b
	}
}

// jobView is the printable form of a planned job.
type jobView struct {
	Partition   string   `json:"partition"`
	Bucket      int      `json:"bucket"`
	Reason      string   `json:"reason"`
	Full        bool     `json:"full"`
	OutputLevel int      `json:"outputLevel"`
	DropDelete  bool     `json:"dropDelete"`
	FilesIn     int      `json:"filesIn"`
	BytesIn     int64    `json:"bytesIn"`
	Rewrite     []string `json:"rewrite"`
	Upgrade     []string `json:"upgrade,omitempty"`
	// Lookup is set when the job merges level-0 records through Paimon's
	// lookup into the levels above OutputLevel.
	Lookup *lookupView `json:"lookup,omitempty"`
	// Changelog names the changelog producer when the job writes
	// changelog files (planner.Job.ProducesChangelog).
	Changelog string `json:"changelog,omitempty"`
	// rewrites and upgrades count the files Rewrite and Upgrade would
	// name: the table prints only the counts, so text output builds no
	// names (one string per file: 100k at 100k files).
	rewrites, upgrades int
}

// lookupView explains a lookup compaction: which stored files the level-0
// keys are looked up in, and what a hit does.
type lookupView struct {
	Levels          []int `json:"levels"`
	Files           int   `json:"files"`
	Bytes           int64 `json:"bytes"`
	DeletionVectors bool  `json:"deletionVectors"`
	FirstRow        bool  `json:"firstRow"`
}

func (l *lookupView) String() string {
	if len(l.Levels) == 0 {
		return "lookup: nothing is stored above the output level, so no key is found"
	}
	what := "a key found there is merged with the level-0 records"
	switch {
	case l.FirstRow:
		what = "a level-0 key found there is dropped (first-row keeps the stored row)"
	case l.DeletionVectors:
		what = "the row found there is marked in its file's deletion vector"
	}
	return fmt.Sprintf("lookup: level-0 keys are looked up in %d files (%d bytes) at levels %v; %s", l.Files, l.Bytes, l.Levels, what)
}

// lookupOf explains job's lookup, nil when it does none.
func lookupOf(v *compact.TableView, opts *planner.Options, j planner.Job) *lookupView {
	if opts == nil || !j.LooksUp(opts) {
		return nil
	}
	l := &lookupView{DeletionVectors: opts.DeletionVectors, FirstRow: opts.MergeEngine == "first-row"}
	for _, b := range v.View.Buckets {
		if b.Partition != j.Partition || b.Bucket != j.Bucket {
			continue
		}
		for _, f := range b.Files {
			if f.Level <= j.OutputLevel {
				continue
			}
			l.Files++
			l.Bytes += f.Size
			if !slices.Contains(l.Levels, f.Level) {
				l.Levels = append(l.Levels, f.Level)
			}
		}
	}
	slices.Sort(l.Levels)
	return l
}

// jobViews gives the printable form of jobs; names fills Rewrite and
// Upgrade (JSON), else only their counts are kept (printJobs).
func jobViews(v *compact.TableView, opts *planner.Options, jobs []planner.Job, names bool) []jobView {
	out := make([]jobView, 0, len(jobs))
	for _, j := range jobs {
		jv := jobView{Partition: v.PartitionPath[j.Partition], Bucket: j.Bucket, Reason: j.Reason, Full: j.Full,
			OutputLevel: j.OutputLevel, DropDelete: j.DropDelete, FilesIn: len(j.Inputs), Lookup: lookupOf(v, opts, j)}
		if opts != nil && j.ProducesChangelog(opts) {
			jv.Changelog = opts.ChangelogProducer
		}
		for _, f := range j.Inputs {
			jv.BytesIn += f.Size
		}
		for _, s := range j.Steps {
			switch s.Kind {
			case planner.StepUpgrade:
				jv.upgrades++
			case planner.StepRewrite:
				for _, sec := range s.Sections {
					for _, run := range sec {
						jv.rewrites += len(run)
					}
				}
			}
		}
		if names {
			for _, f := range j.Rewritten() {
				jv.Rewrite = append(jv.Rewrite, f.String())
			}
			for _, f := range j.Upgrades() {
				jv.Upgrade = append(jv.Upgrade, f.String())
			}
		}
		out = append(out, jv)
	}
	return out
}

func printJobs(w io.Writer, jobs []jobView) {
	if len(jobs) == 0 {
		fmt.Fprintln(w, "nothing to compact")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tBUCKET\tFILES IN\tBYTES IN\tREWRITE\tUPGRADE\tOUTPUT LEVEL\tDROP DELETES\tREASON")
	for _, j := range jobs {
		part := j.Partition
		if part == "" {
			part = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%v\t%s\n", part, j.Bucket, j.FilesIn, j.BytesIn, j.rewrites, j.upgrades, j.OutputLevel, j.DropDelete, j.Reason)
	}
	tw.Flush()
	for _, j := range jobs {
		part := j.Partition
		if part == "" {
			part = "-"
		}
		if j.Lookup != nil {
			fmt.Fprintf(w, "%s bucket %d: %s\n", part, j.Bucket, j.Lookup)
		}
		if j.Changelog != "" {
			fmt.Fprintf(w, "%s bucket %d: writes changelog files (changelog-producer=%s)\n", part, j.Bucket, j.Changelog)
		}
	}
}

func newPlanCmd() *cobra.Command {
	var sel selectFlags
	var full bool
	cmd := &cobra.Command{
		Use:   "plan <warehouse> <db.table>",
		Short: "Show what compaction would do per partition and bucket, and why (a dry run)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			o := compact.Options{Full: full, PlanOnly: true}
			sel.apply(&o)
			v, plan, popts, err := compact.PlanTable(ctx, t, o, time.Now())
			if err != nil {
				return err
			}
			jobs := jobViews(v, &popts, plan.Jobs, sel.asJSON)
			postponed := compact.PostponedOf(v.FileSet, o.Partition)
			if sel.asJSON {
				// Only JSON reports the backlog: its simulated rounds
				// re-plan every bucket until none has a job, which at
				// 100k files allocated more than the plan itself
				// (docs/perf.md).
				backlog := planner.Backlog(v.View, popts, time.Now())
				return writeJSON(os.Stdout, map[string]any{"table": t.FullName(), "jobs": jobs, "backlog": backlog, "postponed": postponed, "supported": errString(compact.Supported(t, nil))}, false)
			}
			if err := compact.Supported(t, nil); err != nil {
				fmt.Fprintf(os.Stdout, "compactd will refuse this table: %v\n", err)
			}
			printPostponed(os.Stdout, postponed)
			printJobs(os.Stdout, jobs)
			for _, e := range plan.Errors {
				fmt.Fprintf(os.Stdout, "cannot plan %s: %v\n", e.Bucket, e.Err)
			}
			return nil
		},
	}
	sel.add(cmd)
	cmd.Flags().BoolVar(&full, "full", false, "plan a full compaction")
	return cmd
}

// printPostponed says what waits in bucket-postpone (nothing for tables
// without postponed rows).
func printPostponed(w io.Writer, p compact.Postponed) {
	if p.Files == 0 {
		return
	}
	fmt.Fprintf(w, "postponed: %d rows in %d files (%d bytes) of %d partitions wait in bucket-postpone, invisible to batch readers; compaction assigns them to buckets first\n",
		p.Rows, p.Files, p.Bytes, p.Partitions)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func newCompactCmd() *cobra.Command {
	var sel selectFlags
	var o compact.Options
	cmd := &cobra.Command{
		Use:   "compact <warehouse> <db.table>",
		Short: "Compact a table as Paimon would (--full for a full compaction) and commit a COMPACT snapshot",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			sel.apply(&o)
			if !sel.asJSON && !o.DryRun {
				o.Progress = newJobProgress(os.Stderr, isTerminal(os.Stderr), t.FullName()).update
			}
			sum, err := compact.Run(ctx, t, o)
			if err != nil {
				return err
			}
			o.PlanOnly = true // the dry runs below only print the plan
			if sel.asJSON && o.DryRun {
				// The plan, as `plan --json` gives it: a dry run commits nothing to count.
				v, plan, popts, err := compact.PlanTable(ctx, t, o, time.Now())
				if err != nil {
					return err
				}
				return writeJSON(os.Stdout, map[string]any{
					"table": sum.Table, "dryRun": true, "jobs": jobViews(v, &popts, plan.Jobs, true),
					"postponed": sum.Postponed,
				}, false)
			}
			if sel.asJSON {
				return writeJSON(os.Stdout, map[string]any{
					"table": sum.Table, "snapshot": sum.Snapshot, "buckets": sum.Buckets, "abandoned": sum.Abandoned,
					"filesIn": sum.FilesIn, "filesOut": sum.FilesOut, "filesUpgraded": sum.FilesUpgraded, "rowsIn": sum.RowsIn, "rowsOut": sum.RowsOut,
					"bytesIn": sum.BytesIn, "bytesOut": sum.BytesOut, "seconds": sum.Duration.Seconds(), "dryRun": o.DryRun,
					"changelogFiles": sum.ChangelogFiles, "changelogRows": sum.ChangelogRows,
					"postponed": sum.Postponed,
				}, false)
			}
			if o.DryRun {
				v, plan, popts, err := compact.PlanTable(ctx, t, o, time.Now())
				if err != nil {
					return err
				}
				printPostponed(os.Stdout, sum.Postponed)
				printJobs(os.Stdout, jobViews(v, &popts, plan.Jobs, false))
				return nil
			}
			if sum.Postponed.Snapshot != 0 {
				p := sum.Postponed
				fmt.Fprintf(os.Stdout, "%s: committed snapshot %d (COMPACT): %d postponed rows in %d files of %d partitions assigned to %d buckets\n",
					sum.Table, p.Snapshot, p.Rows, p.Files, p.Partitions, p.Assigned)
				if sum.Snapshot == p.Snapshot {
					return nil
				}
			}
			if sum.Snapshot == 0 {
				fmt.Fprintf(os.Stdout, "%s: nothing to compact\n", sum.Table)
				return nil
			}
			fmt.Fprintln(os.Stdout, summaryLine(sum))
			if sum.ChangelogFiles > 0 {
				fmt.Fprintf(os.Stdout, "changelog: %d rows in %d files\n", sum.ChangelogRows, sum.ChangelogFiles)
			}
			if sum.Abandoned > 0 {
				fmt.Fprintf(os.Stdout, "%d bucket jobs were abandoned because a concurrent commit changed their inputs\n", sum.Abandoned)
			}
			return nil
		},
	}
	sel.add(cmd)
	cmd.Flags().BoolVar(&o.Full, "full", false, "full compaction of every selected bucket")
	cmd.Flags().DurationVar(&o.PartitionIdleTime, "partition-idle-time", 0,
		"only partitions without new files for this long (Paimon's partition_idle_time; with --full)")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "plan only, write nothing")
	cmd.Flags().IntVar(&o.Parallelism, "parallelism", 2, "buckets compacted at once")
	return cmd
}

// summaryLine is the one line a committed compaction prints.
func summaryLine(sum *compact.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: committed snapshot %d (COMPACT): %s", sum.Table, sum.Snapshot, plural(sum.Buckets, "bucket"))
	if sum.FilesIn > 0 || sum.FilesOut > 0 {
		fmt.Fprintf(&b, ", files %d -> %d, rows %d -> %d, bytes %d -> %d", sum.FilesIn, sum.FilesOut, sum.RowsIn, sum.RowsOut, sum.BytesIn, sum.BytesOut)
	}
	if sum.FilesUpgraded > 0 {
		fmt.Fprintf(&b, ", %s moved up a level without rewriting", plural(sum.FilesUpgraded, "file"))
	}
	fmt.Fprintf(&b, ", %.2fs", sum.Duration.Seconds())
	return b.String()
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
