package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Row is one row in canonical form, keyed by column name.
type Row = map[string]any

// Timeout bounds one oracle process.
var Timeout = 15 * time.Minute

// Dir is the directory of this package's sources (…/interop), from which the built artifacts
// are found whatever package's test calls in.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "interop"
	}
	return filepath.Dir(file)
}

// VenvDir is where install.sh puts the pypaimon virtualenv: $COMPACTD_VENV, else
// ~/.cache/compactd/venv.
func VenvDir() string {
	if v := os.Getenv("COMPACTD_VENV"); v != "" {
		return v
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "compactd-venv")
	}
	return filepath.Join(home, ".cache", "compactd", "venv")
}

const missingHint = "run `make interop-deps` (interop/install.sh) to build the interop oracles"

// JavaOracle runs the Java Paimon CLI.
type JavaOracle struct {
	tb        testing.TB
	classpath string
	target    string // the build directory (classes, classpath.txt, classpath-rest.txt)
	// catalogOptions, when set, go to every warehouse verb as --catalog-options.
	catalogOptions map[string]string
}

// WithCatalogOptions returns a copy of the oracle whose verbs open their warehouse through a
// catalog with these options (the --catalog-options flag of every verb that opens a catalog,
// batch requests included), e.g. JDBCServer.CatalogOptions for Java Paimon's JDBC catalog with
// its lock. A verb given its own --catalog-options keeps them. The receiver is unchanged.
func (j *JavaOracle) WithCatalogOptions(opts map[string]string) *JavaOracle {
	c := *j
	c.catalogOptions = maps.Clone(opts)
	return &c
}

// noCatalogVerbs open no catalog: they get no --catalog-options.
var noCatalogVerbs = map[string]bool{"pick": true, "version": true, "batch": true, "rest-server": true}

// javaArgs is the java command line of one verb; extraCP, if not empty,
// is appended to the oracle's classpath (the REST server's test jars).
// -XX:-UsePerfData: no hsperfdata file, whose "locked by another process"
// warning (two JVMs with one PID over time) would land in a verb's output.
func (j *JavaOracle) javaArgs(verb string, flags []string, extraCP ...string) []string {
	cp := strings.Join(append([]string{j.classpath}, extraCP...), string(os.PathListSeparator))
	args := append([]string{"-XX:-UsePerfData", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m", "-cp", cp, "compactd.interop.Main", verb}, flags...)
	if len(j.catalogOptions) > 0 && !noCatalogVerbs[verb] && !slices.Contains(flags, "--catalog-options") {
		b, err := json.Marshal(j.catalogOptions)
		if err == nil { // a map[string]string always marshals
			args = append(args, "--catalog-options", string(b))
		}
	}
	return args
}

// verbProcess is a long-running verb (stream, lock-hold, rest-server):
// the test talks to it through its stdin and reads its stdout lines.
type verbProcess struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdin  io.WriteCloser
	stdout io.ReadCloser
}

// startVerb starts a long-running verb under ctx (bounded by Timeout),
// with stderr going to errw.
func (j *JavaOracle) startVerb(ctx context.Context, verb string, flags []string, errw io.Writer, extraCP ...string) (*verbProcess, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	cmd := exec.CommandContext(ctx, "java", j.javaArgs(verb, flags, extraCP...)...)
	cmd.Stderr = errw
	p := &verbProcess{cmd: cmd, cancel: cancel}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err == nil {
		p.stdout, err = cmd.StdoutPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("start java oracle %s: %w", verb, err)
	}
	return p, nil
}

// lockedBuffer is a bytes.Buffer safe for a process's writes and the
// test's reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Java locates the built Java oracle or fails the test.
func Java(tb testing.TB) *JavaOracle {
	tb.Helper()
	j, err := NewJava()
	if err != nil {
		tb.Fatalf("interop: %v", err)
	}
	j.tb = tb
	return j
}

// NewJava locates the built Java oracle without a test (for commands such as genpick). The
// build directory is interop/java/target, or $COMPACTD_INTEROP_JAVA_TARGET (e.g.
// interop/java/target-1.3 after `mvn -Ppaimon-1.3 compile` there).
func NewJava() (*JavaOracle, error) {
	target := filepath.Join(Dir(), "java", "target")
	if v := os.Getenv("COMPACTD_INTEROP_JAVA_TARGET"); v != "" {
		target = v
	}
	cpFile := filepath.Join(target, "classpath.txt")
	cp, err := os.ReadFile(cpFile)
	if err != nil {
		return nil, fmt.Errorf("java oracle not built (%s missing): %s", cpFile, missingHint)
	}
	classes := filepath.Join(target, "classes")
	if _, err := os.Stat(filepath.Join(classes, "compactd", "interop", "Main.class")); err != nil {
		return nil, fmt.Errorf("java oracle not built (%s has no Main.class): %s", classes, missingHint)
	}
	if _, err := exec.LookPath("java"); err != nil {
		return nil, fmt.Errorf("java not on PATH: %s", missingHint)
	}
	return &JavaOracle{target: target, classpath: classes + string(os.PathListSeparator) + strings.TrimSpace(string(cp))}, nil
}

// Run runs one verb with flags and stdin, returning stdout. It is the error-returning layer under
// the test helpers.
func (j *JavaOracle) Run(ctx context.Context, stdin []byte, verb string, flags ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", j.javaArgs(verb, flags)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("java oracle %s %s: %w\n%s", verb, strings.Join(flags, " "), err, tail(stderr.String(), 4000))
	}
	return stdout.Bytes(), nil
}

