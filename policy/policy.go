package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/compactd/compactd/table"
)

// Kind is a job kind the daemon schedules per table.
type Kind string

// The job kinds. TagExpire and PartitionExpire act only on tables that
// configure them (tag.automatic-creation / tag retention, and
// partition.expiration-time): Java's writers skip both on write-only tables.
const (
	Compact         Kind = "compact"
	FullCompaction  Kind = "full-compaction"
	Expire          Kind = "expire"
	Orphan          Kind = "orphan"
	TagExpire       Kind = "tag-expire"
	PartitionExpire Kind = "partition-expire"
)

// Kinds lists every job kind in scheduling order of ties.
var Kinds = []Kind{Compact, FullCompaction, Expire, Orphan, TagExpire, PartitionExpire}

// Source says where an effective value came from.
type Source string

// Sources, strongest first.
const (
	FromOverride Source = "override" // the policy store
	FromTable    Source = "table"    // the Paimon table's options
	FromConfig   Source = "config"   // the config file's defaults
	FromDefault  Source = "default"  // built into compactd
)

// TableOptionPrefix marks compactd policy keys in a Paimon table's own
// options: a table may carry "compactd.compact.schedule" = "@every 5m".
// Paimon option keys (retention, compaction triggers) are read as they are.
const TableOptionPrefix = "compactd."

type keyKind int

const (
	kBool keyKind = iota
	kSchedule
	kDuration
	kInt
	kSize
	kShare
)

type keyDef struct {
	kind keyKind
	def  string
	help string
}

// builtin are compactd's own keys with their built-in defaults.
var builtin = map[string]keyDef{
	"compact.enabled":     {kBool, "true", "minor compaction under the table's triggers"},
	"compact.schedule":    {kSchedule, "@every 1m", "when to check the table for compaction"},
	"compact.max-buckets": {kInt, "0", "most buckets compacted per run (0: no limit)"},
	"compact.max-bytes":   {kSize, "0", "most input bytes compacted per run (0: no limit)"},
	"compact.time-budget": {kDuration, "0s", "stop starting buckets after this long (0: no limit)"},
	"compact.max-share": {kShare, "1", "most of the workers (the daemon's, or the live replicas' in a fleet) the table's " +
		"bucket-range compactions hold at once, as a fraction in (0,1]; at least one"},

	"full-compaction.enabled":     {kBool, "false", "periodic full compaction"},
	"full-compaction.schedule":    {kSchedule, "@daily", ""},
	"full-compaction.max-buckets": {kInt, "0", ""},
	"full-compaction.max-bytes":   {kSize, "0", ""},
	"full-compaction.time-budget": {kDuration, "0s", ""},
	"full-compaction.max-share":   {kShare, "1", ""},
	"full-compaction.partition-idle-time": {kDuration, "0s", "only partitions without new files for this long " +
		"(Paimon's partition_idle_time; 0: every partition)"},

	"expire.enabled":     {kBool, "true", "snapshot expiration per snapshot.* retention"},
	"expire.schedule":    {kSchedule, "@every 10m", ""},
	"expire.time-budget": {kDuration, "0s", "cancel the job after this long (0: no limit)"},

	"orphan.enabled":     {kBool, "true", "orphan file cleanup"},
	"orphan.schedule":    {kSchedule, "@daily", ""},
	"orphan.older-than":  {kDuration, "24h", "only files older than this are orphans (at least 1h)"},
	"orphan.time-budget": {kDuration, "0s", ""},

	"tag-expire.enabled":        {kBool, "true", "automatic tags (tag.automatic-creation) and tag expiry (tag.num-retained-max, tag TTLs)"},
	"tag-expire.schedule":       {kSchedule, "@hourly", ""},
	"partition-expire.enabled":  {kBool, "true", "drop partitions older than partition.expiration-time (when the table sets it)"},
	"partition-expire.schedule": {kSchedule, "@hourly", ""},
}

// paimonKeys are Paimon table options a policy may override (retention and
// compaction). Their defaults are Paimon's; they are validated by parsing
// them with table.ParseOptions, as compaction and expiration do.
var paimonKeys = map[string]bool{
	"snapshot.num-retained.min": true, "snapshot.num-retained.max": true,
	"snapshot.time-retained": true, "snapshot.expire.limit": true,
	"snapshot.clean-empty-directories": true, "consumer.expiration-time": true,
	"num-sorted-run.compaction-trigger": true, "num-sorted-run.stop-trigger": true,
	"compaction.max-size-amplification-percent": true, "compaction.size-ratio": true,
	"compaction.optimization-interval": true, "compaction.total-size-threshold": true,
	"compaction.incremental-size-threshold": true, "full-compaction.delta-commits": true,
	"target-file-size": true, "num-levels": true, "compaction.min.file-num": true,
	"compaction.small-file-ratio": true,
	"tag.num-retained-max":        true, "partition.expiration-time": true,
	"partition.expiration-check-interval": true, "partition.timestamp-formatter": true,
	"partition.timestamp-pattern": true,
}

