package planner

import (
	"bytes"
	"fmt"
	"time"
)

// File is the planner's view of one live data file (a DataFileMeta).
type File struct {
	Name     string
	Level    int
	Size     int64 // file size in bytes
	RowCount int64
	MinSeq   int64 // minSequenceNumber
	MaxSeq   int64 // maxSequenceNumber
	// MinKey and MaxKey are the encoded primary keys of the first and last
	// record; they are only compared, through View.CompareKeys.
	MinKey, MaxKey []byte
	// DeleteRowCount counts the -U/-D rows of the file; nil means unknown
	// (files written by old versions), which Paimon treats as "may contain
	// deletes".
	DeleteRowCount *int64
	// CreationTime is the file's creation time as an instant. Paimon stores
	// a zone-less local timestamp; the caller converts it the way Java's
	// DataFileMeta.creationTimeEpochMillis does (system default zone).
	CreationTime time.Time
	// HasDeletionVector reports that the file has a deletion vector in the
	// bucket's index (deletion-vector tables).
	HasDeletionVector bool
	// DeletedRows is the cardinality of the file's deletion vector; nil when
	// the file has none or the cardinality is unknown.
	DeletedRows *int64
	// DVIndexFile names the index file holding the file's deletion vector;
	// bucket-unaware append compaction groups files by it.
	DVIndexFile string
	// HasExpiredRecords reports the caller's evaluation of
	// record-level.expire-time for this file (RecordLevelExpire.isExpireFile).
	HasExpiredRecords bool
}

func (f File) String() string {
	return fmt.Sprintf("%s@L%d", f.Name, f.Level)
}

// mayContainDeletes mirrors MergeTreeCompactTask.containsDeleteRecords:
// unknown counts are treated as "yes".
func (f File) mayContainDeletes() bool {
	return f.DeleteRowCount == nil || *f.DeleteRowCount > 0
}

// BucketID names one (partition, bucket).
type BucketID struct {
	// Partition is an opaque partition identity (e.g. the partition path
	// "dt=2024-01-01/hr=3", or the BinaryRow bytes as a string). The planner
	// only compares it for equality and sorts by it.
	Partition string
	Bucket    int
}

func (b BucketID) String() string {
	if b.Partition == "" {
		return fmt.Sprintf("bucket-%d", b.Bucket)
	}
	return fmt.Sprintf("%s/bucket-%d", b.Partition, b.Bucket)
}

// BucketState is the per-bucket memory Java keeps inside a long-lived writer.
// The planner reads it from Bucket.State and returns the updated value in
// Plan.States; the caller decides whether and where to persist it.
type BucketState struct {
	// LastFullCompaction is when the bucket was last fully compacted
	// (EarlyFullCompaction.lastFullCompaction). Zero means unknown: the
	// planner then estimates it as Paimon 2.0.0 does, from the newest
	// creation time of the files at the max level.
	LastFullCompaction time.Time
	// GentleTriggers counts the picks that found nothing since the last
	// forced level-0 compaction (ForceUpLevel0Compaction.compactTriggerCount,
	// lookup-compact=gentle only).
	GentleTriggers int
}

// Bucket is the live content of one (partition, bucket).
type Bucket struct {
	Partition string
	Bucket    int
	Files     []File
	State     BucketState
}

// ID returns the bucket's identity.
func (b *Bucket) ID() BucketID { return BucketID{Partition: b.Partition, Bucket: b.Bucket} }

// CommitKind is a snapshot's commitKind.
type CommitKind string

// Commit kinds of Paimon snapshots.
const (
	CommitAppend    CommitKind = "APPEND"
	CommitCompact   CommitKind = "COMPACT"
	CommitOverwrite CommitKind = "OVERWRITE"
	CommitAnalyze   CommitKind = "ANALYZE"
)

// SnapshotInfo summarises one snapshot for the history-based triggers.
type SnapshotInfo struct {
	ID         int64
	Kind       CommitKind
	CommitTime time.Time
	// Buckets lists the buckets whose files the snapshot's delta touched.
	Buckets []BucketID
}

// History holds recent snapshots in ascending id order. It may start
// anywhere: counts derived from it are lower bounds.
type History struct {
	Snapshots []SnapshotInfo
}

// View is an immutable picture of a table's live files.
type View struct {
	Buckets []Bucket
	History History
	// CompareKeys orders MinKey/MaxKey values (the primary-key comparator).
	// Nil means bytes.Compare, which is right for keys encoded so that byte
	// order equals key order.
	CompareKeys func(a, b []byte) int
}

func (v *View) cmp() func(a, b []byte) int {
	if v.CompareKeys != nil {
		return v.CompareKeys
	}
	return bytes.Compare
}

// Inflight is a compaction job that is already running (or committed but not
// yet visible in the View). The planner never plans a job that overlaps one.
type Inflight struct {
	Partition string
	Bucket    int
	// Files are the input file names of the running job. For merge-tree and
	// bucketed append tables any running job blocks its whole bucket, as Java
	// runs one compaction per bucket at a time; for bucket-unaware append
	// tables only the named files are excluded.
	Files []string
}

