package datafile

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
)

// batchState is what a pqWriter needs to take batches: the decoder of each
// leaf (stats and keys are kept as Go values) and a value buffer.
type batchState struct {
	decs     []decodeFunc
	kinds    []parquet.Kind
	optional []bool
	vals     []parquet.Value
	scratch  [][]parquet.Value // per encoding worker
	order    []int             // columns in the order parallel workers take them (encodeOrder)
}

func (w *pqWriter) initBatch(fields table.RowType) error {
	if w.bs != nil {
		return nil
	}
	if w.nLeaves != len(fields) {
		return fmt.Errorf("data file %s: batches need flat columns", w.path)
	}
	leaves := w.layout.schema.Columns()
	bs := &batchState{}
	for i, f := range fields {
		leaf, ok := w.layout.schema.Lookup(leaves[i]...)
		if !ok {
			return fmt.Errorf("data file %s: column %s missing from its layout", w.path, f.Name)
		}
		dec, err := leafDecoder(f.Type, leaf.Node.Type())
		if err != nil {
			return fmt.Errorf("data file %s: column %s: %w", w.path, f.Name, err)
		}
		bs.decs = append(bs.decs, dec)
		bs.kinds = append(bs.kinds, leaf.Node.Type().Kind())
		bs.optional = append(bs.optional, leaf.Node.Optional())
	}
	bs.order = encodeOrder(bs.kinds)
	w.bs = bs
	return nil
}

// writeBatch writes rows [from, to) of b, whose columns are the file's leaf
// columns in order.
func (w *pqWriter) writeBatch(b *Batch, from, to int) error {
	if len(b.Cols) != w.nLeaves {
		return fmt.Errorf("write data file %s: batch has %d columns, file %d", w.path, len(b.Cols), w.nLeaves)
	}
	if to <= from {
		return nil
	}
	if from < 0 || to > b.N {
		return fmt.Errorf("write data file %s: rows [%d, %d) of a batch of %d", w.path, from, to, b.N)
	}
	for c := range b.Cols {
		v := &b.Cols[c]
		if v.Kind != w.bs.kinds[c] || v.Optional() != w.bs.optional[c] {
			return fmt.Errorf("write data file %s: batch column %d is %s (optional %v), the file's %s (optional %v)",
				w.path, c, v.Kind, v.Optional(), w.bs.kinds[c], w.bs.optional[c])
		}
	}
	// Rows written one by one are still buffered: they come first.
	if err := w.flushBatch(); err != nil {
		return err
	}
	cws := w.w.ColumnWriters()
	if workers := min(encodeWorkers, len(b.Cols)/minColumnsPerWorker); workers > 1 && to-from >= minParallelRows {
		if err := w.writeColumnsParallel(b, from, to, cws, workers); err != nil {
			return err
		}
	} else {
		for c := range b.Cols {
			vals, size, err := w.writeColumn(b, from, to, cws, c, w.bs.vals[:0])
			w.bs.vals = vals
			w.buffered += size
			if err != nil {
				return err
			}
		}
	}
	clear(w.bs.vals)
	w.rows += int64(to - from)
	if w.buffered >= w.blockSize {
		if err := w.w.Flush(); err != nil {
			return fmt.Errorf("write data file %s: %w", w.path, err)
		}
		w.buffered = 0
	}
	return nil
}

// writeColumn encodes rows [from, to) of column c through its column
// writer, using vals as scratch (returned for reuse), and returns their
// estimated encoded size.
func (w *pqWriter) writeColumn(b *Batch, from, to int, cws []*parquet.ColumnWriter, c int, vals []parquet.Value) ([]parquet.Value, int64, error) {
	v := &b.Cols[c]
	vals, size := appendPQValues(vals, v, from, to, c)
	if _, err := cws[c].WriteRowValues(vals); err != nil {
		return vals, size, fmt.Errorf("write data file %s: %w", w.path, err)
	}
	if err := w.colls[c].addVec(v, from, to, w.bs.decs[c]); err != nil {
		return vals, size, fmt.Errorf("write data file %s: %w", w.path, err)
	}
	return vals, size, nil
}

// encodeWorkers is how many goroutines encode the columns of one batch.
// Encoding (values to pages, dictionaries, compression) is most of a
// compaction's CPU and each column's writer is independent of the others
// (its own buffers, dictionary and pages; the codecs and buffer pools it
// shares are safe for concurrent use), so one large bucket can use more
// than the one core its writer goroutine has. Narrow batches stay serial:
// handing a few columns to other goroutines costs more than it saves.
var encodeWorkers = min(runtime.GOMAXPROCS(0), 4)

const (
	minColumnsPerWorker = 4
	minParallelRows     = 256
)

