package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// BatchRun yields the records of one sorted run as batches, in key order.
// A run whose records come from levels above 0 implements Leveled,
// reporting the level of the batch Next filled last (one batch holds
// records of one file, so of one level); otherwise its records count as
// level 0.
type BatchRun interface {
	Next(b *datafile.Batch, max int) error // io.EOF at the end
	Close() error
}

// BatchReader is Reader over batches: the same merge (Paimon's merge order,
// the reducer wrapper, DropDelete), but a key with a single record is copied
// column by column without becoming a table.KeyValue; only keys with several
// records are materialized and given to the merge function (or, for
// deduplicate and first-row, resolved on their sequence numbers and kinds).
// Lookup merges as the row path does (LookupMergeFunction, and with
// LookupCompact the lookup compaction: every key, a lone one included, is
// merged, and looked up when no record of it comes from a level above 0);
// NoReducer otherwise only for first-row (with Higher: the first-row
// compaction of Engine.FirstRowCompactOptions).
//
// Memory: one batch per run, the output batch and the current key's records.
//
// Its state is in named parts, each with its invariants: the inputs (runs
// and heap), the pending output, the current key's group and the merge
// function's view of it (batchMerger, in batchgroup.go).
type BatchReader struct {
	ctx   context.Context
	opts  Options
	codec *datafile.KVCodec
	size  int // rows per output batch (and per run batch asked for)

	in    batchInputs
	out   pendingOut
	clog  *changelogOut // FullChangelog.Batches set: the changelog as batches
	group keyGroup
	fn    batchMerger

	started bool   // the runs' first batches are loaded
	err     error  // sticky: returned by every NextInto after the first failure
	steps   uint64 // keys merged, to check ctx every 1024
}

// batchInputs are the runs and the heap of their cursors.
//
// Invariants: every cursor in heap has a current row (i < b.N); a run's
// cursor is in heap exactly until its run is exhausted; heap is ordered by
// heapOrder.compare (key, then run). A cursor's batch is refilled only through
// BatchReader.fill, which first flushes the pending output (that may
// reference the batch's rows).
type batchInputs struct {
	runs []*cursor // every run, in input order (Close closes them)
	heap heap
}

// pendingOut is the output being assembled for the current NextInto.
//
// Invariants: take names rows of run batches or of mat, in output order,
// not yet copied into batch; they stay valid until flush, which copies them
// and resets mat, so flush runs before any run batch is refilled and at the
// end of every NextInto. takeBytes is the value bytes of byteCols over the
// rows of take; bytes those of batch. batch is nil outside NextInto, and
// then take is empty.
type pendingOut struct {
	batch     *datafile.Batch // the caller's batch being filled
	bytes     int             // value bytes appended to batch so far
	take      []datafile.Take
	takeBytes int
	byteCols  []int           // columns holding byte strings (KVCodec.ByteCols)
	mat       *datafile.Batch // records built by merging several (materialized or assembled)
}

// outByteBudget bounds the value bytes of an output batch.
const outByteBudget = 16 << 20

// NewBatchReader merges runs through fn into batches of up to size rows.
// The reader owns the runs: Close closes them.
func NewBatchReader(ctx context.Context, codec *datafile.KVCodec, runs []BatchRun, fn Function, opts Options, size int) (*BatchReader, error) {
	if _, firstRow := fn.(*firstRow); opts.NoReducer && !firstRow && !opts.Lookup {
		return nil, errors.New("batch merge: no-reducer merges other than first-row and the lookup compaction take the row path")
	}
	if !BatchKeysSupported(opts.KeyTypes) {
		return nil, errors.New("batch merge: key types take the row path")
	}
	r := &BatchReader{ctx: ctx, codec: codec, opts: opts, size: max(size, 1),
		out: pendingOut{mat: codec.NewBatch(), byteCols: codec.ByteCols()},
		fn:  newBatchMerger(fn, opts)}
	switch {
	case opts.FullChangelog != nil && opts.FullChangelog.Batches != nil:
		r.clog = newChangelogOut(codec, opts.FullChangelog.Equal, opts.FullChangelog.Batches, r.size)
	case opts.LookupCompact != nil && opts.LookupCompact.Batches != nil:
		lc := *opts.LookupCompact
		r.clog = newChangelogOut(codec, lc.Equal, lc.Batches, r.size)
		lc.Changelog = func(before *table.KeyValue, after table.KeyValue, ok bool) error {
			return r.clog.addChanges(codec, before, after, ok)
		}
		r.opts.LookupCompact = &lc
	}
	r.in.heap.ord = heapOrder{batch: true, keys: codec.Kinds()[:codec.KeyCols()]}
	for i, src := range runs {
		r.in.runs = append(r.in.runs, &cursor{src: src, run: i, b: codec.NewBatch()})
	}
	return r, nil
}