// StepKind says how a step of a job treats its files.
type StepKind int

const (
	// StepUpgrade moves one file to the output level by metadata only (same
	// file name, DELETE at the old level plus ADD at the new one).
	StepUpgrade StepKind = iota
	// StepRewrite merges its sections into new files at the output level.
	StepRewrite
)

func (k StepKind) String() string {
	if k == StepUpgrade {
		return "upgrade"
	}
	return "rewrite"
}

// Section is a set of files with pairwise overlapping-connected key ranges,
// split into the minimum number of sorted runs (IntervalPartition). Each run
// is ordered by key; the order of runs carries no meaning.
type Section [][]File

// Step is one action of a job, in execution order.
type Step struct {
	Kind StepKind
	// File is the upgraded file (StepUpgrade).
	File File
	// Sections are rewritten together by one merge and one rolling writer
	// (StepRewrite), in key order.
	Sections []Section
}

// Job is one planned compaction of one bucket.
type Job struct {
	Partition string
	Bucket    int
	// Inputs are the picked files in run order (newest run first). For
	// merge-tree jobs some of them may end up untouched (already at the
	// output level and not rewritten); Steps says what happens to each.
	Inputs      []File
	OutputLevel int
	// DropDelete allows the rewrite to drop retract (-U/-D) records.
	DropDelete bool
	// Full marks a job that compacts every run of the bucket to the max
	// level (or, for append tables, a full compaction request).
	Full bool
	// FileRewrite marks the per-file rewrite of a bucket that is a single
	// max-level run (CompactStrategy.pickFullCompaction, FileRewriteCompactTask).
	FileRewrite bool
	// Reason names the trigger with the numbers that fired it.
	Reason string
	// Sections is the IntervalPartition of the inputs (merge-tree jobs only).
	Sections []Section
	// Steps is the execution detail: upgrades and rewrites in order. For
	// append jobs there is a single rewrite step with one section of one run
	// holding the inputs in rewrite order.
	Steps []Step
}

// ID returns the job's bucket.
func (j *Job) ID() BucketID { return BucketID{Partition: j.Partition, Bucket: j.Bucket} }

// Upgrades returns the files that change level without a rewrite.
func (j *Job) Upgrades() []File {
	var out []File
	for _, s := range j.Steps {
		if s.Kind == StepUpgrade {
			out = append(out, s.File)
		}
	}
	return out
}

// Rewritten returns the files that are read and rewritten.
func (j *Job) Rewritten() []File {
	var out []File
	for _, s := range j.Steps {
		if s.Kind != StepRewrite {
			continue
		}
		for _, sec := range s.Sections {
			for _, run := range sec {
				out = append(out, run...)
			}
		}
	}
	return out
}

// LooksUp reports whether the job merges level-0 records through Paimon's
// lookup (LookupMergeTreeCompactRewriter.rewriteLookupChangelog and the
// changelog upgrade strategies): a lookup-style table (opts.NeedLookup)
// compacting level-0 files into a level above 0. Every key whose records
// are all at level 0 is then looked up in the levels above OutputLevel;
// with deletion vectors the row found there is marked deleted.
func (j *Job) LooksUp(opts *Options) bool {
	if !opts.NeedLookup() || j.OutputLevel == 0 {
		return false
	}
	for _, f := range j.Inputs {
		if f.Level == 0 {
			return true
		}
	}
	return false
}

// ProducesChangelog reports whether the job writes changelog files, as
// Java's ChangelogMergeTreeRewriter decides: with
// changelog-producer=full-compaction a job to the top level (num-levels -
// 1, the option's, as Java's rewriter takes it), with lookup a job that
// looks up (LooksUp).
func (j *Job) ProducesChangelog(opts *Options) bool {
	switch opts.ChangelogProducer {
	case "full-compaction":
		return j.OutputLevel == opts.NumLevels-1
	case "lookup":
		return j.LooksUp(opts)
	}
	return false
}

// RewriteBytes is the total size of the rewritten files.
func (j *Job) RewriteBytes() int64 {
	var n int64
	for _, f := range j.Rewritten() {
		n += f.Size
	}
	return n
}

// PlanResult is the planner's output (the function Plan makes it).
type PlanResult struct {
	// Now is the time the plan was made for; Apply uses it to advance
	// BucketState.LastFullCompaction.
	Now  time.Time
	Jobs []Job
	// States holds the new BucketState of every bucket whose state changed.
	States map[BucketID]BucketState
	// Errors lists buckets that could not be planned (for example overlapping
	// files inside a level >= 1, which Paimon treats as a bug). Such buckets
	// must not be compacted until an operator looks at them.
	Errors []BucketError
}

// BucketError is a per-bucket planning failure.
type BucketError struct {
	Bucket BucketID
	Err    error
}

func (e BucketError) Error() string { return e.Bucket.String() + ": " + e.Err.Error() }
