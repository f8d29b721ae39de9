package catalog

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compactd/compactd/catalog/jdbc"
	restcat "github.com/compactd/compactd/catalog/rest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// Options are a catalog's options in Java's names, as its writers'
// Flink or Spark catalog definition has them: metastore (filesystem,
// jdbc, rest, hive), warehouse (for a REST catalog: the catalog name),
// uri, jdbc.user, jdbc.password, catalog-key, lock.enabled,
// lock-acquire-timeout, lock-check-max-sleep, lock-key-max-length,
// token.provider, token, header.*. Secrets can instead come from a file
// or the environment: jdbc.password-file, jdbc.password-env, token-file,
// token-env (compactd's own keys).
type Options map[string]string

// keys compactd understands; everything else is refused (fail closed: a
// lock.type or a dlf.* setting it ignored would make its commits differ
// from the writers'). Options that only shape what Java clients cache or
// create (table-default.*, cache*, client-pool-size) are accepted and
// have no effect on compactd.
var known = []string{
	"metastore", "warehouse", "uri", "jdbc.user", "jdbc.password", "jdbc.password-file", "jdbc.password-env",
	"catalog-key", "lock.enabled", "lock-acquire-timeout", "lock-check-max-sleep", "lock-key-max-length",
	"token.provider", "token", "token-file", "token-env", "client-pool-size",
}

func acceptedKey(k string) bool {
	return slices.Contains(known, k) || strings.HasPrefix(k, "table-default.") || strings.HasPrefix(k, "cache") ||
		strings.HasPrefix(k, "header.") // a REST catalog's extra request headers
}

// Secret resolves a secret option: key itself, key-file (the file's
// contents, trailing newline trimmed) or key-env (the named variable).
// At most one of the three may be set.
func (o Options) Secret(key, fileKey, envKey string) (string, error) {
	set := 0
	for _, k := range []string{key, fileKey, envKey} {
		if _, ok := o[k]; ok {
			set++
		}
	}
	if set > 1 {
		return "", fmt.Errorf("catalog options: set only one of %s, %s and %s", key, fileKey, envKey)
	}
	if f, ok := o[fileKey]; ok {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("catalog option %s: %w", fileKey, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	if e, ok := o[envKey]; ok {
		v, ok := os.LookupEnv(e)
		if !ok {
			return "", fmt.Errorf("catalog option %s: environment variable %s is not set", envKey, e)
		}
		return v, nil
	}
	return o[key], nil
}

// Open opens the catalog the options describe. fio opens storage for a
// warehouse or table path (fileio.For when nil), with the deployment's
// S3 settings.
func Open(ctx context.Context, o Options, fio func(ctx context.Context, path string) (fileio.FileIO, error)) (Catalog, error) {
	if fio == nil {
		fio = fileio.For
	}
	var bad []string
	for k := range o {
		if !acceptedKey(k) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("catalog options %s: not understood by compactd (it refuses what it cannot honour)", strings.Join(bad, ", "))
	}
	wh := o["warehouse"]
	switch m := strings.ToLower(o["metastore"]); m {
	case "", "filesystem":
		if wh == "" {
			return nil, fmt.Errorf("filesystem catalog: no warehouse")
		}
		f, err := fio(ctx, wh)
		if err != nil {
			return nil, err
		}
		return &FileSystem{FIO: f, Warehouse: wh}, nil
	case "jdbc":
		cfg := jdbc.Config{URI: o["uri"], User: o["jdbc.user"], CatalogKey: o["catalog-key"], Warehouse: wh}
		var err error
		if cfg.Password, err = o.Secret("jdbc.password", "jdbc.password-file", "jdbc.password-env"); err != nil {
			return nil, err
		}
		if v, ok := o["lock.enabled"]; ok {
			// Java's boolean options take true or false, in any case.
			b := strings.EqualFold(strings.TrimSpace(v), "true")
			if !b && !strings.EqualFold(strings.TrimSpace(v), "false") {
				return nil, fmt.Errorf("catalog option lock.enabled=%q: want true or false", v)
			}
			cfg.LockEnabled = &b
		}
		for k, d := range map[string]*time.Duration{"lock-acquire-timeout": &cfg.LockAcquireTimeout, "lock-check-max-sleep": &cfg.LockCheckMaxSleep} {
			if v, ok := o[k]; ok {
				if *d, err = table.ParseDuration(v); err != nil || *d <= 0 {
					return nil, fmt.Errorf("catalog option %s=%q: want a positive duration", k, v)
				}
			}
		}
		if v, ok := o["lock-key-max-length"]; ok {
			if cfg.LockKeyMaxLength, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || cfg.LockKeyMaxLength <= 0 {
				return nil, fmt.Errorf("catalog option lock-key-max-length=%q: want a positive integer", v)
			}
		}
		if wh == "" {
			return nil, fmt.Errorf("JDBC catalog %s: no warehouse", o["uri"])
		}
		if cfg.FileIO, err = fio(ctx, wh); err != nil {
			return nil, err
		}
		return jdbc.Open(ctx, cfg)
	case "rest":
		if wh == "" {
			return nil, fmt.Errorf("REST catalog %s: no warehouse (the catalog name its writers use)", o["uri"])
		}
		tok, err := o.Secret("token", "token-file", "token-env")
		if err != nil {
			return nil, err
		}
		rest := map[string]string{}
		for k, v := range o {
			if k == "token.provider" || strings.HasPrefix(k, "header.") {
				rest[k] = v
			}
		}
		return restcat.Open(ctx, restcat.Config{URI: o["uri"], Warehouse: wh, Token: tok, Options: rest, Storage: fio})
	case "hive":
		return nil, fmt.Errorf("metastore=hive: compactd cannot take part in the Hive Metastore's table lock yet, so it refuses to commit beside Hive-catalog writers")
	default:
		return nil, fmt.Errorf("catalog option metastore=%q: compactd knows filesystem, jdbc and rest", m)
	}
}

// Confine makes c refuse every table whose directory does not lie inside
// root (fileio.CheckInside): a daemon gives a REST catalog's warehouse the
// storage root its tables must be under, so a path the server hands out
// cannot lead compactd anywhere else.
func Confine(c Catalog, fio fileio.FileIO, root string) Catalog {
	return &confined{Catalog: c, fio: fio, root: root}
}

type confined struct {
	Catalog
	fio  fileio.FileIO
	root string
}

func (c *confined) OpenTable(ctx context.Context, database, name string) (*table.Table, error) {
	t, err := c.Catalog.OpenTable(ctx, database, name)
	if err != nil {
		return nil, err
	}
	if err := fileio.CheckInside(ctx, c.fio, c.root, t.Path()); err != nil {
		return nil, fmt.Errorf("catalog %s: table %s.%s at %s is outside the warehouse %s: %w", c.Name(), database, name, t.Path(), c.root, err)
	}
	return t, nil
}
