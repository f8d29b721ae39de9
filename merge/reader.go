package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/compactd/compactd/table"
)

// Function is a merge function (Java MergeFunction): after Reset it receives
// all records of one key, oldest first, and Result returns the merged record.
// ok=false means the key produces no row.
type Function interface {
	Reset()
	Add(kv table.KeyValue) error
	Result() (kv table.KeyValue, ok bool, err error)
}

// Options configure a Reader.
type Options struct {
	// KeyTypes are the types of the trimmed primary key, in key order.
	KeyTypes []table.DataType
	// SeqCompare orders two value rows by the user-defined sequence fields
	// (sequence.field with sequence.field.sort-order); nil if the table has none.
	// Engine.SeqCompare provides it.
	SeqCompare func(a, b table.Row) int
	// DropDelete drops merged records whose kind is -U or -D. Set it when the
	// output goes to the highest level (or when all files are rewritten).
	DropDelete bool
	// Lookup applies Paimon's LookupMergeFunction, which wraps the merge
	// function of lookup-style tables (changelog-producer=lookup, deletion
	// vectors, ...; never first-row, see Engine.LookupOptions): of the records
	// coming from levels > 0 only the one from the lowest level is merged, plus
	// every record of level <= 0. Records get their level from iterators
	// implementing Leveled (see WithLevel). With LookupCompact it is the
	// lookup compaction, which also looks keys up above the output level.
	Lookup bool
	// NoReducer calls the merge function even for a key with a single record.
	// By default Paimon's ReducerMergeFunctionWrapper is applied (plain
	// MergeTreeCompactRewriter and reads): a lone record is emitted unchanged.
	// Paimon's lookup-changelog and first-row compaction wrappers
	// (LookupChangelogMergeFunctionWrapper, FirstRowMergeFunctionWrapper) do not
	// reduce, so a lone -D of an aggregation table becomes a +I there.
	NoReducer bool
	// Higher, with NoReducer and the first-row engine, completes Paimon's
	// FirstRowMergeFunctionWrapper (see Engine.FirstRowCompactOptions): a key
	// none of whose records comes from a level > 0 is dropped when Higher
	// holds it. Keys are asked in ascending order.
	Higher HigherLookup
	// LookupCompact, with Lookup and NoReducer, is Paimon's lookup
	// compaction of the other engines (see LookupCompact and
	// Engine.LookupCompactOptions).
	LookupCompact *LookupCompact
	// FullChangelog, without Lookup and NoReducer, is Paimon's
	// full-compaction changelog (see FullChangelog).
	FullChangelog *FullChangelog
	// FirstRowChangelog, with the first-row compaction (NoReducer, first-row
	// engine; Higher may be nil when nothing is stored above the output), is
	// Paimon's first-row lookup changelog (FirstRowMergeFunctionWrapper):
	// it receives the merged record of every key that is new to the bucket,
	// i.e. no added record of it comes from a level above 0 and Higher does
	// not hold it. The record is the merge's: a hook keeping it must copy it.
	FirstRowChangelog func(kv table.KeyValue) error
}

// Reader merges sorted runs into one stream with one record per key (or none,
// when the merge function drops the key or DropDelete drops a retraction).
//
// Records of one key reach the merge function in Paimon's merge order
// (compareSeq: user sequence fields, then _SEQUENCE_NUMBER ascending, then
// retractions before additions, then the run given first).
//
// Memory: one pending record per run plus the records of the current key
// (only the first of them without Lookup; keys are unique within a run, so a
// key has at most one record per run). Reader implements Iterator, so the
// outputs of consecutive sections can be chained with Concat.
type Reader struct {
	ctx   context.Context
	opts  Options
	fn    Function
	heap  heap // the runs with a pending record
	runs  []*cursor
	group []groupRecord // Lookup only
	init  bool
	err   error
	steps uint64
}

type groupRecord struct {
	kv    table.KeyValue
	level int
}

// NewReader merges runs through fn. The reader owns the runs: Close closes them.
func NewReader(ctx context.Context, runs []Iterator, fn Function, opts Options) *Reader {
	r := &Reader{ctx: ctx, opts: opts, fn: fn,
		heap: heap{ord: heapOrder{keyTypes: opts.KeyTypes, seqCmp: opts.SeqCompare}}}
	for i, it := range runs {
		r.runs = append(r.runs, &cursor{it: it, run: i})
	}
	return r
}

func (r *Reader) start() error {
	r.init = true
	for _, c := range r.runs {
		ok, err := c.advance()
		if err != nil {
			return err
		}
		if ok {
			r.heap.push(c)
		}
	}
	return nil
}

func (c *cursor) advance() (bool, error) {
	kv, err := c.it.Next()
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read sorted run %d: %w", c.run, err)
	}
	c.kv, c.level = kv, levelOf(c.it)
	return true, nil
}

// Next returns the next merged record, io.EOF at the end.
func (r *Reader) Next() (table.KeyValue, error) {
	if r.err != nil {
		return table.KeyValue{}, r.err
	}
	kv, err := r.next()
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return kv, err
}

