package compact

import (
	"context"
	"errors"
	"fmt"
	"github.com/compactd/compactd/deletionvector"
	"io"
	"slices"
	"time"

	"github.com/compactd/compactd/lookup"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/planner"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// JobResult is the outcome of one executed job: the manifest entries to
// commit (DELETEs of the inputs, then ADDs of the outputs), its index
// changes, and every file written (index files included), which must be
// deleted if the result is not committed.
type JobResult struct {
	Job      planner.Job
	Entries  []manifest.Entry
	Written  []string
	RowsIn   int64
	RowsOut  int64
	BytesIn  int64
	BytesOut int64
	FilesIn  int
	FilesOut int

	// Changelog are the ADD entries of the changelog files the job wrote
	// (changelog-producer=lookup or full-compaction), committed to the
	// COMPACT snapshot's changelog manifest list; their paths are in
	// Written too. ChangelogRows counts their records.
	Changelog     []manifest.Entry
	ChangelogRows int64

	// IndexChanges are the job's index changes (the bucket's new
	// deletion-vector index file: deletionvector.Maintainer.Write, recorded
	// with AddIndexChange, which also adds the file to Written). They are
	// committed with Entries, in the same COMPACT snapshot.
	IndexChanges []table.IndexChange
}

// executor runs jobs of one table.
type executor struct {
	t          *table.Table
	view       *TableView
	eng        *merge.Engine
	read       datafile.Schema
	targetSize int64
	now        func() time.Time
	schemas    map[int64]datafile.Schema
	// codec is set when the table's jobs merge as column batches (nil:
	// record by record, Options.RowPath or scan.BatchCodec's reason);
	// rowCodec likewise for append tables.
	codec    *datafile.KVCodec
	rowCodec *datafile.Codec
	// lookupTable is Paimon's needLookup (deletion vectors,
	// changelog-producer=lookup, first-row, force-lookup): its compaction
	// rewriter is LookupMergeTreeCompactRewriter and, but for first-row,
	// its merge function is wrapped in LookupMergeFunction. dvTable is
	// deletion-vectors.enabled.
	lookupTable, dvTable bool
	// changelog is the changelog the table's compactions produce
	// (table.ChangelogLookup, table.ChangelogFullCompaction; "" for none),
	// maxLevel the level full compactions write (num-levels - 1), and
	// equal the changelog's value equaliser (row-deduplicate; nil: off).
	changelog table.ChangelogProducer
	maxLevel  int
	equal     func(a, b table.Row) bool
}

func (x *executor) schemaOf(ctx context.Context, id int64) (datafile.Schema, error) {
	// The map is filled before jobs start and only read after: safe from
	// the goroutines of a job (prefetching opens files in parallel).
	if s, ok := x.schemas[id]; ok {
		return s, nil
	}
	return datafile.Schema{}, fmt.Errorf("schema %d of table %s not loaded", id, x.t.FullName())
}

func (x *executor) loadSchemas(ctx context.Context) error {
	x.schemas = map[int64]datafile.Schema{}
	for _, b := range x.view.FileSet.Buckets() {
		for i := range b.Files {
			id := b.Files[i].File.SchemaID
			if _, ok := x.schemas[id]; ok {
				continue
			}
			s, err := x.t.SchemaByID(ctx, id)
			if err != nil {
				return err
			}
			x.schemas[id] = datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
		}
	}
	return nil
}

// run executes one job. For a table with deletion vectors it loads the
// bucket's vectors into a maintainer (Java's BucketedDvMaintainer), which
// the job's lookups mark superseded rows in, and ends with the bucket's new
// index file (FinishDeletionVectors), committed with the job's entries.
func (x *executor) run(ctx context.Context, job planner.Job) (*JobResult, error) {
	if !x.dvTable {
		return x.runBucket(ctx, job, nil, nil)
	}
	b := x.view.buckets[job.ID()]
	if b == nil {
		return nil, fmt.Errorf("table %s: planned bucket %d is not in the view", x.t.FullName(), job.Bucket)
	}
	m, err := deletionvector.Load(ctx, x.t, b)
	if err != nil {
		return nil, err
	}
	// The readers apply the vectors the maintainer loaded (copies: the
	// lookup's new deletions must not change what this job reads), so the
	// bucket's index file is read once per job.
	existing := map[string]scan.DeletionVector{}
	for file, dv := range m.Loaded() {
		existing[file] = dv
	}
	res, err := x.runBucket(ctx, job, m, existing)
	if err != nil {
		return nil, err
	}
	if err := res.FinishDeletionVectors(ctx, m); err != nil {
		x.t.DeleteUnreferenced(res.Written)
		return nil, err
	}
	return res, nil
}

// runBucket executes one job. On error every file it wrote is deleted.
//
// dvs is the bucket's deletion-vector maintainer for a table with
// deletion vectors (nil otherwise; a deletion-vector table without one is
// refused): the job's lookups report to it every row of a file above the
// output level that the job's output supersedes, in key order, and
// JobResult.Rewritten names the inputs whose deletion vectors go. Input
// files are read with the bucket's existing deletion vectors applied:
// existing, or (nil) those read from the bucket's index files.
func (x *executor) runBucket(ctx context.Context, job planner.Job, dvs merge.DeletionSink, existing map[string]scan.DeletionVector) (res *JobResult, err error) {
	id := job.ID()
	b := x.view.buckets[id]
	res = &JobResult{Job: job}
	defer func() {
		if err != nil {
			x.t.DeleteUnreferenced(res.Written)
			res.Written = nil
		}
	}()
	if x.dvTable != (dvs != nil) {
		if x.dvTable {
			return res, fmt.Errorf("table %s has deletion vectors: compacting it needs a deletion-vector maintainer", x.t.FullName())
		}
		return res, fmt.Errorf("table %s has no deletion vectors, yet a deletion-vector maintainer was given", x.t.FullName())
	}
	if x.dvTable && existing == nil {
		if existing, err = scan.BucketDeletionVectors(ctx, x.t, b); err != nil {
			return res, fmt.Errorf("deletion vectors of %s bucket %d: %w", x.t.FullName(), job.Bucket, err)
		}
	}
	entry := func(f planner.File) (*manifest.Entry, error) {
		e, ok := x.view.Entry(id, f.Name)
		if !ok {
			return nil, fmt.Errorf("planned file %s is not live in bucket %d", f.Name, job.Bucket)
		}
		return e, nil
	}
	var deletes, adds []manifest.Entry
	// One lookup per job: its steps come in key order, so the lookup's
	// files are read forward once.
	var higher *lookup.Levels
	defer func() {
		if higher != nil {
			if cerr := higher.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}
	}()
	lookupOf := func() (*lookup.Levels, error) {
		if higher == nil {
			h, err := x.higherLevels(ctx, b, job, existing)
			if err != nil {
				return nil, err
			}
			higher = h
		}
		return higher, nil
	}
	for _, step := range job.Steps {
		switch step.Kind {
		case planner.StepUpgrade:
			e, err := entry(step.File)
			if err != nil {
				return res, err
			}
			if err := x.upgradePass(ctx, b, e, job, dvs, existing, lookupOf, res); err != nil {
				return res, err
			}
			up := *e
			up.Kind = manifest.FileKindAdd
			up.File.Level = int32(job.OutputLevel)
			del := *e
			del.Kind = manifest.FileKindDelete
			deletes = append(deletes, del)
			adds = append(adds, up)
		case planner.StepRewrite:
			var files []*manifest.Entry
			for _, sec := range step.Sections {
				for _, run := range sec {
					for _, f := range run {
						e, err := entry(f)
						if err != nil {
							return res, err
						}
						files = append(files, e)
					}
				}
			}
			var cl *changelogWriter
			if x.rewriteChangelog(job, files) {
				cl = x.newChangelogWriter(ctx, b, job.OutputLevel)
			}
			m, err := x.mergeOf(job, files, dvs, lookupOf, cl)
			if err != nil {
				return res, err
			}
			outs, err := x.rewrite(ctx, b, files, job, m, existing)
			for _, o := range outs {
				res.Written = append(res.Written, o.path)
			}
			if err == nil {
				err = cl.finish(res)
			}
			if err != nil {
				cl.abort()
				return res, err
			}
			for _, e := range files {
				del := *e
				del.Kind = manifest.FileKindDelete
				deletes = append(deletes, del)
				res.FilesIn++
				res.RowsIn += e.File.RowCount
				res.BytesIn += e.File.FileSize
			}
			for _, o := range outs {
				adds = append(adds, manifest.Entry{Kind: manifest.FileKindAdd, Partition: b.Partition,
					Bucket: b.Bucket, TotalBuckets: b.TotalBuckets, File: o.meta})
				res.FilesOut++
				res.RowsOut += o.meta.RowCount
				res.BytesOut += o.meta.FileSize
			}
		}
	}
	res.Entries = append(deletes, adds...)
	return res, nil
}

// mergeOf is how a rewrite step merges (Java's compaction rewriter for the
// table): a rewrite of a lookup table that reads level-0 files into a
// level above 0 is the lookup compaction (ChangelogMergeTreeRewriter.
// rewriteLookupChangelog; first-row through FirstRowMergeFunctionWrapper,
// the others through LookupChangelogMergeFunctionWrapper); other rewrites
// of lookup tables but first-row merge through LookupMergeFunction with
// the reducer; the rest plainly.
//
// cl, when set, receives the step's changelog: the full-compaction
// changelog (FullChangelogMergeTreeCompactRewriter), or the lookup
// compaction's (LookupChangelogMergeFunctionWrapper.setChangelog,
// FirstRowMergeFunctionWrapper).
func (x *executor) mergeOf(job planner.Job, files []*manifest.Entry, dvs merge.DeletionSink, lookupOf func() (*lookup.Levels, error), cl *changelogWriter) (scan.Merge, error) {
	m := scan.Merge{DropDelete: job.DropDelete}
	if cl != nil && x.changelog == table.ChangelogFullCompaction {
		m.FullChangelog = x.fullChangelog(cl)
		return m, nil
	}
	if x.eng == nil || !x.lookupTable {
		return m, nil
	}
	firstRow := x.eng.Name() == merge.EngineFirstRow
	if !lookupCompaction(job, files) {
		m.Lookup = !firstRow
		return m, nil
	}
	higher, err := lookupOf()
	if err != nil {
		return m, err
	}
	if firstRow {
		m.FirstRow = true
		if higher.Levels() > 0 {
			m.Higher = higher
		}
		if cl != nil {
			m.FirstRowChangelog = cl.write
		}
		return m, nil
	}
	lc := &merge.LookupCompact{Deletions: dvs, Values: x.lookupValues()}
	if higher.Levels() > 0 {
		lc.Higher = higher
	}
	if cl != nil {
		lc.Changelog, lc.Equal, lc.Batches = cl.changes, x.equal, cl.writeBatch
	}
	m.LookupCompact = lc
	return m, nil
}

// fullChangelog is the full-compaction changelog merge writing to cl: record
// by record on the row path, in batches on the batch path.
func (x *executor) fullChangelog(cl *changelogWriter) *merge.FullChangelog {
	return &merge.FullChangelog{MaxLevel: x.maxLevel, Changelog: cl.changes, Equal: x.equal, Batches: cl.writeBatch}
}

// rewriteChangelog is ChangelogMergeTreeRewriter.rewriteChangelog: a
// full-compaction changelog table's rewrite to the top level, or a lookup
// changelog table's lookup compaction.
func (x *executor) rewriteChangelog(job planner.Job, files []*manifest.Entry) bool {
	switch x.changelog {
	case table.ChangelogFullCompaction:
		return job.OutputLevel == x.maxLevel
	case table.ChangelogLookup:
		return lookupCompaction(job, files)
	}
	return false
}

// upgradePass reads a file that the job moves to its output level without
// rewriting it, when Java's upgrade strategy reads it (CHANGELOG_NO_REWRITE):
// a full-compaction changelog table's upgrade to the top level gives the
// file's records as +I; a level-0 file of a lookup changelog or
// deletion-vector table goes through the lookup compaction, for its
// changelog and for the rows it supersedes above the output level, which
// are marked deleted. Nothing is written but changelog files.
func (x *executor) upgradePass(ctx context.Context, b *table.BucketFiles, e *manifest.Entry, job planner.Job, dvs merge.DeletionSink, existing map[string]scan.DeletionVector, lookupOf func() (*lookup.Levels, error), res *JobResult) error {
	var cl *changelogWriter
	switch x.changelog {
	case table.ChangelogFullCompaction:
		if job.OutputLevel != x.maxLevel {
			return nil
		}
		cl = x.newChangelogWriter(ctx, b, job.OutputLevel)
		m := scan.Merge{FullChangelog: x.fullChangelog(cl)}
		err := x.readPass(ctx, e, m, existing)
		if err == nil {
			err = cl.finish(res)
		}
		if err != nil {
			cl.abort()
		}
		return err
	case table.ChangelogLookup:
		if e.File.Level == 0 && job.OutputLevel > 0 {
			cl = x.newChangelogWriter(ctx, b, job.OutputLevel)
		}
	}
	if e.File.Level != 0 || job.OutputLevel == 0 || (dvs == nil && cl == nil) {
		return nil
	}
	err := x.lookupPass(ctx, e, job, dvs, existing, lookupOf, cl)
	if err == nil {
		err = cl.finish(res)
	}
	if err != nil {
		cl.abort()
	}
	return err
}

// lookupCompaction is ChangelogMergeTreeRewriter.rewriteLookupChangelog: a
// rewrite to a level above 0 that reads level-0 files.
func lookupCompaction(job planner.Job, files []*manifest.Entry) bool {
	if job.OutputLevel == 0 {
		return false
	}
	for _, e := range files {
		if e.File.Level == 0 {
			return true
		}
	}
	return false
}

// lookupValues is whether the job's lookup returns records (Java persists
// values in its lookup files) or positions only: first-row asks only
// whether a key is held; deletion-vector tables keep positions unless
// LookupPersistsValues; other lookup tables always keep values.
func (x *executor) lookupValues() bool {
	switch {
	case x.eng.Name() == merge.EngineFirstRow:
		return false
	case x.dvTable:
		return x.eng.LookupPersistsValues(x.changelog == table.ChangelogLookup)
	}
	return true
}

// lookupPass reads one level-0 file that is upgraded without a rewrite
// through the lookup compaction, for the deletions its lookups report and
// (cl set) its changelog; Java reads it with forceDropDelete and writes no
// data file.
func (x *executor) lookupPass(ctx context.Context, e *manifest.Entry, job planner.Job, dvs merge.DeletionSink, existing map[string]scan.DeletionVector, lookupOf func() (*lookup.Levels, error), cl *changelogWriter) error {
	higher, err := lookupOf()
	if err != nil {
		return err
	}
	if higher.Levels() == 0 && cl == nil {
		return nil // nothing above the output level: no lookup can hit
	}
	var m scan.Merge
	if x.eng.Name() == merge.EngineFirstRow {
		// First-row tables have no deletion vectors: only the changelog
		// of the keys new to the bucket is read.
		m = scan.Merge{DropDelete: true, FirstRow: true}
		if higher.Levels() > 0 {
			m.Higher = higher
		}
		if cl != nil {
			m.FirstRowChangelog = cl.write
		}
	} else {
		lc := &merge.LookupCompact{Deletions: dvs, Values: x.lookupValues()}
		if higher.Levels() > 0 {
			lc.Higher = higher
		}
		if cl != nil {
			lc.Changelog, lc.Equal, lc.Batches = cl.changes, x.equal, cl.writeBatch
		}
		m = scan.Merge{DropDelete: true, LookupCompact: lc}
	}
	return x.readPass(ctx, e, m, existing)
}

// readPass merges one file as m says and discards the merged records: the
// merge's hooks (changelog, deletions) are what it is read for.
func (x *executor) readPass(ctx context.Context, e *manifest.Entry, m scan.Merge, existing map[string]scan.DeletionVector) error {
	files := []*manifest.Entry{e}
	if x.codec != nil {
		return x.mergeBatches(ctx, files, m, x.codec, existing, func(*datafile.Batch) error { return nil })
	}
	return x.mergeRecords(ctx, files, m, existing, func(table.KeyValue) error { return nil })
}

// changelogWriter writes the changelog of one rewrite or upgrade of a job
// into changelog files of the output level (Java opens one rolling
// changelog writer per rewrite). Its first record opens the first file.
// Records come from the merge, in key order; on the batch path on the
// merge's goroutine, which is the only one touching the writer until the
// step's merge returned. A nil writer takes no records and finishes with
// nothing.
type changelogWriter struct {
	x      *executor
	ctx    context.Context
	bucket *table.BucketFiles
	level  int
	r      *write.Roller
}

func (x *executor) newChangelogWriter(ctx context.Context, b *table.BucketFiles, level int) *changelogWriter {
	return &changelogWriter{x: x, ctx: ctx, bucket: b, level: level}
}

// write appends one changelog record, row kind included.
func (c *changelogWriter) write(kv table.KeyValue) error {
	if err := c.open(); err != nil {
		return err
	}
	return c.r.Write(kv)
}

// writeBatch appends a batch of changelog records (the batch path's
// merge.FullChangelog.Batches).
func (c *changelogWriter) writeBatch(b *datafile.Batch) error {
	if err := c.open(); err != nil {
		return err
	}
	return c.r.WriteBatch(b)
}

func (c *changelogWriter) open() error {
	if c.r != nil {
		return nil
	}
	r, err := write.NewChangelogRoller(c.ctx, c.x.t, c.bucket.Partition, c.bucket.Bucket, int32(c.level))
	if err != nil {
		return err
	}
	if c.x.targetSize > 0 {
		r.SetTargetSize(c.x.targetSize)
	}
	c.r = r
	return nil
}

// changes appends the changelog of one key from before to after
// (merge.Changes with the table's row-deduplicate equaliser).
func (c *changelogWriter) changes(before *table.KeyValue, after table.KeyValue, ok bool) error {
	return merge.Changes(before, after, ok, c.x.equal, c.write)
}

// finish closes the changelog files and adds them to res.
func (c *changelogWriter) finish(res *JobResult) error {
	if c == nil || c.r == nil {
		return nil
	}
	metas, err := c.r.Close()
	res.Written = append(res.Written, c.r.Written()...)
	c.r = nil
	if err != nil {
		return err
	}
	for _, m := range metas {
		res.Changelog = append(res.Changelog, manifest.Entry{Kind: manifest.FileKindAdd, Partition: c.bucket.Partition,
			Bucket: c.bucket.Bucket, TotalBuckets: c.bucket.TotalBuckets, File: m})
		res.ChangelogRows += m.RowCount
	}
	return nil
}

// abort deletes the changelog files written so far (nil: nothing).
func (c *changelogWriter) abort() {
	if c != nil && c.r != nil {
		c.r.Abort()
		c.r = nil
	}
}

type output struct {
	path string
	meta manifest.DataFileMeta
}

// higherLevels opens the lookup over the bucket's live files above the
// job's output level; rows their existing deletion vectors delete are
// invisible to it.
func (x *executor) higherLevels(ctx context.Context, b *table.BucketFiles, job planner.Job, existing map[string]scan.DeletionVector) (*lookup.Levels, error) {
	inputs := make(map[string]bool, len(job.Inputs))
	for _, f := range job.Inputs {
		inputs[f.Name] = true
	}
	var above []*manifest.Entry
	for i := range b.Files {
		e := &b.Files[i]
		if int(e.File.Level) > job.OutputLevel && !inputs[e.File.FileName] {
			above = append(above, e)
		}
	}
	opts := lookup.Options{Values: x.lookupValues()}
	for name, dv := range existing {
		if opts.DeletionVectors == nil {
			opts.DeletionVectors = map[string]lookup.DeletionVector{}
		}
		opts.DeletionVectors[name] = dv
	}
	return lookup.New(ctx, x.t, above, x.eng.KeyTypes(), x.read, lookup.SchemaFunc(x.schemaOf), opts)
}

func (x *executor) rewrite(ctx context.Context, b *table.BucketFiles, files []*manifest.Entry, job planner.Job, m scan.Merge, dvs map[string]scan.DeletionVector) ([]output, error) {
	if x.eng == nil {
		return x.rewriteAppend(ctx, b, files)
	}
	r := write.NewRoller(ctx, x.t, b.Partition, b.Bucket, int32(job.OutputLevel), manifest.FileSourceCompact)
	if x.targetSize > 0 {
		r.SetTargetSize(x.targetSize)
	}
	var err error
	if x.codec != nil {
		err = x.mergeBatches(ctx, files, m, x.codec, dvs, r.WriteBatch)
	} else {
		err = x.mergeRecords(ctx, files, m, dvs, r.Write)
	}
	if err != nil {
		r.Abort()
		return nil, err
	}
	metas, err := r.Close()
	outs := make([]output, 0, len(r.Written()))
	for i, p := range r.Written() {
		o := output{path: p}
		if i < len(metas) {
			o.meta = metas[i]
		}
		outs = append(outs, o)
	}
	return outs, err
}

// mergeRecords merges the files record by record into write, skipping
// the rows dvs delete.
func (x *executor) mergeRecords(ctx context.Context, files []*manifest.Entry, m scan.Merge, dvs map[string]scan.DeletionVector, write func(table.KeyValue) error) error {
	it, err := scan.OpenMerged(ctx, x.t, files, x.eng, x.read, x.schemaOf, dvs, m)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		kv, err := it.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			err = write(kv)
		}
		if err != nil {
			return err
		}
	}
}

