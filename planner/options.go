package planner

import (
	"errors"
	"fmt"
	"github.com/compactd/compactd/table"
	"strconv"
	"strings"
	"time"
)

// Strategy is the compaction strategy of a planning request, as the
// dedicated compaction job's --compact_strategy.
type Strategy int

const (
	// StrategyMinor runs the table's normal triggers (writers' behaviour).
	StrategyMinor Strategy = iota
	// StrategyFull asks for a full compaction of every bucket
	// (triggerCompaction(full=true)).
	StrategyFull
)

// Behavior selects which Paimon release's picking rules to reproduce where
// releases differ.
type Behavior int

const (
	// Behavior20 reproduces release-2.0.0: the size-ratio loop stops at the
	// first run that is too large, and a forced level-0 pick starts with the
	// level-1 run when it directly follows level 0.
	Behavior20 Behavior = iota
	// BehaviorHead reproduces master after 2.0.0 (#9185): once a pick is
	// triggered the size-ratio loop keeps absorbing level-0/level-1 runs,
	// and a forced level-0 pick starts with level 0 only.
	BehaviorHead
	// Behavior14 reproduces releases 1.4.1/1.4.2: like 2.0.0, but a forced
	// level-0 pick starts with level 0 only and the time of the last full
	// compaction is unknown when no state is given (no estimate from files).
	Behavior14
	// Behavior13 reproduces the 1.3 line: as Behavior14, plus no
	// compaction.incremental-size-threshold, a total-size-threshold full
	// compaction does not restart the optimization interval, and the
	// bucketed-append window slides at target-file-size (not 2×) while an
	// append full compaction treats files >= target-file-size as large.
	Behavior13
)

// Options are the table options the planner uses, typed, with Paimon's
// defaults applied. Build them with DefaultOptions or ParseOptions.
type Options struct {
	// PrimaryKey is true for primary-key (merge-tree) tables.
	PrimaryKey bool
	// Bucket is the `bucket` option: > 0 fixed buckets, -1 dynamic (PK) or
	// bucket-unaware (append), -2 postponed (never planned). Default -1.
	Bucket int

	// NumSortedRunCompactionTrigger is num-sorted-run.compaction-trigger
	// (default 5).
	NumSortedRunCompactionTrigger int
	// NumLevels is num-levels; default trigger+1. A bucket whose files sit
	// higher uses max(NumLevels, highest level+1), as Levels does on restore.
	NumLevels int
	// MaxSizeAmplificationPercent is compaction.max-size-amplification-percent
	// (default 200).
	MaxSizeAmplificationPercent int
	// SizeRatio is compaction.size-ratio in percent (default 1).
	SizeRatio int
	// OffPeakStartHour and OffPeakEndHour are compaction.offpeak.start.hour
	// and .end.hour (default -1: disabled); OffPeakRatio is
	// compaction.offpeak-ratio (default 0). Hours are read from `now` in its
	// own location, like Java's LocalDateTime.now().
	OffPeakStartHour, OffPeakEndHour, OffPeakRatio int
	// OptimizationInterval is compaction.optimization-interval (nil: unset).
	OptimizationInterval *time.Duration
	// TotalSizeThreshold is compaction.total-size-threshold in bytes (nil: unset).
	TotalSizeThreshold *int64
	// IncrementalSizeThreshold is compaction.incremental-size-threshold in
	// bytes (nil: unset).
	IncrementalSizeThreshold *int64
	// ForceUpLevel0 is compaction.force-up-level-0 (default false).
	ForceUpLevel0 bool
	// ChangelogProducer is changelog-producer (default "none").
	ChangelogProducer string
	// MergeEngine is merge-engine (default "deduplicate").
	MergeEngine string
	// DeletionVectors is deletion-vectors.enabled (default false).
	DeletionVectors bool
	// SequenceField is true when sequence.field is set.
	SequenceField bool
	// ForceLookup is force-lookup (default false).
	ForceLookup bool
	// LookupCompactGentle is lookup-compact=gentle (default radical).
	LookupCompactGentle bool
	// LookupCompactMaxInterval is the effective lookup-compact.max-interval:
	// default 2×trigger, never below the trigger.
	LookupCompactMaxInterval int
	// FullCompactionDeltaCommits is full-compaction.delta-commits; 0 means
	// unset. It defaults to 1 with changelog-producer=full-compaction.
	FullCompactionDeltaCommits int
	// ForceRewriteAllFiles is compaction.force-rewrite-all-files (default false).
	ForceRewriteAllFiles bool
	// ChainTable is chain-table.enabled: deletes are never dropped.
	ChainTable bool
	// WriteOnly is write-only; informational, the dedicated compactor
	// ignores it just as Paimon's compaction job does.
	WriteOnly bool

	// TargetFileSize is target-file-size in bytes (default 128 MiB for
	// primary-key tables, 256 MiB for append tables).
	TargetFileSize int64
	// SmallFileRatio is compaction.small-file-ratio (default 0.7; 2.0.0 and
	// later, see CompactionFileSize).
	SmallFileRatio float64
	// MinFileNum is compaction.min.file-num (default 5; append tables).
	MinFileNum int
	// OpenFileCost is source.split.open-file-cost in bytes (default 4 MiB;
	// bucket-unaware bin packing).
	OpenFileCost int64
	// DeleteRatioThreshold is compaction.delete-ratio-threshold (default 0.2).
	DeleteRatioThreshold float64

	// Strategy is the request's strategy (not a table option).
	Strategy Strategy
	// Behavior picks the Paimon release to reproduce (not a table option).
	Behavior Behavior
}

