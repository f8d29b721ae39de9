package planner

import (
	"errors"
	"slices"
	"time"

	"github.com/compactd/compactd/table"
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
// defaults applied. Build them with FromTable, DefaultOptions or ParseOptions; the
// parsing and the defaults are table.ParseOptions'.
type Options struct {
	// PrimaryKey is true for primary-key (merge-tree) tables.
	PrimaryKey bool
	// Bucket is the `bucket` option: > 0 fixed buckets, -1 dynamic (PK) or
	// bucket-unaware (append), -2 postponed (its real buckets are planned as
	// fixed ones; bucket-postpone itself never is). Default -1.
	Bucket int

	// NumSortedRunCompactionTrigger is num-sorted-run.compaction-trigger
	// (default 5).
	NumSortedRunCompactionTrigger int
	// NumSortedRunStopTrigger is num-sorted-run.stop-trigger (default the
	// compaction trigger + 3, never under it): the sorted runs of a bucket
	// at which Java's writers stop writing until compaction catches up.
	// The planner does not plan by it; it is the backlog's yardstick.
	NumSortedRunStopTrigger int
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
	// FileFormat is file.format (lower case) and LevelFormats its
	// per-level overrides (file.format.per.level): Java's lookup rewriter
	// rewrites a level-0 file it moves to a level of another format
	// instead of relabelling it.
	FileFormat   string
	LevelFormats map[int]string
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

// DefaultOptions returns Paimon's defaults for a primary-key or append table
// (table.ParseOptions of no options).
func DefaultOptions(primaryKey bool) Options {
	t, _ := table.ParseOptions(nil)
	return FromTable(t, primaryKey)
}

// ParseOptions types a table's options map (schema options merged with any
// dynamic overrides) through table.ParseOptions, which holds every option's
// parser and default. Unknown keys are ignored. All malformed values are
// reported together, with every setting the planner cannot plan with.
func ParseOptions(m map[string]string, primaryKey bool) (Options, error) {
	t, err := table.ParseOptions(m)
	return FromTable(t, primaryKey), errors.Join(err, t.CompactionErr())
}

// FromTable takes the planner's options from a table's typed options
// (Strategy and Behavior are left at their zero values). It does not check
// them: table.Options.CompactionErr does.
func FromTable(t *table.Options, primaryKey bool) Options {
	o := Options{
		PrimaryKey:                    primaryKey,
		Bucket:                        t.Bucket,
		NumSortedRunCompactionTrigger: t.NumSortedRunCompactionTrigger,
		NumSortedRunStopTrigger:       t.NumSortedRunStopTrigger,
		NumLevels:                     t.NumLevels,
		MaxSizeAmplificationPercent:   t.CompactionMaxSizeAmplification,
		SizeRatio:                     t.CompactionSizeRatio,
		OffPeakStartHour:              t.CompactionOffPeakStartHour,
		OffPeakEndHour:                t.CompactionOffPeakEndHour,
		OffPeakRatio:                  t.CompactionOffPeakRatio,
		OptimizationInterval:          t.CompactionOptimizationInterval,
		TotalSizeThreshold:            t.CompactionTotalSizeThreshold,
		IncrementalSizeThreshold:      t.CompactionIncrementalSizeThreshold,
		ForceUpLevel0:                 t.CompactionForceUpLevel0,
		ChangelogProducer:             string(t.ChangelogProducer),
		MergeEngine:                   string(t.MergeEngine),
		DeletionVectors:               t.DeletionVectorsEnabled,
		FileFormat:                    t.FileFormat,
		LevelFormats:                  t.FileFormatPerLevel,
		SequenceField:                 slices.ContainsFunc(t.SequenceField, func(f string) bool { return f != "" }),
		ForceLookup:                   t.ForceLookup,
		LookupCompactGentle:           t.LookupCompactGentle,
		LookupCompactMaxInterval:      t.LookupCompactMaxInterval,
		FullCompactionDeltaCommits:    t.FullCompactionDeltaCommitsOrDefault(),
		ForceRewriteAllFiles:          t.CompactionForceRewriteAllFiles,
		ChainTable:                    t.ChainTableEnabled,
		WriteOnly:                     t.WriteOnly,
		TargetFileSize:                t.TargetFileSizeFor(primaryKey),
		SmallFileRatio:                t.CompactionSmallFileRatio,
		MinFileNum:                    t.CompactionMinFileNum,
		OpenFileCost:                  t.SourceSplitOpenFileCost,
		DeleteRatioThreshold:          t.CompactionDeleteRatioThreshold,
	}
	return o
}

// NeedLookup mirrors CoreOptions.needLookup: lookup changelog, deletion
// vectors, first-row or force-lookup make every compaction push level 0 up.
func (o *Options) NeedLookup() bool {
	return o.ChangelogProducer == "lookup" || o.DeletionVectors ||
		o.MergeEngine == "first-row" || o.ForceLookup
}

// formatsDiffer reports whether files of levels a and b have different
// formats (file.format.per.level; levels it does not name have the
// table's file.format).
func (o *Options) formatsDiffer(a, b int) bool {
	if len(o.LevelFormats) == 0 {
		return false
	}
	of := func(l int) string {
		if f, ok := o.LevelFormats[l]; ok {
			return f
		}
		return o.FileFormat
	}
	return of(a) != of(b)
}

// rewritesLevel0Upgrade mirrors LookupMergeTreeCompactRewriter.upgradeStrategy
// for what the planner sees: a lookup-style table moves a level-0 file to a
// level below the top by rewriting it through the lookup merge, since keys a
// higher level holds must be merged with it (or, for first-row, dropped),
// except for deduplicate without sequence.field, where the newest record
// wins anyway. With deletion vectors a level-0 file that may hold deletes
// is rewritten at any level, and so is one whose format
// (file.format.per.level) differs from the output level's. Java also
// rewrites for primary-key vector indexes, which compactd refuses.
func (o *Options) rewritesLevel0Upgrade(f File, outputLevel, maxLevel int) bool {
	if !o.NeedLookup() || f.Level != 0 {
		return false
	}
	if o.formatsDiffer(0, outputLevel) {
		return true
	}
	if o.DeletionVectors && f.mayContainDeletes() {
		return true
	}
	if outputLevel == maxLevel {
		return false
	}
	return !(o.MergeEngine == "deduplicate" && !o.SequenceField)
}

// CompactionFileSize is CoreOptions.compactionFileSize for the Paimon
// release the planner reproduces (table.CompactionFileSize: 1.x and 2.x
// differ).
func (o *Options) CompactionFileSize() int64 {
	return table.CompactionFileSize(o.TargetFileSize, o.SmallFileRatio, o.Behavior == Behavior14 || o.Behavior == Behavior13)
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
