package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/compactd/compactd/catalog"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// catalogFlags are the root's --catalog and --catalog-option: when set,
// every command's <warehouse> is read through that catalog (and commits
// take part in its lock or API) instead of as a bare directory.
type catalogFlags struct {
	uri     string
	options []string
}

var cliCatalog catalogFlags

// open catalogs, closed when the command ends (closeCatalogs).
var (
	openedMu sync.Mutex
	opened   []catalog.Catalog
)

func (f catalogFlags) set() bool { return f.uri != "" || len(f.options) > 0 }

// metastore is the catalog type the flags name ("" for none).
func (f catalogFlags) metastore() string {
	o, err := f.catalogOptions("")
	if err != nil {
		return ""
	}
	return strings.ToLower(o["metastore"])
}

// catalogOptions are Java's catalog options the flags name, for the
// warehouse argument: --catalog jdbc:… means metastore=jdbc and
// --catalog http(s)://… metastore=rest, each with uri set.
func (f catalogFlags) catalogOptions(warehouse string) (catalog.Options, error) {
	o := catalog.Options{"warehouse": warehouse}
	switch u := f.uri; {
	case u == "":
	case strings.HasPrefix(u, "jdbc:"):
		o["metastore"], o["uri"] = "jdbc", u
	case strings.HasPrefix(u, "http://"), strings.HasPrefix(u, "https://"):
		o["metastore"], o["uri"] = "rest", u
	default:
		return nil, fmt.Errorf("--catalog %q: want a jdbc: URL (JDBC catalog) or an http(s):// URL (REST catalog)", u)
	}
	for _, kv := range f.options {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--catalog-option %q: want key=value", kv)
		}
		o[strings.TrimSpace(k)] = v
	}
	return o, nil
}

// openCatalog opens the catalog of a command's warehouse argument: the
// flags' catalog, or the warehouse directory itself.
func openCatalog(ctx context.Context, warehouse string) (catalog.Catalog, error) {
	return openCatalogObserved(ctx, warehouse, nil)
}

// openCatalogObserved is openCatalog with the stores of its tables wrapped
// in fileio.Observe(observe) when observe is not nil.
func openCatalogObserved(ctx context.Context, warehouse string, observe func(op string, err error)) (catalog.Catalog, error) {
	o := catalog.Options{"warehouse": warehouse}
	if cliCatalog.set() {
		var err error
		if o, err = cliCatalog.catalogOptions(warehouse); err != nil {
			return nil, err
		}
	}
	var stores func(ctx context.Context, path string) (fileio.FileIO, error)
	if observe != nil {
		stores = func(ctx context.Context, path string) (fileio.FileIO, error) {
			f, err := fileio.For(ctx, path)
			if err != nil {
				return nil, err
			}
			return fileio.Observe(f, observe), nil
		}
	}
	c, err := catalog.Open(ctx, o, stores)
	if err != nil {
		return nil, err
	}
	openedMu.Lock()
	opened = append(opened, c)
	openedMu.Unlock()
	return c, nil
}

// closeCatalogs closes what openCatalog opened.
func closeCatalogs() {
	openedMu.Lock()
	defer openedMu.Unlock()
	for _, c := range opened {
		if err := c.Close(); err != nil {
			slog.Warn("close catalog", "catalog", c.Name(), "err", err)
		}
	}
	opened = nil
}

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list <warehouse>",
		Short: "List the tables of a warehouse, or of the catalog --catalog names",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := openCatalog(ctx, args[0])
			if err != nil {
				return err
			}
			if fs, ok := c.(*catalog.FileSystem); ok {
				fs.OnSkipped = func(dirs []table.SkippedDir) {
					for _, d := range dirs {
						fmt.Fprintf(cmd.ErrOrStderr(), "skipped %s: %v\n", d.Path, d.Err)
					}
				}
			}
			dbs, err := c.ListDatabases(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "catalog %s\n", c.Name())
			var errs []error
			for _, db := range dbs {
				names, err := c.ListTables(ctx, db)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				for _, n := range names {
					fmt.Fprintf(out, "%s.%s\n", db, n)
				}
			}
			return errors.Join(errs...)
		},
	}
}
