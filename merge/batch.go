package merge

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/parquet-go/parquet-go"
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

// picker is implemented by merge functions whose result is one of their
// input records unchanged (deduplicate, first-row): the batch merge then
// copies that record instead of materializing the group. kinds are the
// group's row kinds in merge order.
type picker interface {
	pick(kinds []table.RowKind) (idx int, ok bool, err error)
}

func (d *deduplicate) pick(kinds []table.RowKind) (int, bool, error) {
	for i := len(kinds) - 1; i >= 0; i-- {
		if !d.ignoreDelete || kinds[i].IsAdd() {
			return i, true, nil
		}
	}
	return 0, false, nil
}

func (f *firstRow) pick(kinds []table.RowKind) (int, bool, error) {
	idx := -1
	for i, k := range kinds {
		if !k.IsAdd() {
			if f.ignoreDelete {
				continue
			}
			return 0, false, ErrFirstRowRetract
		}
		if idx < 0 {
			idx = i
		}
	}
	return idx, idx >= 0, nil
}

// BatchKeysSupported reports whether the batch merge can order keys of these
// types on their physical values (integers, strings, binary, booleans,
// decimals up to 18 digits, timestamps up to microseconds). Other key types
// (floating point, wide decimals, nanosecond timestamps) take the row path.
func BatchKeysSupported(types []table.DataType) bool {
	for _, t := range types {
		switch t.Root {
		case table.TypeBoolean, table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeBigInt,
			table.TypeDate, table.TypeTime, table.TypeChar, table.TypeVarChar, table.TypeBinary, table.TypeVarBinary:
		case table.TypeDecimal:
			if t.Precision > 18 {
				return false
			}
		case table.TypeTimestamp, table.TypeTimestampLTZ:
			if t.Precision > 6 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// BatchReader is Reader over batches: the same merge (Paimon's merge order,
// the reducer wrapper, DropDelete), but a key with a single record is copied
// column by column without becoming a table.KeyValue; only keys with several
// records are materialized and given to the merge function (or, for
// deduplicate and first-row, resolved on their sequence numbers and kinds).
// Lookup is not supported, NoReducer only for first-row (with Higher: the
// first-row compaction of Engine.FirstRowCompactOptions).
//
// Memory: one batch per run, the output batch and the current key's records.
type BatchReader struct {
	ctx   context.Context
	codec *datafile.KVCodec
	fn    Function
	pick  picker
	cols  *partialUpdate // column-wise partial-update (pickColumns)
	nVal  int
	src   []int // pickColumns' result per value field
	from  []int // per batch column, index into gtake
	gtake []datafile.Take
	opts  Options
	size  int
	runs  []*bcursor
	heap  []*bcursor
	out   *datafile.Batch // the batch being filled, during next
	mat   *datafile.Batch
	take  []datafile.Take
	// takeBytes are the value bytes of the rows in take; byteCols the
	// columns holding byte strings.
	takeBytes int
	outBytes  int
	byteCols  []int
	nKey      int
	group     []*bcursor
	recs      []groupRec
	kinds     []table.RowKind
	started   bool
	err       error
	steps     uint64
}

type bcursor struct {
	src   BatchRun
	run   int
	b     *datafile.Batch
	i     int
	level int // of the records in b
}

type groupRec struct {
	kv  table.KeyValue
	run int
	row int // index into group
}

// NewBatchReader merges runs through fn into batches of up to size rows.
// The reader owns the runs: Close closes them.
func NewBatchReader(ctx context.Context, codec *datafile.KVCodec, runs []BatchRun, fn Function, opts Options, size int) (*BatchReader, error) {
	if _, firstRow := fn.(*firstRow); opts.Lookup || (opts.NoReducer && !firstRow) {
		return nil, errors.New("batch merge: lookup merges, and no-reducer merges other than first-row, take the row path")
	}
	if !BatchKeysSupported(opts.KeyTypes) {
		return nil, errors.New("batch merge: key types take the row path")
	}
	r := &BatchReader{ctx: ctx, codec: codec, fn: fn, opts: opts, size: max(size, 1),
		mat: codec.NewBatch(), nKey: codec.KeyCols(), byteCols: codec.ByteCols()}
	if opts.SeqCompare == nil {
		if p, ok := fn.(picker); ok {
			r.pick = p
		}
		if p, ok := fn.(*partialUpdate); ok {
			r.cols = p
			r.nVal = len(p.cfg.nullable)
		}
	}
	for i, src := range runs {
		r.runs = append(r.runs, &bcursor{src: src, run: i, b: codec.NewBatch()})
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
		for _, c := range r.runs {
			ok, err := r.fill(c)
			if err != nil {
				return err
			}
			if ok {
				r.push(c)
			}
		}
	}
	out.Reset()
	r.out, r.outBytes = out, 0
	defer func() { r.out = nil }()
	// An output batch ends at size rows or, for large values, at
	// outByteBudget bytes.
	for r.out.N+len(r.take) < r.size && r.outBytes+r.takeBytes < outByteBudget && len(r.heap) > 0 {
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
	if r.out.N == 0 {
		return io.EOF
	}
	return nil
}

// outByteBudget bounds the value bytes of an output batch.
const outByteBudget = 16 << 20

// flush gathers the pending rows into the output batch; afterwards no row
// of a run's batch or of mat is referenced, so they may be refilled.
// Outside next (no output batch) nothing can be pending.
func (r *BatchReader) flush() error {
	if r.out == nil {
		return nil
	}
	err := r.out.AppendTake(r.take)
	r.outBytes += r.takeBytes
	clear(r.take)
	r.take = r.take[:0]
	r.takeBytes = 0
	r.mat.Reset()
	return err
}

// addTake queues row i of b for the output batch.
func (r *BatchReader) addTake(b *datafile.Batch, i int) {
	r.take = append(r.take, datafile.Take{Src: b, Row: int32(i)})
	if len(r.byteCols) > 0 {
		r.takeBytes += b.RowBytes(r.byteCols, i)
	}
}

// fill loads the cursor's next batch; false at the end of the run.
func (r *BatchReader) fill(c *bcursor) (bool, error) {
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
func (r *BatchReader) advance(c *bcursor) (bool, error) {
	c.i++
	if c.i < c.b.N {
		return true, nil
	}
	return r.fill(c)
}

func (r *BatchReader) isRetract(c *bcursor) bool {
	return !table.RowKind(c.b.Cols[r.codec.KindCol()].I32[c.i]).IsAdd()
}

func (r *BatchReader) mergeOneKey() error {
	top := r.heap[0]
	// The heap orders by key, then run: the records of the smallest key are
	// the cursors at the top whose key equals top's.
	r.group = append(r.group[:0], top)
	if len(r.heap) > 1 {
		r.collectEqual(0)
	}
	if len(r.group) == 1 && !r.opts.NoReducer {
		c := top
		if !(r.opts.DropDelete && r.isRetract(c)) {
			r.addTake(c.b, c.i)
		}
		return r.step(c)
	}
	if err := r.mergeGroup(); err != nil {
		return err
	}
	// Stepping touches the heap and the runs' batches, never r.group.
	for _, c := range r.group {
		if err := r.step(c); err != nil {
			return err
		}
	}
	return nil
}

// collectEqual adds the heap descendants of node i whose key equals the
// group's (the heap property bounds the search).
func (r *BatchReader) collectEqual(i int) {
	for _, ch := range []int{2*i + 1, 2*i + 2} {
		if ch >= len(r.heap) {
			continue
		}
		c := r.heap[ch]
		if r.compareKeys(c, r.group[0]) == 0 {
			r.group = append(r.group, c)
			r.collectEqual(ch)
		}
	}
}

// step advances c and restores the heap.
func (r *BatchReader) step(c *bcursor) error {
	ok, err := r.advance(c)
	if err != nil {
		return err
	}
	idx := slices.Index(r.heap, c)
	if ok {
		r.fix(idx)
	} else {
		r.remove(idx)
	}
	return nil
}

// sortGroup puts r.group in merge order using the physical sequence and
// kind columns (no sequence.field: SeqCompare is nil).
func (r *BatchReader) sortGroup() {
	seqCol := r.codec.SeqCol()
	slices.SortFunc(r.group, func(a, b *bcursor) int {
		if c := cmp.Compare(a.b.Cols[seqCol].I64[a.i], b.b.Cols[seqCol].I64[b.i]); c != 0 {
			return c
		}
		if aa, ba := !r.isRetract(a), !r.isRetract(b); aa != ba {
			if !aa {
				return -1
			}
			return 1
		}
		return cmp.Compare(int64(a.run), int64(b.run))
	})
}

// mergeColumns is the column-wise partial-update merge; false when
// pickColumns declines the group.
func (r *BatchReader) mergeColumns() (bool, error) {
	r.sortGroup()
	if r.src == nil {
		r.src = make([]int, r.nVal)
		r.from = make([]int, len(r.mat.Cols))
	}
	ok, err := r.cols.pickColumns(batchGroup{r}, r.src)
	if err != nil || !ok {
		return false, err
	}
	r.gtake = r.gtake[:0]
	for _, c := range r.group {
		r.gtake = append(r.gtake, datafile.Take{Src: c.b, Row: int32(c.i)})
	}
	last := len(r.group) - 1
	for c := range r.from {
		switch {
		case c <= r.codec.SeqCol():
			r.from[c] = last // key and sequence number of the last record
		case c == r.codec.KindCol():
			r.from[c] = last // overwritten with +I below
		default:
			r.from[c] = r.src[c-r.codec.KindCol()-1]
		}
	}
	if err := r.mat.AppendAssembled(r.gtake, r.from); err != nil {
		return false, err
	}
	r.mat.Cols[r.codec.KindCol()].I32[r.mat.N-1] = int32(table.RowKindInsert)
	r.addTake(r.mat, r.mat.N-1)
	return true, nil
}

// batchGroup is the groupView of r.group (sorted).
type batchGroup struct{ r *BatchReader }

func (g batchGroup) records() int       { return len(g.r.group) }
func (g batchGroup) retract(i int) bool { return g.r.isRetract(g.r.group[i]) }
func (g batchGroup) null(i, f int) bool {
	c := g.r.group[i]
	return c.b.Cols[g.r.codec.KindCol()+1+f].IsNull(c.i)
}
func (g batchGroup) value(i, f int) (any, error) {
	c := g.r.group[i]
	return g.r.codec.ValueAt(c.b, c.i, f)
}

// mergeGroup merges the records of one key held by r.group.
func (r *BatchReader) mergeGroup() error {
	kindCol := r.codec.KindCol()
	if r.cols != nil {
		if ok, err := r.mergeColumns(); ok || err != nil {
			return err
		}
	}
	if r.pick != nil {
		r.sortGroup()
		g := r.group
		r.kinds = r.kinds[:0]
		for _, c := range g {
			r.kinds = append(r.kinds, table.RowKind(c.b.Cols[kindCol].I32[c.i]))
		}
		idx, ok, err := r.pick.pick(r.kinds)
		if err != nil {
			return r.keyErr(g[0], err)
		}
		if ok && r.opts.Higher != nil && r.opts.NoReducer {
			if ok, err = r.notHigher(); err != nil {
				return err
			}
		}
		if ok && !(r.opts.DropDelete && !r.kinds[idx].IsAdd()) {
			c := g[idx]
			r.addTake(c.b, c.i)
		}
		return nil
	}
	r.recs = r.recs[:0]
	for _, c := range r.group {
		kv, err := r.codec.Record(c.b, c.i)
		if err != nil {
			return fmt.Errorf("read sorted run %d: %w", c.run, err)
		}
		r.recs = append(r.recs, groupRec{kv: kv, run: c.run})
	}
	slices.SortFunc(r.recs, func(a, b groupRec) int {
		if r.opts.SeqCompare != nil {
			if c := r.opts.SeqCompare(a.kv.Value, b.kv.Value); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(a.kv.Seq, b.kv.Seq); c != 0 {
			return c
		}
		if aa, ba := a.kv.Kind.IsAdd(), b.kv.Kind.IsAdd(); aa != ba {
			if !aa {
				return -1
			}
			return 1
		}
		return cmp.Compare(int64(a.run), int64(b.run))
	})
	r.fn.Reset()
	for _, g := range r.recs {
		if err := r.fn.Add(g.kv); err != nil {
			return fmt.Errorf("merge key %v: %w", []any(g.kv.Key), err)
		}
	}
	kv, ok, err := r.fn.Result()
	if err != nil {
		return fmt.Errorf("merge key %v: %w", []any(r.recs[0].kv.Key), err)
	}
	if ok && r.opts.Higher != nil && r.opts.NoReducer {
		if ok, err = r.notHigher(); err != nil {
			return err
		}
	}
	if !ok || (r.opts.DropDelete && !kv.Kind.IsAdd()) {
		return nil
	}
	if err := r.codec.Append(r.mat, kv); err != nil {
		return fmt.Errorf("merge key %v: %w", []any(kv.Key), err)
	}
	r.addTake(r.mat, r.mat.N-1)
	return nil
}

// notHigher is FirstRowMergeFunctionWrapper's test on r.group: false when
// none of the key's records comes from a level above 0 and opts.Higher holds
// the key.
func (r *BatchReader) notHigher() (bool, error) {
	for _, c := range r.group {
		if c.level > 0 {
			return true, nil
		}
	}
	c := r.group[0]
	key, err := r.codec.KeyAt(c.b, c.i)
	if err != nil {
		return false, fmt.Errorf("read sorted run %d: %w", c.run, err)
	}
	held, err := r.opts.Higher.Contains(key)
	if err != nil {
		return false, fmt.Errorf("merge key %v: look up in higher levels: %w", []any(key), err)
	}
	return !held, nil
}

func (r *BatchReader) keyErr(c *bcursor, err error) error {
	kv, kerr := r.codec.Record(c.b, c.i)
	if kerr != nil {
		return err
	}
	return fmt.Errorf("merge key %v: %w", []any(kv.Key), err)
}

// compareKeys orders the current keys of two cursors on their physical
// values (BatchKeysSupported lists the types where that is Paimon's order).
func (r *BatchReader) compareKeys(a, b *bcursor) int {
	for k := range r.nKey {
		x, y := &a.b.Cols[k], &b.b.Cols[k]
		var c int
		switch x.Kind {
		case parquet.Int64:
			c = cmp.Compare(x.I64[a.i], y.I64[b.i])
		case parquet.Int32:
			c = cmp.Compare(int64(x.I32[a.i]), int64(y.I32[b.i]))
		case parquet.ByteArray, parquet.FixedLenByteArray:
			c = bytes.Compare(x.BytesAt(a.i), y.BytesAt(b.i))
		case parquet.Boolean:
			c = cmp.Compare(b2i(x.Bool[a.i]), b2i(y.Bool[b.i]))
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (r *BatchReader) less(a, b *bcursor) bool {
	if c := r.compareKeys(a, b); c != 0 {
		return c < 0
	}
	return a.run < b.run
}

func (r *BatchReader) push(c *bcursor) {
	r.heap = append(r.heap, c)
	r.up(len(r.heap) - 1)
}

func (r *BatchReader) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !r.less(r.heap[i], r.heap[p]) {
			break
		}
		r.heap[i], r.heap[p] = r.heap[p], r.heap[i]
		i = p
	}
}

func (r *BatchReader) down(i int) {
	h := r.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if rr := l + 1; rr < len(h) && r.less(h[rr], h[l]) {
			m = rr
		}
		if !r.less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// fix restores the heap after the key of node i grew.
func (r *BatchReader) fix(i int) { r.down(i) }

func (r *BatchReader) remove(i int) {
	n := len(r.heap) - 1
	r.heap[i] = r.heap[n]
	r.heap[n] = nil
	r.heap = r.heap[:n]
	if i < n {
		r.down(i)
		r.up(i)
	}
}

// Close closes every run.
func (r *BatchReader) Close() error {
	var errs []error
	for _, c := range r.runs {
		errs = append(errs, c.src.Close())
	}
	r.runs, r.heap = nil, nil
	if r.err == nil {
		r.err = errors.New("merge reader closed")
	}
	return errors.Join(errs...)
}