// mergeBatches is mergeRecords on the batch path: records that need no
// merge are copied column by column from input pages to output pages.
// Reading and merging run on their own goroutine, one batch ahead of
// encoding, so one large bucket keeps two cores busy.
func (x *executor) mergeBatches(ctx context.Context, files []*manifest.Entry, m scan.Merge, codec *datafile.KVCodec, dvs map[string]scan.DeletionVector, write func(*datafile.Batch) error) error {
	it, err := scan.OpenMergedBatches(ctx, x.t, files, x.eng, x.read, codec, x.schemaOf, dvs, m)
	if err != nil {
		return err
	}
	defer it.Close()
	return PipeBatches(ctx, codec.Codec, it.NextInto, write)
}

// PipeBatches passes every batch next produces (io.EOF ends) to write,
// calling next on a second goroutine: batches circulate between the two
// through a small pool, so memory stays a few batches. next is no longer
// called when PipeBatches returns.
func PipeBatches(ctx context.Context, codec *datafile.Codec, next func(*datafile.Batch) error, write func(*datafile.Batch) error) error {
	const depth = 3
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	free := make(chan *datafile.Batch, depth)
	full := make(chan *datafile.Batch, depth)
	for range depth {
		free <- codec.NewBatch()
	}
	var readErr error
	go func() {
		defer close(full)
		for {
			if err := ctx.Err(); err != nil {
				readErr = err
				return
			}
			var b *datafile.Batch
			select {
			case b = <-free:
			case <-ctx.Done():
				readErr = ctx.Err()
				return
			}
			if err := next(b); err != nil {
				if !errors.Is(err, io.EOF) {
					readErr = err
				}
				return
			}
			select {
			case full <- b:
			case <-ctx.Done():
				readErr = ctx.Err()
				return
			}
		}
	}()
	var writeErr error
	for b := range full {
		if writeErr == nil {
			if writeErr = ctx.Err(); writeErr == nil {
				writeErr = write(b)
			}
			if writeErr != nil {
				cancel() // the reader stops; the loop drains what it sent
			}
		}
		free <- b
	}
	// full is closed: the reader has returned and set readErr.
	if writeErr != nil {
		return writeErr
	}
	return readErr
}

