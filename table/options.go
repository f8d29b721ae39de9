package table

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Option keys compactd reads. Defaults are those of Java CoreOptions at
// release 2.0.0.
const (
	OptBucket                                = "bucket"
	OptBucketKey                             = "bucket-key"
	OptFileFormat                            = "file.format"
	OptManifestFormat                        = "manifest.format"
	OptManifestCompression                   = "manifest.compression"
	OptFileCompression                       = "file.compression"
	OptFileCompressionZstdLevel              = "file.compression.zstd-level"
	OptTargetFileSize                        = "target-file-size"
	OptNumSortedRunCompactionTrigger         = "num-sorted-run.compaction-trigger"
	OptNumSortedRunStopTrigger               = "num-sorted-run.stop-trigger"
	OptNumLevels                             = "num-levels"
	OptCompactionMaxSizeAmplification        = "compaction.max-size-amplification-percent"
	OptCompactionSizeRatio                   = "compaction.size-ratio"
	OptCompactionMinFileNum                  = "compaction.min.file-num"
	OptCompactionSmallFileRatio              = "compaction.small-file-ratio"
	OptCompactionDeleteRatioThreshold        = "compaction.delete-ratio-threshold"
	OptCompactionForceRewriteAllFiles        = "compaction.force-rewrite-all-files"
	OptCompactionTotalSizeThreshold          = "compaction.total-size-threshold"
	OptCompactionOptimizationInterval        = "compaction.optimization-interval"
	OptFullCompactionDeltaCommits            = "full-compaction.delta-commits"
	OptMergeEngine                           = "merge-engine"
	OptSequenceField                         = "sequence.field"
	OptSequenceFieldSortOrder                = "sequence.field.sort-order"
	OptWriteOnly                             = "write-only"
	OptWriteSequenceNumberInitMode           = "write.sequence-number-init-mode"
	OptDeletionVectorsEnabled                = "deletion-vectors.enabled"
	OptDeletionVectorsBitmap64               = "deletion-vectors.bitmap64"
	OptChangelogProducer                     = "changelog-producer"
	OptPartitionDefaultName                  = "partition.default-name"
	OptPartitionLegacyName                   = "partition.legacy-name"
	OptSnapshotNumRetainedMin                = "snapshot.num-retained.min"
	OptSnapshotNumRetainedMax                = "snapshot.num-retained.max"
	OptSnapshotTimeRetained                  = "snapshot.time-retained"
	OptSnapshotExpireLimit                   = "snapshot.expire.limit"
	OptSnapshotCleanEmptyDirectories         = "snapshot.clean-empty-directories"
	OptChangelogNumRetainedMin               = "changelog.num-retained.min"
	OptChangelogNumRetainedMax               = "changelog.num-retained.max"
	OptChangelogTimeRetained                 = "changelog.time-retained"
	OptManifestTargetFileSize                = "manifest.target-file-size"
	OptManifestMergeMinCount                 = "manifest.merge-min-count"
	OptManifestFullCompactionThreshold       = "manifest.full-compaction-threshold-size"
	OptManifestDeleteFileDropStats           = "manifest.delete-file-drop-stats"
	OptDataFilePathDirectory                 = "data-file.path-directory"
	OptDataFilePrefix                        = "data-file.prefix"
	OptChangelogFilePrefix                   = "changelog-file.prefix"
	OptChangelogFileFormat                   = "changelog-file.format"
	OptChangelogFileCompression              = "changelog-file.compression"
	OptFileSuffixIncludeCompression          = "file.suffix.include.compression"
	OptIndexFileInDataFileDir                = "index-file-in-data-file-dir"
	OptDataFileExternalPaths                 = "data-file.external-paths"
	OptGlobalIndexExternalPath               = "global-index.external-path"
	OptCommitMaxRetries                      = "commit.max-retries"
	OptCommitTimeout                         = "commit.timeout"
	OptCommitMinRetryWait                    = "commit.min-retry-wait"
	OptCommitMaxRetryWait                    = "commit.max-retry-wait"
	OptCommitUserPrefix                      = "commit.user-prefix"
	OptIgnoreDelete                          = "ignore-delete"
	OptPartialUpdateRemoveRecordOnDel        = "partial-update.remove-record-on-delete"
	OptRowTrackingEnabled                    = "row-tracking.enabled"
	OptDataEvolutionEnabled                  = "data-evolution.enabled"
	OptConsumerExpirationTime                = "consumer.expiration-time"
	OptFileIndexInManifestThreshold          = "file-index.in-manifest-threshold"
	OptDynamicBucketTargetRowNum             = "dynamic-bucket.target-row-num"
	OptForceLookup                           = "force-lookup"
	OptDeletionVectorsMergeOnRead            = "deletion-vectors.merge-on-read"
	OptFileFormatPerLevel                    = "file.format.per.level"
	OptFileCompressionPerLevel               = "file.compression.per.level"
	OptAvroCodec                             = "avro.codec"
	defaultPartitionName                     = "__DEFAULT_PARTITION__"
	mib                                int64 = 1 << 20
)