const mib = 1 << 20

// DefaultOptions returns Paimon's defaults for a primary-key or append table.
func DefaultOptions(primaryKey bool) Options {
	o := Options{
		PrimaryKey:                    primaryKey,
		Bucket:                        -1,
		NumSortedRunCompactionTrigger: 5,
		MaxSizeAmplificationPercent:   200,
		SizeRatio:                     1,
		OffPeakStartHour:              -1,
		OffPeakEndHour:                -1,
		ChangelogProducer:             "none",
		MergeEngine:                   "deduplicate",
		SmallFileRatio:                0.7,
		MinFileNum:                    5,
		OpenFileCost:                  4 * mib,
		DeleteRatioThreshold:          0.2,
	}
	if primaryKey {
		o.TargetFileSize = 128 * mib
	} else {
		o.TargetFileSize = 256 * mib
	}
	o.derive(nil, nil)
	return o
}

// derive fills the options whose defaults depend on others.
func (o *Options) derive(numLevels, lookupMaxInterval *int) {
	if numLevels != nil {
		o.NumLevels = *numLevels
	} else {
		o.NumLevels = o.NumSortedRunCompactionTrigger + 1
	}
	mi := 2 * o.NumSortedRunCompactionTrigger
	if lookupMaxInterval != nil {
		mi = *lookupMaxInterval
	}
	o.LookupCompactMaxInterval = max(o.NumSortedRunCompactionTrigger, mi)
}

// ParseOptions types a table's options map (schema options merged with any
// dynamic overrides) and applies Paimon's defaults. Unknown keys are ignored.
// All malformed values are reported together.
func ParseOptions(m map[string]string, primaryKey bool) (Options, error) {
	o := DefaultOptions(primaryKey)
	var errs []error
	get := func(key string) (string, bool) {
		v, ok := m[key]
		return strings.TrimSpace(v), ok
	}
	intOpt := func(key string, dst *int) bool {
		v, ok := get(key)
		if !ok {
			return false
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("option %s=%q: %w", key, v, err))
			return false
		}
		*dst = n
		return true
	}
	boolOpt := func(key string, dst *bool) {
		v, ok := get(key)
		if !ok {
			return
		}
		switch strings.ToLower(v) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			errs = append(errs, fmt.Errorf("option %s=%q: not a boolean", key, v))
		}
	}
	sizeOpt := func(key string) *int64 {
		v, ok := get(key)
		if !ok {
			return nil
		}
		n, err := table.ParseMemorySize(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("option %s: %w", key, err))
			return nil
		}
		return &n
	}
	floatOpt := func(key string, dst *float64) {
		v, ok := get(key)
		if !ok {
			return
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("option %s=%q: %w", key, v, err))
			return
		}
		*dst = f
	}

	intOpt("bucket", &o.Bucket)
	intOpt("num-sorted-run.compaction-trigger", &o.NumSortedRunCompactionTrigger)
	var numLevels, lookupMax int
	hasNumLevels := intOpt("num-levels", &numLevels)
	hasLookupMax := intOpt("lookup-compact.max-interval", &lookupMax)
	intOpt("compaction.max-size-amplification-percent", &o.MaxSizeAmplificationPercent)
	intOpt("compaction.size-ratio", &o.SizeRatio)
	intOpt("compaction.offpeak.start.hour", &o.OffPeakStartHour)
	intOpt("compaction.offpeak.end.hour", &o.OffPeakEndHour)
	intOpt("compaction.offpeak-ratio", &o.OffPeakRatio)
	if v, ok := get("compaction.optimization-interval"); ok {
		d, err := table.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("option compaction.optimization-interval: %w", err))
		} else {
			o.OptimizationInterval = &d
		}
	}
	o.TotalSizeThreshold = sizeOpt("compaction.total-size-threshold")
	o.IncrementalSizeThreshold = sizeOpt("compaction.incremental-size-threshold")
	boolOpt("compaction.force-up-level-0", &o.ForceUpLevel0)
	if v, ok := get("changelog-producer"); ok {
		o.ChangelogProducer = strings.ToLower(v)
	}
	if v, ok := get("merge-engine"); ok {
		o.MergeEngine = strings.ToLower(v)
	}
	boolOpt("deletion-vectors.enabled", &o.DeletionVectors)
	if v, ok := get("sequence.field"); ok && v != "" {
		o.SequenceField = true
	}
	boolOpt("force-lookup", &o.ForceLookup)
	if v, ok := get("lookup-compact"); ok {
		switch strings.ToLower(v) {
		case "radical":
			o.LookupCompactGentle = false
		case "gentle":
			o.LookupCompactGentle = true
		default:
			errs = append(errs, fmt.Errorf("option lookup-compact=%q: want radical or gentle", v))
		}
	}
	if !intOpt("full-compaction.delta-commits", &o.FullCompactionDeltaCommits) &&
		o.ChangelogProducer == "full-compaction" {
		o.FullCompactionDeltaCommits = 1
	}
	boolOpt("compaction.force-rewrite-all-files", &o.ForceRewriteAllFiles)
	boolOpt("chain-table.enabled", &o.ChainTable)
	if _, ok := m["write-only"]; ok {
		boolOpt("write-only", &o.WriteOnly)
	} else {
		boolOpt("write.compaction-skip", &o.WriteOnly)
	}
	if n := sizeOpt("target-file-size"); n != nil {
		o.TargetFileSize = *n
	}
	floatOpt("compaction.small-file-ratio", &o.SmallFileRatio)
	intOpt("compaction.min.file-num", &o.MinFileNum)
	if n := sizeOpt("source.split.open-file-cost"); n != nil {
		o.OpenFileCost = *n
	}
	floatOpt("compaction.delete-ratio-threshold", &o.DeleteRatioThreshold)

	var nl, lm *int
	if hasNumLevels {
		nl = &numLevels
	}
	if hasLookupMax {
		lm = &lookupMax
	}
	o.derive(nl, lm)
	if err := o.Validate(); err != nil {
		errs = append(errs, err)
	}
	return o, errors.Join(errs...)
}