func (j *JavaOracle) must(stdin []byte, verb string, flags ...string) []byte {
	j.tb.Helper()
	out, err := j.Run(context.Background(), stdin, verb, flags...)
	if err != nil {
		j.tb.Fatalf("interop: %v", err)
	}
	return out
}

// Version is the Paimon version on the oracle's classpath.
func (j *JavaOracle) Version() string {
	j.tb.Helper()
	var v struct{ Paimon string }
	if err := json.Unmarshal(j.must(nil, "version"), &v); err != nil {
		j.tb.Fatalf("interop: version: %v", err)
	}
	return v.Paimon
}

// Create creates db.table in the warehouse from a spec (anything marshalling to the spec JSON
// documented in interop/README.md, e.g. fixtures.Spec). If rowsJSONL is non-nil the rows are
// written in the same JVM (see Write).
func (j *JavaOracle) Create(warehouse, table string, spec any, rowsJSONL []byte) {
	j.tb.Helper()
	dir := j.tb.TempDir()
	specFile := writeTemp(j.tb, dir, "spec.json", mustJSON(j.tb, spec))
	flags := []string{"--warehouse", warehouse, "--table", table, "--spec", specFile}
	if rowsJSONL != nil {
		flags = append(flags, "--rows", writeTemp(j.tb, dir, "rows.jsonl", rowsJSONL))
	}
	j.must(nil, "create", flags...)
}

// Write runs a write script: JSON lines, each a row with "_kind" (+I, -U, +U, -D), optional
// "_user" (commit user, default "interop") and "_commit" (rows with the same user and _commit
// value form one commit), or {"commit":true[,"user":U]} to commit explicitly. It returns the
// number of commits made.
func (j *JavaOracle) Write(warehouse, table string, rowsJSONL []byte) int {
	j.tb.Helper()
	f := writeTemp(j.tb, j.tb.TempDir(), "rows.jsonl", rowsJSONL)
	out := j.must(nil, "write", "--warehouse", warehouse, "--table", table, "--rows", f)
	var res struct{ Commits int }
	if err := json.Unmarshal(out, &res); err != nil {
		j.tb.Fatalf("interop: write result %q: %v", out, err)
	}
	return res.Commits
}

// WriteOptions tune WriteWith; the zero value is Write.
type WriteOptions struct {
	// Options are dynamic table options for the writers only (e.g. "write-only": "false" on a
	// write-only table, so the writers compact as a Flink job's would).
	Options map[string]string
	// WaitCompaction makes every commit wait for the compaction its writer started
	// (prepareCommit(true, ...)), so what a compacting writer leaves does not depend on timing.
	WaitCompaction bool
}

