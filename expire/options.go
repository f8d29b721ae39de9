package expire

import (
	"fmt"
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
	// snapshot retention (CoreOptions.changelogLifecycleDecoupled): expired
	// snapshots then leave their changelog behind as
	// changelog/changelog-<id>, and Run expires those by the changelog
	// retention below. Resolve recomputes it.
	ChangelogDecoupled bool
	// ChangelogRetainMin, ChangelogRetainMax and ChangelogTimeRetained are
	// changelog.num-retained.min/max and changelog.time-retained, each
	// falling back to the snapshot value when the table does not set it.
	ChangelogRetainMin    int
	ChangelogRetainMax    int
	ChangelogTimeRetained time.Duration
	// ProduceChangelog is changelog-producer != none. With a decoupled
	// lifecycle and no producer, the changelog is the APPEND data files:
	// snapshot expiry keeps those and the data manifests, and changelog
	// expiry deletes them.
	ProduceChangelog bool

	// changelogSet records which changelog.* options the table sets, so
	// that Resolve lets the others follow overridden snapshot values, as
	// Java's ExpireConfig builder does.
	changelogMinSet, changelogMaxSet, changelogTimeSet bool

	// CleanEmptyDirectories is snapshot.clean-empty-directories.
	CleanEmptyDirectories bool
}

// DefaultOptions returns Paimon's defaults (table.ParseOptions of no
// options; CoreOptions, 1.0 and later).
func DefaultOptions() Options {
	t, _ := table.ParseOptions(nil)
	return FromTable(t)
}

// Validate checks the invariants Java enforces before expiring (for the
// changelog retention, ExpireChangelogImpl's, checked here before anything
// is deleted rather than after snapshot expiry as Java does).
func (o Options) Validate() error {
	if err := table.ValidateRetention(o.RetainMin, o.RetainMax, o.Limit, o.TimeRetained); err != nil {
		return err
	}
	if o.ChangelogDecoupled {
		if o.ChangelogRetainMax < o.ChangelogRetainMin {
			return fmt.Errorf("changelog retainMax (%d) must not be less than retainMin (%d)", o.ChangelogRetainMax, o.ChangelogRetainMin)
		}
		if o.ChangelogTimeRetained < 0 {
			return fmt.Errorf("changelog.time-retained must not be negative, got %s", o.ChangelogTimeRetained)
		}
	}
	return nil
}

// Resolve applies the fallbacks after the snapshot retention was changed
// (command-line overrides): changelog values the table does not set follow
// the snapshot values, and ChangelogDecoupled is recomputed.
func (o Options) Resolve() Options {
	if !o.changelogMinSet {
		o.ChangelogRetainMin = o.RetainMin
	}
	if !o.changelogMaxSet {
		o.ChangelogRetainMax = o.RetainMax
	}
	if !o.changelogTimeSet {
		o.ChangelogTimeRetained = o.TimeRetained
	}
	o.ChangelogDecoupled = o.ChangelogRetainMax > o.RetainMax || o.ChangelogRetainMin > o.RetainMin ||
		o.ChangelogTimeRetained > o.TimeRetained
	return o
}

// SetChangelogRetention sets the changelog retention explicitly (as the
// changelog.* options would) and recomputes ChangelogDecoupled.
func (o Options) SetChangelogRetention(retainMin, retainMax int, timeRetained time.Duration) Options {
	o.ChangelogRetainMin, o.ChangelogRetainMax, o.ChangelogTimeRetained = retainMin, retainMax, timeRetained
	o.changelogMinSet, o.changelogMaxSet, o.changelogTimeSet = true, true, true
	return o.Resolve()
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
		ChangelogRetainMin:    t.ChangelogNumRetainedMin,
		ChangelogRetainMax:    t.ChangelogNumRetainedMax,
		ChangelogTimeRetained: t.ChangelogTimeRetained,
		ProduceChangelog:      t.ChangelogProducer != "" && t.ChangelogProducer != table.ChangelogNone,
	}
	_, o.changelogMinSet = t.Raw[table.OptChangelogNumRetainedMin]
	_, o.changelogMaxSet = t.Raw[table.OptChangelogNumRetainedMax]
	_, o.changelogTimeSet = t.Raw[table.OptChangelogTimeRetained]
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