// Validate reports every inconsistent setting at once.
func (o *Options) Validate() error {
	var errs []error
	if o.NumSortedRunCompactionTrigger < 1 {
		errs = append(errs, fmt.Errorf("num-sorted-run.compaction-trigger must be >= 1, got %d", o.NumSortedRunCompactionTrigger))
	}
	if o.NumLevels < 2 {
		errs = append(errs, fmt.Errorf("num-levels must be >= 2, got %d", o.NumLevels))
	}
	if o.TargetFileSize <= 0 {
		errs = append(errs, fmt.Errorf("target-file-size must be > 0, got %d", o.TargetFileSize))
	}
	if o.MinFileNum < 1 {
		errs = append(errs, fmt.Errorf("compaction.min.file-num must be >= 1, got %d", o.MinFileNum))
	}
	if o.SmallFileRatio < 0 {
		errs = append(errs, fmt.Errorf("compaction.small-file-ratio must be >= 0, got %v", o.SmallFileRatio))
	}
	return errors.Join(errs...)
}

// NeedLookup mirrors CoreOptions.needLookup: lookup changelog, deletion
// vectors, first-row or force-lookup make every compaction push level 0 up.
func (o *Options) NeedLookup() bool {
	return o.ChangelogProducer == "lookup" || o.DeletionVectors ||
		o.MergeEngine == "first-row" || o.ForceLookup
}

// rewritesLevel0Upgrade mirrors LookupMergeTreeCompactRewriter.upgradeStrategy
// for what the planner sees: a lookup-style table moves a level-0 file to a
// level below the top by rewriting it through the lookup merge, since keys a
// higher level holds must be merged with it (or, for first-row, dropped),
// except for deduplicate without sequence.field, where the newest record
// wins anyway. With deletion vectors a level-0 file that may hold deletes
// is rewritten at any level. Java also rewrites when file.format.per.level
// gives level 0 and the output level different formats, and for
// primary-key vector indexes; neither case is modelled here.
func (o *Options) rewritesLevel0Upgrade(f File, outputLevel, maxLevel int) bool {
	if !o.NeedLookup() || f.Level != 0 {
		return false
	}
	if o.DeletionVectors && f.mayContainDeletes() {
		return true
	}
	if outputLevel == maxLevel {
		return false
	}
	return !(o.MergeEngine == "deduplicate" && !o.SequenceField)
}

// CompactionFileSize is CoreOptions.compactionFileSize: files smaller than
// this are "small". Since 2.0.0 it is target-file-size ×
// compaction.small-file-ratio, truncated like Java's long cast; the option
// did not exist before (#7690) and 1.x computes target/10*7 in integer
// arithmetic (93952404 instead of 93952409 bytes for 128 MiB).
func (o *Options) CompactionFileSize() int64 {
	if o.Behavior == Behavior14 || o.Behavior == Behavior13 {
		return o.TargetFileSize / 10 * 7
	}
	return int64(float64(o.TargetFileSize) * o.SmallFileRatio)
}

// offPeakRatio mirrors OffPeakHours.currentRatio; the window is disabled if
// either hour is -1 or both are equal.
func (o *Options) offPeakRatio(now time.Time) int {
	s, e := o.OffPeakStartHour, o.OffPeakEndHour
	if s == -1 || e == -1 || s == e {
		return 0
	}
	h := now.Hour()
	var in bool
	if s <= e {
		in = s <= h && h < e
	} else {
		in = h < e || s <= h
	}
	if in {
		return o.OffPeakRatio
	}
	return 0
}
