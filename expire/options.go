package expire

import (
	"time"

	"github.com/compactd/compactd/table"
)

// Options are the retention settings that decide which snapshots expire.
// They mirror Paimon's ExpireConfig; OptionsFromTable reads them from the
// table options with Paimon's defaults.
type Options struct {
	RetainMin    int           // snapshot.num-retained.min, >= 1
	RetainMax    int           // snapshot.num-retained.max, >= RetainMin
	TimeRetained time.Duration // snapshot.time-retained
	Limit        int           // snapshot.expire.limit: most snapshots expired per run

	// ConsumerExpiration is consumer.expiration-time; zero means consumers
	// never expire. A consumer whose file is older than now minus this no
	// longer protects snapshots and is deleted by Run.
	ConsumerExpiration time.Duration
	// ConsumerChangelogOnly is consumer.changelog-only: consumers then bound
	// only changelog expiry, not snapshot expiry.
	ConsumerChangelogOnly bool

	// ChangelogDecoupled is true when the changelog.* retention exceeds the
	// snapshot retention. Run refuses such tables: expiring them needs the
	// long-lived changelog bookkeeping of ExpireChangelogImpl.
	ChangelogDecoupled bool

	// CleanEmptyDirectories is snapshot.clean-empty-directories.
	CleanEmptyDirectories bool
}

// DefaultOptions returns Paimon's defaults (table.ParseOptions of no
// options; CoreOptions, 1.0 and later).
func DefaultOptions() Options {
	t, _ := table.ParseOptions(nil)
	return FromTable(t)
}

// Validate checks the invariants Java enforces before expiring.
func (o Options) Validate() error {
	return table.ValidateRetention(o.RetainMin, o.RetainMax, o.Limit, o.TimeRetained)
}

// FromTable takes the expiration options from a table's typed options. It
// does not check them: table.Options.ExpirationErr does.
func FromTable(t *table.Options) Options {
	o := Options{
		RetainMin:             t.SnapshotNumRetainedMin,
		RetainMax:             t.SnapshotNumRetainedMax,
		TimeRetained:          t.SnapshotTimeRetained,
		Limit:                 t.SnapshotExpireLimit,
		ConsumerChangelogOnly: t.ConsumerChangelogOnly,
		// Decoupled iff any changelog retention exceeds the snapshot one
		// (CoreOptions.changelogLifecycleDecoupled).
		ChangelogDecoupled:    t.ChangelogLifecycleDecoupled(),
		CleanEmptyDirectories: t.SnapshotCleanEmptyDirectories,
	}
	if t.ConsumerExpirationTime != nil {
		o.ConsumerExpiration = *t.ConsumerExpirationTime
	}
	if !o.ChangelogDecoupled {
		// consumer.changelog-only only takes effect with a decoupled changelog.
		o.ConsumerChangelogOnly = false
	}
	return o
}

// OptionsFromTable reads the expiration options from a table's options map
// (the schema's "options" object, with any overrides) through
// table.ParseOptions, which holds the parsers, Paimon's defaults and the
// fallback keys.
func OptionsFromTable(opts map[string]string) (Options, error) {
	t, err := table.ParseOptions(opts)
	if err != nil {
		return Options{}, err
	}
	return FromTable(t), t.ExpirationErr()
}
