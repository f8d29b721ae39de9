package expire

import (
	"fmt"
	"github.com/compactd/compactd/table"
	"math"
	"strconv"
	"strings"
	"time"
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

// DefaultOptions returns Paimon's defaults (CoreOptions, 1.0 and later).
func DefaultOptions() Options {
	return Options{
		RetainMin:    10,
		RetainMax:    math.MaxInt32,
		TimeRetained: time.Hour,
		Limit:        50,
	}
}

// Validate checks the invariants Java enforces before expiring.
func (o Options) Validate() error {
	if o.RetainMin < 1 {
		return fmt.Errorf("snapshot.num-retained.min must be at least 1, got %d", o.RetainMin)
	}
	if o.RetainMax < o.RetainMin {
		return fmt.Errorf("retainMax (%d) must not be less than retainMin (%d)", o.RetainMax, o.RetainMin)
	}
	if o.Limit < 1 {
		return fmt.Errorf("snapshot.expire.limit must be at least 1, got %d", o.Limit)
	}
	if o.TimeRetained < 0 {
		return fmt.Errorf("snapshot.time-retained must not be negative, got %s", o.TimeRetained)
	}
	return nil
}

// OptionsFromTable reads the expiration options from a table's options map
// (the schema's "options" object), applying Paimon's defaults and fallback
// keys.
func OptionsFromTable(opts map[string]string) (Options, error) {
	o := DefaultOptions()
	var err error
	getInt := func(key string, dst *int) {
		if v, ok := opts[key]; ok && err == nil {
			n, perr := strconv.Atoi(strings.TrimSpace(v))
			if perr != nil {
				err = fmt.Errorf("option %s=%q: %w", key, v, perr)
				return
			}
			*dst = n
		}
	}
	getDur := func(key string, dst *time.Duration) bool {
		v, ok := opts[key]
		if !ok || err != nil {
			return false
		}
		d, perr := table.ParseDuration(v)
		if perr != nil {
			err = fmt.Errorf("option %s=%q: %w", key, v, perr)
			return false
		}
		*dst = d
		return true
	}
	getBool := func(key string, dst *bool) {
		if v, ok := opts[key]; ok && err == nil {
			b, perr := strconv.ParseBool(strings.TrimSpace(v))
			if perr != nil {
				err = fmt.Errorf("option %s=%q: %w", key, v, perr)
				return
			}
			*dst = b
		}
	}
	getInt("snapshot.num-retained.min", &o.RetainMin)
	getInt("snapshot.num-retained.max", &o.RetainMax)
	getDur("snapshot.time-retained", &o.TimeRetained)
	getInt("snapshot.expire.limit", &o.Limit)
	getDur("consumer.expiration-time", &o.ConsumerExpiration)
	getBool("consumer.changelog-only", &o.ConsumerChangelogOnly)
	if _, ok := opts["snapshot.clean-empty-directories"]; ok {
		getBool("snapshot.clean-empty-directories", &o.CleanEmptyDirectories)
	} else {
		getBool("snapshot.expire.clean-empty-directories", &o.CleanEmptyDirectories)
	}

	// Decoupled iff any changelog retention exceeds the snapshot one
	// (CoreOptions.changelogLifecycleDecoupled).
	clMin, clMax, clTime := o.RetainMin, o.RetainMax, o.TimeRetained
	getInt("changelog.num-retained.min", &clMin)
	getInt("changelog.num-retained.max", &clMax)
	getDur("changelog.time-retained", &clTime)
	if err != nil {
		return Options{}, err
	}
	o.ChangelogDecoupled = clMax > o.RetainMax || clMin > o.RetainMin || clTime > o.TimeRetained
	if !o.ChangelogDecoupled {
		// consumer.changelog-only only takes effect with a decoupled changelog.
		o.ConsumerChangelogOnly = false
	}
	return o, o.Validate()
}

var durationUnits = map[string]time.Duration{
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"µs": time.Microsecond, "us": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond,
	"nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
}
