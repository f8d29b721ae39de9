package merge

import (
	"fmt"
	"slices"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// The batch merge of one key that several runs hold: the group of their
// cursors, and the three ways to merge it (pick one record, assemble one
// column by column, or materialize the records for the merge function).

// keyGroup holds the records of the key being merged.
//
// Invariants: cursors are the runs whose current row has the smallest key
// (at most one per run: keys are unique within a run), collected from the
// heap by mergeOneKey; after sortGroup they are in compareSeq order. They are
// valid from collection until mergeOneKey steps them, and nothing refills
// a run's batch in between. recs and kinds are scratch of mergeGroup,
// parallel to the sorted cursors when filled.
type keyGroup struct {
	cursors []*cursor
	recs    []groupRec      // materialized records (merge-function path)
	kinds   []table.RowKind // row kinds (picker path)
	sel     []*cursor       // the cursors a lookup merge selects (mergeLookupGroup)
	lrecs   []groupRecord   // the lookup merge's records, in merge order
}

type groupRec struct {
	kv    table.KeyValue
	run   int
	level int
}

// batchMerger is the merge function and the batch paths it allows.
//
// Invariants: pick and cols are set only without user sequence fields
// (Options.SeqCompare nil), since they order on the physical sequence and
// kind columns alone; cols, when set, is fn. src, from and gtake are
// scratch of mergeColumns (src has one entry per value field, from one per
// batch column, once allocated).
type batchMerger struct {
	fn    Function
	pick  picker         // deduplicate, first-row: the result is one input record
	cols  *partialUpdate // partial-update: the result is assembled column by column (pickColumns)
	nVal  int            // value fields, for src
	src   []int          // pickColumns' result: per value field, index into the group
	from  []int          // per batch column, index into gtake
	gtake []datafile.Take
}

func newBatchMerger(fn Function, opts Options) batchMerger {
	m := batchMerger{fn: fn}
	if opts.SeqCompare == nil {
		if p, ok := fn.(picker); ok {
			m.pick = p
		}
		if p, ok := fn.(*partialUpdate); ok {
			m.cols = p
			m.nVal = len(p.cfg.nullable)
		}
	}
	return m
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

// pos is c's current record's place in compareSeq, read from the physical
// sequence and kind columns (no user sequence fields).
func (r *BatchReader) pos(c *cursor) seqPos {
	return seqPos{seq: c.b.Cols[r.codec.SeqCol()].I64[c.i], add: !r.isRetract(c), run: c.run}
}

// sortGroup puts the group in merge order using the physical sequence and
// kind columns (no sequence.field: SeqCompare is nil, so compareSeq is
// compareSysSeq).
func (r *BatchReader) sortGroup() {
	slices.SortFunc(r.group.cursors, func(a, b *cursor) int {
		return compareSysSeq(r.pos(a), r.pos(b))
	})
}

// mergeColumns is the column-wise partial-update merge; false when
// pickColumns declines the group.
func (r *BatchReader) mergeColumns() (bool, error) {
	r.sortGroup()
	m, g, mat := &r.fn, r.group.cursors, r.out.mat
	if m.src == nil {
		m.src = make([]int, m.nVal)
		m.from = make([]int, len(mat.Cols))
	}
	ok, err := m.cols.pickColumns(batchGroup{r}, m.src)
	if err != nil || !ok {
		return false, err
	}
	m.gtake = m.gtake[:0]
	for _, c := range g {
		m.gtake = append(m.gtake, datafile.Take{Src: c.b, Row: int32(c.i)})
	}
	last := len(g) - 1
	for c := range m.from {
		switch {
		case c <= r.codec.SeqCol():
			m.from[c] = last // key and sequence number of the last record
		case c == r.codec.KindCol():
			m.from[c] = last // overwritten with +I below
		default:
			m.from[c] = m.src[c-r.codec.KindCol()-1]
		}
	}
	if err := mat.AppendAssembled(m.gtake, m.from); err != nil {
		return false, err
	}
	mat.Cols[r.codec.KindCol()].I32[mat.N-1] = int32(table.RowKindInsert)
	r.out.add(mat, mat.N-1)
	return true, nil
}

// batchGroup is the groupView of the group (sorted).
type batchGroup struct{ r *BatchReader }

func (g batchGroup) records() int       { return len(g.r.group.cursors) }
func (g batchGroup) retract(i int) bool { return g.r.isRetract(g.r.group.cursors[i]) }
func (g batchGroup) null(i, f int) bool {
	c := g.r.group.cursors[i]
	return c.b.Cols[g.r.codec.KindCol()+1+f].IsNull(c.i)
}
func (g batchGroup) value(i, f int) (any, error) {
	c := g.r.group.cursors[i]
	return g.r.codec.ValueAt(c.b, c.i, f)
}

// mergeGroup merges the records of one key held by the group.
func (r *BatchReader) mergeGroup() error {
	m, grp := &r.fn, &r.group
	if m.cols != nil {
		if ok, err := r.mergeColumns(); ok || err != nil {
			return err
		}
	}
	if m.pick != nil {
		idx, ok, err := r.pickGroup()
		if err != nil {
			return err
		}
		g := grp.cursors
		if ok && r.firstRowCompaction() {
			c := g[idx]
			if ok, err = r.firstRowKeep(c, nil); err != nil {
				return err
			}
		}
		if ok && !(r.opts.DropDelete && !grp.kinds[idx].IsAdd()) {
			c := g[idx]
			r.out.add(c.b, c.i)
		}
		return nil
	}
	kv, ok, err := r.mergeMaterialized()
	if err != nil {
		return err
	}
	if ok && r.firstRowCompaction() {
		if ok, err = r.firstRowKeep(nil, &kv); err != nil {
			return err
		}
	}
	return r.emitMerged(kv, ok)
}

// pickGroup sorts the group and picks its result (batchMerger.pick set):
// the index of the record that is the merge's result, false if none.
func (r *BatchReader) pickGroup() (int, bool, error) {
	grp := &r.group
	r.sortGroup()
	grp.kinds = grp.kinds[:0]
	for _, c := range grp.cursors {
		grp.kinds = append(grp.kinds, r.kind(c))
	}
	idx, ok, err := r.fn.pick.pick(grp.kinds)
	if err != nil {
		return 0, false, r.keyErr(grp.cursors[0], err)
	}
	return idx, ok, nil
}

// mergeMaterialized materializes the group's records (grp.recs, in merge
// order) and merges them through the merge function.
func (r *BatchReader) mergeMaterialized() (table.KeyValue, bool, error) {
	m, grp := &r.fn, &r.group
	grp.recs = grp.recs[:0]
	for _, c := range grp.cursors {
		kv, err := r.codec.Record(c.b, c.i)
		if err != nil {
			return table.KeyValue{}, false, fmt.Errorf("read sorted run %d: %w", c.run, err)
		}
		grp.recs = append(grp.recs, groupRec{kv: kv, run: c.run, level: c.level})
	}
	seqCmp := r.opts.SeqCompare
	slices.SortFunc(grp.recs, func(a, b groupRec) int {
		return compareSeq(seqCmp, a.pos(), b.pos())
	})
	m.fn.Reset()
	for _, g := range grp.recs {
		if err := m.fn.Add(g.kv); err != nil {
			return table.KeyValue{}, false, fmt.Errorf("merge key %v: %w", []any(g.kv.Key), err)
		}
	}
	kv, ok, err := m.fn.Result()
	if err != nil {
		return table.KeyValue{}, false, fmt.Errorf("merge key %v: %w", []any(grp.recs[0].kv.Key), err)
	}
	return kv, ok, nil
}

// emitMerged queues a merged record (none when !ok, nor a dropped
// retraction) for the output.
func (r *BatchReader) emitMerged(kv table.KeyValue, ok bool) error {
	if !ok || (r.opts.DropDelete && !kv.Kind.IsAdd()) {
		return nil
	}
	if err := r.codec.Append(r.out.mat, kv); err != nil {
		return fmt.Errorf("merge key %v: %w", []any(kv.Key), err)
	}
	r.out.add(r.out.mat, r.out.mat.N-1)
	return nil
}

// mergeFullChangelogGroup merges a key several runs hold as
// FullChangelogMergeFunctionWrapper does: through the merge function, and
// its changelog from the key's top-level record to the merged one.
func (r *BatchReader) mergeFullChangelogGroup() error {
	full := r.opts.FullChangelog
	if r.clog != nil {
		if done, err := r.mergeFullChangelogColumns(); done || err != nil {
			return err
		}
	}
	kv, ok, err := r.mergeMaterialized()
	if err != nil {
		return err
	}
	var top *table.KeyValue
	for i := range r.group.recs {
		if r.group.recs[i].level == full.MaxLevel {
			top = &r.group.recs[i].kv
			break
		}
	}
	var err2 error
	if r.clog != nil {
		err2 = r.clog.addChanges(r.codec, top, kv, ok)
	} else {
		err2 = full.Changelog(top, kv, ok)
	}
	if err2 != nil {
		return fmt.Errorf("merge key %v: changelog: %w", []any(r.group.recs[0].kv.Key), err2)
	}
	return r.emitMerged(kv, ok)
}

func (g groupRec) pos() seqPos {
	return seqPos{value: g.kv.Value, seq: g.kv.Seq, add: g.kv.Kind.IsAdd(), run: g.run}
}

// firstRowCompaction reports whether the merge is the first-row
// compaction with a lookup or a changelog (FirstRowMergeFunctionWrapper).
func (r *BatchReader) firstRowCompaction() bool {
	return r.opts.NoReducer && (r.opts.Higher != nil || r.opts.FirstRowChangelog != nil)
}

// firstRowKeep is FirstRowMergeFunctionWrapper's test on the group's
// result: a key none of whose added records comes from a level above 0
// (FirstRowMergeFunction.containsHighLevel) is dropped when opts.Higher
// holds it, and is otherwise new: its record (result) goes to the
// changelog. The result is kv, or else res's current record.
func (r *BatchReader) firstRowKeep(res *cursor, kv *table.KeyValue) (bool, error) {
	for _, c := range r.group.cursors {
		if c.level > 0 && !r.isRetract(c) {
			return true, nil
		}
	}
	c := r.group.cursors[0]
	if r.opts.Higher != nil {
		key, err := r.codec.KeyAt(c.b, c.i)
		if err != nil {
			return false, fmt.Errorf("read sorted run %d: %w", c.run, err)
		}
		_, held, err := r.opts.Higher.Lookup(key)
		if err != nil {
			return false, fmt.Errorf("merge key %v: look up in higher levels: %w", []any(key), err)
		}
		if held {
			return false, nil
		}
	}
	if r.opts.FirstRowChangelog != nil {
		if kv == nil {
			rec, err := r.codec.Record(res.b, res.i)
			if err != nil {
				return false, fmt.Errorf("read sorted run %d: %w", res.run, err)
			}
			kv = &rec
		}
		if err := r.opts.FirstRowChangelog(*kv); err != nil {
			return false, fmt.Errorf("merge key %v: changelog: %w", []any(kv.Key), err)
		}
	}
	return true, nil
}

func (r *BatchReader) keyErr(c *cursor, err error) error {
	kv, kerr := r.codec.Record(c.b, c.i)
	if kerr != nil {
		return err
	}
	return fmt.Errorf("merge key %v: %w", []any(kv.Key), err)
}
