package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// ErrUnsupported marks tables whose read path compactd does not implement;
// scanning them fails up front instead of returning different rows.
var ErrUnsupported = errors.New("not supported")

// checkSupported refuses table features that change what a batch read
// returns beyond the live files of the main branch.
func checkSupported(t *table.Table) error {
	o := t.Options()
	if v, ok := o.Get("scan.fallback-branch"); ok && v != "" {
		return fmt.Errorf("scan %s: %w: scan.fallback-branch=%s (rows of missing partitions come from another branch)", t.FullName(), ErrUnsupported, v)
	}
	if v, ok := o.Get(table.OptPostponeMergeOnRead); ok && strings.EqualFold(strings.TrimSpace(v), "true") && o.Bucket == table.BucketPostpone {
		return fmt.Errorf("scan %s: %w: %s=true (batch reads merge postponed rows into real buckets)", t.FullName(), ErrUnsupported, table.OptPostponeMergeOnRead)
	}
	if o.DataEvolutionEnabled {
		return fmt.Errorf("scan %s: %w: data-evolution.enabled=true (rows are stitched from several files by row id)", t.FullName(), ErrUnsupported)
	}
	for _, f := range t.Schema().Fields {
		if f.Type.Root == table.TypeBlob {
			return fmt.Errorf("scan %s: %w: BLOB column %s", t.FullName(), ErrUnsupported, f.Name)
		}
		if f.Type.Has(table.TypeVector) {
			return fmt.Errorf("scan %s: %w: column %s of type %s (VECTOR data cannot be read yet)", t.FullName(), ErrUnsupported, f.Name, f.Type)
		}
	}
	return nil
}

// Scanner reads the rows of one snapshot of a table.
type Scanner struct {
	t      *table.Table
	fs     *table.FileSet
	read   datafile.Schema
	engine *merge.Engine // nil for append tables
	// skipLevel0 mirrors Java's batch scan of first-row tables and of
	// deletion-vector tables without merge-on-read
	// (CoreOptions.batchScanSkipLevel0): files at level 0 are not visible
	// until compaction moves them up, and the files above are read raw when
	// their metadata says they hold no retractions (see rawConvertible).
	skipLevel0 bool
	// lookup merges as Java's read of lookup-style tables (Merge.Lookup).
	lookup bool
	// codec is set when primary-key buckets merge as column batches
	// (OpenMergedBatches), decided as compaction decides (BatchCodec);
	// rowCodec likewise for append buckets (AppendBatches). nil: record by
	// record. rowPath forces the record path (tests compare the two paths).
	codec    *datafile.KVCodec
	rowCodec *datafile.Codec
	rowPath  bool
}

// New prepares a scan of snapshot s (nil: the latest). A table without
// snapshots scans to no rows.
func New(ctx context.Context, t *table.Table, s *table.Snapshot) (*Scanner, error) {
	if s == nil {
		latest, err := t.LatestSnapshot(ctx)
		if err != nil && !errors.Is(err, table.ErrNoSnapshot) {
			return nil, fmt.Errorf("scan %s: %w", t.FullName(), err)
		}
		s = latest
	}
	if err := checkSupported(t); err != nil {
		return nil, err
	}
	sc := &Scanner{t: t}
	schema := t.Schema()
	sc.read = datafile.Schema{Fields: schema.Fields, KeyNames: schema.TrimmedPrimaryKeys()}
	if schema.HasPrimaryKey() {
		eng, err := merge.NewEngine(schema.EffectiveOptions(), schema.Fields, schema.PrimaryKeys, schema.PartitionKeys...)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", t.FullName(), err)
		}
		sc.engine = eng
		opts := t.Options()
		sc.skipLevel0 = (opts.DeletionVectorsEnabled && !opts.DeletionVectorsMergeOnRead) || eng.Name() == merge.EngineFirstRow
		// CoreOptions.needLookup: PrimaryKeyFileStoreTable wraps the merge
		// function of every engine but first-row in LookupMergeFunction.
		sc.lookup = eng.Name() != merge.EngineFirstRow &&
			(opts.ChangelogProducer == table.ChangelogLookup || opts.DeletionVectorsEnabled || opts.ForceLookup)
		codec, err := BatchCodec(eng, sc.read)
		if err != nil {
			slog.Debug("scanning record by record", "table", t.FullName(), "reason", err)
		}
		sc.codec = codec
	} else {
		codec, err := datafile.NewCodec(sc.read.Fields)
		if err != nil {
			slog.Debug("scanning record by record", "table", t.FullName(), "reason", err)
		}
		sc.rowCodec = codec
	}
	if s != nil {
		fs, err := t.FileSet(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", t.FullName(), err)
		}
		sc.fs = fs
	}
	return sc, nil
}