// WriteWith is Write with dynamic options for the writers (see WriteOptions).
func (j *JavaOracle) WriteWith(warehouse, table string, rowsJSONL []byte, o WriteOptions) int {
	j.tb.Helper()
	f := writeTemp(j.tb, j.tb.TempDir(), "rows.jsonl", rowsJSONL)
	flags := []string{"--warehouse", warehouse, "--table", table, "--rows", f}
	flags = append(flags, o.Flags()...)
	out := j.must(nil, "write", flags...)
	var res struct{ Commits int }
	if err := json.Unmarshal(out, &res); err != nil {
		j.tb.Fatalf("interop: write result %q: %v", out, err)
	}
	return res.Commits
}

// Flags renders the options as the write verb's flags (for batch requests).
func (o WriteOptions) Flags() []string {
	var f []string
	if len(o.Options) > 0 {
		b, err := json.Marshal(o.Options)
		if err == nil { // a map[string]string always marshals
			f = append(f, "--options", string(b))
		}
	}
	if o.WaitCompaction {
		f = append(f, "--wait-compaction", "true")
	}
	return f
}

// DVFile is one data file of a snapshot with its deletion vector as Java reads it (verb dvs).
type DVFile struct {
	Partition   string `json:"partition"` // "k=v[/k2=v2]", "" when unpartitioned
	Bucket      int    `json:"bucket"`
	File        string `json:"file"`
	Level       int    `json:"level"`
	RecordCount int64  `json:"record_count"`
	// DV is the cardinality of the file's deletion vector read back from its index file by
	// DeletionVector.read; nil when the file has none.
	DV *int64 `json:"dv_cardinality"`
	// DVMeta is the cardinality the index manifest records for it (nil: none recorded).
	DVMeta *int64 `json:"dv_meta_cardinality"`
}