// NewBatchReader merges runs of this table with a fresh merge function.
func (e *Engine) NewBatchReader(ctx context.Context, codec *datafile.KVCodec, runs []BatchRun, dropDelete bool, size int) (*BatchReader, error) {
	return NewBatchReader(ctx, codec, runs, e.NewFunction(), e.ReaderOptions(dropDelete), size)
}

// NewBatchReaderWith is NewBatchReader with the given options
// (ReaderOptions or FirstRowCompactOptions).
func (e *Engine) NewBatchReaderWith(ctx context.Context, codec *datafile.KVCodec, runs []BatchRun, opts Options, size int) (*BatchReader, error) {
	return NewBatchReader(ctx, codec, runs, e.NewFunction(), opts, size)
}

// NextInto fills out (a batch of the codec's layout, reset first) with the
// next merged records; io.EOF at the end. The caller owns out afterwards, so
// batches can be written on another goroutine while the next is merged.
func (r *BatchReader) NextInto(out *datafile.Batch) error {
	if r.err != nil {
		return r.err
	}
	if err := r.next(out); err != nil {
		r.err = err
		return err
	}
	return nil
}

func (r *BatchReader) next(out *datafile.Batch) error {
	if !r.started {
		r.started = true
		for _, c := range r.in.runs {
			ok, err := r.fill(c)
			if err != nil {
				return err
			}
			if ok {
				r.in.heap.push(c)
			}
		}
	}
	out.Reset()
	r.out.batch, r.out.bytes = out, 0
	defer func() { r.out.batch = nil }()
	// An output batch ends at size rows or, for large values, at
	// outByteBudget bytes.
	for r.out.batch.N+len(r.out.take) < r.size && r.out.bytes+r.out.takeBytes < outByteBudget && r.in.heap.len() > 0 {
		r.steps++
		if r.steps&1023 == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		if err := r.mergeOneKey(); err != nil {
			return err
		}
	}
	if err := r.flush(); err != nil {
		return err
	}
	if r.out.batch.N == 0 {
		if r.clog != nil {
			if err := r.clog.finish(); err != nil {
				return err
			}
		}
		return io.EOF
	}
	return nil
}

// flush flushes the pending output and changelog: afterwards no row of a
// run's batch is referenced.
func (r *BatchReader) flush() error {
	// The changelog first: it may take rows of the output's mat, which the
	// output's flush resets.
	if r.clog != nil {
		if err := r.clog.flush(); err != nil {
			return err
		}
	}
	return r.out.flush()
}

// flush gathers the pending rows into the output batch; afterwards no row
// of a run's batch or of mat is referenced, so they may be refilled.
// Outside next (no output batch) nothing can be pending.
func (o *pendingOut) flush() error {
	if o.batch == nil {
		return nil
	}
	err := o.batch.AppendTake(o.take)
	o.bytes += o.takeBytes
	clear(o.take)
	o.take = o.take[:0]
	o.takeBytes = 0
	o.mat.Reset()
	return err
}

// add queues row i of b for the output batch.
func (o *pendingOut) add(b *datafile.Batch, i int) {
	o.take = append(o.take, datafile.Take{Src: b, Row: int32(i)})
	if len(o.byteCols) > 0 {
		o.takeBytes += b.RowBytes(o.byteCols, i)
	}
}

