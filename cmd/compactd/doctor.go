package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/doctor"
)

// errDoctorFound is returned after the report when a finding is an error,
// so that scripts and alerting see a non-zero status.
var errDoctorFound = errors.New("the doctor found errors (see above)")

func newDoctorCmd() *cobra.Command {
	var asJSON, skipOrphans bool
	var olderThan time.Duration
	cmd := &cobra.Command{
		Use:   "doctor <warehouse> <db.table>",
		Short: "Check a table as a Paimon operator would: snapshots and hints, missing files, sorted runs against the stop trigger, small files, compaction age, consumers, tags, orphans, refused options, conditional writes",
		Long: `Check a table as a Paimon operator troubleshooting it would, and say for each finding what to
do. It only reads, except that on S3 it puts and deletes one probe object in the table directory to
check that the store refuses a second create of the same object. Exit status 1 when a finding is an
error.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, err := openTable(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			rep, err := doctor.Run(ctx, t, doctor.Options{OrphanOlderThan: olderThan, SkipOrphans: skipOrphans})
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(os.Stdout, rep, false); err != nil {
					return err
				}
			} else {
				printDoctor(os.Stdout, rep)
			}
			if rep.Worst() == doctor.Error {
				return errDoctorFound
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&skipOrphans, "skip-orphans", false, "leave out the orphan scan (it reads every retained snapshot's metadata)")
	cmd.Flags().Var(newDuration(&olderThan, 24*time.Hour), "older-than", "age from which an unreferenced file counts as an orphan, e.g. 1d")
	return cmd
}

func printDoctor(w io.Writer, rep *doctor.Report) {
	fmt.Fprintf(w, "%s (%s), snapshot %d\n", rep.Table, rep.Path, rep.Snapshot)
	marks := map[string]string{doctor.OK: "ok   ", doctor.Info: "info ", doctor.Warn: "WARN ", doctor.Error: "ERROR"}
	for _, f := range rep.Findings {
		subject := ""
		if f.Subject != "" {
			subject = " [" + f.Subject + "]"
		}
		fmt.Fprintf(w, "%s %s%s: %s\n", marks[f.Severity], f.Check, subject, f.Message)
		if f.Action != "" {
			fmt.Fprintf(w, "      -> %s\n", f.Action)
		}
	}
	fmt.Fprintf(w, "worst: %s\n", rep.Worst())
}