// writeColumnsParallel is the column loop of writeBatch on several
// goroutines. Each worker takes the next column of w.bs.order until none
// is left, so one expensive column does not leave the other workers idle
// at the join: with a fixed split (worker g encoding columns g, g+workers,
// ...) the wide benchmark table's four VARCHAR columns, whose dictionary
// inserts cost the most, all fell to one of two workers.
func (w *pqWriter) writeColumnsParallel(b *Batch, from, to int, cws []*parquet.ColumnWriter, workers int) error {
	if len(w.bs.scratch) < workers {
		w.bs.scratch = make([][]parquet.Value, workers)
	}
	order := w.bs.order
	errs := make([]error, workers)
	sizes := make([]int64, workers)
	var next atomic.Int32
	var wg sync.WaitGroup
	work := func(g int) {
		vals := w.bs.scratch[g][:0]
		for {
			i := int(next.Add(1)) - 1
			if i >= len(order) {
				break
			}
			var err error
			var size int64
			vals, size, err = w.writeColumn(b, from, to, cws, order[i], vals[:0])
			sizes[g] += size
			if err != nil {
				errs[g] = err
				break
			}
		}
		clear(vals)
		w.bs.scratch[g] = vals
	}
	for g := 1; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(g)
		}()
	}
	work(0)
	wg.Wait()
	for _, n := range sizes {
		w.buffered += n
	}
	return errors.Join(errs...)
}

// encodeOrder is the order parallel workers take the columns of these
// kinds in: the costliest kinds first (byte arrays, with their dictionary
// inserts and variable lengths, then the 8- and 12-byte kinds), so the last
// columns taken are cheap and the workers finish close together. Within a
// kind, file order.
func encodeOrder(kinds []parquet.Kind) []int {
	cost := func(k parquet.Kind) int {
		switch k {
		case parquet.ByteArray, parquet.FixedLenByteArray:
			return 0
		case parquet.Int64, parquet.Double, parquet.Int96:
			return 1
		}
		return 2
	}
	order := make([]int, len(kinds))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cost(kinds[a]) - cost(kinds[b]) })
	return order
}

// appendPQValues appends rows [from, to) of v as leveled Parquet values of
// leaf column col and returns them with their estimated encoded size.
func appendPQValues(out []parquet.Value, v *Vec, from, to, col int) ([]parquet.Value, int64) {
	n := to - from
	base := len(out)
	out = slices.Grow(out, n)[:base+n]
	dst := out[base:]
	var size int64
	switch v.Kind {
	case parquet.Boolean:
		for j, x := range v.Bool[from:to] {
			dst[j] = parquet.BooleanValue(x)
		}
		size = int64(n)
	case parquet.Int32:
		for j, x := range v.I32[from:to] {
			dst[j] = parquet.Int32Value(x)
		}
		size = 4 * int64(n)
	case parquet.Int64:
		for j, x := range v.I64[from:to] {
			dst[j] = parquet.Int64Value(x)
		}
		size = 8 * int64(n)
	case parquet.Int96:
		for j, x := range v.I96[from:to] {
			dst[j] = parquet.Int96Value(x)
		}
		size = 12 * int64(n)
	case parquet.Float:
		for j, x := range v.F32[from:to] {
			dst[j] = parquet.FloatValue(x)
		}
		size = 4 * int64(n)
	case parquet.Double:
		for j, x := range v.F64[from:to] {
			dst[j] = parquet.DoubleValue(x)
		}
		size = 8 * int64(n)
	case parquet.ByteArray:
		for j := range dst {
			dst[j] = parquet.ByteArrayValue(v.BytesAt(from + j))
		}
		size = 4*int64(n) + int64(v.Offs[to]-v.Offs[from])
	case parquet.FixedLenByteArray:
		for j := range dst {
			dst[j] = parquet.FixedLenByteArrayValue(v.BytesAt(from + j))
		}
		size = int64(v.Offs[to] - v.Offs[from])
	}
	if v.Null != nil {
		// A null counts one byte, as valueSize has it.
		width := fixedWidth(v.Kind)
		for j, null := range v.Null[from:to] {
			if null {
				dst[j] = parquet.Value{}
				size += 1 - width
			} else {
				dst[j].SetDefinitionLevel(1)
			}
		}
	}
	for j := range dst {
		dst[j].SetColumnIndex(col)
	}
	return out, size
}

// fixedWidth is what appendPQValues counts per value of a kind besides its
// bytes (0 for FixedLenByteArray, whose bytes are all of it).
func fixedWidth(k parquet.Kind) int64 {
	switch k {
	case parquet.Boolean:
		return 1
	case parquet.Int32, parquet.Float, parquet.ByteArray:
		return 4
	case parquet.Int64, parquet.Double:
		return 8
	case parquet.Int96:
		return 12
	}
	return 0
}