func (r *Reader) next() (table.KeyValue, error) {
	if !r.init {
		if err := r.start(); err != nil {
			return table.KeyValue{}, err
		}
	}
	for {
		// Checking the context every 1024 keys keeps it off the hot path.
		r.steps++
		if r.steps&1023 == 0 && r.ctx != nil {
			if err := r.ctx.Err(); err != nil {
				return table.KeyValue{}, err
			}
		}
		if r.heap.len() == 0 {
			return table.KeyValue{}, io.EOF
		}
		kv, ok, err := r.mergeOneKey()
		if err != nil {
			return table.KeyValue{}, err
		}
		if !ok {
			continue
		}
		if r.opts.DropDelete && !kv.Kind.IsAdd() {
			continue
		}
		return kv, nil
	}
}

// mergeOneKey pops every record of the smallest key and merges them.
func (r *Reader) mergeOneKey() (table.KeyValue, bool, error) {
	var (
		first       table.KeyValue
		firstLevel  int
		count       int
		key         table.Row
		initialized bool
		high        bool // a record of the key comes from a level > 0
		top         *table.KeyValue
	)
	full := r.opts.FullChangelog
	r.group = r.group[:0]
	for r.heap.len() > 0 {
		c := r.heap.top()
		if count > 0 && table.CompareRows(r.opts.KeyTypes, c.kv.Key, key) != 0 {
			break
		}
		kv, level := c.kv, c.level
		ok, err := c.advance()
		if err != nil {
			return table.KeyValue{}, false, err
		}
		if ok {
			r.heap.fix(0)
		} else {
			r.heap.remove(0)
		}
		if count == 0 {
			key = kv.Key
		}
		count++
		if full != nil && level == full.MaxLevel {
			// FullChangelogMergeFunctionWrapper's topLevelKv: keys are
			// unique within a level, so there is at most one.
			t := kv
			top = &t
		}
		// FirstRowMergeFunction.containsHighLevel: an added (not skipped)
		// record from a level above 0.
		high = high || (level > 0 && kv.Kind.IsAdd())
		if r.opts.Lookup {
			r.group = append(r.group, groupRecord{kv: kv, level: level})
			continue
		}
		if r.opts.NoReducer {
			if count == 1 {
				r.fn.Reset()
			}
			if err := r.fn.Add(kv); err != nil {
				return table.KeyValue{}, false, r.keyErr(key, err)
			}
			continue
		}
		// Reducer wrapper: the merge function runs only from the second record on.
		switch {
		case count == 1:
			first, firstLevel = kv, level
		case !initialized:
			initialized = true
			r.fn.Reset()
			if err := r.fn.Add(first); err != nil {
				return table.KeyValue{}, false, r.keyErr(key, err)
			}
			fallthrough
		default:
			if err := r.fn.Add(kv); err != nil {
				return table.KeyValue{}, false, r.keyErr(key, err)
			}
		}
	}
	if r.opts.Lookup {
		if len(r.group) == 1 && !r.opts.NoReducer {
			return r.group[0].kv, true, nil
		}
		return r.lookupResult(key)
	}
	if !initialized && !r.opts.NoReducer {
		// A lone record: unchanged, unless it is new at the top level.
		if full != nil && firstLevel != full.MaxLevel {
			if err := full.Changelog(nil, first, true); err != nil {
				return table.KeyValue{}, false, r.keyErr(key, fmt.Errorf("changelog: %w", err))
			}
		}
		return first, true, nil
	}
	kv, ok, err := r.fn.Result()
	if err != nil {
		return table.KeyValue{}, false, r.keyErr(key, err)
	}
	if full != nil {
		if err := full.Changelog(top, kv, ok); err != nil {
			return table.KeyValue{}, false, r.keyErr(key, fmt.Errorf("changelog: %w", err))
		}
	}
	if ok && !high && r.opts.NoReducer && (r.opts.Higher != nil || r.opts.FirstRowChangelog != nil) {
		if r.opts.Higher != nil {
			_, held, err := r.opts.Higher.Lookup(kv.Key)
			if err != nil {
				return table.KeyValue{}, false, r.keyErr(key, fmt.Errorf("look up in higher levels: %w", err))
			}
			if held {
				return table.KeyValue{}, false, nil
			}
		}
		if r.opts.FirstRowChangelog != nil {
			if err := r.opts.FirstRowChangelog(kv); err != nil {
				return table.KeyValue{}, false, r.keyErr(key, fmt.Errorf("changelog: %w", err))
			}
		}
	}
	return kv, ok, nil
}

// lookupResult is LookupMergeFunction.getResult: merge the level <= 0 records
// and the first record of the lowest level above 0; with LookupCompact
// the whole LookupChangelogMergeFunctionWrapper.getResult.
func (r *Reader) lookupResult(key table.Row) (table.KeyValue, bool, error) {
	high := highOf(r.group)
	lc := r.opts.LookupCompact
	if lc != nil && high < 0 {
		var err error
		if r.group, high, err = lc.lookUp(key, r.group, r.opts.SeqCompare); err != nil {
			return table.KeyValue{}, false, r.keyErr(key, err)
		}
	}
	kv, ok, err := mergeLookup(r.fn, r.group, high, lc)
	if err != nil {
		return table.KeyValue{}, false, r.keyErr(key, err)
	}
	return kv, ok, nil
}