// ParseDVFiles decodes the dvs verb's output.
func ParseDVFiles(jsonl []byte) ([]DVFile, error) {
	var out []DVFile
	for _, line := range bytes.Split(jsonl, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var f DVFile
		if err := json.Unmarshal(line, &f); err != nil {
			return nil, fmt.Errorf("dvs line %q: %w", line, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// DVFiles lists every data file of the latest snapshot (level 0 included) with its deletion
// vector's cardinality as Java reads it, sorted by partition, bucket, level and file name.
func (j *JavaOracle) DVFiles(warehouse, table string) []DVFile {
	j.tb.Helper()
	out := j.must(nil, "dvs", "--warehouse", warehouse, "--table", table)
	files, err := ParseDVFiles(out)
	if err != nil {
		j.tb.Fatalf("interop: %v", err)
	}
	return files
}

// ReadOption selects what Read reads.
type ReadOption func(*[]string)

// AtSnapshot reads snapshot id instead of the latest.
func AtSnapshot(id int64) ReadOption {
	return func(f *[]string) { *f = append(*f, "--snapshot", strconv.FormatInt(id, 10)) }
}

// AtTag reads a tag instead of the latest snapshot.
func AtTag(tag string) ReadOption {
	return func(f *[]string) { *f = append(*f, "--tag", tag) }
}

// IgnoringDeletionVectors reads the same splits with their deletion files taken away: the rows
// a reader that did not apply the deletion vectors would return.
func IgnoringDeletionVectors() ReadOption {
	return func(f *[]string) { *f = append(*f, "--ignore-deletion-vectors", "true") }
}

// WithBucket adds "_bucket" to every row Java reads: the bucket of the split the row came from,
// i.e. where Java placed (or found) the key. Java only (the read verb's --with-bucket).
func WithBucket() ReadOption {
	return func(f *[]string) { *f = append(*f, "--with-bucket", "true") }
}

func readFlags(warehouse, table string, opts []ReadOption) []string {
	flags := []string{"--warehouse", warehouse, "--table", table}
	for _, o := range opts {
		o(&flags)
	}
	return flags
}

// Read returns the table's rows as Java Paimon reads them (merge applied), sorted by primary key
// (all columns for append tables).
func (j *JavaOracle) Read(warehouse, table string, opts ...ReadOption) []Row {
	j.tb.Helper()
	return mustRows(j.tb, j.must(nil, "read", readFlags(warehouse, table, opts)...))
}

// Files returns the rows of the $files system table.
func (j *JavaOracle) Files(warehouse, table string) []Row {
	j.tb.Helper()
	return mustRows(j.tb, j.must(nil, "files", "--warehouse", warehouse, "--table", table))
}

// Snapshots returns the rows of the $snapshots system table.
func (j *JavaOracle) Snapshots(warehouse, table string) []Row {
	j.tb.Helper()
	return mustRows(j.tb, j.must(nil, "snapshots", "--warehouse", warehouse, "--table", table))
}

// CompactOptions restricts Compact; the zero value compacts every bucket of every partition.
type CompactOptions struct {
	// Partition like "dt=2024-01-01" or "a=1/b=x" (canonical value text, strings unquoted).
	Partition string
	// Bucket, when non-nil, compacts only that bucket.
	Bucket *int
	// CommitUser defaults to "interop-compact".
	CommitUser string
	// Minor asks for Paimon's normal universal pick (TableWriteImpl.compact(..., false)) instead
	// of a full compaction.
	Minor bool
	// Options are dynamic table options for this compaction only (e.g. the pick's trigger and
	// ratios); write-only is always lifted.
	Options map[string]string
}

// Compact runs Paimon's own compaction (full by default: TableWriteImpl.compact(partition,
// bucket, true)) over the selected buckets and commits it, returning the latest snapshot id
// after the commit.
func (j *JavaOracle) Compact(warehouse, table string, o CompactOptions) int64 {
	j.tb.Helper()
	flags := []string{"--warehouse", warehouse, "--table", table}
	if o.Partition != "" {
		flags = append(flags, "--partition", o.Partition)
	}
	if o.Bucket != nil {
		flags = append(flags, "--bucket", strconv.Itoa(*o.Bucket))
	}
	if o.CommitUser != "" {
		flags = append(flags, "--commit-user", o.CommitUser)
	}
	if o.Minor {
		flags = append(flags, "--full", "false")
	}
	if len(o.Options) > 0 {
		flags = append(flags, "--options", string(mustJSON(j.tb, o.Options)))
	}
	out := j.must(nil, "compact", flags...)
	var res struct{ Snapshot int64 }
	if err := json.Unmarshal(out, &res); err != nil {
		j.tb.Fatalf("interop: compact result %q: %v", out, err)
	}
	return res.Snapshot
}

// PostponeCompactOptions tune PostponeCompact; the zero value is the bundled Paimon's (1.4.2)
// postpone compaction with a random commit user, as Flink's compact action runs it.
type PostponeCompactOptions struct {
	// CommitUser defaults to CoreOptions.createCommitUser (a random UUID).
	CommitUser string
	// Paimon selects whose postpone compaction to rebuild: "1.4" (default, the bundled
	// version's CompactAction) or "2.0" (release-2.0.0-rc9's: snapshot-bound, write-only lifted,
	// explicit compact of touched and level-0 buckets, postpone.target-row-num-per-bucket).
	Paimon string
}

// PostponePartition is one partition a postpone compaction processed.
type PostponePartition struct {
	Partition     string `json:"partition"` // "k=v[/k2=v2]", "" when unpartitioned
	Buckets       int    `json:"buckets"`   // the bucket count it chose
	PostponeFiles int    `json:"postpone_files"`
	Rows          int64  `json:"rows"` // rows read from the postpone files
}

// PostponeResult is the postpone-compact verb's answer.
type PostponeResult struct {
	Snapshot   int64               `json:"snapshot"` // latest snapshot id after the commit
	Partitions []PostponePartition `json:"partitions"`
}

// PostponeCompact runs Java Paimon's postpone-bucket compaction (the Flink compact action's
// operators rebuilt on the core API, see interop/README.md) on a bucket = -2 table.
func (j *JavaOracle) PostponeCompact(warehouse, table string, o PostponeCompactOptions) PostponeResult {
	j.tb.Helper()
	flags := []string{"--warehouse", warehouse, "--table", table}
	if o.CommitUser != "" {
		flags = append(flags, "--commit-user", o.CommitUser)
	}
	if o.Paimon != "" {
		flags = append(flags, "--paimon", o.Paimon)
	}
	out := j.must(nil, "postpone-compact", flags...)
	var res PostponeResult
	if err := json.Unmarshal(out, &res); err != nil {
		j.tb.Fatalf("interop: postpone-compact result %q: %v", out, err)
	}
	return res
}

// BucketOf is Java's bucket assignment of one row (verb bucket-of).
type BucketOf struct {
	// Buckets holds the row's bucket for each requested bucket count, in request order
	// (FixedBucketRowKeyExtractor.bucket on the schema copied with that bucket count).
	Buckets []int32 `json:"buckets"`
	// Hash is BinaryRow.hashCode of the bucket key, Key its serialized bytes in hex.
	Hash int32  `json:"hash"`
	Key  string `json:"key"`
}

// BucketsOf asks Java for the bucket of every row of rowsJSONL (canonical JSON, all columns of
// table, which must exist) under each of counts (nil: the table's own bucket option), with the
// table's bucket-key, trimmed primary key and bucket-function.type.
func (j *JavaOracle) BucketsOf(warehouse, table string, rowsJSONL []byte, counts []int) []BucketOf {
	j.tb.Helper()
	f := writeTemp(j.tb, j.tb.TempDir(), "rows.jsonl", rowsJSONL)
	flags := []string{"--warehouse", warehouse, "--table", table, "--rows", f}
	if len(counts) > 0 {
		s := make([]string, len(counts))
		for i, n := range counts {
			s[i] = strconv.Itoa(n)
		}
		flags = append(flags, "--buckets", strings.Join(s, ","))
	}
	out := j.must(nil, "bucket-of", flags...)
	var res []BucketOf
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var b BucketOf
		if err := json.Unmarshal(line, &b); err != nil {
			j.tb.Fatalf("interop: bucket-of line %q: %v", line, err)
		}
		res = append(res, b)
	}
	return res
}

// PickRun is one sorted run given to the planner: its level and total size in bytes. Runs are
// listed as Paimon's Levels.levelSortedRuns orders them: level-0 runs newest first, then levels
// 1.. ascending.
type PickRun struct {
	Level int   `json:"level"`
	Size  int64 `json:"size"`
}

// PickRequest is one planner question.
type PickRequest struct {
	NumLevels int               `json:"numLevels"`
	Options   map[string]string `json:"options"`
	Runs      []PickRun         `json:"runs"`
}

// PickResult is Paimon's answer: Pick false for "no compaction", else the output level, the
// indices (into the request's runs, ascending) of the picked runs and whether deletes may be
// dropped.
type PickResult struct {
	Pick        bool  `json:"-"`
	OutputLevel int   `json:"outputLevel"`
	Runs        []int `json:"runs"`
	DropDelete  bool  `json:"dropDelete"`
}

// PickAll asks Paimon's UniversalCompaction (wrapped exactly as MergeTreeCompactManager uses it)
// for each request, in one JVM.
func (j *JavaOracle) PickAll(ctx context.Context, reqs []PickRequest) ([]PickResult, error) {
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, r := range reqs {
		if err := enc.Encode(r); err != nil {
			return nil, fmt.Errorf("encode pick request: %w", err)
		}
	}
	out, err := j.Run(ctx, in.Bytes(), "pick")
	if err != nil {
		return nil, err
	}
	var res []PickResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(line, &raw); err != nil {
			return nil, fmt.Errorf("pick output %q: %w", line, err)
		}
		var r PickResult
		if _, none := raw["pick"]; !none {
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, fmt.Errorf("pick output %q: %w", line, err)
			}
			r.Pick = true
		}
		res = append(res, r)
	}
	if len(res) != len(reqs) {
		return nil, fmt.Errorf("pick: %d answers for %d requests", len(res), len(reqs))
	}
	return res, nil
}

// Pick is PickAll failing the test on error.
func (j *JavaOracle) Pick(reqs ...PickRequest) []PickResult {
	j.tb.Helper()
	res, err := j.PickAll(context.Background(), reqs)
	if err != nil {
		j.tb.Fatalf("interop: %v", err)
	}
	return res
}

// Tag creates tag name on snapshot (0 = the latest snapshot).
func (j *JavaOracle) Tag(warehouse, table, name string, snapshot int64) {
	j.tb.Helper()
	flags := []string{"--warehouse", warehouse, "--table", table, "--name", name}
	if snapshot > 0 {
		flags = append(flags, "--snapshot", strconv.FormatInt(snapshot, 10))
	}
	j.must(nil, "tag", flags...)
}

// ExpireOptions are the retention settings for Expire; zero fields keep the table's options.
type ExpireOptions struct {
	RetainMin, RetainMax int
	TimeRetained         time.Duration
}

// Expire returns the table-relative paths Paimon's snapshot expiration would delete. Paimon has
// no dry run for it, so the oracle expires a copy of the table and diffs the listings; the table
// itself is not touched.
func (j *JavaOracle) Expire(warehouse, table string, o ExpireOptions) []string {
	j.tb.Helper()
	flags := []string{"--warehouse", warehouse, "--table", table, "--dry-run"}
	if o.RetainMin > 0 {
		flags = append(flags, "--retain-min", strconv.Itoa(o.RetainMin))
	}
	if o.RetainMax > 0 {
		flags = append(flags, "--retain-max", strconv.Itoa(o.RetainMax))
	}
	if o.TimeRetained > 0 {
		flags = append(flags, "--time-retained-ms", strconv.FormatInt(o.TimeRetained.Milliseconds(), 10))
	}
	return paths(j.tb, j.must(nil, "expire", flags...))
}

// Orphans returns the table-relative paths Paimon's LocalOrphanFilesClean (dry run) would delete:
// files no snapshot, tag or branch references, last modified before olderThan (the zero time
// means any age).
func (j *JavaOracle) Orphans(warehouse, table string, olderThan time.Time) []string {
	j.tb.Helper()
	flags := []string{"--warehouse", warehouse, "--table", table, "--dry-run"}
	if !olderThan.IsZero() {
		flags = append(flags, "--older-than-ms", strconv.FormatInt(olderThan.UnixMilli(), 10))
	}
	return paths(j.tb, j.must(nil, "orphans", flags...))
}

// BatchRequest is one verb of a Batch call; Flags are the verb's --flags without dashes.
type BatchRequest struct {
	Verb  string            `json:"verb"`
	Flags map[string]string `json:"flags"`
}

// BatchResult is one verb's output lines, or its error.
type BatchResult struct {
	Lines [][]byte
	Err   error
}

// Batch runs several verbs in one JVM, which saves ~1.5 s of start-up per verb. Verbs that read
// stdin (pick) must be given --input instead.
func (j *JavaOracle) Batch(ctx context.Context, reqs []BatchRequest) ([]BatchResult, error) {
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, r := range reqs {
		if _, ok := r.Flags["catalog-options"]; len(j.catalogOptions) > 0 && !ok && !noCatalogVerbs[r.Verb] {
			b, err := json.Marshal(j.catalogOptions)
			if err != nil {
				return nil, fmt.Errorf("encode catalog options: %w", err)
			}
			r.Flags = maps.Clone(r.Flags)
			if r.Flags == nil {
				r.Flags = map[string]string{}
			}
			r.Flags["catalog-options"] = string(b)
		}
		if err := enc.Encode(r); err != nil {
			return nil, fmt.Errorf("encode batch request: %w", err)
		}
	}
	out, err := j.Run(ctx, in.Bytes(), "batch")
	if err != nil {
		return nil, err
	}
	return splitBatch(out, reqs, "java")
}

// splitBatch cuts a batch's stdout at the terminator lines both oracles print.
func splitBatch(out []byte, reqs []BatchRequest, who string) ([]BatchResult, error) {
	const endKey = `{"__compactd_batch_end":`
	var res []BatchResult
	var cur BatchResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		if bytes.HasPrefix(line, []byte(endKey)) {
			var end struct {
				OK          bool
				Unsupported bool
				Error       string
			}
			if err := json.Unmarshal(line, &end); err != nil {
				return nil, fmt.Errorf("batch terminator %q: %w", line, err)
			}
			if !end.OK {
				cur.Err = fmt.Errorf("%s oracle %s: %s", who, reqs[len(res)].Verb, tail(end.Error, 4000))
				if end.Unsupported {
					cur.Err = fmt.Errorf("%w: %w", ErrUnsupported, cur.Err)
				}
			}
			res = append(res, cur)
			cur = BatchResult{}
			continue
		}
		cur.Lines = append(cur.Lines, line)
	}
	if len(res) != len(reqs) {
		return res, fmt.Errorf("batch: %d results for %d requests", len(res), len(reqs))
	}
	return res, nil
}

