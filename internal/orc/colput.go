package orc

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// The column-at-a-time form of writing: BeginRows starts a run of rows,
// each top-level field then gets all of the run's values in one call
// (PutInts, PutFloat64s, ...), and EndRows ends it. It writes the same
// file as the row form (BeginRow, Put*, EndRow) for the same rows, but
// without a call per value: handing a columnar batch to the writer value
// by value was a fifth of an ORC compaction's CPU.
//
// Every Put*s call takes the run's n values as a slice of at least n
// entries, with null (nil: none) marking null rows; a null row's value
// is ignored.

// BeginRows starts up to n rows and returns how many it started: fewer at
// the end of a row group (the next call starts the next group) or when
// the stripe reaches its row cap.
func (w *Writer) BeginRows(n int) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, errors.New("orc writer: closed")
	}
	if n <= 0 {
		return 0, nil
	}
	if w.opts.RowIndexStride > 0 { // negative: no row index, one group
		stride := uint64(w.opts.RowIndexStride)
		if w.rows > 0 && w.rows%stride == 0 {
			for _, c := range w.cols {
				if err := w.endGroup(c); err != nil {
					w.err = fmt.Errorf("orc writer: column %d: %w", c.id, err)
					return 0, w.err
				}
				c.marks = append(c.marks, c.n)
				c.groups = append(c.groups, newColStats(c.t))
			}
		}
		n = min(n, int(stride-w.rows%stride))
	}
	n = min(n, int(maxWriteStripeRows-w.rows))
	// The root struct has no nulls: its PRESENT entries are never read.
	w.root.n += n
	w.groupStats(w.root).n += uint64(n)
	return n, nil
}

// EndRows ends the n rows BeginRows started, flushing the stripe when
// full. The stripe is checked once per run, so it may pass the stripe
// size by up to a run's bytes.
func (w *Writer) EndRows(n int) error {
	if w.err != nil {
		return w.err
	}
	w.rows += uint64(n)
	w.total += uint64(n)
	// The row cap keeps stripes of tiny rows (a lone BOOLEAN column) well
	// inside what readers take (this package's reader: 1<<26 rows).
	if w.buffered >= w.opts.StripeSize || w.rows >= maxWriteStripeRows {
		return w.flushStripe()
	}
	return nil
}

// column is top-level field k for a Put*s call of n values, or an error
// when the slices are short.
func (w *Writer) column(k, n, have int, null []bool) (*colWriter, error) {
	if k < 0 || k >= len(w.root.children) {
		return nil, fmt.Errorf("orc writer: field %d of %d", k, len(w.root.children))
	}
	if have < n || (null != nil && len(null) < n) {
		return nil, w.fail(k, fmt.Errorf("%d values for a run of %d rows", have, n))
	}
	return w.root.children[k], nil
}

// PutInts sets integer or DATE field k of the run's n rows.
func (w *Writer) PutInts(k, n int, vals []int64, null []bool) error {
	return putInts(w, k, n, vals, null)
}

// PutInt32s is PutInts from 32-bit values.
func (w *Writer) PutInt32s(k, n int, vals []int32, null []bool) error {
	return putInts(w, k, n, vals, null)
}

func putInts[T int32 | int64](w *Writer, k, n int, vals []T, null []bool) error {
	c, err := w.column(k, n, len(vals), null)
	if err != nil {
		return err
	}
	switch c.t.Kind {
	case Byte, Short, Int, Long, Date:
	default:
		return w.fail(k, fmt.Errorf("integers for a %s", c.t.Kind))
	}
	lo, hi := intRange(c.t.Kind)
	st := w.groupStats(c)
	c.ints = slices.Grow(c.ints, n)
	for i, v := range vals[:n] {
		if null != nil && null[i] {
			w.addNull(c)
			continue
		}
		x := int64(v)
		if x < lo || x > hi {
			return w.fail(k, fmt.Errorf("value %d out of range for a %s", x, c.t.Kind))
		}
		w.present(c)
		c.ints = append(c.ints, x)
		st.addInt(x)
		w.buffered += 8
	}
	return nil
}

// PutBools sets BOOLEAN field k of the run's n rows.
func (w *Writer) PutBools(k, n int, vals []bool, null []bool) error {
	c, err := w.column(k, n, len(vals), null)
	if err != nil {
		return err
	}
	if c.t.Kind != Boolean {
		return w.fail(k, fmt.Errorf("booleans for a %s", c.t.Kind))
	}
	c.ints = slices.Grow(c.ints, n)
	for i, b := range vals[:n] {
		if null != nil && null[i] {
			w.addNull(c)
			continue
		}
		w.present(c)
		w.addBool(c, b)
	}
	return nil
}

// PutFloat64s sets FLOAT or DOUBLE field k of the run's n rows.
func (w *Writer) PutFloat64s(k, n int, vals []float64, null []bool) error {
	return putFloats(w, k, n, vals, null)
}