// ReadType is the row type of the rows the scan returns.
func (sc *Scanner) ReadType() table.RowType { return sc.read.Fields }

// Each calls fn for every row, partition by partition and bucket by bucket,
// in key order within a bucket for primary-key tables.
func (sc *Scanner) Each(ctx context.Context, fn func(table.Row) error) error {
	return sc.each(ctx, &sink{row: fn})
}

// EachJSON calls fn with every row as AppendJSON writes it (without a
// newline), in Each's order. line is fn's only while it runs. Buckets on
// the batch path are written straight from the column vectors (batchJSON),
// which costs a fraction of boxing every value into a table.Row (#19);
// the others go through Each's rows and AppendJSON.
func (sc *Scanner) EachJSON(ctx context.Context, fn func(line []byte) error) error {
	rt := sc.read.Fields
	s := &sink{line: fn}
	s.row = func(row table.Row) error {
		var err error
		if s.buf, err = AppendJSON(s.buf[:0], rt, row); err != nil {
			return fmt.Errorf("encode row: %w", err)
		}
		return fn(s.buf)
	}
	if sc.codec != nil {
		cols := make([]int, len(rt))
		for j := range cols {
			cols[j] = sc.codec.ValueCol(j)
		}
		s.merged = newBatchJSON(rt, sc.codec.Codec, cols)
	}
	if sc.rowCodec != nil {
		cols := make([]int, len(rt))
		for j := range cols {
			cols[j] = j
		}
		s.append = newBatchJSON(rt, sc.rowCodec, cols)
	}
	return sc.each(ctx, s)
}

// sink is where a scan's rows go: row takes every row, unless line is set
// (EachJSON): then the batch paths encode rows with merged (primary-key
// buckets) or append (append buckets) and pass them to line.
type sink struct {
	row            func(table.Row) error
	line           func([]byte) error
	merged, append *batchJSON
	buf            []byte
}

// lines passes the rows of b that keep (nil: all) accepts to s.line,
// encoded by e.
func (s *sink) lines(e *batchJSON, b *datafile.Batch, keep func(i int) bool) error {
	for i := range b.N {
		if keep != nil && !keep(i) {
			continue
		}
		var err error
		if s.buf, err = e.appendRow(s.buf[:0], b, i); err != nil {
			return fmt.Errorf("encode row: %w", err)
		}
		if err := s.line(s.buf); err != nil {
			return err
		}
	}
	return nil
}

func (sc *Scanner) each(ctx context.Context, out *sink) error {
	if sc.fs == nil {
		return nil
	}
	for _, b := range sc.fs.Buckets() {
		if b.Bucket == table.BucketPostpone {
			// Java's batch scan reads real buckets only: postponed rows
			// are invisible until a postponed compaction moves them.
			continue
		}
		if err := sc.bucket(ctx, b, out); err != nil {
			return fmt.Errorf("scan %s partition %q bucket %d: %w", sc.t.FullName(), partitionPath(sc.fs, b), b.Bucket, err)
		}
	}
	return nil
}

func partitionPath(fs *table.FileSet, b *table.BucketFiles) string {
	for _, p := range fs.Partitions {
		if string(p.Partition) == string(b.Partition) {
			return p.Path
		}
	}
	return ""
}

func (sc *Scanner) fileSchema(ctx context.Context, id int64) (datafile.Schema, error) {
	return datafile.SchemaOf(ctx, sc.t, id)
}