// PythonOracle runs the pypaimon twin.
type PythonOracle struct {
	tb     testing.TB
	python string
	script string
}

// Python locates the pypaimon venv or fails the test.
func Python(tb testing.TB) *PythonOracle {
	tb.Helper()
	py := filepath.Join(VenvDir(), "bin", "python")
	if _, err := os.Stat(py); err != nil {
		tb.Fatalf("interop: pypaimon venv missing (%s): %s", py, missingHint)
	}
	return &PythonOracle{tb: tb, python: py, script: filepath.Join(Dir(), "python", "paimon_oracle.py")}
}

// Run runs one verb of the Python twin, returning stdout.
func (p *PythonOracle) Run(ctx context.Context, verb string, flags ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.python, append([]string{p.script, verb}, flags...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("pypaimon oracle %s %s: %w\n%s", verb, strings.Join(flags, " "), err, tail(stderr.String(), 4000))
	}
	return stdout.Bytes(), nil
}

// Batch runs several reads in one Python process (importing pypaimon takes seconds). Only the
// read verb is supported; a refused table's result wraps ErrUnsupported.
func (p *PythonOracle) Batch(ctx context.Context, reqs []BatchRequest) ([]BatchResult, error) {
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, r := range reqs {
		if err := enc.Encode(r); err != nil {
			return nil, fmt.Errorf("encode batch request: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.python, p.script, "batch")
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("pypaimon oracle batch: %w\n%s", err, tail(stderr.String(), 4000))
	}
	return splitBatch(stdout.Bytes(), reqs, "pypaimon")
}

// ErrUnsupported is wrapped by PythonOracle.ReadErr when pypaimon refuses the table's
// configuration (NotImplementedError), e.g. partial-update with sequence groups.
var ErrUnsupported = errors.New("pypaimon does not support this table configuration")

// ReadErr returns the table's rows as pypaimon reads them, in the same canonical form and order
// as JavaOracle.Read; errors wrap ErrUnsupported when pypaimon refuses the table.
func (p *PythonOracle) ReadErr(ctx context.Context, warehouse, table string, opts ...ReadOption) ([]Row, error) {
	out, err := p.Run(ctx, "read", readFlags(warehouse, table, opts)...)
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		return nil, err
	}
	return ParseRows(out)
}

// Read is ReadErr failing the test on any error.
func (p *PythonOracle) Read(warehouse, table string, opts ...ReadOption) []Row {
	p.tb.Helper()
	rows, err := p.ReadErr(context.Background(), warehouse, table, opts...)
	if err != nil {
		p.tb.Fatalf("interop: %v", err)
	}
	return rows
}

// ParseRows decodes canonical JSON lines into normalized rows.
func ParseRows(jsonl []byte) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(bytes.NewReader(jsonl))
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var r Row
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("row %q: %w", line, err)
		}
		rows = append(rows, Normalize(r).(Row))
	}
	return rows, sc.Err()
}

// Normalize converts a decoded JSON value (or a Go value built by hand, e.g. a fixtures model
// row) into the comparable canonical form: json.Number and Go integers become int64 when
// integral in text, float64 otherwise; maps and slices are normalized recursively.
func Normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	}
	return v
}

// NormalizeRows applies Normalize to every row.
func NormalizeRows(rows []map[string]any) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		out[i] = Normalize(r).(Row)
	}
	return out
}

func mustRows(tb testing.TB, out []byte) []Row {
	tb.Helper()
	rows, err := ParseRows(out)
	if err != nil {
		tb.Fatalf("interop: %v", err)
	}
	return rows
}

func paths(tb testing.TB, out []byte) []string {
	tb.Helper()
	var ps []string
	for _, r := range mustRows(tb, out) {
		p, _ := r["path"].(string)
		ps = append(ps, p)
	}
	return ps
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	if b, ok := v.([]byte); ok {
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("interop: marshal spec: %v", err)
	}
	return b
}

func writeTemp(tb testing.TB, dir, name string, data []byte) string {
	tb.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatalf("interop: %v", err)
	}
	return p
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
