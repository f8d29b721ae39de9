package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

// Config names a REST catalog and how to reach it.
type Config struct {
	// URI is the server's base URI, http:// or https:// (Java's "uri").
	URI string
	// Warehouse is the catalog name sent to GET /v1/config as
	// ?warehouse= (Java's "warehouse" of a REST catalog).
	Warehouse string
	// Token is the bearer token. At most one of Token, TokenFile and
	// TokenEnv may be set; with none, requests carry no Authorization.
	Token string
	// TokenFile is a file holding the token (surrounding white space is
	// trimmed).
	TokenFile string
	// TokenEnv is an environment variable holding the token.
	TokenEnv string
	// Options are client-side catalog options, merged with the server's
	// as Java does (server defaults < Options < server overrides), e.g.
	// "header.X-Foo". "token.provider" other than "bear" is refused.
	Options map[string]string
	// Timeout bounds one HTTP request (default 30s).
	Timeout time.Duration
	// Retries is the number of retries of a request that may be retried
	// (default 5; negative means none).
	Retries int
	// HTTPClient, if set, carries the requests (a copy of it is used, with
	// Timeout and no redirects).
	HTTPClient *http.Client
	// Storage opens the file IO of a table path the catalog gives (the
	// deployment's S3 settings); nil means fileio.For.
	Storage func(ctx context.Context, path string) (fileio.FileIO, error)
}

// Catalog is an open REST catalog. It implements catalog.Catalog.
type Catalog struct {
	name        string
	c           *client
	prefix      string
	dataTokens  bool
	closed      atomic.Bool
	maxResults  int
	openStorage func(ctx context.Context, path string) (fileio.FileIO, error)
}

// configResponse is Paimon's ConfigResponse.
type configResponse struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
}

// Open connects to the catalog: it loads the server's configuration
// (GET /v1/config), which also checks the token.
func Open(ctx context.Context, cfg Config) (*Catalog, error) {
	base, shown, err := checkURI(cfg.URI)
	if err != nil {
		return nil, err
	}
	name := "rest:" + shown
	if cfg.Warehouse != "" {
		name += "?warehouse=" + url.QueryEscape(cfg.Warehouse)
	}
	token, err := loadToken(cfg)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", name, err)
	}
	if p, ok := cfg.Options["token.provider"]; ok && p != "bear" {
		return nil, fmt.Errorf("catalog %s: token.provider %q is not supported (only bear)", name, p)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	retries := cfg.Retries
	switch {
	case retries == 0:
		retries = 5
	case retries < 0:
		retries = 0
	}
	hc := cfg.HTTPClient
	if hc != nil {
		copied := *hc
		hc = &copied
	}
	c := newClient(base, token, timeout, retries, hc)
	var q url.Values
	if cfg.Warehouse != "" {
		q = url.Values{"warehouse": {cfg.Warehouse}}
	}
	var conf configResponse
	if err := c.getJSON(ctx, "/v1/config", q, &conf); err != nil {
		return nil, fmt.Errorf("catalog %s: load config: %w", name, err)
	}
	opts := map[string]string{}
	for k, v := range conf.Defaults {
		opts[k] = v
	}
	for k, v := range cfg.Options {
		opts[k] = v
	}
	for k, v := range conf.Overrides {
		opts[k] = v
	}
	if p, ok := opts["token.provider"]; ok && p != "" && p != "bear" {
		return nil, fmt.Errorf("catalog %s: token.provider %q is not supported (only bear)", name, p)
	}
	for k, v := range opts {
		if h, ok := strings.CutPrefix(k, "header."); ok && h != "" {
			if strings.EqualFold(h, "Authorization") {
				return nil, fmt.Errorf("catalog %s: option %s would replace the bearer token header", name, k)
			}
			c.headers[h] = v
		}
	}
	cat := &Catalog{name: name, c: c, openStorage: cfg.Storage}
	if cat.openStorage == nil {
		cat.openStorage = fileio.For
	}
	if p := opts["prefix"]; p != "" {
		cat.prefix = "/" + segment(p)
	}
	if v := opts["data-token.enabled"]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("catalog %s: data-token.enabled %q is not a boolean", name, v)
		}
		cat.dataTokens = b
	}
	slog.Info("opened REST catalog", "catalog", name, "prefix", opts["prefix"], "data_tokens", cat.dataTokens)
	return cat, nil
}