func (sc *Scanner) bucket(ctx context.Context, b *table.BucketFiles, out *sink) error {
	fn := out.row
	dvs, err := sc.deletionVectors(ctx, b)
	if err != nil {
		return err
	}
	if sc.engine == nil {
		return sc.appendBucket(ctx, b, dvs, out)
	}
	var files []*manifest.Entry
	for i := range b.Files {
		e := &b.Files[i]
		if sc.skipLevel0 && e.File.Level == 0 {
			continue
		}
		files = append(files, e)
	}
	if sc.skipLevel0 && rawConvertible(files) {
		return sc.rawBucket(ctx, files, dvs, fn)
	}
	m := Merge{DropDelete: true, Lookup: sc.lookup}
	if sc.codec != nil && !sc.rowPath {
		it, err := OpenMergedBatches(ctx, sc.t, files, sc.engine, sc.read, sc.codec, sc.fileSchema, dvs, m)
		if err != nil {
			return err
		}
		return sc.emitMerged(ctx, it, out)
	}
	r, err := OpenMerged(ctx, sc.t, files, sc.engine, sc.read, sc.fileSchema, dvs, m)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		kv, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !kv.Kind.IsAdd() {
			continue
		}
		if err := fn(kv.Value); err != nil {
			return err
		}
	}
}

// emitMerged passes the added rows of the merged batches of it to fn, as
// the record path does with the records of OpenMerged: retractions left
// after the merge are skipped, values decoded column by column.
func (sc *Scanner) emitMerged(ctx context.Context, it BatchIterator, out *sink) error {
	kindCol := sc.codec.KindCol()
	nVal := len(sc.read.Fields)
	fn := out.row
	return eachBatch(ctx, it, sc.codec.NewBatch(), func(b *datafile.Batch) error {
		kinds := b.Cols[kindCol].I32
		if out.line != nil {
			return out.lines(out.merged, b, func(i int) bool { return table.RowKind(kinds[i]).IsAdd() })
		}
		// One allocation for the batch's rows; fn may keep them.
		vals := make([]any, b.N*nVal)
		for i := range b.N {
			if !table.RowKind(kinds[i]).IsAdd() {
				continue
			}
			row := table.Row(vals[i*nVal : (i+1)*nVal : (i+1)*nVal])
			for j := range row {
				v, err := sc.codec.ValueAt(b, i, j)
				if err != nil {
					return err
				}
				row[j] = v
			}
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	})
}

// eachBatch passes every batch it yields (filled into b) to fn until
// io.EOF, then closes it.
func eachBatch(ctx context.Context, it BatchIterator, b *datafile.Batch, fn func(*datafile.Batch) error) (err error) {
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := it.NextInto(b); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
	}
}

// rawConvertible is Java's test for reading a first-row or deletion-vector
// bucket without merging (MergeTreeSplitGenerator.splitForBatch with
// PrimaryKeyTableRawFileSplitReadProvider.match): every file above level 0
// with a known delete row count of 0. Such a read returns every stored
// record, so a key stored at two levels is read twice: compaction must
// never store one (see merge.Engine.FirstRowCompactOptions).
func rawConvertible(files []*manifest.Entry) bool {
	for _, e := range files {
		if e.File.Level == 0 || e.File.DeleteRowCount == nil || *e.File.DeleteRowCount != 0 {
			return false
		}
	}
	return true
}

