package rescale

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// Options configure one rescale.
type Options struct {
	// BucketNum is the bucket count the partitions get (Paimon's
	// bucket_num): the table's bucket option for fixed-bucket tables, any
	// N >= 1 for postpone-bucket tables.
	BucketNum int
	// Partition selects the partitions by (a prefix of) their partition
	// values, key → value as Paimon's partition spec ("dt" → "2024-01-01");
	// empty selects every partition, as Paimon's rescale without a
	// partition does.
	Partition map[string]string
	// DryRun reports what would be rewritten without writing anything.
	DryRun bool
	// CommitUser identifies this run in the snapshot; empty: a fresh UUID.
	CommitUser string
	// TargetFileSize overrides target-file-size (tests).
	TargetFileSize int64
	// BeforeCommit, if set, runs after every file is written and before
	// the commit (tests interleave concurrent writers here).
	BeforeCommit func()
}

// Partition reports one rescaled partition.
type Partition struct {
	Partition   string `json:"partition"` // path, "" when unpartitioned
	FromBuckets int32  `json:"fromBuckets"`
	ToBuckets   int32  `json:"toBuckets"`
	FilesIn     int    `json:"filesIn"`
	FilesOut    int    `json:"filesOut"`
	RowsIn      int64  `json:"rowsIn"` // records stored in the input files
	RowsOut     int64  `json:"rowsOut"`
	BytesIn     int64  `json:"bytesIn"`
	BytesOut    int64  `json:"bytesOut"`
	// PostponedFiles are the partition's bucket-postpone files, which the
	// rescale leaves where they are (their rows are not yet readable).
	PostponedFiles int `json:"postponedFiles"`
}

// Result reports a rescale.
type Result struct {
	Table        string      `json:"table"`
	ReadSnapshot int64       `json:"readSnapshot"`
	Snapshot     int64       `json:"snapshot"` // the OVERWRITE snapshot, 0 on a dry run
	BucketNum    int         `json:"bucketNum"`
	OutputLevel  int         `json:"outputLevel"`
	DryRun       bool        `json:"dryRun"`
	Partitions   []Partition `json:"partitions"`
}

// ParsePartitionSpec reads a partition spec "k=v,k2=v2" (or the path form
// "k=v/k2=v2"); "" is the empty spec.
func ParsePartitionSpec(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '/' }) {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("partition spec %q: %q is not key=value", s, kv)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("partition spec %q: key %s given twice", s, k)
		}
		out[k] = v
	}
	return out, nil
}

// selected is one partition to rescale with its real buckets.
type selected struct {
	files   *table.PartitionFiles
	buckets []*table.BucketFiles // real buckets (>= 0), ascending
	report  Partition
}