// Special bucket numbers.
const (
	BucketDynamic  = -1 // PK: dynamic bucket; append: unaware (files in bucket 0)
	BucketPostpone = -2
)

// MergeEngine is the option merge-engine.
type MergeEngine string

const (
	MergeDeduplicate   MergeEngine = "deduplicate"
	MergePartialUpdate MergeEngine = "partial-update"
	MergeAggregation   MergeEngine = "aggregation"
	MergeFirstRow      MergeEngine = "first-row"
)

// ChangelogProducer is the option changelog-producer.
type ChangelogProducer string

const (
	ChangelogNone           ChangelogProducer = "none"
	ChangelogInput          ChangelogProducer = "input"
	ChangelogFullCompaction ChangelogProducer = "full-compaction"
	ChangelogLookup         ChangelogProducer = "lookup"
)

// SortOrder is the option sequence.field.sort-order.
type SortOrder string

const (
	SortAscending  SortOrder = "ascending"
	SortDescending SortOrder = "descending"
)

// Options is a typed view over a table's options with Paimon's defaults
// filled in. Raw keeps every option as stored in the schema (after the
// schema-version compatibility rules).
type Options struct {
	Raw map[string]string

	Bucket                   int
	BucketKey                []string // nil when unset
	FileFormat               string   // lower case
	ManifestFormat           string   // lower case
	ManifestCompression      string
	FileCompression          string
	FileCompressionZstdLevel int
	// TargetFileSize is the explicit target-file-size; use
	// TargetFileSizeFor for the effective value.
	TargetFileSize *int64

	NumSortedRunCompactionTrigger  int
	NumSortedRunStopTrigger        int // derived: max(trigger, explicit or trigger+3)
	NumLevels                      int // derived: explicit or trigger+1
	CompactionMaxSizeAmplification int
	CompactionSizeRatio            int
	CompactionMinFileNum           int
	CompactionSmallFileRatio       float64
	CompactionDeleteRatioThreshold float64
	CompactionForceRewriteAllFiles bool
	CompactionTotalSizeThreshold   *int64
	CompactionOptimizationInterval *time.Duration
	FullCompactionDeltaCommits     *int

	MergeEngine                       MergeEngine
	SequenceField                     []string
	SequenceFieldSortOrder            SortOrder
	IgnoreDelete                      bool
	PartialUpdateRemoveRecordOnDelete bool
	ForceLookup                       bool
	WriteOnly                         bool
	// SequenceFromSnapshot is write.sequence-number-init-mode=snapshot
	// (Paimon 2.0): writers start their sequence numbers from the latest
	// snapshot's sequence.generation.max-sequence-number property, which
	// every commit, a compaction's too, must therefore carry forward.
	SequenceFromSnapshot       bool
	DeletionVectorsEnabled     bool
	DeletionVectorsBitmap64    bool
	DeletionVectorsMergeOnRead bool
	ChangelogProducer          ChangelogProducer
	RowTrackingEnabled         bool
	DataEvolutionEnabled       bool

	PartitionDefaultName string
	PartitionLegacyName  bool

	SnapshotNumRetainedMin        int
	SnapshotNumRetainedMax        int
	SnapshotTimeRetained          time.Duration
	SnapshotExpireLimit           int
	SnapshotCleanEmptyDirectories bool
	// Changelog retention falls back to the snapshot values when unset.
	ChangelogNumRetainedMin int
	ChangelogNumRetainedMax int
	ChangelogTimeRetained   time.Duration
	ConsumerExpirationTime  *time.Duration

	ManifestTargetFileSize          int64
	ManifestMergeMinCount           int
	ManifestFullCompactionThreshold int64
	ManifestDeleteFileDropStats     bool

	DataFilePathDirectory        string // "" when unset
	DataFilePrefix               string
	ChangelogFilePrefix          string
	ChangelogFileFormat          string // "" when unset (then FileFormat)
	ChangelogFileCompression     string // "" when unset (then FileCompression)
	FileSuffixIncludeCompression bool
	IndexFileInDataFileDir       bool
	DataFileExternalPaths        string
	// GlobalIndexExternalPath is global-index.external-path: where Java
	// 1.4 writes new index files (deletion vectors of bucketed tables
	// included) instead of index/; "" when unset.
	GlobalIndexExternalPath      string
	FileIndexInManifestThreshold int64
	DynamicBucketTargetRowNum    int64

	CommitMaxRetries   int
	CommitTimeout      *time.Duration
	CommitMinRetryWait time.Duration
	CommitMaxRetryWait time.Duration
	CommitUserPrefix   string

	// Options only one job reads (options_compaction.go,
	// options_expiration.go, options_partition.go). A malformed value of
	// one of them does not fail ParseOptions, so a table stays readable
	// and expirable when, say, only its compaction options are wrong;
	// the job's error method reports it.
	compactionOnly
	expirationOnly
	partitionExpiration PartitionExpiration
	compactionErr       error
	expirationErr       error
	partitionErr        error
}

