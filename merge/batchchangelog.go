package merge

import (
	"fmt"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// changelogOut is the batch reader's changelog when FullChangelog.Batches
// or LookupCompact.Batches is set: changelog records leave as batches of
// the codec's layout, in key order, instead of one table.KeyValue each. A
// full compaction's lone record new to the top level (most records of a
// first full compaction) is copied column by column, like the merge
// output, with its row kind set to +I, and so are a pick's or a column
// merge's changes; other changes are appended from their records.
//
// Invariants (as pendingOut's): take names rows of run batches, of mat
// or of the output's mat, not yet copied into batch, valid until flush,
// which runs whenever the output flushes (before a run batch is refilled,
// at the end of NextInto), and before the output's own flush; kinds[i] is
// the row kind take[i] gets (-1: its own).
type changelogOut struct {
	equal   func(a, b table.Row) bool
	batches func(*datafile.Batch) error
	batch   *datafile.Batch // filled up to the reader's size, then given to batches
	mat     *datafile.Batch
	take    []datafile.Take
	kinds   []int8
	kind    int // the batch column of the row kind
	size    int
}

func newChangelogOut(codec *datafile.KVCodec, equal func(a, b table.Row) bool, batches func(*datafile.Batch) error, size int) *changelogOut {
	return &changelogOut{equal: equal, batches: batches, batch: codec.NewBatch(), mat: codec.NewBatch(), kind: codec.KindCol(), size: size}
}

// addAs queues row i of b with row kind k.
func (o *changelogOut) addAs(b *datafile.Batch, i int, k table.RowKind) {
	o.take = append(o.take, datafile.Take{Src: b, Row: int32(i)})
	o.kinds = append(o.kinds, int8(k))
}

// addChanges queues the changes of one merged key (Changes).
func (o *changelogOut) addChanges(codec *datafile.KVCodec, before *table.KeyValue, after table.KeyValue, ok bool) error {
	return Changes(before, after, ok, o.equal, func(kv table.KeyValue) error {
		if err := codec.Append(o.mat, kv); err != nil {
			return err
		}
		o.take = append(o.take, datafile.Take{Src: o.mat, Row: int32(o.mat.N - 1)})
		o.kinds = append(o.kinds, -1)
		return nil
	})
}

// flush copies the queued rows into the batch, handing it on when full.
func (o *changelogOut) flush() error {
	if len(o.take) > 0 {
		n := o.batch.N
		if err := o.batch.AppendTake(o.take); err != nil {
			return err
		}
		kinds := o.batch.Cols[o.kind].I32
		for j, k := range o.kinds {
			if k >= 0 {
				kinds[n+j] = int32(k)
			}
		}
		clear(o.take)
		o.take, o.kinds = o.take[:0], o.kinds[:0]
		o.mat.Reset()
	}
	if o.batch.N >= o.size {
		return o.emit()
	}
	return nil
}

// finish hands on what is left, at the end of the merge.
func (o *changelogOut) finish() error {
	if err := o.flush(); err != nil {
		return err
	}
	return o.emit()
}

func (o *changelogOut) emit() error {
	if o.batch.N == 0 {
		return nil
	}
	if err := o.batches(o.batch); err != nil {
		return fmt.Errorf("changelog: %w", err)
	}
	o.batch.Reset()
	return nil
}

// mergeFullChangelogColumns is mergeFullChangelogGroup without
// materializing: when the merge is a pick (deduplicate) or assembled
// column by column (partial-update) and no equaliser compares values, the
// changes are the top-level record's row and the result's, each with the
// changelog's kind. False when the group needs the merge function.
func (r *BatchReader) mergeFullChangelogColumns() (bool, error) {
	m, grp, full := &r.fn, &r.group, r.opts.FullChangelog
	if full.Equal != nil || (m.pick == nil && m.cols == nil) {
		return false, nil
	}
	top := func() *cursor {
		for _, c := range grp.cursors {
			if c.level == full.MaxLevel {
				return c
			}
		}
		return nil
	}
	var (
		after   *datafile.Batch
		afterAt int
		added   bool
	)
	switch {
	case m.cols != nil:
		n := r.out.mat.N
		ok, err := r.mergeColumns()
		if err != nil || !ok {
			return false, err
		}
		// mergeColumns declines groups with retractions; its result is a +I
		// in the output's mat.
		if r.out.mat.N != n+1 {
			return false, fmt.Errorf("partial-update column merge appended %d rows", r.out.mat.N-n)
		}
		after, afterAt, added = r.out.mat, n, true
	default:
		idx, ok, err := r.pickGroup()
		if err != nil {
			return false, err
		}
		if ok {
			c := grp.cursors[idx]
			added = grp.kinds[idx].IsAdd()
			after, afterAt = c.b, c.i
			if !(r.opts.DropDelete && !added) {
				r.out.add(c.b, c.i)
			}
		}
	}
	before := top()
	switch {
	case before == nil || r.isRetract(before):
		if added {
			r.clog.addAs(after, afterAt, table.RowKindInsert)
		}
	case !added:
		r.clog.addAs(before.b, before.i, table.RowKindDelete)
	default:
		r.clog.addAs(before.b, before.i, table.RowKindUpdateBefore)
		r.clog.addAs(after, afterAt, table.RowKindUpdateAfter)
	}
	return true, nil
}