// Keys returns every policy key a store or config may set, sorted.
func Keys() []string {
	out := slices.Collect(maps.Keys(builtin))
	for k := range paimonKeys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// IsPaimonKey reports whether key is a Paimon table option (passed to
// compaction and expiration as an override) rather than a compactd key.
func IsPaimonKey(key string) bool { return paimonKeys[key] }

// Value is one effective value and its origin.
type Value struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source Source `json:"source"`
	// Note explains a value derived rather than read.
	Note string `json:"note,omitempty"`
}

// Effective is a table's resolved policy.
type Effective struct {
	Table  string           `json:"table"`
	Values map[string]Value `json:"values"`
	// TableOptions are the Paimon table's own options, as read.
	TableOptions map[string]string `json:"-"`
}

// Resolve computes the effective policy of a table from its own options,
// the config defaults and the table's overrides. Paimon keys without a
// value in any layer are absent (Paimon's default applies).
func Resolve(name string, tableOptions, configDefaults, overrides map[string]string) *Effective {
	e := &Effective{Table: name, Values: map[string]Value{}, TableOptions: tableOptions}
	set := func(k, v string, s Source) { e.Values[k] = Value{Key: k, Value: v, Source: s} }
	for k, d := range builtin {
		set(k, d.def, FromDefault)
	}
	for k, v := range configDefaults {
		set(k, v, FromConfig)
	}
	// A table whose writers compact themselves (Paimon's write-only, or its
	// older name write.compaction-skip, is not true) must not be compacted
	// by compactd too: the two would keep invalidating each other's
	// compactions. Options table cannot parse count as not write-only (the
	// table's jobs refuse it anyway).
	if tableOptions != nil && !writeOnly(tableOptions) {
		for _, k := range []string{"compact.enabled", "full-compaction.enabled"} {
			e.Values[k] = Value{Key: k, Value: "false", Source: FromTable, Note: "the table's writers compact (write-only is not true)"}
		}
	}
	for k, v := range tableOptions {
		if paimonKeys[k] {
			set(k, v, FromTable)
		} else if ck, ok := strings.CutPrefix(k, TableOptionPrefix); ok {
			if _, known := builtin[ck]; known {
				set(ck, v, FromTable)
			}
		}
	}
	for k, v := range overrides {
		set(k, v, FromOverride)
	}
	return e
}

// writeOnly is the table's write-only option as table parses it; the
// writers of a postponed-bucket table (bucket = -2) never compact whatever
// it says (Java's postponed writers only append to bucket-postpone).
func writeOnly(tableOptions map[string]string) bool {
	o, err := table.ParseOptions(tableOptions)
	return err == nil && (o.WriteOnly || o.Bucket == table.BucketPostpone)
}