// TargetFileSizeFor is the effective target-file-size: the option, else
// 128 MiB for primary-key tables and 256 MiB for append tables.
func (o *Options) TargetFileSizeFor(hasPrimaryKey bool) int64 {
	if o.TargetFileSize != nil {
		return *o.TargetFileSize
	}
	if hasPrimaryKey {
		return 128 * mib
	}
	return 256 * mib
}

// MaxLevel is the highest LSM level (num-levels − 1).
func (o *Options) MaxLevel() int { return o.NumLevels - 1 }

// ChangelogLifecycleDecoupled reports whether changelog retention outlives
// snapshot retention (then expired snapshots leave changelog/ files).
func (o *Options) ChangelogLifecycleDecoupled() bool {
	return o.ChangelogNumRetainedMax > o.SnapshotNumRetainedMax ||
		o.ChangelogTimeRetained > o.SnapshotTimeRetained ||
		o.ChangelogNumRetainedMin > o.SnapshotNumRetainedMin
}

// Get returns a raw option.
func (o *Options) Get(key string) (string, bool) {
	v, ok := o.Raw[key]
	return v, ok
}

// ParseOptions builds the typed view. A malformed value of any option
// listed above is an error naming the key, as Java fails on such a table;
// every malformed value is reported at once. The options are returned
// also with an error, each malformed value replaced by its default, so
// that a caller can report the errors of the job-only options too.
//
// This is the one parser of every Paimon option compactd reads: the
// planner, the merge engines, expiration, partition expiry and the policy
// validation take their values from it.
func ParseOptions(raw map[string]string) (*Options, error) {
	p := optParser{raw: raw}
	o := &Options{Raw: raw}
	o.Bucket = p.int(OptBucket, -1)
	if v, ok := p.get(OptBucketKey); ok && strings.TrimSpace(v) != "" {
		o.BucketKey = javaSplit(v, ",")
	}
	o.FileFormat = strings.ToLower(p.str(OptFileFormat, "parquet"))
	o.ManifestFormat = strings.ToLower(p.str(OptManifestFormat, "avro"))
	o.ManifestCompression = p.str(OptManifestCompression, "zstd")
	o.FileCompression = p.str(OptFileCompression, "zstd")
	o.FileCompressionZstdLevel = p.int(OptFileCompressionZstdLevel, 1)
	o.TargetFileSize = p.optMemory(OptTargetFileSize)

	o.NumSortedRunCompactionTrigger = p.int(OptNumSortedRunCompactionTrigger, 5)
	stop := addSafely(o.NumSortedRunCompactionTrigger, 3)
	if v := p.optInt(OptNumSortedRunStopTrigger); v != nil {
		stop = *v
	}
	o.NumSortedRunStopTrigger = max(o.NumSortedRunCompactionTrigger, stop)
	o.NumLevels = addSafely(o.NumSortedRunCompactionTrigger, 1)
	if v := p.optInt(OptNumLevels); v != nil {
		o.NumLevels = *v
	}
	o.CompactionMaxSizeAmplification = p.int(OptCompactionMaxSizeAmplification, 200)
	o.CompactionSizeRatio = p.int(OptCompactionSizeRatio, 1)
	o.CompactionMinFileNum = p.int(OptCompactionMinFileNum, 5)
	o.CompactionSmallFileRatio = p.float(OptCompactionSmallFileRatio, 0.7)
	o.CompactionDeleteRatioThreshold = p.float(OptCompactionDeleteRatioThreshold, 0.2)
	o.CompactionForceRewriteAllFiles = p.bool(OptCompactionForceRewriteAllFiles, false)
	o.CompactionTotalSizeThreshold = p.optMemory(OptCompactionTotalSizeThreshold)
	o.CompactionOptimizationInterval = p.optDuration(OptCompactionOptimizationInterval)
	o.FullCompactionDeltaCommits = p.optInt(OptFullCompactionDeltaCommits)

	o.MergeEngine = MergeEngine(p.enum(OptMergeEngine, string(MergeDeduplicate),
		string(MergeDeduplicate), string(MergePartialUpdate), string(MergeAggregation), string(MergeFirstRow)))
	if v, ok := p.get(OptSequenceField); ok {
		for _, f := range javaSplit(v, ",") {
			o.SequenceField = append(o.SequenceField, strings.TrimSpace(f))
		}
	}
	o.SequenceFieldSortOrder = SortOrder(p.enum(OptSequenceFieldSortOrder, string(SortAscending),
		string(SortAscending), string(SortDescending)))
	o.IgnoreDelete = p.bool(OptIgnoreDelete, false,
		"first-row.ignore-delete", "deduplicate.ignore-delete", "partial-update.ignore-delete")
	o.PartialUpdateRemoveRecordOnDelete = p.bool(OptPartialUpdateRemoveRecordOnDel, false)
	o.ForceLookup = p.bool(OptForceLookup, false)
	o.WriteOnly = p.bool(OptWriteOnly, false, "write.compaction-skip")
	o.SequenceFromSnapshot = p.enum(OptWriteSequenceNumberInitMode, "scan", "scan", "snapshot") == "snapshot"
	o.DeletionVectorsEnabled = p.bool(OptDeletionVectorsEnabled, false)
	o.DeletionVectorsBitmap64 = p.bool(OptDeletionVectorsBitmap64, false)
	o.DeletionVectorsMergeOnRead = p.bool(OptDeletionVectorsMergeOnRead, false)
	o.ChangelogProducer = ChangelogProducer(p.enum(OptChangelogProducer, string(ChangelogNone),
		string(ChangelogNone), string(ChangelogInput), string(ChangelogFullCompaction), string(ChangelogLookup)))
	o.RowTrackingEnabled = p.bool(OptRowTrackingEnabled, false)
	o.DataEvolutionEnabled = p.bool(OptDataEvolutionEnabled, false)

	o.PartitionDefaultName = p.str(OptPartitionDefaultName, defaultPartitionName)
	o.PartitionLegacyName = p.bool(OptPartitionLegacyName, true)

	o.SnapshotNumRetainedMin = p.int(OptSnapshotNumRetainedMin, 10)
	o.SnapshotNumRetainedMax = p.int(OptSnapshotNumRetainedMax, math.MaxInt32)
	o.SnapshotTimeRetained = p.duration(OptSnapshotTimeRetained, time.Hour)
	o.SnapshotExpireLimit = p.int(OptSnapshotExpireLimit, 50)
	o.SnapshotCleanEmptyDirectories = p.bool(OptSnapshotCleanEmptyDirectories, false,
		"snapshot.expire.clean-empty-directories")
	o.ChangelogNumRetainedMin = p.int(OptChangelogNumRetainedMin, o.SnapshotNumRetainedMin)
	o.ChangelogNumRetainedMax = p.int(OptChangelogNumRetainedMax, o.SnapshotNumRetainedMax)
	o.ChangelogTimeRetained = p.duration(OptChangelogTimeRetained, o.SnapshotTimeRetained)
	o.ConsumerExpirationTime = p.optDuration(OptConsumerExpirationTime)

	o.ManifestTargetFileSize = p.memory(OptManifestTargetFileSize, 8*mib)
	o.ManifestMergeMinCount = p.int(OptManifestMergeMinCount, 30)
	o.ManifestFullCompactionThreshold = p.memory(OptManifestFullCompactionThreshold, 16*mib)
	o.ManifestDeleteFileDropStats = p.bool(OptManifestDeleteFileDropStats, false)

	o.DataFilePathDirectory = p.str(OptDataFilePathDirectory, "")
	o.DataFilePrefix = p.str(OptDataFilePrefix, "data-")
	o.ChangelogFilePrefix = p.str(OptChangelogFilePrefix, "changelog-")
	o.ChangelogFileFormat = strings.ToLower(p.str(OptChangelogFileFormat, ""))
	o.ChangelogFileCompression = p.str(OptChangelogFileCompression, "")
	o.FileSuffixIncludeCompression = p.bool(OptFileSuffixIncludeCompression, false)
	o.IndexFileInDataFileDir = p.bool(OptIndexFileInDataFileDir, false)
	o.DataFileExternalPaths = p.str(OptDataFileExternalPaths, "")
	o.GlobalIndexExternalPath = p.str(OptGlobalIndexExternalPath, "")
	o.FileIndexInManifestThreshold = p.memory(OptFileIndexInManifestThreshold, 500)
	o.DynamicBucketTargetRowNum = p.int64(OptDynamicBucketTargetRowNum, 2_000_000)

	o.CommitMaxRetries = p.int(OptCommitMaxRetries, 10)
	o.CommitTimeout = p.optDuration(OptCommitTimeout)
	o.CommitMinRetryWait = p.duration(OptCommitMinRetryWait, 10*time.Millisecond)
	o.CommitMaxRetryWait = p.duration(OptCommitMaxRetryWait, 10*time.Second)
	o.CommitUserPrefix = p.str(OptCommitUserPrefix, "")

	o.compactionErr = o.parseCompactionOnly(raw)
	o.expirationErr = o.parseExpirationOnly(raw)
	o.partitionExpiration, o.partitionErr = ParsePartitionExpiration(raw)
	return o, errors.Join(p.errs...)
}