// rawBucket reads the files as Java's raw split read does, every record as
// a row, without merging. Rows come in key order (each level is one sorted
// run; records of one key at several levels come one after the other).
func (sc *Scanner) rawBucket(ctx context.Context, files []*manifest.Entry, dvs map[string]DeletionVector, fn func(table.Row) error) error {
	keyTypes := sc.engine.KeyTypes()
	byLevel := map[int32][]*manifest.Entry{}
	for _, e := range files {
		byLevel[e.File.Level] = append(byLevel[e.File.Level], e)
	}
	levels := make([]int32, 0, len(byLevel))
	for l := range byLevel {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	type cursor struct {
		it   merge.Iterator
		kv   table.KeyValue
		done bool
	}
	var cursors []*cursor
	defer func() {
		for _, c := range cursors {
			c.it.Close()
		}
	}()
	for _, l := range levels {
		run := byLevel[l]
		mins := make(map[*manifest.Entry]table.Row, len(run))
		for _, e := range run {
			lo, err := table.DecodeBinaryRow(keyTypes, e.File.MinKey)
			if err != nil {
				return fmt.Errorf("data file %s: min key: %w", e.File.FileName, err)
			}
			mins[e] = lo
		}
		slices.SortFunc(run, func(a, b *manifest.Entry) int { return table.CompareRows(keyTypes, mins[a], mins[b]) })
		parts := make([]merge.Iterator, 0, len(run))
		for _, e := range run {
			parts = append(parts, &lazyFile{ctx: ctx, t: sc.t, e: e, read: sc.read, schemaOf: sc.fileSchema, dv: dvs[e.File.FileName]})
		}
		cursors = append(cursors, &cursor{it: merge.Concat(parts...)})
	}
	next := func(c *cursor) error {
		kv, err := c.it.Next()
		if errors.Is(err, io.EOF) {
			c.done = true
			return nil
		}
		if err != nil {
			return err
		}
		if !kv.Kind.IsAdd() {
			return fmt.Errorf("a data file whose metadata counts no retractions holds a %s record of key %v", kv.Kind.ShortString(), []any(kv.Key))
		}
		c.kv = kv
		return nil
	}
	for _, c := range cursors {
		if err := next(c); err != nil {
			return err
		}
	}
	for {
		var min *cursor
		for _, c := range cursors {
			if !c.done && (min == nil || table.CompareRows(keyTypes, c.kv.Key, min.kv.Key) < 0) {
				min = c
			}
		}
		if min == nil {
			return nil
		}
		if err := fn(min.kv.Value); err != nil {
			return err
		}
		if err := next(min); err != nil {
			return err
		}
	}
}

func (sc *Scanner) appendBucket(ctx context.Context, b *table.BucketFiles, dvs map[string]DeletionVector, out *sink) error {
	fn := out.row
	files := make([]*manifest.Entry, len(b.Files))
	for i := range b.Files {
		files[i] = &b.Files[i]
	}
	sortBySequence(files)
	// Buckets with deletion vectors stay on the record path: compactd
	// cannot write an append table's vectors, so the batch path could not
	// be tested against them.
	if sc.rowCodec != nil && !sc.rowPath && len(dvs) == 0 {
		return sc.emitAppend(ctx, AppendBatches(ctx, sc.t, files, sc.read.Fields, sc.rowCodec, sc.fileSchema), out)
	}
	for _, e := range files {
		path, err := sc.t.DataFilePath(e)
		if err != nil {
			return err
		}
		fileSchema, err := sc.fileSchema(ctx, e.File.SchemaID)
		if err != nil {
			return fmt.Errorf("data file %s: %w", path, err)
		}
		r, err := datafile.OpenRows(ctx, sc.t.FileIO(), path, fileSchema.Fields, sc.read.Fields)
		if err != nil {
			return err
		}
		dv := dvs[e.File.FileName]
		for {
			row, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				r.Close()
				return err
			}
			if dv != nil && dv.IsDeleted(r.Pos()) {
				continue
			}
			if err := fn(row); err != nil {
				r.Close()
				return err
			}
		}
		if err := r.Close(); err != nil {
			return fmt.Errorf("data file %s: %w", path, err)
		}
	}
	return nil
}

// emitAppend passes the rows of an append bucket's batches to fn.
func (sc *Scanner) emitAppend(ctx context.Context, it BatchIterator, out *sink) error {
	fn := out.row
	return eachBatch(ctx, it, sc.rowCodec.NewBatch(), func(b *datafile.Batch) error {
		if out.line != nil {
			return out.lines(out.append, b, nil)
		}
		for i := range b.N {
			row, err := sc.rowCodec.RowAt(b, i)
			if err != nil {
				return err
			}
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	})
}
