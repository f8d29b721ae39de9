package compact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/sourcegraph/conc/pool"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/planner"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// Options configure one compaction run of a table.
type Options struct {
	// Full forces a full compaction of every selected bucket.
	Full bool
	// Partition, if not empty, restricts the run to the partition whose
	// path is given ("dt=2024-01-01/hr=3").
	Partition string
	// Bucket, if not nil, restricts the run to one bucket number.
	Bucket *int
	// PartitionIdleTime, if positive, restricts the run to the partitions
	// without new files for that long (planner.IdlePartitions, judged on
	// all of a partition's buckets whatever else is selected): Paimon's
	// compact action with partition_idle_time.
	PartitionIdleTime time.Duration
	// Buckets, if not nil, restricts the run to the bucket numbers it
	// covers (in every partition): a daemon fleet's compaction unit, so
	// that units of one table touch disjoint buckets.
	Buckets *BucketRange
	// DryRun plans without writing anything.
	DryRun bool
	// PlanOnly tells PlanTable that its caller only reads the plan and the
	// view and never executes it (`plan`, the daemon's observation): the
	// file set's manifest entries are let go before planning (they were
	// the largest part of a plan's live heap, docs/perf.md), so the
	// returned view finds no entry (TableView.Entry) and its FileSet keeps
	// only the files of bucket-postpone, which PostponedOf counts.
	PlanOnly bool
	// CommitUser identifies this compactd process in snapshots; empty means
	// a fresh UUID per run.
	CommitUser string
	// Parallelism bounds the buckets compacted at once (default 2).
	Parallelism int
	// TargetFileSize overrides target-file-size (tests, benchmarks).
	TargetFileSize int64
	// Overrides are table options applied over the table's own (policy).
	Overrides map[string]string
	// MaxRebases bounds how often the run re-plans after conflicts (default 3).
	MaxRebases int
	// Progress, if set, is called after each job finishes.
	Progress func(done, total int, r *JobResult)
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// BeforeCommit, if set, runs after all jobs are executed and before the
	// first commit attempt, and before the commit of postponed rows (tests
	// interleave concurrent writers here).
	BeforeCommit func()

	// MaxBuckets, if positive, bounds the bucket jobs executed per round;
	// MaxBytes, if positive, bounds the input bytes of those jobs (the job
	// with the most input files always runs). Jobs with more input files go
	// first; the rest wait for the next run (the daemon's policy limits).
	MaxBuckets int
	MaxBytes   int64
	// TimeBudget, if positive, stops starting bucket jobs once that much time
	// has passed since Run began; jobs already running finish and commit,
	// the others are left for the next run.
	TimeBudget time.Duration
	// RowPath merges record by record instead of in column batches (the
	// batch path's reference in tests and benchmarks; same output).
	RowPath bool
}

// BucketRange is the bucket numbers From ≤ b < To; To ≤ 0 means no upper
// bound (so a table's last range also covers the higher buckets of
// partitions written before a rescale).
type BucketRange struct {
	From, To int
}

// Contains says whether bucket b is in the range.
func (r BucketRange) Contains(b int) bool {
	return b >= r.From && (r.To <= 0 || b < r.To)
}

// String is "[From,To)" or "[From,∞)".
func (r BucketRange) String() string {
	if r.To <= 0 {
		return fmt.Sprintf("[%d,∞)", r.From)
	}
	return fmt.Sprintf("[%d,%d)", r.From, r.To)
}

// Summary reports a run.
type Summary struct {
	Table     string
	Plan      planner.PlanResult
	Snapshot  int64 // the COMPACT snapshot, 0 if nothing was committed
	Jobs      []*JobResult
	Abandoned int // jobs dropped because a concurrent change removed their inputs
	// Commits counts what the run's commits met of concurrent writers.
	Commits  CommitStats
	Buckets  int
	FilesIn  int
	FilesOut int
	// FilesUpgraded are files moved to a higher level without being
	// rewritten (their metadata changes, their bytes do not).
	FilesUpgraded int
	RowsIn        int64
	RowsOut       int64
	BytesIn       int64
	BytesOut      int64
	// ChangelogFiles and ChangelogRows count the changelog the commit
	// added (changelog-producer=lookup or full-compaction).
	ChangelogFiles int
	ChangelogRows  int64
	// Postponed is what waited in bucket-postpone (bucket = -2 tables) and
	// what of it the run moved to real buckets.
	Postponed Postponed
	Duration  time.Duration
}