// javaSplit is Java's String.split with a literal separator: trailing
// empty strings are dropped ("a,b," → [a b]), except that a string without
// the separator is returned whole ("" → [""]).
func javaSplit(s, sep string) []string {
	if !strings.Contains(s, sep) {
		return []string{s}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func addSafely(a, b int) int {
	if a > math.MaxInt32-b {
		return math.MaxInt32
	}
	return a + b
}

// optParser reads options with Java's conversions and remembers every
// error.
type optParser struct {
	raw  map[string]string
	errs []error
}

func (p *optParser) get(key string, fallback ...string) (string, bool) {
	if v, ok := p.raw[key]; ok {
		return v, true
	}
	for _, k := range fallback {
		if v, ok := p.raw[k]; ok {
			return v, true
		}
	}
	return "", false
}

func (p *optParser) fail(key, v string, err error) {
	p.errs = append(p.errs, fmt.Errorf("option %s=%q: %w", key, v, err))
}

func (p *optParser) str(key, def string) string {
	if v, ok := p.get(key); ok {
		return v
	}
	return def
}

// Java's Integer.parseInt: optional sign, decimal digits, no spaces.
func (p *optParser) optInt(key string) *int {
	v, ok := p.get(key)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		p.fail(key, v, fmt.Errorf("not an int"))
		return nil
	}
	i := int(n)
	return &i
}

func (p *optParser) int(key string, def int) int {
	if v := p.optInt(key); v != nil {
		return *v
	}
	return def
}

func (p *optParser) int64(key string, def int64) int64 {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		p.fail(key, v, fmt.Errorf("not a long"))
		return def
	}
	return n
}