// fill loads the cursor's next batch; false at the end of the run.
func (r *BatchReader) fill(c *cursor) (bool, error) {
	if err := r.flush(); err != nil {
		return false, err
	}
	for {
		err := c.src.Next(c.b, r.size)
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read sorted run %d: %w", c.run, err)
		}
		if c.b.N > 0 {
			c.i = 0
			c.level = 0
			if l, ok := c.src.(Leveled); ok {
				c.level = l.Level()
			}
			return true, nil
		}
	}
}

// advance moves the cursor past its current row; false at the end.
func (r *BatchReader) advance(c *cursor) (bool, error) {
	c.i++
	if c.i < c.b.N {
		return true, nil
	}
	return r.fill(c)
}

func (r *BatchReader) isRetract(c *cursor) bool {
	return !r.kind(c).IsAdd()
}

func (r *BatchReader) kind(c *cursor) table.RowKind {
	return table.RowKind(c.b.Cols[r.codec.KindCol()].I32[c.i])
}

func (r *BatchReader) mergeOneKey() error {
	top := r.in.heap.top()
	g := &r.group
	g.cursors = append(g.cursors[:0], top)
	if r.in.heap.len() > 1 {
		r.collectEqual(0)
	}
	if len(g.cursors) == 1 && !r.opts.NoReducer {
		c := top
		if full := r.opts.FullChangelog; full != nil && c.level != full.MaxLevel {
			if err := r.newAtTop(c); err != nil {
				return err
			}
		}
		if !(r.opts.DropDelete && r.isRetract(c)) {
			r.out.add(c.b, c.i)
		}
		return r.step(c)
	}
	merge := r.mergeGroup
	switch {
	case r.opts.Lookup:
		merge = r.mergeLookupGroup
	case r.opts.FullChangelog != nil:
		merge = r.mergeFullChangelogGroup
	}
	if err := merge(); err != nil {
		return err
	}
	// Stepping touches the heap and the runs' batches, never the group.
	for _, c := range g.cursors {
		if err := r.step(c); err != nil {
			return err
		}
	}
	return nil
}

// collectEqual adds to the group the heap descendants of node i whose key
// equals the group's. The heap orders by key first, so the records of the
// smallest key are the top and a subtree below it of equal keys: the search
// stops at the first greater key on each path.
func (r *BatchReader) collectEqual(i int) {
	h := r.in.heap.items
	for _, ch := range []int{2*i + 1, 2*i + 2} {
		if ch >= len(h) {
			continue
		}
		c := h[ch]
		if r.in.heap.ord.sameKey(c, r.group.cursors[0]) {
			r.group.cursors = append(r.group.cursors, c)
			r.collectEqual(ch)
		}
	}
}

// step advances c and restores the heap.
func (r *BatchReader) step(c *cursor) error {
	ok, err := r.advance(c)
	if err != nil {
		return err
	}
	idx := slices.Index(r.in.heap.items, c)
	if ok {
		r.in.heap.fix(idx)
	} else {
		r.in.heap.remove(idx)
	}
	return nil
}

// Close closes every run.
func (r *BatchReader) Close() error {
	var errs []error
	for _, c := range r.in.runs {
		errs = append(errs, c.src.Close())
	}
	r.in.runs, r.in.heap.items = nil, nil
	if r.err == nil {
		r.err = errors.New("merge reader closed")
	}
	return errors.Join(errs...)
}

// newAtTop gives the full-compaction changelog a lone record below the top
// level: a +I when it is an addition.
func (r *BatchReader) newAtTop(c *cursor) error {
	if r.clog != nil {
		if !r.isRetract(c) {
			r.clog.addAs(c.b, c.i, table.RowKindInsert)
		}
		return nil
	}
	kv, err := r.codec.Record(c.b, c.i)
	if err != nil {
		return fmt.Errorf("read sorted run %d: %w", c.run, err)
	}
	if err := r.opts.FullChangelog.Changelog(nil, kv, true); err != nil {
		return fmt.Errorf("merge key %v: changelog: %w", []any(kv.Key), err)
	}
	return nil
}