// PutFloat32s is PutFloat64s from 32-bit values.
func (w *Writer) PutFloat32s(k, n int, vals []float32, null []bool) error {
	return putFloats(w, k, n, vals, null)
}

func putFloats[T float32 | float64](w *Writer, k, n int, vals []T, null []bool) error {
	c, err := w.column(k, n, len(vals), null)
	if err != nil {
		return err
	}
	if c.t.Kind != Float && c.t.Kind != Double {
		return w.fail(k, fmt.Errorf("floats for a %s", c.t.Kind))
	}
	c.floats = slices.Grow(c.floats, n)
	for i, x := range vals[:n] {
		if null != nil && null[i] {
			w.addNull(c)
			continue
		}
		w.present(c)
		w.addFloat(c, float64(x))
	}
	return nil
}

// PutByteArrays sets string or binary field k of the run's n rows: value
// i is data[offs[i]:offs[i+1]] (copied), so offs has n+1 entries.
func (w *Writer) PutByteArrays(k, n int, data []byte, offs []uint32, null []bool) error {
	c, err := w.column(k, n, len(offs)-1, null)
	if err != nil {
		return err
	}
	switch c.t.Kind {
	case String, Varchar, Char, Binary:
	default:
		return w.fail(k, fmt.Errorf("bytes for a %s", c.t.Kind))
	}
	if int(offs[n]) > len(data) || offs[0] > offs[n] {
		return w.fail(k, fmt.Errorf("offsets [%d, %d] past %d bytes", offs[0], offs[n], len(data)))
	}
	c.lens = slices.Grow(c.lens, n)
	c.arena = slices.Grow(c.arena, int(offs[n]-offs[0]))
	for i := range n {
		if null != nil && null[i] {
			w.addNull(c)
			continue
		}
		a, b := offs[i], offs[i+1]
		if a > b || int(b) > len(data) {
			return w.fail(k, fmt.Errorf("value %d at bytes [%d, %d) of %d", i, a, b, len(data)))
		}
		w.present(c)
		addBytes(w, c, data[a:b])
	}
	return nil
}

// PutDecimal64s sets DECIMAL field k of the run's n rows to unscaled
// values at the column's scale.
func (w *Writer) PutDecimal64s(k, n int, vals []int64, null []bool) error {
	return putDecimals(w, k, n, vals, null)
}

// PutDecimal32s is PutDecimal64s from 32-bit unscaled values.
func (w *Writer) PutDecimal32s(k, n int, vals []int32, null []bool) error {
	return putDecimals(w, k, n, vals, null)
}

func putDecimals[T int32 | int64](w *Writer, k, n int, vals []T, null []bool) error {
	c, err := w.column(k, n, len(vals), null)
	if err != nil {
		return err
	}
	if c.t.Kind != Decimal {
		return w.fail(k, fmt.Errorf("decimals for a %s", c.t.Kind))
	}
	for i, x := range vals[:n] {
		if null != nil && null[i] {
			w.addNull(c)
			continue
		}
		if err := w.putDecimal64(c, int64(x)); err != nil {
			return w.fail(k, err)
		}
	}
	return nil
}

// PutTimestamps sets TIMESTAMP or TIMESTAMP_INSTANT field k of the run's
// n rows from counts of 1/perSecond seconds since the epoch (1000:
// milliseconds, 1000000: microseconds), as Time{Secs, Nanos} would.
func (w *Writer) PutTimestamps(k, n int, vals []int64, perSecond int64, null []bool) error {
	c, err := w.column(k, n, len(vals), null)
	if err != nil {
		return err
	}
	if c.t.Kind != Timestamp && c.t.Kind != TimestampInstant {
		return w.fail(k, fmt.Errorf("timestamps for a %s", c.t.Kind))
	}
	if perSecond <= 0 || perSecond > 1e9 || 1e9%perSecond != 0 {
		return w.fail(k, fmt.Errorf("timestamps in units of 1/%d s", perSecond))
	}
	nsPer := int32(1e9 / perSecond)
	st := w.groupStats(c)
	c.secs, c.nanos = slices.Grow(c.secs, n), slices.Grow(c.nanos, n)
	for i, x := range vals[:n] {
		if null != nil && null[i] {
			w.addNull(c)
			continue
		}
		secs, frac := x/perSecond, x%perSecond
		if frac < 0 {
			secs--
			frac += perSecond
		}
		t := Time{Secs: secs, Nanos: int32(frac) * nsPer}
		w.present(c)
		c.secs = append(c.secs, t.Secs)
		c.nanos = append(c.nanos, t.Nanos)
		st.addTime(t)
		w.buffered += 12
	}
	return nil
}

// putDecimal64 adds a non-null decimal, as PutDecimal64 does.
func (w *Writer) putDecimal64(c *colWriter, x int64) error {
	w.present(c)
	if dec64(c.t) {
		return w.addDec64(c, x)
	}
	return w.addDec(c, big.NewInt(x))
}