// checkURI validates the base URI; it returns it without a trailing
// slash, and the form to show.
func checkURI(raw string) (string, string, error) {
	if raw == "" {
		return "", "", errors.New("REST catalog: empty URI")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("REST catalog: URI: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", fmt.Errorf("REST catalog: URI %q: scheme must be http or https", u.Redacted())
	}
	if u.User != nil {
		return "", "", fmt.Errorf("REST catalog: URI %q carries credentials; give the token instead", u.Redacted())
	}
	if u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("REST catalog: URI %q: want scheme://host[:port][/path]", u.Redacted())
	}
	base := strings.TrimRight(u.String(), "/")
	return base, base, nil
}

func loadToken(cfg Config) (string, error) {
	n := 0
	for _, s := range []string{cfg.Token, cfg.TokenFile, cfg.TokenEnv} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		return "", errors.New("set at most one of token, token file and token environment variable")
	}
	switch {
	case cfg.TokenFile != "":
		b, err := os.ReadFile(cfg.TokenFile)
		if err != nil {
			// The path is no secret; the error says nothing of the content.
			return "", fmt.Errorf("read token file: %w", err)
		}
		t := strings.TrimSpace(string(b))
		if t == "" {
			return "", fmt.Errorf("token file %s is empty", cfg.TokenFile)
		}
		return t, nil
	case cfg.TokenEnv != "":
		t := strings.TrimSpace(os.Getenv(cfg.TokenEnv))
		if t == "" {
			return "", fmt.Errorf("token environment variable %s is not set", cfg.TokenEnv)
		}
		return t, nil
	}
	return cfg.Token, nil
}

// Name identifies the catalog: its URI and catalog name, never the token.
func (c *Catalog) Name() string { return c.name }

// Close marks the catalog closed: tables opened through it stay readable
// but their commits fail.
func (c *Catalog) Close() error {
	c.closed.Store(true)
	c.c.reads.HTTPClient.CloseIdleConnections()
	return nil
}

func (c *Catalog) path(elems ...string) string {
	var b strings.Builder
	b.WriteString("/v1")
	b.WriteString(c.prefix)
	for _, e := range elems {
		b.WriteByte('/')
		b.WriteString(e)
	}
	return b.String()
}

func (c *Catalog) checkOpen() error {
	if c.closed.Load() {
		return fmt.Errorf("catalog %s is closed", c.name)
	}
	return nil
}

// listPages follows a paged list (maxResults / pageToken, answered with
// nextPageToken) and returns the names, sorted.
func (c *Catalog) listPages(ctx context.Context, path, field string) ([]string, error) {
	var all []string
	seen := map[string]bool{}
	token := ""
	for {
		q := url.Values{}
		if c.maxResults > 0 {
			q.Set("maxResults", strconv.Itoa(c.maxResults))
		}
		if token != "" {
			q.Set("pageToken", token)
		}
		var page map[string]json.RawMessage
		if err := c.c.getJSON(ctx, path, q, &page); err != nil {
			return nil, err
		}
		var names []string
		if raw, ok := page[field]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &names); err != nil {
				return nil, fmt.Errorf("GET %s: %q: %w", path, field, err)
			}
		}
		all = append(all, names...)
		var next *string
		if raw, ok := page["nextPageToken"]; ok {
			if err := json.Unmarshal(raw, &next); err != nil {
				return nil, fmt.Errorf("GET %s: nextPageToken: %w", path, err)
			}
		}
		if next == nil || *next == "" {
			break
		}
		if seen[*next] {
			return nil, fmt.Errorf("GET %s: the server repeated page token %q", path, *next)
		}
		seen[*next] = true
		token = *next
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

// ListDatabases returns the catalog's databases, sorted.
func (c *Catalog) ListDatabases(ctx context.Context) ([]string, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	dbs, err := c.listPages(ctx, c.path("databases"), "databases")
	if err != nil {
		return nil, fmt.Errorf("catalog %s: list databases: %w", c.name, err)
	}
	return dbs, nil
}

