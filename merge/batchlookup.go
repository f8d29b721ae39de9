package merge

import (
	"fmt"
	"slices"

	"github.com/compactd/compactd/table"
)

// mergeLookupGroup merges the group of a lookup-style table (Options.Lookup):
// of the records above level 0 only the lowest level's joins the level-0
// ones (LookupMergeFunction); with LookupCompact a key without such a
// record is first looked up in the levels above the output. The group's
// cursors are left as they were collected, for mergeOneKey to step.
func (r *BatchReader) mergeLookupGroup() error {
	g := &r.group
	all := g.cursors
	high := -1
	for i, c := range all {
		if c.level > 0 && (high < 0 || c.level < all[high].level) {
			high = i
		}
	}
	lc := r.opts.LookupCompact
	var (
		found      table.KeyValue
		foundLevel int
		insert     bool
	)
	if lc != nil && high < 0 && lc.Higher != nil {
		c := all[0]
		key, err := r.codec.KeyAt(c.b, c.i)
		if err != nil {
			return fmt.Errorf("read sorted run %d: %w", c.run, err)
		}
		if found, foundLevel, insert, err = lc.find(key); err != nil {
			return fmt.Errorf("merge key %v: %w", []any(key), err)
		}
	}
	g.sel = g.sel[:0]
	for i, c := range all {
		if c.level <= 0 || i == high {
			g.sel = append(g.sel, c)
		}
	}
	// Without a looked-up record or a changelog hook the merge is the
	// plain one over the selected records (a lone record only through a
	// picker, whose result for one record is the merge function's).
	if !insert && (lc == nil || lc.Changelog == nil) && (len(g.sel) > 1 || r.fn.pick != nil) {
		g.cursors = g.sel
		err := r.mergeGroup()
		g.cursors = all
		return err
	}
	return r.mergeLookupRecords(g.sel, found, foundLevel, insert)
}

// mergeLookupRecords materializes the selected records, inserts the
// looked-up one (insert) where LookupChangelogMergeFunctionWrapper does,
// and merges them through the merge function.
func (r *BatchReader) mergeLookupRecords(sel []*cursor, found table.KeyValue, foundLevel int, insert bool) error {
	grp := &r.group
	grp.recs = grp.recs[:0]
	for _, c := range sel {
		kv, err := r.codec.Record(c.b, c.i)
		if err != nil {
			return fmt.Errorf("read sorted run %d: %w", c.run, err)
		}
		grp.recs = append(grp.recs, groupRec{kv: kv, run: c.run, level: c.level})
	}
	seqCmp := r.opts.SeqCompare
	slices.SortFunc(grp.recs, func(a, b groupRec) int {
		return compareSeq(seqCmp, a.pos(), b.pos())
	})
	grp.lrecs = grp.lrecs[:0]
	for _, g := range grp.recs {
		grp.lrecs = append(grp.lrecs, groupRecord{kv: g.kv, level: g.level})
	}
	key := grp.recs[0].kv.Key
	high := highOf(grp.lrecs)
	if insert {
		i := insertPos(len(grp.lrecs), func(i int) int { return compareLookedUp(seqCmp, found, grp.lrecs[i].kv) })
		grp.lrecs = slices.Insert(grp.lrecs, i, groupRecord{kv: found, level: foundLevel})
		high = i
	}
	kv, ok, err := mergeLookup(r.fn.fn, grp.lrecs, high, r.opts.LookupCompact)
	if err != nil {
		return fmt.Errorf("merge key %v: %w", []any(key), err)
	}
	if !ok || (r.opts.DropDelete && !kv.Kind.IsAdd()) {
		return nil
	}
	if err := r.codec.Append(r.out.mat, kv); err != nil {
		return fmt.Errorf("merge key %v: %w", []any(kv.Key), err)
	}
	r.out.add(r.out.mat, r.out.mat.N-1)
	return nil
}