// Sorted returns the values ordered by key.
func (e *Effective) Sorted() []Value {
	out := slices.Collect(maps.Values(e.Values))
	slices.SortFunc(out, func(a, b Value) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// PaimonOverrides are the Paimon options the daemon must apply over the
// table's own: those set by an override or the config (the table's own
// values are already in effect).
func (e *Effective) PaimonOverrides() map[string]string {
	out := map[string]string{}
	for k, v := range e.Values {
		if paimonKeys[k] && v.Source != FromTable {
			out[k] = v.Value
		}
	}
	return out
}

// MergedTableOptions are the table's options with PaimonOverrides applied.
func (e *Effective) MergedTableOptions() map[string]string {
	out := maps.Clone(e.TableOptions)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, e.PaimonOverrides())
	return out
}

// Job is the policy of one job kind for a table.
type Job struct {
	Kind       Kind
	Enabled    bool
	Spec       string // the cron spec
	Schedule   cron.Schedule
	MaxBuckets int
	MaxBytes   int64
	TimeBudget time.Duration
	OlderThan  time.Duration // orphan only
	// MaxShare is the fraction of the workers the table's bucket-range
	// runs of this kind may hold at once (compaction kinds; 0 elsewhere).
	MaxShare float64
	// PartitionIdleTime restricts a full compaction to the partitions
	// idle that long (full-compaction only; 0: every partition).
	PartitionIdleTime time.Duration
}

// MaxUnits is how many of workers the table's bucket-range runs may hold
// at once under MaxShare: the share rounded down, but at least one (a
// table must be able to make progress), and all of them for a kind
// without a share.
func (j Job) MaxUnits(workers int) int {
	if j.MaxShare <= 0 || j.MaxShare >= 1 {
		return max(workers, 1)
	}
	return max(int(j.MaxShare*float64(workers)), 1)
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule parses a cron spec: five standard fields, or a descriptor
// such as @hourly or "@every 10m".
func ParseSchedule(spec string) (cron.Schedule, error) {
	return cronParser.Parse(strings.TrimSpace(spec))
}

// Job returns the policy of kind k; an invalid value is an error naming it.
func (e *Effective) Job(k Kind) (Job, error) {
	j := Job{Kind: k}
	var errs []error
	get := func(suffix string) (string, bool) {
		v, ok := e.Values[string(k)+"."+suffix]
		return v.Value, ok
	}
	if v, ok := get("enabled"); ok {
		b, err := parseValue(kBool, v)
		errs = append(errs, keyErr(string(k)+".enabled", v, err))
		j.Enabled = b == "true"
	}
	if v, ok := get("schedule"); ok {
		s, err := ParseSchedule(v)
		errs = append(errs, keyErr(string(k)+".schedule", v, err))
		j.Spec, j.Schedule = v, s
	}
	if v, ok := get("max-buckets"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		errs = append(errs, keyErr(string(k)+".max-buckets", v, err))
		j.MaxBuckets = n
	}
	if v, ok := get("max-bytes"); ok {
		n, err := parseSize(v)
		errs = append(errs, keyErr(string(k)+".max-bytes", v, err))
		j.MaxBytes = n
	}
	if v, ok := get("time-budget"); ok {
		d, err := parseDuration(v)
		errs = append(errs, keyErr(string(k)+".time-budget", v, err))
		j.TimeBudget = d
	}
	if v, ok := get("max-share"); ok {
		f, err := parseShare(v)
		errs = append(errs, keyErr(string(k)+".max-share", v, err))
		j.MaxShare = f
	}
	if v, ok := get("partition-idle-time"); ok {
		d, err := parseDuration(v)
		errs = append(errs, keyErr(string(k)+".partition-idle-time", v, err))
		j.PartitionIdleTime = d
	}
	if v, ok := get("older-than"); ok {
		d, err := parseDuration(v)
		errs = append(errs, keyErr(string(k)+".older-than", v, err))
		j.OlderThan = d
	}
	return j, errors.Join(errs...)
}

func keyErr(key, v string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s=%q: %w", key, v, err)
}

func parseSize(v string) (int64, error) {
	if strings.TrimSpace(v) == "0" {
		return 0, nil
	}
	return table.ParseMemorySize(v)
}

// parseShare reads a fraction in (0,1].
func parseShare(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(f > 0 && f <= 1) {
		return 0, fmt.Errorf("want a fraction in (0,1], such as 0.25")
	}
	return f, nil
}

// parseDuration accepts Go durations ("90s", "1h30m") and Paimon's ("1 h").
func parseDuration(v string) (time.Duration, error) {
	if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("negative duration")
		}
		return d, nil
	}
	return table.ParseDuration(v)
}

func parseValue(k keyKind, v string) (string, error) {
	switch k {
	case kBool:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return "", fmt.Errorf("want true or false")
		}
		return strconv.FormatBool(b), nil
	case kSchedule:
		_, err := ParseSchedule(v)
		return v, err
	case kDuration:
		_, err := parseDuration(v)
		return v, err
	case kInt:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err == nil && n < 0 {
			err = fmt.Errorf("must not be negative")
		}
		return v, err
	case kSize:
		_, err := parseSize(v)
		return v, err
	case kShare:
		_, err := parseShare(v)
		return v, err
	}
	return v, nil
}

// ValidateValues checks a set of policy values (an override set or config
// defaults) and reports every problem at once. tableOptions, if not nil,
// are the table's own options: Paimon keys are then checked in context, by
// parsing the merged options as compaction and expiration will.
func ValidateValues(values, tableOptions map[string]string) error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := values[k]
		if d, ok := builtin[k]; ok {
			if _, err := parseValue(d.kind, v); err != nil {
				errs = append(errs, keyErr(k, v, err))
			}
			continue
		}
		if !paimonKeys[k] {
			errs = append(errs, fmt.Errorf("%s: unknown policy key (see `compactd policy keys`)", k))
		}
	}
	if k, v := "orphan.older-than", values["orphan.older-than"]; v != "" {
		if d, err := parseDuration(v); err == nil && d < time.Hour {
			errs = append(errs, fmt.Errorf("%s=%q: must be at least 1h (younger files may belong to a commit in progress)", k, v))
		}
	}
	merged := maps.Clone(tableOptions)
	if merged == nil {
		merged = map[string]string{}
	}
	hasPaimon := false
	for k, v := range values {
		if paimonKeys[k] {
			merged[k] = v
			hasPaimon = true
		}
	}
	if hasPaimon {
		// The jobs read these options through table.ParseOptions: refuse
		// what they would refuse.
		o, err := table.ParseOptions(merged)
		if err != nil {
			errs = append(errs, fmt.Errorf("table options: %w", err))
		}
		if err := o.ExpirationErr(); err != nil {
			errs = append(errs, fmt.Errorf("retention: %w", err))
		}
		if err := o.CompactionErr(); err != nil {
			errs = append(errs, fmt.Errorf("compaction: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Help describes a compactd key ("" for Paimon keys).
func Help(key string) string { return builtin[key].help }
