package policy

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the daemon's configuration file.
type Config struct {
	// Path is the file the config was loaded from ("" if built in code);
	// relative PolicyFile, StateDir and local warehouse paths resolve
	// against its directory.
	Path string `yaml:"-"`

	// Listen is the HTTP address of /metrics, /healthz and /status.
	Listen string `yaml:"listen"`
	// HTTP bounds what clients of that server may hold.
	HTTP HTTP `yaml:"http"`
	// Workers bounds the jobs running at once (each job changes one table).
	Workers int `yaml:"workers"`
	// BucketParallelism bounds the buckets one compaction job merges at once.
	BucketParallelism int `yaml:"bucket-parallelism"`
	// BucketsPerRun, if positive, splits the single daemon's compaction of
	// a fixed-bucket table with more buckets into runs of that many
	// buckets, each on a worker of its own (at most the table's
	// compact.max-share of them); 0 compacts a table in one run. A fleet
	// splits by Coordinator.BucketsPerUnit instead.
	BucketsPerRun int `yaml:"buckets-per-run"`
	// MaxCompactions bounds the compactions (jobs, or a fleet's units)
	// this daemon runs at once, under Workers, so that compactions cannot
	// hold every worker from expiration and cleanup; 0 means Workers.
	MaxCompactions int `yaml:"max-compactions"`
	// MemoryBudget bounds the estimated memory of the compactions this
	// daemon runs at once (sched's compactionMemory); 0 means no bound.
	MemoryBudget Size `yaml:"memory-budget"`
	// PolicyFile is the policy store (per-table overrides).
	PolicyFile string `yaml:"policy-file"`
	// StateDir keeps daemon state that survives restarts (halted tables).
	StateDir string `yaml:"state-dir"`

	// Tick is the period of the scheduling loop.
	Tick Duration `yaml:"tick"`
	// DiscoveryInterval is how often warehouses are listed for new tables.
	DiscoveryInterval Duration `yaml:"discovery-interval"`
	// GracePeriod is how long running jobs may finish after SIGTERM.
	GracePeriod Duration `yaml:"grace-period"`
	// LockLease is how long the warehouse lock outlives its last heartbeat.
	// The holder renews every lease/4 and, if no renewal succeeds, gives
	// the warehouse up (cancelling its jobs) lease/4 before the lease ends.
	LockLease Duration `yaml:"lock-lease"`
	// Retry configures the backoff of transient failures.
	Retry Retry `yaml:"retry"`

	// Coordinator, when its URL is set, makes this daemon one replica of a
	// fleet coordinated through PostgreSQL (package fleet) instead of the
	// warehouse lock.
	Coordinator Coordinator `yaml:"coordinator"`

	Warehouses []Warehouse `yaml:"warehouses"`
	// Defaults are compactd defaults (policy keys) for every table; they
	// override the built-in defaults and yield to the table's own options.
	Defaults map[string]string `yaml:"defaults"`
}

// Coordinator configures fleet mode.
type Coordinator struct {
	// URL is the PostgreSQL connection string (postgres://…); empty means
	// the single embedded daemon. The --coordinator flag overrides it.
	URL string `yaml:"url"`
	// RescueAfter is how long a unit may stay running before the queue
	// hands it to another replica (its replica is taken for dead; the
	// unit's lease still keeps a live one's bucket from being run twice).
	// A unit is cancelled after nine tenths of it, so it also bounds a
	// unit's run: keep it above the longest (compact.time-budget).
	RescueAfter Duration `yaml:"rescue-after"`
	// Heartbeat is how often a replica reports itself and checks the
	// connections that hold its leases.
	Heartbeat Duration `yaml:"heartbeat"`
	// BucketsPerUnit is how many buckets of a fixed-bucket table one
	// compaction unit covers (1 to MaxBucketsPerUnit).
	BucketsPerUnit int `yaml:"buckets-per-unit"`
}

// MaxBucketsPerUnit bounds Coordinator.BucketsPerUnit (a unit locks each
// of its buckets in PostgreSQL).
const MaxBucketsPerUnit = 64

// Retry is the backoff of transient failures: Initial doubled per
// consecutive failure up to Max. After Attempts consecutive failures of
// errors not known to be transient the table is halted.
type Retry struct {
	Initial  Duration `yaml:"initial"`
	Max      Duration `yaml:"max"`
	Attempts int      `yaml:"attempts"`
}