// selectPartitions returns the partitions of fs matching spec that hold
// files in real buckets, each checked to have one bucket count.
func selectPartitions(t *table.Table, fs *table.FileSet, spec map[string]string, bucketNum int) ([]*selected, error) {
	keys := t.Schema().PartitionKeys
	for k := range spec {
		if !slices.Contains(keys, k) {
			return nil, fmt.Errorf("rescale %s: %s is not a partition key (partition keys: %v)", t.FullName(), k, keys)
		}
	}
	var out []*selected
	for _, p := range fs.Partitions {
		pairs, err := t.Paths().PartitionSpec(p.Row)
		if err != nil {
			return nil, fmt.Errorf("rescale %s: partition %s: %w", t.FullName(), p.Path, err)
		}
		match := true
		for _, kv := range pairs {
			if v, ok := spec[kv[0]]; ok && v != kv[1] {
				match = false
			}
		}
		if !match {
			continue
		}
		s := &selected{files: p, report: Partition{Partition: p.Path, ToBuckets: int32(bucketNum)}}
		for _, b := range p.Buckets {
			if b.Bucket < 0 {
				s.report.PostponedFiles += len(b.Files)
				continue
			}
			s.buckets = append(s.buckets, b)
			for i := range b.Files {
				e := &b.Files[i]
				if s.report.FromBuckets == 0 {
					s.report.FromBuckets = e.TotalBuckets
				} else if e.TotalBuckets != s.report.FromBuckets {
					return nil, fmt.Errorf("rescale %s: partition %q: file %s has %d total buckets, other files of the partition %d", t.FullName(), p.Path, e.File.FileName, e.TotalBuckets, s.report.FromBuckets)
				}
				s.report.FilesIn++
				s.report.RowsIn += e.File.RowCount
				s.report.BytesIn += e.File.FileSize
			}
		}
		if len(s.buckets) > 0 {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("rescale %s: no partition matching %v has data files in real buckets at snapshot %d; nothing to rescale", t.FullName(), spec, fs.Snapshot.ID)
	}
	return out, nil
}

// Run rescales the selected partitions of t to o.BucketNum buckets as one
// OVERWRITE snapshot. Rows are read as a full compaction of each old bucket
// reads them (every level, deletion vectors applied, retractions dropped)
// and written in key order, one sorted run per new bucket at the top
// level. A concurrent commit that changed a real bucket of a rescaled
// partition since the read snapshot makes the commit fail (a
// *table.ConflictError) and the table is left as it was; files in
// bucket-postpone are left alone and survive.
func Run(ctx context.Context, t *table.Table, o Options) (*Result, error) {
	if err := Supported(t, o.BucketNum); err != nil {
		return nil, err
	}
	if err := sameBucket(ctx, t); err != nil {
		return nil, err
	}
	latest, err := t.LatestSnapshot(ctx)
	if errors.Is(err, table.ErrNoSnapshot) {
		return nil, fmt.Errorf("rescale %s: the table has no snapshot; nothing to rescale", t.FullName())
	}
	if err != nil {
		return nil, fmt.Errorf("rescale %s: %w", t.FullName(), err)
	}
	fs, err := t.FileSet(ctx, latest)
	if err != nil {
		return nil, fmt.Errorf("rescale %s: %w", t.FullName(), err)
	}
	sel, err := selectPartitions(t, fs, o.Partition, o.BucketNum)
	if err != nil {
		return nil, err
	}
	dv := t.Options().DeletionVectorsEnabled
	for _, s := range sel {
		for _, ie := range fs.Index {
			if string(ie.Partition) != string(s.files.Partition) {
				continue
			}
			if !dv || ie.IndexFile.IndexType != manifest.IndexTypeDeletionVectors || ie.Bucket < 0 {
				return nil, fmt.Errorf("rescale %s: partition %q has index file %s (%s, bucket %d), which compactd does not know how to carry over a rescale", t.FullName(), s.files.Path, ie.IndexFile.FileName, ie.IndexFile.IndexType, ie.Bucket)
			}
		}
	}
	res := &Result{Table: t.FullName(), ReadSnapshot: latest.ID, BucketNum: o.BucketNum,
		OutputLevel: t.Options().NumLevels - 1, DryRun: o.DryRun}
	if o.DryRun {
		for _, s := range sel {
			res.Partitions = append(res.Partitions, s.report)
		}
		return res, nil
	}
	r, err := newRewriter(t, o)
	if err != nil {
		return nil, err
	}
	var entries []manifest.Entry
	var changes []table.IndexChange
	for _, s := range sel {
		adds, err := r.partition(ctx, s)
		if err != nil {
			r.abort()
			return nil, fmt.Errorf("rescale %s partition %q: %w", t.FullName(), s.files.Path, err)
		}
		for _, b := range s.buckets {
			for i := range b.Files {
				d := b.Files[i]
				d.Kind = manifest.FileKindDelete
				entries = append(entries, d)
			}
		}
		entries = append(entries, adds...)
		if dv {
			changes = append(changes, dropVectors(fs, s)...)
		}
		res.Partitions = append(res.Partitions, s.report)
	}
	if o.BeforeCommit != nil {
		o.BeforeCommit()
	}
	// An ALTER of the bucket option while the files were written would
	// leave the partitions with a count Java's writers refuse. (A narrow
	// window remains between this read and the publish, as in Java.)
	if err := sameBucket(ctx, t); err != nil {
		r.abort()
		return nil, err
	}
	cr, err := t.Commit(ctx, table.CommitRequest{
		Kind: table.CommitOverwrite, CommitUser: r.user, CommitIdentifier: table.BatchCommitIdentifier,
		Entries: entries, IndexChanges: changes, Check: true, LastSafeSnapshot: latest.ID,
	})
	if err != nil {
		if !errors.Is(err, table.ErrCommitOutcomeUnknown) {
			r.abort()
		}
		return nil, fmt.Errorf("rescale %s: %w", t.FullName(), err)
	}
	res.Snapshot = cr.Snapshot.ID
	slog.Info("rescaled", "table", t.FullName(), "snapshot", res.Snapshot, "read", latest.ID, "buckets", o.BucketNum, "partitions", len(res.Partitions))
	return res, nil
}

// sameBucket fails when the table's newest schema has another bucket
// option than the schema t was opened with (an ALTER since).
func sameBucket(ctx context.Context, t *table.Table) error {
	ls, err := t.LatestSchema(ctx)
	if err != nil {
		return fmt.Errorf("rescale %s: %w", t.FullName(), err)
	}
	if b := ls.CoreOptions().Bucket; b != t.Options().Bucket {
		return fmt.Errorf("rescale %s: the table was altered to bucket=%d (schema %d) after it was opened with bucket=%d; nothing was committed, run the rescale again", t.FullName(), b, ls.ID, t.Options().Bucket)
	}
	return nil
}

// dropVectors are the index changes removing every deletion-vector file of
// the partition's real buckets (the rewritten files have no deleted rows),
// each with its base so that a concurrent change of them conflicts. Java's
// overwrite deletes every index file of the partition the same way.
func dropVectors(fs *table.FileSet, s *selected) []table.IndexChange {
	byBucket := map[int32][]manifest.IndexFileMeta{}
	for _, b := range s.buckets {
		byBucket[b.Bucket] = nil
	}
	for _, ie := range fs.Index {
		if string(ie.Partition) == string(s.files.Partition) && ie.IndexFile.IndexType == manifest.IndexTypeDeletionVectors {
			byBucket[ie.Bucket] = append(byBucket[ie.Bucket], ie.IndexFile)
		}
	}
	buckets := make([]int32, 0, len(byBucket))
	for b := range byBucket {
		buckets = append(buckets, b)
	}
	slices.Sort(buckets)
	out := make([]table.IndexChange, 0, len(buckets))
	for _, b := range buckets {
		out = append(out, table.IndexChange{Partition: s.files.Partition, Bucket: b,
			IndexType: manifest.IndexTypeDeletionVectors, Base: byBucket[b]})
	}
	return out
}

// rewriter reads old buckets and writes new ones.
type rewriter struct {
	t       *table.Table
	o       Options
	user    string
	eng     *merge.Engine
	read    datafile.Schema
	lookup  bool
	level   int32
	route   *write.Router
	written []string
}

func newRewriter(t *table.Table, o Options) (*rewriter, error) {
	s := t.Schema()
	eng, err := merge.NewEngine(s.EffectiveOptions(), s.Fields, s.PrimaryKeys, s.PartitionKeys...)
	if err != nil {
		return nil, fmt.Errorf("rescale %s: %w", t.FullName(), err)
	}
	opts := t.Options()
	r := &rewriter{t: t, o: o, user: o.CommitUser, eng: eng,
		read: datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()},
		// Java reads lookup-style tables through LookupMergeFunction
		// (CoreOptions.needLookup), as scan does.
		lookup: eng.Name() != merge.EngineFirstRow && (opts.ChangelogProducer == table.ChangelogLookup || opts.DeletionVectorsEnabled || opts.ForceLookup),
		level:  int32(opts.NumLevels - 1),
	}
	if r.user == "" {
		r.user = uuid.NewString()
	}
	if r.route, err = write.NewRouter(s); err != nil {
		return nil, fmt.Errorf("rescale %s: %w", t.FullName(), err)
	}
	return r, nil
}