func (p *optParser) float(key string, def float64) float64 {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		p.fail(key, v, fmt.Errorf("not a number"))
		return def
	}
	return f
}

func (p *optParser) bool(key string, def bool, fallback ...string) bool {
	v, ok := p.get(key, fallback...)
	if !ok {
		return def
	}
	switch strings.ToUpper(v) {
	case "TRUE":
		return true
	case "FALSE":
		return false
	}
	p.fail(key, v, fmt.Errorf("expected true or false"))
	return def
}

// enum matches Java's convertToEnum: the value compared case-insensitively
// with each constant's string form.
func (p *optParser) enum(key, def string, allowed ...string) string {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	for _, a := range allowed {
		if strings.EqualFold(a, v) {
			return a
		}
	}
	p.fail(key, v, fmt.Errorf("expected one of %v", allowed))
	return def
}

func (p *optParser) optMemory(key string) *int64 {
	v, ok := p.get(key)
	if !ok {
		return nil
	}
	n, err := ParseMemorySize(v)
	if err != nil {
		p.fail(key, v, err)
		return nil
	}
	return &n
}

func (p *optParser) memory(key string, def int64) int64 {
	if v := p.optMemory(key); v != nil {
		return *v
	}
	return def
}

func (p *optParser) optDuration(key string) *time.Duration {
	v, ok := p.get(key)
	if !ok {
		return nil
	}
	d, err := ParseDuration(v)
	if err != nil {
		p.fail(key, v, err)
		return nil
	}
	return &d
}