// addVec folds rows [from, to) of a flat column into the stats: the batch
// minimum and maximum are found on the physical values, whose order is the
// logical order for the kinds handled here, and only they are decoded.
func (c *colCollector) addVec(v *Vec, from, to int, dec decodeFunc) error {
	if v.Null != nil {
		for _, n := range v.Null[from:to] {
			if n {
				c.nulls++
			}
		}
	}
	if c.noMinMax || c.mode.kind == "none" || c.mode.kind == "counts" {
		return nil
	}
	lo, hi := -1, -1
	valid := func(i int) bool { return v.Null == nil || !v.Null[i] }
	switch v.Kind {
	case parquet.Int32:
		for i := from; i < to; i++ {
			if !valid(i) {
				continue
			}
			if lo < 0 || v.I32[i] < v.I32[lo] {
				lo = i
			}
			if hi < 0 || v.I32[i] > v.I32[hi] {
				hi = i
			}
		}
	case parquet.Int64:
		for i := from; i < to; i++ {
			if !valid(i) {
				continue
			}
			if lo < 0 || v.I64[i] < v.I64[lo] {
				lo = i
			}
			if hi < 0 || v.I64[i] > v.I64[hi] {
				hi = i
			}
		}
	case parquet.Boolean:
		for i := from; i < to; i++ {
			if !valid(i) {
				continue
			}
			if lo < 0 || (!v.Bool[i] && v.Bool[lo]) {
				lo = i
			}
			if hi < 0 || (v.Bool[i] && !v.Bool[hi]) {
				hi = i
			}
		}
	case parquet.Float:
		for i := from; i < to; i++ {
			if !valid(i) {
				continue
			}
			x := v.F32[i]
			if x != x {
				c.noMinMax = true
				return nil
			}
			if lo < 0 || x < v.F32[lo] {
				lo = i
			}
			if hi < 0 || x > v.F32[hi] {
				hi = i
			}
		}
	case parquet.Double:
		for i := from; i < to; i++ {
			if !valid(i) {
				continue
			}
			x := v.F64[i]
			if math.IsNaN(x) {
				c.noMinMax = true
				return nil
			}
			if lo < 0 || x < v.F64[lo] {
				lo = i
			}
			if hi < 0 || x > v.F64[hi] {
				hi = i
			}
		}
	case parquet.ByteArray:
		// VARCHAR, CHAR and BINARY order by unsigned bytes. A value below
		// the minimum cannot pass the maximum; most values differ from
		// both in the first byte, which settles it without a call.
		var mn, mx []byte
		for i := from; i < to; i++ {
			if !valid(i) {
				continue
			}
			x := v.Bytes[v.Offs[i]:v.Offs[i+1]]
			switch {
			case lo < 0:
				lo, hi, mn, mx = i, i, x, x
			case bytesLess(x, mn):
				lo, mn = i, x
			case bytesLess(mx, x):
				hi, mx = i, x
			}
		}
	default:
		// Decimals in FIXED_LEN_BYTE_ARRAY and INT96 timestamps: per value.
		for i := from; i < to; i++ {
			if !valid(i) {
				continue
			}
			x, err := dec(v.value(i))
			if err != nil {
				return err
			}
			c.add(x)
		}
		return nil
	}
	for _, i := range []int{lo, hi} {
		if i < 0 {
			continue
		}
		x, err := dec(v.value(i))
		if err != nil {
			return err
		}
		c.add(x)
	}
	return nil
}

// WriteBatch appends rows [from, to) of b, a batch of the file's KeyValue
// layout (a KVCodec of the same schema), in key order.
func (w *KeyValueWriter) WriteBatch(b *Batch, from, to int) error {
	if to <= from {
		return nil
	}
	if err := w.fw.initBatch(w.fields); err != nil {
		return err
	}
	if err := w.fw.writeBatch(b, from, to); err != nil {
		return err
	}
	s := &w.stats
	key := func(i int) (table.Row, error) {
		k := make(table.Row, w.nKey)
		for j := range w.nKey {
			col := &b.Cols[j]
			if col.IsNull(i) {
				return nil, fmt.Errorf("write data file %s: null key column %d", w.fw.filePath(), j)
			}
			x, err := w.fw.batchDec(j)(col.value(i))
			if err != nil {
				return nil, err
			}
			k[j] = x
		}
		return k, nil
	}
	seqs := b.Cols[w.nKey].I64[from:to]
	if s.RowCount == 0 {
		k, err := key(from)
		if err != nil {
			return err
		}
		s.MinKey = k
		s.MinSeq, s.MaxSeq = seqs[0], seqs[0]
	}
	last, err := key(to - 1)
	if err != nil {
		return err
	}
	w.lastKey = last
	for _, q := range seqs {
		s.MinSeq = min(s.MinSeq, q)
		s.MaxSeq = max(s.MaxSeq, q)
	}
	for _, k := range b.Cols[w.nKey+1].I32[from:to] {
		if !table.RowKind(k).IsAdd() {
			s.DeleteRowCount++
		}
	}
	s.RowCount += int64(to - from)
	return nil
}

// WriteBatch appends rows [from, to) of b, a batch of the file's columns (a
// Codec of the same fields).
func (w *RowWriter) WriteBatch(b *Batch, from, to int) error {
	if to <= from {
		return nil
	}
	if err := w.fw.initBatch(w.fields); err != nil {
		return err
	}
	return w.fw.writeBatch(b, from, to)
}

// bytesLess orders a and b by unsigned bytes, settling most pairs on the
// first byte without calling bytes.Compare.
func bytesLess(a, b []byte) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return bytes.Compare(a, b) < 0
}