func (r *rewriter) schemaOf(ctx context.Context, id int64) (datafile.Schema, error) {
	return datafile.SchemaOf(ctx, r.t, id)
}

func (r *rewriter) abort() { r.t.DeleteUnreferenced(r.written) }

// partition rewrites one partition: the merged rows of its old buckets, in
// key order across them, each to its new bucket's roller. It returns the
// ADD entries of the new files.
func (r *rewriter) partition(ctx context.Context, s *selected) ([]manifest.Entry, error) {
	n := int32(r.o.BucketNum)
	keyTypes := r.eng.KeyTypes()
	h := &cursors{keyTypes: keyTypes}
	defer func() {
		for _, c := range h.all {
			c.it.Close()
		}
	}()
	for _, b := range s.buckets {
		dvs, err := scan.BucketDeletionVectors(ctx, r.t, b)
		if err != nil {
			return nil, fmt.Errorf("bucket %d: %w", b.Bucket, err)
		}
		files := make([]*manifest.Entry, len(b.Files))
		for i := range b.Files {
			files[i] = &b.Files[i]
		}
		it, err := scan.OpenMerged(ctx, r.t, files, r.eng, r.read, r.schemaOf, dvs, scan.Merge{DropDelete: true, Lookup: r.lookup})
		if err != nil {
			return nil, fmt.Errorf("bucket %d: %w", b.Bucket, err)
		}
		c := &cursor{it: it, bucket: b.Bucket}
		h.all = append(h.all, c)
		if err := c.advance(); err != nil {
			return nil, fmt.Errorf("bucket %d: %w", b.Bucket, err)
		}
		if !c.done {
			h.live = append(h.live, c)
		}
	}
	heap.Init(h)
	rollers := make([]*write.Roller, n)
	var out []manifest.Entry
	fail := func(err error) ([]manifest.Entry, error) {
		for _, w := range rollers {
			if w != nil {
				w.Abort()
			}
		}
		return nil, err
	}
	var prev *cursor
	var prevKey table.Row
	for h.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		c := h.live[0]
		kv := c.kv
		if prev != nil && table.CompareRows(keyTypes, prevKey, kv.Key) == 0 {
			// A key lives in one bucket of a consistent table.
			return fail(fmt.Errorf("key %v is stored in bucket %d and in bucket %d", []any(kv.Key), prev.bucket, c.bucket))
		}
		prev, prevKey = c, slices.Clone(kv.Key)
		if kv.Kind.IsAdd() {
			b, err := r.route.Bucket(kv.Value, n)
			if err != nil {
				return fail(err)
			}
			w := rollers[b]
			if w == nil {
				w = write.NewRoller(ctx, r.t, s.files.Partition, b, r.level, manifest.FileSourceAppend)
				if r.o.TargetFileSize > 0 {
					w.SetTargetSize(r.o.TargetFileSize)
				}
				rollers[b] = w
			}
			if err := w.Write(kv); err != nil {
				return fail(fmt.Errorf("bucket %d: %w", b, err))
			}
			s.report.RowsOut++
		}
		if err := c.advance(); err != nil {
			return fail(fmt.Errorf("bucket %d: %w", c.bucket, err))
		}
		if c.done {
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
	for b, w := range rollers {
		if w == nil {
			continue
		}
		metas, err := w.Close()
		if err != nil {
			return fail(fmt.Errorf("bucket %d: %w", b, err))
		}
		for _, m := range metas {
			out = append(out, manifest.Entry{Kind: manifest.FileKindAdd, Partition: s.files.Partition,
				Bucket: int32(b), TotalBuckets: n, File: m})
			s.report.FilesOut++
			s.report.BytesOut += m.FileSize
		}
	}
	for _, w := range rollers {
		if w != nil {
			r.written = append(r.written, w.Written()...)
		}
	}
	return out, nil
}

// cursor is one old bucket's merged rows.
type cursor struct {
	it     merge.Iterator
	bucket int32
	kv     table.KeyValue
	done   bool
}

func (c *cursor) advance() error {
	kv, err := c.it.Next()
	if errors.Is(err, io.EOF) {
		c.done = true
		return nil
	}
	if err != nil {
		return err
	}
	c.kv = kv
	return nil
}

// cursors is a min-heap of the live cursors by key.
type cursors struct {
	keyTypes []table.DataType
	all      []*cursor
	live     []*cursor
}

func (h *cursors) Len() int { return len(h.live) }
func (h *cursors) Less(i, j int) bool {
	return table.CompareRows(h.keyTypes, h.live[i].kv.Key, h.live[j].kv.Key) < 0
}
func (h *cursors) Swap(i, j int) { h.live[i], h.live[j] = h.live[j], h.live[i] }
func (h *cursors) Push(x any)    { h.live = append(h.live, x.(*cursor)) }
func (h *cursors) Pop() any {
	c := h.live[len(h.live)-1]
	h.live = h.live[:len(h.live)-1]
	return c
}