// CommitStats counts what a run's commits met of concurrent writers.
type CommitStats struct {
	// Rebases are commit attempts made again on a newer latest snapshot:
	// another writer took the snapshot id first (or an attempt's outcome
	// was unknown and it did not land).
	Rebases int
	// Conflicts are commits refused because a concurrent change touched
	// the compaction's inputs; the jobs concerned are abandoned.
	Conflicts int
}

// commitCounting returns an OnAttempt for one table.Commit call that
// counts its attempts after the first in st.Rebases.
func commitCounting(st *CommitStats) func(int64) {
	first := true
	return func(int64) {
		if !first {
			st.Rebases++
		}
		first = false
	}
}

// Supported reports why compactd refuses to compact a table, before
// anything is read or written; nil if it can.
//
// Every refusal names the table and the option or column, and happens
// before compaction reads a data file: a table whose schema Java would
// reject (bucket=0), whose data compactd cannot read (VECTOR columns) or
// whose compaction Java does more for (rebuilding primary-key indexes,
// deletion vectors, changelogs) is left exactly as it is.
func Supported(t *table.Table, overrides map[string]string) error {
	// A table compactd reads but cannot write (an unwritable manifest codec) is refused
	// before anything is planned or read; its FileIO would refuse the
	// first write anyway.
	if err := t.Writable(); err != nil {
		return err
	}
	o := t.Options()
	if o.Bucket == 0 || o.Bucket < table.BucketPostpone {
		return fmt.Errorf("table %s: invalid bucket=%d: Paimon requires bucket > 0, -1 (dynamic) or -2 (postponed; primary-key tables), and Java rejects this schema", t.FullName(), o.Bucket)
	}
	if key, v, ok := primaryKeyIndexOption(mergeOptions(t.Schema().EffectiveOptions(), overrides)); ok {
		return fmt.Errorf("table %s: not supported yet: %s=%s (a primary-key secondary index, which Java rebuilds when it compacts; compactd would leave it stale)", t.FullName(), key, v)
	}
	for _, f := range t.Schema().Fields {
		if f.Type.Has(table.TypeVector) {
			return fmt.Errorf("table %s: not supported yet: column %s of type %s (compactd cannot read VECTOR data yet)", t.FullName(), f.Name, f.Type)
		}
	}
	if o.DeletionVectorsEnabled {
		if err := deletionVectorsSupported(t, overrides); err != nil {
			return err
		}
	}
	if err := changelogSupported(t, overrides); err != nil {
		return err
	}
	if o.Bucket == table.BucketPostpone {
		if err := postponedSupported(t, overrides); err != nil {
			return err
		}
	}
	if err := dynamicBucketSupported(t); err != nil {
		return err
	}
	if o.RowTrackingEnabled || o.DataEvolutionEnabled {
		return fmt.Errorf("table %s: not supported yet: row-tracking / data-evolution tables", t.FullName())
	}
	if !writable(o.FileFormat) {
		// Avro data files are read (scan, inspect), but compaction output
		// would have to be Avro too: a table's files follow file.format.
		return fmt.Errorf("table %s: not supported: file.format=%s (compactd reads Avro data files but writes Parquet and ORC only)", t.FullName(), o.FileFormat)
	}
	// Writer options (ORC's orc.* keys, the table's column types in ORC)
	// are checked before anything is written, not at the first file.
	if err := datafile.CheckWriter(t.Schema().Fields, mergeOptions(t.Schema().EffectiveOptions(), overrides)); err != nil {
		return fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	if err := outputFormatsSupported(t, overrides); err != nil {
		return err
	}
	if t.HasPrimaryKey() {
		s := t.Schema()
		if err := merge.Validate(mergeOptions(s.EffectiveOptions(), overrides), s.Fields, s.PrimaryKeys, s.PartitionKeys...); err != nil {
			return fmt.Errorf("table %s: %w", t.FullName(), err)
		}
	}
	return nil
}

// changelogSupported refuses the changelog-producing tables compactd does
// not compact: those Java's schema validation rejects (full-compaction
// with deletion vectors or first-row), full-compaction with force-lookup
// (Java then merges through LookupMergeFunction under the full-compaction
// rewriter, which compactd does not reproduce), and changelog files in a
// format other than Parquet and ORC.
func changelogSupported(t *table.Table, overrides map[string]string) error {
	opts := mergeOptions(t.Schema().EffectiveOptions(), overrides)
	o, err := optionsWith(t, overrides)
	if err != nil {
		return err
	}
	p := o.ChangelogProducer
	if p != table.ChangelogLookup && p != table.ChangelogFullCompaction {
		return nil
	}
	if p == table.ChangelogFullCompaction {
		switch {
		case o.DeletionVectorsEnabled:
			return fmt.Errorf("table %s: invalid: changelog-producer=full-compaction with deletion-vectors.enabled=true (Java rejects this schema: deletion vectors allow only the none, input and lookup producers)", t.FullName())
		case o.MergeEngine == table.MergeFirstRow:
			return fmt.Errorf("table %s: invalid: changelog-producer=full-compaction with merge-engine first-row (Java rejects this schema: first-row allows only the none and lookup producers)", t.FullName())
		case o.ForceLookup:
			return fmt.Errorf("table %s: not supported yet: changelog-producer=full-compaction with force-lookup=true", t.FullName())
		}
	}
	if !t.HasPrimaryKey() {
		return fmt.Errorf("table %s: invalid: changelog-producer=%s on a table without primary key (Java rejects this schema)", t.FullName(), p)
	}
	for level := 1; level < max(o.NumLevels, 2); level++ {
		co, err := write.ChangelogFileOptions(opts, level)
		if err != nil {
			return fmt.Errorf("table %s: not supported: %w", t.FullName(), err)
		}
		// The changelog roller writes co's format under the name the path
		// factory gives (changelog-file.format, else file.format): both
		// must agree, and be a format compactd writes.
		named := o.ChangelogFileFormat
		if named == "" {
			named = o.FileFormat
		}
		if f := co[table.OptFileFormat]; !writable(f) || formatName(f) != formatName(named) {
			return fmt.Errorf("table %s: not supported: changelog files of level %d would be %s (changelog-file.format, file.format.per.level) named %s: compactd writes changelog files in Parquet or ORC, in the format of their name", t.FullName(), level, formatName(f), formatName(named))
		}
	}
	return nil
}

// deletionVectorsSupported refuses the deletion-vector tables compactd does
// not compact: append tables (Java keeps their vectors per file group,
// combined by file name with DELETE entries, which compactd does not
// write), first-row tables (Java's schema validation rejects them with
// deletion vectors: first-row never deletes old rows), and
// pk-clustering-override, the one mode where Java allows that combination.
// Primary-key tables of the other engines are compacted as Java's
// LookupMergeTreeCompactRewriter does.
func deletionVectorsSupported(t *table.Table, overrides map[string]string) error {
	if !t.HasPrimaryKey() {
		return fmt.Errorf("table %s: not supported yet: deletion-vectors.enabled=true on an append table (compaction would have to maintain its per-file deletion-vector index)", t.FullName())
	}
	opts := mergeOptions(t.Schema().EffectiveOptions(), overrides)
	if v := strings.ToLower(strings.TrimSpace(opts["pk-clustering-override"])); v != "" && v != "false" {
		return fmt.Errorf("table %s: not supported yet: pk-clustering-override=%s with deletion vectors", t.FullName(), opts["pk-clustering-override"])
	}
	if strings.ToLower(strings.TrimSpace(opts[merge.OptMergeEngine])) == merge.EngineFirstRow {
		return fmt.Errorf("table %s: invalid: deletion-vectors.enabled=true with merge-engine first-row (Java rejects this schema: first-row never deletes old rows)", t.FullName())
	}
	return nil
}

// dynamicBucketSupported refuses the dynamic-bucket primary-key tables
// compactd does not compact: cross-partition-update tables (bucket=-1 with
// a primary key that lacks a partition key), whose buckets Java assigns
// through a global key index (KEY_DYNAMIC, GlobalIndexAssigner) that a
// compaction would have to keep consistent across partitions.
//
// The other dynamic-bucket tables (HASH_DYNAMIC) are compacted bucket by
// bucket like fixed-bucket ones. Their HASH index files (one per partition
// and bucket: the key hashes Java's HashBucketAssigner routes by) are only
// ever written by writers; a compaction moves no key between buckets, so
// compactd neither reads nor rewrites them and the COMPACT snapshot keeps
// every HASH entry of the index manifest as it is, as Java's dedicated
// compaction does (its DynamicBucketIndexMaintainer writes nothing when no
// record was added).
func dynamicBucketSupported(t *table.Table) error {
	s := t.Schema()
	if !s.HasPrimaryKey() || t.Options().Bucket != table.BucketDynamic || !s.CrossPartitionUpdate() {
		return nil
	}
	return fmt.Errorf("table %s: not supported: bucket=-1 with primary key %v not containing partition keys %v "+
		"(a cross-partition-update table: Java assigns its buckets through a global key index, KEY_DYNAMIC mode, which compactd does not maintain)",
		t.FullName(), s.PrimaryKeys, s.PartitionKeys)
}

// primaryKeyIndexOption returns the first (by key) option defining a
// primary-key secondary index: pk-<family>.index.columns, as Java's
// CoreOptions names them for the btree, bitmap, multivalue, vector and
// full-text families (any family, so that a new one is refused too). Java
// builds the index when the key is present, whatever its value.
func primaryKeyIndexOption(opts map[string]string) (key, value string, ok bool) {
	for k, v := range opts {
		if strings.HasPrefix(k, "pk-") && strings.HasSuffix(k, ".index.columns") && (!ok || k < key) {
			key, value, ok = k, v, true
		}
	}
	return key, value, ok
}

func isParquet(f string) bool { return f == "" || f == "parquet" }

// writable reports whether compactd writes data files of format f.
func writable(f string) bool { return isParquet(f) || formatName(f) == "orc" }

func formatName(f string) string {
	f = strings.ToLower(strings.TrimSpace(f))
	if f == "" {
		return "parquet"
	}
	return f
}

// outputFormatsSupported refuses a table whose file.format.per.level gives
// a level compactd may write (1..num-levels-1: a compaction never outputs
// level 0) a format other than the table's file.format: Java writes that
// level's files in that format, compactd writes the table's (Parquet or
// ORC). Level-0 overrides (Java's writers write Avro there, say) are fine:
// compactd reads Parquet, Avro and ORC input files. An unparsable
// per-level option is refused too, as Java's writers would fail on it.
func outputFormatsSupported(t *table.Table, overrides map[string]string) error {
	opts := mergeOptions(t.Schema().EffectiveOptions(), overrides)
	if strings.TrimSpace(opts[table.OptFileFormatPerLevel]) == "" {
		return nil
	}
	o, err := optionsWith(t, overrides)
	if err != nil {
		return err
	}
	numLevels := o.NumLevels
	// Level 0 is only read: Parquet, Avro and ORC files compactd reads.
	l0, err := datafile.OptionsForLevel(opts, 0)
	if err != nil {
		return fmt.Errorf("table %s: not supported: %w", t.FullName(), err)
	}
	if f := strings.ToLower(strings.TrimSpace(l0[table.OptFileFormat])); f != "avro" && !writable(f) {
		return fmt.Errorf("table %s: not supported: %s=%s makes level-0 files %s (compactd reads Parquet, Avro and ORC data files)",
			t.FullName(), table.OptFileFormatPerLevel, opts[table.OptFileFormatPerLevel], f)
	}
	for level := 1; level < numLevels; level++ {
		lo, err := datafile.OptionsForLevel(opts, level)
		if err != nil {
			return fmt.Errorf("table %s: not supported: %w", t.FullName(), err)
		}
		if f := lo[table.OptFileFormat]; formatName(f) != formatName(o.FileFormat) {
			return fmt.Errorf("table %s: not supported: %s=%s makes level-%d files %s (compactd writes the table's file.format=%s only)",
				t.FullName(), table.OptFileFormatPerLevel, opts[table.OptFileFormatPerLevel], level, formatName(f), formatName(o.FileFormat))
		}
	}
	return nil
}

// optionsWith is t's parsed options with the compaction's overrides.
func optionsWith(t *table.Table, overrides map[string]string) (*table.Options, error) {
	if len(overrides) == 0 {
		return t.Options(), nil
	}
	o, err := table.ParseOptions(mergeOptions(t.Schema().EffectiveOptions(), overrides))
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	return o, nil
}

func mergeOptions(base, over map[string]string) map[string]string {
	if len(over) == 0 {
		return base
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// PlannerOptions are the planner's options for a table.
func PlannerOptions(t *table.Table, o Options) (planner.Options, error) {
	popts, err := planner.ParseOptions(mergeOptions(t.Schema().EffectiveOptions(), o.Overrides), t.HasPrimaryKey())
	if err != nil {
		return planner.Options{}, fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	if o.Full {
		popts.Strategy = planner.StrategyFull
	}
	return popts, nil
}

// PlanTable loads the latest snapshot and plans it, restricted to the
// selected partition and bucket.
func PlanTable(ctx context.Context, t *table.Table, o Options, now time.Time) (*TableView, planner.PlanResult, planner.Options, error) {
	popts, err := PlannerOptions(t, o)
	if err != nil {
		return nil, planner.PlanResult{}, popts, err
	}
	history := 0
	if popts.FullCompactionDeltaCommits > 0 {
		history = max(100, 4*popts.FullCompactionDeltaCommits)
	}
	v, err := LoadView(ctx, t, history)
	if err != nil {
		return nil, planner.PlanResult{}, popts, err
	}
	if err := checkSelection(t, v, o); err != nil {
		return nil, planner.PlanResult{}, popts, err
	}
	if o.PlanOnly {
		v.dropEntries()
	}
	var idle map[string]bool
	if o.PartitionIdleTime > 0 {
		// Before any other selection: idleness is the whole partition's.
		idle = map[string]bool{}
		for _, p := range planner.IdlePartitions(v.View, o.PartitionIdleTime, now) {
			idle[p] = true
		}
	}
	if o.Partition != "" || o.Bucket != nil || o.Buckets != nil || idle != nil || t.Options().Bucket == table.BucketPostpone {
		kept := v.View.Buckets[:0:0]
		for _, b := range v.View.Buckets {
			if b.Bucket == table.BucketPostpone {
				continue
			}
			if idle != nil && !idle[b.Partition] {
				continue
			}
			if o.Partition != "" && v.PartitionPath[b.Partition] != o.Partition {
				continue
			}
			if o.Bucket != nil && b.Bucket != *o.Bucket {
				continue
			}
			if o.Buckets != nil && !o.Buckets.Contains(b.Bucket) {
				continue
			}
			kept = append(kept, b)
		}
		v.View.Buckets = kept
	}
	return v, planner.Plan(v.View, nil, popts, now), popts, nil
}

// checkSelection refuses a partition or bucket selection that names
// nothing in the table: a run that silently compacts nothing because of a
// typo would look like a table with nothing to compact.
func checkSelection(t *table.Table, v *TableView, o Options) error {
	if o.Partition != "" {
		keys := t.Schema().PartitionKeys
		if len(keys) == 0 {
			return fmt.Errorf("table %s is not partitioned: no partition %s", t.FullName(), o.Partition)
		}
		parts := strings.Split(o.Partition, "/")
		for _, p := range parts {
			k, _, ok := strings.Cut(p, "=")
			if !ok {
				return fmt.Errorf("table %s: partition %q: want key=value for each of %s", t.FullName(), o.Partition, strings.Join(keys, ", "))
			}
			if !slices.Contains(keys, k) {
				return fmt.Errorf("table %s: partition %q: %s is not a partition key (the keys are %s)", t.FullName(), o.Partition, k, strings.Join(keys, ", "))
			}
		}
		if len(parts) != len(keys) {
			return fmt.Errorf("table %s: partition %q: give every partition key, in order: %s", t.FullName(), o.Partition, strings.Join(keys, ", "))
		}
		found := false
		for _, path := range v.PartitionPath {
			if path == o.Partition {
				found = true
				break
			}
		}
		if !found {
			var some []string
			for _, path := range v.PartitionPath {
				some = append(some, path)
			}
			slices.Sort(some)
			if len(some) > 5 {
				some = append(some[:5], "…")
			}
			return fmt.Errorf("table %s has no partition %s (its %d partitions: %s)", t.FullName(), o.Partition, len(v.PartitionPath), strings.Join(some, ", "))
		}
	}
	if o.Bucket != nil {
		b := *o.Bucket
		if n := t.Options().Bucket; n > 0 && b >= 0 && b < n {
			return nil
		}
		for _, vb := range v.View.Buckets {
			if vb.Bucket == b && (o.Partition == "" || v.PartitionPath[vb.Partition] == o.Partition) {
				return nil
			}
		}
		if n := t.Options().Bucket; n > 0 {
			return fmt.Errorf("table %s has no bucket %d (bucket = %d)", t.FullName(), b, n)
		}
		return fmt.Errorf("table %s has no bucket %d with live files", t.FullName(), b)
	}
	return nil
}

// Run plans and executes a compaction of t and commits it as one COMPACT
// snapshot. Concurrent writers may commit meanwhile: the commit rebases onto
// their snapshots, and a job whose inputs a concurrent change removed is
// abandoned (its files deleted) and the table re-planned.
func Run(ctx context.Context, t *table.Table, o Options) (*Summary, error) {
	start := time.Now()
	now := o.Now
	if now == nil {
		now = time.Now
	}
	err := Supported(t, o.Overrides)
	if err != nil {
		return nil, err
	}
	if o.CommitUser == "" {
		o.CommitUser = "compactd-" + uuid.NewString()
	}
	if o.MaxRebases <= 0 {
		o.MaxRebases = 3
	}
	sum := &Summary{Table: t.FullName()}
	defer func() { sum.Duration = time.Since(start) }()
	if t.Options().Bucket == table.BucketPostpone {
		if sum.Postponed, err = assignPostponed(ctx, t, o, now, &sum.Commits); err != nil {
			return sum, err
		}
		sum.Snapshot = sum.Postponed.Snapshot
	}
	for round := 0; ; round++ {
		v, plan, _, err := PlanTable(ctx, t, o, now())
		if err != nil {
			return sum, err
		}
		sum.Plan = plan
		for _, e := range plan.Errors {
			slog.Error("bucket cannot be planned", "table", t.FullName(), "bucket", e.Bucket.String(), "err", e.Err)
		}
		if o.DryRun || len(plan.Jobs) == 0 {
			return sum, nil
		}
		jobs := limitJobs(plan.Jobs, o.MaxBuckets, o.MaxBytes)
		// The commit's store probe (S3) runs while the jobs do.
		t.PrepareCommit(ctx)
		var deadline time.Time
		if o.TimeBudget > 0 {
			deadline = start.Add(o.TimeBudget)
		}
		results, err := execute(ctx, t, v, jobs, o, now, deadline)
		if err != nil {
			return sum, err
		}
		if len(results) == 0 {
			return sum, nil
		}
		if o.BeforeCommit != nil {
			o.BeforeCommit()
		}
		snap, kept, err := commitResults(ctx, t, v.FileSet, results, o, &sum.Commits)
		if err != nil {
			return sum, err
		}
		sum.Abandoned += len(results) - len(kept)
		if snap != nil {
			sum.Snapshot = snap.ID
			sum.Jobs = append(sum.Jobs, kept...)
			for _, r := range kept {
				sum.Buckets++
				sum.FilesIn += r.FilesIn
				sum.FilesOut += r.FilesOut
				sum.FilesUpgraded += len(r.Job.Upgrades())
				sum.RowsIn += r.RowsIn
				sum.RowsOut += r.RowsOut
				sum.BytesIn += r.BytesIn
				sum.BytesOut += r.BytesOut
				sum.ChangelogFiles += len(r.Changelog)
				sum.ChangelogRows += r.ChangelogRows
			}
		}
		if len(kept) == len(results) || round+1 >= o.MaxRebases {
			return sum, nil
		}
		slog.Info("re-planning after a concurrent change", "table", t.FullName(), "abandoned", len(results)-len(kept))
	}
}

// limitJobs keeps the jobs a run may execute under the policy limits,
// preferring the buckets with the most input files.
func limitJobs(jobs []planner.Job, maxBuckets int, maxBytes int64) []planner.Job {
	if maxBuckets <= 0 && maxBytes <= 0 {
		return jobs
	}
	sorted := slices.Clone(jobs)
	slices.SortStableFunc(sorted, func(a, b planner.Job) int { return len(b.Inputs) - len(a.Inputs) })
	var out []planner.Job
	var bytes int64
	for _, j := range sorted {
		if maxBuckets > 0 && len(out) >= maxBuckets {
			break
		}
		var n int64
		for _, f := range j.Inputs {
			n += f.Size
		}
		if maxBytes > 0 && len(out) > 0 && bytes+n > maxBytes {
			continue
		}
		out = append(out, j)
		bytes += n
	}
	return out
}

// newExecutor prepares the executor of t's jobs over the view v.
func newExecutor(ctx context.Context, t *table.Table, v *TableView, o Options, now func() time.Time) (*executor, error) {
	if v.planOnly {
		return nil, fmt.Errorf("table %s: internal error: a plan-only view (Options.PlanOnly) has no manifest entries to compact", t.FullName())
	}
	x := &executor{t: t, view: v, targetSize: o.TargetFileSize, now: now}
	s := t.Schema()
	x.read = datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
	if s.HasPrimaryKey() {
		eng, err := merge.NewEngine(mergeOptions(s.EffectiveOptions(), o.Overrides), s.Fields, s.PrimaryKeys, s.PartitionKeys...)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t.FullName(), err)
		}
		x.eng = eng
		popts, err := PlannerOptions(t, o)
		if err != nil {
			return nil, err
		}
		x.lookupTable, x.dvTable = popts.NeedLookup(), popts.DeletionVectors
		switch p := table.ChangelogProducer(popts.ChangelogProducer); p {
		case table.ChangelogLookup, table.ChangelogFullCompaction:
			x.changelog = p
			x.maxLevel = popts.NumLevels - 1
			if x.equal, err = merge.ChangelogEqualiser(mergeOptions(s.EffectiveOptions(), o.Overrides), s.Fields); err != nil {
				return nil, fmt.Errorf("table %s: %w", t.FullName(), err)
			}
		}
		if !o.RowPath {
			codec, err := scan.BatchCodec(eng, x.read)
			if err != nil {
				slog.Info("compacting record by record", "table", t.FullName(), "reason", err)
			}
			x.codec = codec
		}
	} else if !o.RowPath {
		codec, err := datafile.NewCodec(x.read.Fields)
		if err != nil {
			slog.Info("compacting record by record", "table", t.FullName(), "reason", err)
		}
		x.rowCodec = codec
	}
	if err := x.loadSchemas(ctx); err != nil {
		return nil, err
	}
	return x, nil
}

func execute(ctx context.Context, t *table.Table, v *TableView, jobs []planner.Job, o Options, now func() time.Time, deadline time.Time) ([]*JobResult, error) {
	x, err := newExecutor(ctx, t, v, o, now)
	if err != nil {
		return nil, err
	}
	par := o.Parallelism
	if par <= 0 {
		par = 2
	}
	results := make([]*JobResult, len(jobs))
	var mu sync.Mutex
	done := 0
	// The first job to fail cancels the others; their "context canceled"
	// is a consequence, not the failure. The pool cancels only after a
	// job's function returned, so the first error recorded here is the
	// failure (or the caller's cancellation), and it alone is returned.
	var failure error
	p := pool.New().WithContext(ctx).WithMaxGoroutines(par).WithCancelOnError()
	for i := range jobs {
		p.Go(func(jctx context.Context) error {
			if !deadline.IsZero() && time.Now().After(deadline) {
				return nil // out of time budget: left for the next run
			}
			r, err := x.run(jctx, jobs[i])
			if err != nil {
				err = fmt.Errorf("compact %s %s: %w", t.FullName(), jobLabel(v, jobs[i]), err)
				mu.Lock()
				if failure == nil {
					failure = err
				}
				mu.Unlock()
				return err
			}
			mu.Lock()
			results[i] = r
			done++
			if o.Progress != nil {
				o.Progress(done, len(jobs), r)
			}
			mu.Unlock()
			return nil
		})
	}
	if err := p.Wait(); err != nil {
		for _, r := range results {
			if r != nil {
				t.DeleteUnreferenced(r.Written)
			}
		}
		if failure != nil {
			return nil, failure
		}
		return nil, err
	}
	return slices.DeleteFunc(results, func(r *JobResult) bool { return r == nil }), nil
}

// commitResults commits the jobs' entries and index changes as one COMPACT
// snapshot. On a conflict it drops the jobs whose inputs are no longer live
// or whose bucket's deletion vectors a concurrent commit changed (their
// vectors would overwrite that commit's), deletes their files, and commits
// the rest. planned is the file set the jobs were planned from: while it is
// still the latest snapshot's, the commit does not read it again.
func commitResults(ctx context.Context, t *table.Table, planned *table.FileSet, results []*JobResult, o Options, st *CommitStats) (*table.Snapshot, []*JobResult, error) {
	kept := results
	for attempt := 0; ; attempt++ {
		var entries, changelog []manifest.Entry
		var index []table.IndexChange
		for _, r := range kept {
			entries = append(entries, r.Entries...)
			index = append(index, r.IndexChanges...)
			changelog = append(changelog, r.Changelog...)
		}
		if len(entries) == 0 && len(index) == 0 && len(changelog) == 0 {
			return nil, nil, nil
		}
		res, err := t.Commit(ctx, table.CommitRequest{
			Kind: table.CommitCompact, CommitUser: o.CommitUser, CommitIdentifier: table.BatchCommitIdentifier,
			Entries: entries, IndexChanges: index, Changelog: changelog,
			Planned:   planned,
			OnAttempt: commitCounting(st),
		})
		if err == nil {
			return res.Snapshot, kept, nil
		}
		var conflict *table.ConflictError
		if errors.As(err, &conflict) {
			st.Conflicts++
		}
		if !errors.As(err, &conflict) || attempt >= 3 {
			// Outputs are deleted only when the snapshot surely was not
			// published (Commit says so by not wrapping
			// ErrCommitOutcomeUnknown); after an unknown outcome they may be
			// referenced.
			if !errors.Is(err, table.ErrCommitOutcomeUnknown) {
				for _, r := range kept {
					t.DeleteUnreferenced(r.Written)
				}
			}
			return nil, nil, err
		}
		slog.Warn("compaction commit conflicts, dropping jobs whose inputs changed", "table", t.FullName(), "err", err)
		latest, lerr := latestState(ctx, t)
		if lerr != nil {
			// Nothing of this attempt was published (a conflict is
			// definite), so the outputs go.
			for _, r := range kept {
				t.DeleteUnreferenced(r.Written)
			}
			return nil, nil, lerr
		}
		var next []*JobResult
		for _, r := range kept {
			if why := latest.stale(r); why != "" {
				slog.Info("dropping compaction job", "table", t.FullName(), "bucket", r.Job.Bucket, "reason", why)
				t.DeleteUnreferenced(r.Written)
			} else {
				next = append(next, r)
			}
		}
		if len(next) == len(kept) {
			// Nothing to drop: the conflict is not about our inputs.
			for _, r := range kept {
				t.DeleteUnreferenced(r.Written)
			}
			return nil, nil, err
		}
		kept = next
	}
}

// tableState is what a job's result is checked against after a conflict:
// the latest snapshot's live files and index entries.
type tableState struct {
	live  map[manifest.FileIdentifier]bool
	names map[bucketFile]bool
	index []manifest.IndexEntry
}

type bucketFile struct {
	partition string
	bucket    int32
	name      string
}

func latestState(ctx context.Context, t *table.Table) (*tableState, error) {
	latest, err := t.LatestSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	adds, _, _, err := t.LiveEntries(ctx, latest)
	if err != nil {
		return nil, err
	}
	st := &tableState{live: make(map[manifest.FileIdentifier]bool, len(adds)), names: make(map[bucketFile]bool, len(adds))}
	for i := range adds {
		st.live[adds[i].Identifier()] = true
		st.names[bucketFile{string(adds[i].Partition), adds[i].Bucket, adds[i].File.FileName}] = true
	}
	if st.index, err = t.IndexEntries(ctx, latest); err != nil {
		return nil, err
	}
	return st, nil
}

// stale says why r can no longer be committed on top of st ("" if it can):
// an input is gone, its bucket's index files changed, or a deletion vector
// it writes names a data file that is gone.
func (st *tableState) stale(r *JobResult) string {
	for i := range r.Entries {
		e := &r.Entries[i]
		if e.Kind == manifest.FileKindDelete && !st.live[e.Identifier()] {
			return fmt.Sprintf("input %s is no longer live", e.File.FileName)
		}
	}
	for i := range r.IndexChanges {
		c := &r.IndexChanges[i]
		if err := table.CheckIndexBase(st.index, c); err != nil {
			return err.Error()
		}
		added := map[string]bool{}
		for j := range r.Entries {
			if r.Entries[j].Kind == manifest.FileKindAdd {
				added[r.Entries[j].File.FileName] = true
			}
		}
		for _, f := range c.Files {
			for _, dv := range f.DeletionVectors {
				if !added[dv.DataFileName] && !st.names[bucketFile{string(c.Partition), c.Bucket, dv.DataFileName}] {
					return fmt.Sprintf("data file %s with a deletion vector is no longer live", dv.DataFileName)
				}
			}
		}
	}
	return ""
}

// AddIndexChange records an index change of the job and the index file
// written for it: the change is committed with the job's entries, and the
// file is deleted with the job's other outputs if it is not. A nil change
// (nothing changed) records nothing.
func (r *JobResult) AddIndexChange(c *table.IndexChange, path string) {
	if c == nil {
		return
	}
	r.IndexChanges = append(r.IndexChanges, *c)
	if path != "" {
		r.Written = append(r.Written, path)
	}
}

func isNoSnapshot(err error) bool { return errors.Is(err, table.ErrNoSnapshot) }

func isNotExist(err error) bool { return errors.Is(err, fileio.ErrNotExist) }

// jobLabel names a job's bucket for humans: the planner identifies
// partitions by their BinaryRow bytes.
func jobLabel(v *TableView, j planner.Job) string {
	if p := v.PartitionPath[j.Partition]; p != "" {
		return fmt.Sprintf("partition %s bucket %d", p, j.Bucket)
	}
	return fmt.Sprintf("bucket %d", j.Bucket)
}
