// Command compactd compacts and maintains Apache Paimon tables.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

func main() {
	// Compaction's live heap is page and column buffers of the open runs,
	// large and pointer-free, so collecting often costs little while the
	// default headroom (GOGC=100) doubles the heap in RSS. 25 measured 8–12%
	// less peak RSS than 50 on the 10M-row wide tables at no measurable CPU
	// cost (docs/perf.md).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	err := root.ExecuteContext(ctx)
	closeCatalogs()
	if code, usage := exitCode(root, err); code != 0 {
		fmt.Fprintln(os.Stderr, "compactd:", err)
		if usage != "" {
			fmt.Fprint(os.Stderr, "\n", usage)
		}
		os.Exit(code)
	}
}

type globalFlags struct {
	logFormat string
	logLevel  string
}

func newRootCmd() *cobra.Command {
	var g globalFlags
	root := &cobra.Command{
		Use:           "compactd",
		Short:         "Compaction and table maintenance for Apache Paimon tables",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			gcFor(cmd)
			return setupLogging(g)
		},
	}
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "text", "log format: text or json")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&cliCatalog.uri, "catalog", "", "the catalog the writers use: a jdbc: URL (JDBC catalog) or an http(s):// URL (REST catalog); <warehouse> is then its warehouse")
	root.PersistentFlags().StringArrayVar(&cliCatalog.options, "catalog-option", nil, "a catalog option in Java's name, key=value (repeatable): catalog-key, jdbc.user, jdbc.password-file, jdbc.password-env, lock.enabled, lock-acquire-timeout, token-file, token-env, …")
	// Every command of compactd, in one place (help lists them sorted).
	root.AddCommand(
		newInspectCmd(),   // inspect.go
		newListCmd(),      // catalog.go
		newScanCmd(),      // scan.go
		newCompactCmd(),   // compact.go
		newPlanCmd(),      // compact.go
		newDaemonCmd(),    // daemon.go
		newDoctorCmd(),    // doctor.go
		newExampleCmd(),   // example.go
		newExpireCmd(),    // maintain.go
		newOrphanCmd(),    // maintain.go
		newPartitionCmd(), // partition.go
		newPolicyCmd(),    // policy.go
		newRescaleCmd(),   // rescale.go
		newResumeCmd(),    // resume.go
		newRollbackCmd(),  // rollback.go
		newTagCmd(),       // tag.go
		newVersionCmd(),   // version.go
	)
	// --version prints what `compactd version` does.
	root.Version = currentBuild().String()
	root.SetVersionTemplate("{{.Version}}\n")
	decorate(root)
	markUsageErrors(root)
	return root
}

func setupLogging(g globalFlags) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	h, err := newLogHandler(os.Stderr, g.logFormat, level)
	if err != nil {
		return err
	}
	slog.SetDefault(slog.New(h))
	return nil
}

// newLogHandler is the handler of --log-format. Durations are written as
// Go writes them ("1.5s", "2m0s") in both formats: the JSON handler would
// write nanoseconds.
func newLogHandler(w io.Writer, format string, level slog.Level) (slog.Handler, error) {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration {
			a.Value = slog.StringValue(a.Value.Duration().String())
		}
		return a
	}}
	switch format {
	case "text":
		return slog.NewTextHandler(w, opts), nil
	case "json":
		return slog.NewJSONHandler(w, opts), nil
	}
	return nil, fmt.Errorf("--log-format: want text or json, got %q", format)
}

// openTable opens "<db>.<table>" in a warehouse, through the catalog the
// root's --catalog flags name if any.
func openTable(ctx context.Context, warehouse, name string) (*table.Table, error) {
	return openTableObserved(ctx, warehouse, name, nil)
}

// openTableObserved is openTable with every storage operation of the
// table reported to observe (fileio.Observe; nil: none), which progress
// displays count.
func openTableObserved(ctx context.Context, warehouse, name string, observe func(op string, err error)) (*table.Table, error) {
	db, tbl, err := table.ParseFullName(name)
	if err != nil {
		return nil, err
	}
	c, err := openCatalogObserved(ctx, warehouse, observe)
	if err != nil {
		return nil, err
	}
	t, err := c.OpenTable(ctx, db, tbl)
	if err != nil {
		if !cliCatalog.set() && !strings.Contains(warehouse, "://") {
			// A local warehouse that is not there is a typo in the path,
			// not a table that is missing from it.
			if _, serr := os.Stat(warehouse); errors.Is(serr, fs.ErrNotExist) {
				return nil, fmt.Errorf("warehouse %s: no such directory", warehouse)
			}
		}
		if errors.Is(err, fileio.ErrNotExist) || errors.Is(err, table.ErrNotATable) {
			hint := ""
			if s := table.SuggestFullName(name); s != "" {
				hint = fmt.Sprintf(" (did you mean %s?)", s)
			}
			return nil, fmt.Errorf("table %s in %s: not found%s: %w", name, c.Name(), hint, err)
		}
		return nil, err
	}
	return t, nil
}

// metadataCommands hold a heap of decoded manifest entries, small and full
// of pointers, where GOGC=25 doubles the CPU (the mark phase runs four times
// as often over the same live heap) for little RSS: `plan` at 100k files
// took 3.2 CPU s at 25 and 1.4 s at 100, 318 vs 389 MiB (docs/perf.md).
var metadataCommands = map[string]bool{"plan": true}

// gcFor sets the collector's target for cmd unless GOGC is set in the
// environment: compaction keeps main's 25, `plan` uses Go's 100. expire and
// orphan keep 25: their heap grows with the files they delete, and RSS is
// what they are measured on.
func gcFor(cmd *cobra.Command) {
	if os.Getenv("GOGC") == "" && metadataCommands[cmd.Name()] {
		debug.SetGCPercent(100)
	}
}
