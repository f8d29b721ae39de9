package table

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Options only compaction reads. Their values are read as compactd's
// planner always read them (surrounding spaces trimmed, true/false in any
// case); a malformed one is reported by CompactionErr, not by ParseOptions.
const (
	OptCompactionOffPeakStartHour         = "compaction.offpeak.start.hour"
	OptCompactionOffPeakEndHour           = "compaction.offpeak.end.hour"
	OptCompactionOffPeakRatio             = "compaction.offpeak-ratio"
	OptCompactionIncrementalSizeThreshold = "compaction.incremental-size-threshold"
	OptCompactionForceUpLevel0            = "compaction.force-up-level-0"
	OptLookupCompact                      = "lookup-compact"
	OptLookupCompactMaxInterval           = "lookup-compact.max-interval"
	OptChainTableEnabled                  = "chain-table.enabled"
	OptSourceSplitOpenFileCost            = "source.split.open-file-cost"
)

// compactionOnly are the typed options only compaction reads.
type compactionOnly struct {
	// CompactionOffPeakStartHour and CompactionOffPeakEndHour are
	// compaction.offpeak.start.hour and .end.hour (default -1: disabled);
	// CompactionOffPeakRatio is compaction.offpeak-ratio (default 0).
	CompactionOffPeakStartHour, CompactionOffPeakEndHour, CompactionOffPeakRatio int
	// CompactionIncrementalSizeThreshold is
	// compaction.incremental-size-threshold (nil: unset).
	CompactionIncrementalSizeThreshold *int64
	// CompactionForceUpLevel0 is compaction.force-up-level-0.
	CompactionForceUpLevel0 bool
	// LookupCompactGentle is lookup-compact=gentle (default radical).
	LookupCompactGentle bool
	// LookupCompactMaxInterval is the effective lookup-compact.max-interval:
	// default 2 × num-sorted-run.compaction-trigger, never below the trigger.
	LookupCompactMaxInterval int
	// ChainTableEnabled is chain-table.enabled.
	ChainTableEnabled bool
	// SourceSplitOpenFileCost is source.split.open-file-cost (default 4 MiB).
	SourceSplitOpenFileCost int64
	// FileFormatPerLevel is file.format.per.level ("0:avro,5:parquet"):
	// the format of the files Java writes at a level, lower case; levels
	// it does not name use FileFormat (FileFormatOfLevel).
	FileFormatPerLevel map[int]string
}

// FileFormatOfLevel is the format Java writes files of an LSM level in
// (CoreOptions.fileFormatPerLevel, else file.format).
func (o *Options) FileFormatOfLevel(level int) string {
	if f, ok := o.FileFormatPerLevel[level]; ok {
		return f
	}
	return o.FileFormat
}