func (p *optParser) duration(key string, def time.Duration) time.Duration {
	if v := p.optDuration(key); v != nil {
		return *v
	}
	return def
}

// splitNumberUnit splits "128 mb" into 128 and "mb" as Paimon does: leading
// ASCII digits (no sign), then the trimmed, lower-cased rest.
func splitNumberUnit(text string) (int64, string, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return 0, "", fmt.Errorf("empty value")
	}
	pos := 0
	for pos < len(t) && t[pos] >= '0' && t[pos] <= '9' {
		pos++
	}
	if pos == 0 {
		return 0, "", fmt.Errorf("%q does not start with a number", text)
	}
	n, err := strconv.ParseInt(t[:pos], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%q: numeric overflow", text)
	}
	return n, strings.ToLower(strings.TrimSpace(t[pos:])), nil
}

// ParseMemorySize parses a size as Paimon's MemorySize.parseBytes: a
// non-negative integer and an optional unit b/bytes, k/kb/kibibytes,
// m/mb/mebibytes, g/gb/gibibytes, t/tb/tebibytes (all powers of 1024).
func ParseMemorySize(text string) (int64, error) {
	n, unit, err := splitNumberUnit(text)
	if err != nil {
		return 0, err
	}
	var mult int64
	switch unit {
	case "", "b", "bytes":
		mult = 1
	case "k", "kb", "kibibytes":
		mult = 1 << 10
	case "m", "mb", "mebibytes":
		mult = 1 << 20
	case "g", "gb", "gibibytes":
		mult = 1 << 30
	case "t", "tb", "tebibytes":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("memory size unit %q not recognised", unit)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q: numeric overflow", text)
	}
	return n * mult, nil
}

// ParseDuration parses a duration as Paimon's TimeUtils.parseDuration: a
// non-negative integer and an optional unit (default milliseconds):
// d/day/days, h/hour/hours, min/m/minute/minutes, s/sec/secs/second/seconds,
// ms/milli/millis/millisecond/milliseconds, µs/micro/micros/microsecond/
// microseconds, ns/nano/nanos/nanosecond/nanoseconds.
func ParseDuration(text string) (time.Duration, error) {
	n, unit, err := splitNumberUnit(text)
	if err != nil {
		return 0, err
	}
	var u time.Duration
	switch unit {
	case "":
		u = time.Millisecond
	case "d", "day", "days":
		u = 24 * time.Hour
	case "h", "hour", "hours":
		u = time.Hour
	case "min", "m", "minute", "minutes":
		u = time.Minute
	case "s", "sec", "secs", "second", "seconds":
		u = time.Second
	case "ms", "milli", "millis", "millisecond", "milliseconds":
		u = time.Millisecond
	case "µs", "micro", "micros", "microsecond", "microseconds":
		u = time.Microsecond
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		u = time.Nanosecond
	default:
		return 0, fmt.Errorf("time unit %q not recognised", unit)
	}
	if n > math.MaxInt64/int64(u) {
		return 0, fmt.Errorf("%q: out of range", text)
	}
	return time.Duration(n) * u, nil
}