// ListTables returns the tables of database, sorted.
func (c *Catalog) ListTables(ctx context.Context, database string) ([]string, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	ts, err := c.listPages(ctx, c.path("databases", segment(database), "tables"), "tables")
	if err != nil {
		return nil, fmt.Errorf("catalog %s: list tables of %s: %w", c.name, database, err)
	}
	return ts, nil
}

// getTableResponse is the part of Paimon's GetTableResponse compactd uses.
type getTableResponse struct {
	ID         string `json:"id"`
	Database   string `json:"database"`
	Name       string `json:"name"`
	Path       string `json:"path"`
	IsExternal bool   `json:"isExternal"`
	SchemaID   *int64 `json:"schemaId"`
	Schema     *struct {
		Options map[string]string `json:"options"`
	} `json:"schema"`
}

// OpenTable loads database.name from the catalog and opens it at the
// path the catalog gives, committing through the catalog.
func (c *Catalog) OpenTable(ctx context.Context, database, name string) (*table.Table, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	full := database + "." + name
	fail := func(format string, args ...any) error {
		return fmt.Errorf("catalog %s: table %s: %s", c.name, full, fmt.Sprintf(format, args...))
	}
	if err := table.CheckDatabaseName(database); err != nil {
		return nil, fmt.Errorf("catalog %s: %w", c.name, err)
	}
	if err := table.CheckTableName(name); err != nil {
		return nil, fmt.Errorf("catalog %s: %w", c.name, err)
	}
	if c.dataTokens {
		return nil, fail("the catalog hands out data tokens (data-token.enabled=true); compactd does not support vended storage credentials")
	}
	var resp getTableResponse
	if err := c.c.getJSON(ctx, c.path("databases", segment(database), "tables", segment(name)), nil, &resp); err != nil {
		if isStatus(err, http.StatusNotFound) {
			return nil, fmt.Errorf("catalog %s: table %s: %w (%w)", c.name, full, table.ErrNotATable, err)
		}
		return nil, fmt.Errorf("catalog %s: load table %s: %w", c.name, full, err)
	}
	switch {
	case resp.ID == "":
		return nil, fail("the catalog gave no table id")
	case resp.Path == "":
		return nil, fail("the catalog gave no path")
	case resp.Schema == nil || resp.SchemaID == nil:
		return nil, fail("the catalog gave no schema")
	case resp.Name != "" && resp.Name != name:
		return nil, fail("the catalog answered for table %q", resp.Name)
	case resp.Database != "" && resp.Database != database:
		return nil, fail("the catalog answered for database %q", resp.Database)
	}
	if typ := resp.Schema.Options["type"]; typ != "" && !strings.EqualFold(typ, "table") {
		return nil, fail("table type %q is not a Paimon table compactd maintains", typ)
	}
	if resp.IsExternal {
		return nil, fail("external tables (data at a path the catalog does not own) are not maintained through a REST catalog")
	}
	path := tablePath(resp.Path)
	fio, err := c.openStorage(ctx, path)
	if err != nil {
		return nil, fail("path %s: %v", resp.Path, err)
	}
	t, err := table.OpenNamed(ctx, fio, path, database, name)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: table %s at %s: %w", c.name, full, resp.Path, err)
	}
	if got := t.Schema().ID; got != *resp.SchemaID {
		return nil, fail("the catalog names schema %d but the table's files at %s have schema %d", *resp.SchemaID, resp.Path, got)
	}
	t.SetSnapshotCommit(&snapshotCommit{cat: c, database: database, name: name, tableID: resp.ID})
	return t, nil
}

// tablePath turns a local path in Hadoop's URI form, which a Java catalog
// on a file: warehouse hands out (file:/dir, no authority), into the
// file:///dir form compactd's file IO takes; other paths are unchanged.
func tablePath(p string) string {
	if rest, ok := strings.CutPrefix(p, "file:/"); ok && !strings.HasPrefix(rest, "/") {
		return "file:///" + rest
	}
	return p
}