// parseCompactionOnly fills the compaction-only options and returns every
// malformed value.
func (o *Options) parseCompactionOnly(raw map[string]string) error {
	var errs []error
	get := func(key string) (string, bool) {
		v, ok := raw[key]
		return strings.TrimSpace(v), ok
	}
	intOpt := func(key string, def int) (int, bool) {
		v, ok := get(key)
		if !ok {
			return def, false
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("option %s=%q: %w", key, v, err))
			return def, false
		}
		return n, true
	}
	boolOpt := func(key string) bool {
		v, ok := get(key)
		if !ok {
			return false
		}
		switch strings.ToLower(v) {
		case "true":
			return true
		case "false":
			return false
		}
		errs = append(errs, fmt.Errorf("option %s=%q: not a boolean", key, v))
		return false
	}
	sizeOpt := func(key string) *int64 {
		v, ok := get(key)
		if !ok {
			return nil
		}
		n, err := ParseMemorySize(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("option %s: %w", key, err))
			return nil
		}
		return &n
	}
	c := &o.compactionOnly
	c.CompactionOffPeakStartHour, _ = intOpt(OptCompactionOffPeakStartHour, -1)
	c.CompactionOffPeakEndHour, _ = intOpt(OptCompactionOffPeakEndHour, -1)
	c.CompactionOffPeakRatio, _ = intOpt(OptCompactionOffPeakRatio, 0)
	c.CompactionIncrementalSizeThreshold = sizeOpt(OptCompactionIncrementalSizeThreshold)
	c.CompactionForceUpLevel0 = boolOpt(OptCompactionForceUpLevel0)
	if v, ok := get(OptLookupCompact); ok {
		switch strings.ToLower(v) {
		case "radical":
		case "gentle":
			c.LookupCompactGentle = true
		default:
			errs = append(errs, fmt.Errorf("option %s=%q: want radical or gentle", OptLookupCompact, v))
		}
	}
	mi, _ := intOpt(OptLookupCompactMaxInterval, 2*o.NumSortedRunCompactionTrigger)
	c.LookupCompactMaxInterval = max(o.NumSortedRunCompactionTrigger, mi)
	c.ChainTableEnabled = boolOpt(OptChainTableEnabled)
	c.SourceSplitOpenFileCost = 4 * mib
	if n := sizeOpt(OptSourceSplitOpenFileCost); n != nil {
		c.SourceSplitOpenFileCost = *n
	}
	if v, ok := get(OptFileFormatPerLevel); ok && v != "" {
		// Java's Options map parser: comma-separated level:format pairs.
		c.FileFormatPerLevel = map[int]string{}
		for _, entry := range strings.Split(v, ",") {
			k, f, ok := strings.Cut(entry, ":")
			l, err := strconv.Atoi(strings.TrimSpace(k))
			if !ok || err != nil || strings.TrimSpace(f) == "" {
				errs = append(errs, fmt.Errorf("option %s=%q: invalid entry %q, want level:format", OptFileFormatPerLevel, v, entry))
				continue
			}
			c.FileFormatPerLevel[l] = strings.ToLower(strings.TrimSpace(f))
		}
	}
	return errors.Join(errs...)
}

// CompactionErr reports the malformed compaction-only options and every
// compaction setting compactd cannot plan with (a trigger below 1, fewer
// than two levels, a zero target-file-size, ...), all at once. The
// options ParseOptions reports are not repeated.
func (o *Options) CompactionErr() error {
	var errs []error
	if o.compactionErr != nil {
		errs = append(errs, o.compactionErr)
	}
	if o.NumSortedRunCompactionTrigger < 1 {
		errs = append(errs, fmt.Errorf("num-sorted-run.compaction-trigger must be >= 1, got %d", o.NumSortedRunCompactionTrigger))
	}
	if o.NumLevels < 2 {
		errs = append(errs, fmt.Errorf("num-levels must be >= 2, got %d", o.NumLevels))
	}
	if o.TargetFileSize != nil && *o.TargetFileSize <= 0 {
		errs = append(errs, fmt.Errorf("target-file-size must be > 0, got %d", *o.TargetFileSize))
	}
	if o.CompactionMinFileNum < 1 {
		errs = append(errs, fmt.Errorf("compaction.min.file-num must be >= 1, got %d", o.CompactionMinFileNum))
	}
	if o.CompactionSmallFileRatio < 0 {
		errs = append(errs, fmt.Errorf("compaction.small-file-ratio must be >= 0, got %v", o.CompactionSmallFileRatio))
	}
	return errors.Join(errs...)
}

// FullCompactionDeltaCommitsOrDefault is the effective
// full-compaction.delta-commits: the option, else 1 with
// changelog-producer=full-compaction, else 0 (no periodic full compaction).
func (o *Options) FullCompactionDeltaCommitsOrDefault() int {
	if o.FullCompactionDeltaCommits != nil {
		return *o.FullCompactionDeltaCommits
	}
	if o.ChangelogProducer == ChangelogFullCompaction {
		return 1
	}
	return 0
}

// CompactionFileSize is CoreOptions.compactionFileSize: files smaller than
// this are "small". Since 2.0.0 it is target-file-size ×
// compaction.small-file-ratio, truncated like Java's long cast; the option
// did not exist before (#7690) and the 1.x releases compute target/10*7 in
// integer arithmetic (93952404 instead of 93952409 bytes for 128 MiB), so
// before20 selects that rule.
func CompactionFileSize(targetFileSize int64, smallFileRatio float64, before20 bool) int64 {
	if before20 {
		return targetFileSize / 10 * 7
	}
	return int64(float64(targetFileSize) * smallFileRatio)
}