// mergeLookup merges the records of group (in merge order) at level <= 0
// and the one at index high (-1: none) through fn, and gives a key with a
// level-0 record to lc's changelog hook (lc may be nil).
func mergeLookup(fn Function, group []groupRecord, high int, lc *LookupCompact) (table.KeyValue, bool, error) {
	fn.Reset()
	for i, g := range group {
		if g.level <= 0 || i == high {
			if err := fn.Add(g.kv); err != nil {
				return table.KeyValue{}, false, err
			}
		}
	}
	kv, ok, err := fn.Result()
	if err != nil {
		return table.KeyValue{}, false, err
	}
	if lc != nil && lc.Changelog != nil && containsLevel0(group) {
		var before *table.KeyValue
		if high >= 0 {
			before = &group[high].kv
		}
		if err := lc.Changelog(before, kv, ok); err != nil {
			return table.KeyValue{}, false, fmt.Errorf("changelog: %w", err)
		}
	}
	return kv, ok, nil
}

// highOf is LookupMergeFunction.pickHighLevel: the index of the record of
// the lowest level above 0 (the first of them), -1 if none.
func highOf(group []groupRecord) int {
	high := -1
	for i, g := range group {
		if g.level > 0 && (high < 0 || g.level < group[high].level) {
			high = i
		}
	}
	return high
}

func containsLevel0(group []groupRecord) bool {
	for _, g := range group {
		if g.level == 0 {
			return true
		}
	}
	return false
}

// lookUp is step 2 of LookupCompact for a key none of whose records
// comes from a level above 0: look it up, report the superseded row, and
// insert the found record among the key's records when values are
// merged. It returns the group and the index of high (-1: none).
func (lc *LookupCompact) lookUp(key table.Row, group []groupRecord, seqCmp func(a, b table.Row) int) ([]groupRecord, int, error) {
	kv, level, ok, err := lc.find(key)
	if err != nil || !ok {
		return group, -1, err
	}
	i := insertPos(len(group), func(i int) int { return compareLookedUp(seqCmp, kv, group[i].kv) })
	group = slices.Insert(group, i, groupRecord{kv: kv, level: level})
	return group, i, nil
}

// find looks key up, reports the superseded row to the deletion sink and
// returns the found record and its level when it joins the merge.
func (lc *LookupCompact) find(key table.Row) (table.KeyValue, int, bool, error) {
	if lc.Higher == nil {
		return table.KeyValue{}, 0, false, nil
	}
	hit, ok, err := lc.Higher.Lookup(key)
	if err != nil {
		return table.KeyValue{}, 0, false, fmt.Errorf("look up in higher levels: %w", err)
	}
	if !ok {
		return table.KeyValue{}, 0, false, nil
	}
	if hit.Level <= 0 {
		return table.KeyValue{}, 0, false, fmt.Errorf("higher-level lookup returned data file %s of level %d", hit.File, hit.Level)
	}
	if lc.Deletions != nil {
		if err := lc.Deletions.NotifyNewDeletion(hit.File, hit.Pos); err != nil {
			return table.KeyValue{}, 0, false, fmt.Errorf("mark row %d of data file %s deleted: %w", hit.Pos, hit.File, err)
		}
		if !lc.Values {
			return table.KeyValue{}, 0, false, nil
		}
	}
	if !hit.HasValue {
		return table.KeyValue{}, 0, false, fmt.Errorf("higher-level lookup of data file %s returned no record", hit.File)
	}
	return hit.KV, hit.Level, true, nil
}

// insertPos is where KeyValueBuffer.insertInto puts a looked-up record
// among n records in merge order: before the first record it compares
// less than (cmp(i) < 0), else at the end.
func insertPos(n int, cmp func(i int) int) int {
	for i := 0; i < n; i++ {
		if cmp(i) < 0 {
			return i
		}
	}
	return n
}

// compareLookedUp is the comparator LookupChangelogMergeFunctionWrapper
// inserts a looked-up record with: sequence.field (when set), then
// sequence number; no kind or position tie-break.
func compareLookedUp(seqCmp func(a, b table.Row) int, a, b table.KeyValue) int {
	if seqCmp != nil {
		if c := seqCmp(a.Value, b.Value); c != 0 {
			return c
		}
	}
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

func (r *Reader) keyErr(key table.Row, err error) error {
	return fmt.Errorf("merge key %v: %w", []any(key), err)
}

// Close closes every run.
func (r *Reader) Close() error {
	var errs []error
	for _, c := range r.runs {
		errs = append(errs, c.it.Close())
	}
	r.runs, r.heap.items = nil, nil
	if r.err == nil {
		r.err = errors.New("merge reader closed")
	}
	return errors.Join(errs...)
}