// HTTP limits the daemon's HTTP server, so that its clients cannot take
// the file descriptors and memory the jobs and the warehouse lock need:
// every connection is a descriptor, and a connection that never closes
// keeps it forever.
type HTTP struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout Duration `yaml:"read-header-timeout"`
	// ReadTimeout bounds reading a whole request.
	ReadTimeout Duration `yaml:"read-timeout"`
	// WriteTimeout bounds writing a response (from the end of the headers).
	WriteTimeout Duration `yaml:"write-timeout"`
	// IdleTimeout closes a keep-alive connection idle this long.
	IdleTimeout Duration `yaml:"idle-timeout"`
	// MaxHeaderBytes caps a request's headers.
	MaxHeaderBytes int `yaml:"max-header-bytes"`
	// MaxConnections caps the open connections. At the cap a new connection
	// closes the one idle longest (so a flood of idle connections cannot
	// lock out /healthz); if none is idle it waits for one to finish.
	MaxConnections int `yaml:"max-connections"`
}

// Warehouse is one watched warehouse.
type Warehouse struct {
	// Path is a local directory or s3://bucket/prefix.
	Path string `yaml:"path"`
	// Include and Exclude are glob patterns (path.Match) over "db.table";
	// a table is watched if it matches an include (none given: all) and no
	// exclude.
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`
	// S3 configures the S3 client for s3:// warehouses.
	S3 *S3 `yaml:"s3"`
	// Catalog names the catalog the warehouse's writers use, in Java's
	// catalog option names (metastore: jdbc, uri, catalog-key, jdbc.user,
	// jdbc.password-file or jdbc.password-env, lock.enabled,
	// lock-acquire-timeout, …; see package catalog). Empty: a file-system
	// warehouse. Its warehouse option defaults to path.
	Catalog map[string]string `yaml:"catalog"`
}

// S3 is the YAML form of fileio.S3Config.
type S3 struct {
	Endpoint        string `yaml:"endpoint"`
	Region          string `yaml:"region"`
	AddressingStyle string `yaml:"addressing-style"`
	AccessKeyID     string `yaml:"access-key-id"`
	SecretAccessKey string `yaml:"secret-access-key"`
	Profile         string `yaml:"profile"`
}

// Duration is a time.Duration written as "30s", "5m" in YAML.
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Size is a byte count written as "512mb", "4 gb" (Paimon's memory sizes)
// or a plain number in YAML.
type Size int64

// UnmarshalYAML parses a memory size.
func (z *Size) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := parseSize(s)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*z = Size(v)
	return nil
}

// DefaultListen is the HTTP address used when neither the config nor
// --listen gives one: loopback only.
const DefaultListen = "127.0.0.1:9464"

// WithDefaults fills unset fields.
func (c *Config) WithDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	c.HTTP.WithDefaults()
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.BucketParallelism <= 0 {
		c.BucketParallelism = 2
	}
	if c.PolicyFile == "" {
		c.PolicyFile = "compactd-policies.yaml"
	}
	if c.StateDir == "" {
		c.StateDir = "compactd-state"
	}
	if c.Tick <= 0 {
		c.Tick = Duration(time.Second)
	}
	if c.DiscoveryInterval <= 0 {
		c.DiscoveryInterval = Duration(30 * time.Second)
	}
	if c.GracePeriod <= 0 {
		c.GracePeriod = Duration(30 * time.Second)
	}
	if c.LockLease <= 0 {
		c.LockLease = Duration(30 * time.Second)
	}
	if c.Coordinator.RescueAfter <= 0 {
		c.Coordinator.RescueAfter = Duration(15 * time.Minute)
	}
	if c.Coordinator.Heartbeat <= 0 {
		c.Coordinator.Heartbeat = Duration(5 * time.Second)
	}
	if c.Coordinator.BucketsPerUnit <= 0 {
		c.Coordinator.BucketsPerUnit = 4
	}
	if c.Retry.Initial <= 0 {
		c.Retry.Initial = Duration(5 * time.Second)
	}
	if c.Retry.Max <= 0 {
		c.Retry.Max = Duration(5 * time.Minute)
	}
	if c.Retry.Attempts <= 0 {
		c.Retry.Attempts = 5
	}
}

// Defaults of the HTTP limits: the server answers small GETs from
// Prometheus, probes and operators, so these are generous for that and
// small next to the descriptors of a process.
const (
	DefaultHTTPReadHeaderTimeout = 5 * time.Second
	DefaultHTTPReadTimeout       = 10 * time.Second
	DefaultHTTPWriteTimeout      = 30 * time.Second
	DefaultHTTPIdleTimeout       = 60 * time.Second
	DefaultHTTPMaxHeaderBytes    = 16 << 10
	DefaultHTTPMaxConnections    = 64
)

// WithDefaults fills the unset limits.
func (h *HTTP) WithDefaults() {
	if h.ReadHeaderTimeout <= 0 {
		h.ReadHeaderTimeout = Duration(DefaultHTTPReadHeaderTimeout)
	}
	if h.ReadTimeout <= 0 {
		h.ReadTimeout = Duration(DefaultHTTPReadTimeout)
	}
	if h.WriteTimeout <= 0 {
		h.WriteTimeout = Duration(DefaultHTTPWriteTimeout)
	}
	if h.IdleTimeout <= 0 {
		h.IdleTimeout = Duration(DefaultHTTPIdleTimeout)
	}
	if h.MaxHeaderBytes <= 0 {
		h.MaxHeaderBytes = DefaultHTTPMaxHeaderBytes
	}
	if h.MaxConnections <= 0 {
		h.MaxConnections = DefaultHTTPMaxConnections
	}
}

// Resolve makes a path of the config relative to the config's directory.
func (c *Config) Resolve(p string) string {
	if p == "" || strings.Contains(p, "://") || filepath.IsAbs(p) || c.Path == "" {
		return p
	}
	return filepath.Join(filepath.Dir(c.Path), p)
}

// PolicyPath is the resolved policy store path.
func (c *Config) PolicyPath() string { return c.Resolve(c.PolicyFile) }

// StatePath is the resolved state directory.
func (c *Config) StatePath() string { return c.Resolve(c.StateDir) }

// WarehousePath is the resolved path of a warehouse.
func (c *Config) WarehousePath(w Warehouse) string { return c.Resolve(w.Path) }

// Validate reports every problem of the config at once.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Warehouses) == 0 {
		errs = append(errs, errors.New("no warehouses configured"))
	}
	if c.BucketsPerRun < 0 {
		errs = append(errs, fmt.Errorf("buckets-per-run=%d is negative", c.BucketsPerRun))
	}
	if c.MaxCompactions < 0 {
		errs = append(errs, fmt.Errorf("max-compactions=%d is negative", c.MaxCompactions))
	}
	if c.MemoryBudget < 0 {
		errs = append(errs, fmt.Errorf("memory-budget=%d is negative", c.MemoryBudget))
	}
	if n := c.Coordinator.BucketsPerUnit; n > MaxBucketsPerUnit {
		errs = append(errs, fmt.Errorf("coordinator.buckets-per-unit=%d is over %d", n, MaxBucketsPerUnit))
	}
	seen := map[string]bool{}
	for i, w := range c.Warehouses {
		if w.Path == "" {
			errs = append(errs, fmt.Errorf("warehouses[%d]: path is empty", i))
		}
		if seen[c.WarehousePath(w)] {
			errs = append(errs, fmt.Errorf("warehouses[%d]: %s listed twice", i, w.Path))
		}
		seen[c.WarehousePath(w)] = true
		for _, p := range append(append([]string(nil), w.Include...), w.Exclude...) {
			if _, err := path.Match(p, "db.table"); err != nil {
				errs = append(errs, fmt.Errorf("warehouses[%d]: pattern %q: %w", i, p, err))
			}
		}
	}
	if err := ValidateValues(c.Defaults, nil); err != nil {
		errs = append(errs, fmt.Errorf("defaults: %w", err))
	}
	return errors.Join(errs...)
}

// LoadConfig reads, defaults and validates a config file. Unknown fields
// are errors (a typo must not silently disable a setting).
func LoadConfig(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", file, err)
	}
	c.Path = file
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", file, err)
	}
	return c, nil
}

// ParseConfig decodes a config (without validating it).
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	c.WithDefaults()
	return &c, nil
}

// Selects reports whether the warehouse watches table "db.table".
func (w Warehouse) Selects(name string) bool {
	in := len(w.Include) == 0
	for _, p := range w.Include {
		if ok, _ := path.Match(p, name); ok {
			in = true
			break
		}
	}
	if !in {
		return false
	}
	for _, p := range w.Exclude {
		if ok, _ := path.Match(p, name); ok {
			return false
		}
	}
	return true
}