// rewriteAppend concatenates append files in sequence order into new
// level-0 files whose sequence numbers restart at the first input's.
func (x *executor) rewriteAppend(ctx context.Context, b *table.BucketFiles, files []*manifest.Entry) ([]output, error) {
	files = slices.Clone(files)
	slices.SortStableFunc(files, func(a, b *manifest.Entry) int {
		return compareInt64(a.File.MinSequenceNumber, b.File.MinSequenceNumber)
	})
	var first int64
	if len(files) > 0 {
		first = files[0].File.MinSequenceNumber
	}
	r := write.NewAppendRoller(ctx, x.t, b.Partition, b.Bucket, first, manifest.FileSourceCompact)
	if x.targetSize > 0 {
		r.SetTargetSize(x.targetSize)
	}
	if x.rowCodec != nil {
		it := scan.AppendBatches(ctx, x.t, files, x.read.Fields, x.rowCodec, x.schemaOf)
		err := PipeBatches(ctx, x.rowCodec, it.NextInto, r.WriteBatch)
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			r.Abort()
			return nil, err
		}
	} else {
		for _, e := range files {
			if err := x.copyRows(ctx, e, r); err != nil {
				r.Abort()
				return nil, err
			}
		}
	}
	metas, err := r.Close()
	if err != nil {
		r.Abort()
		return nil, err
	}
	outs := make([]output, len(metas))
	for i, m := range metas {
		outs[i] = output{path: r.Written()[i], meta: m}
	}
	return outs, nil
}

// copyRows writes the rows of one append file to r, record by record.
func (x *executor) copyRows(ctx context.Context, e *manifest.Entry, r *write.AppendRoller) error {
	path, err := x.t.DataFilePath(e)
	if err != nil {
		return err
	}
	fileSchema, err := x.schemaOf(ctx, e.File.SchemaID)
	if err != nil {
		return err
	}
	rr, err := datafile.OpenRows(ctx, x.t.FileIO(), path, fileSchema.Fields, x.read.Fields)
	if err != nil {
		return err
	}
	defer rr.Close()
	for {
		row, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			err = r.Write(row)
		}
		if err != nil {
			return err
		}
	}
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
