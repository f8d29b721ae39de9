package merge

import (
	"errors"
	"fmt"
	"strings"

	"github.com/compactd/compactd/table"
)

// seqGroup is one fields.<ordering fields>.sequence-group: its ordering
// fields and their comparator (ascending, nulls first).
type seqGroup struct {
	key    string
	fields []int
	cmp    func(a, b table.Row) int
}

func (g *seqGroup) isOrderingField(i int) bool {
	for _, f := range g.fields {
		if f == i {
			return true
		}
	}
	return false
}

type partialConfig struct {
	ignoreDelete   bool
	removeOnDelete bool
	groups         []*seqGroup // per field: the group ordering or protecting it
	aggs           []func() fieldAgg
	partialDelete  map[int]bool // ordering fields named by remove-record-on-sequence-group
	nullable       []bool
	hasGroups      bool
	// nonKeyAggs reports an aggregate function on a non-key field (the
	// column-wise batch merge does not apply then).
	nonKeyAggs bool
	groupList  []*seqGroup
}

// ErrPartialUpdateDelete is returned when a partial-update table without
// ignore-delete, remove-record-on-delete or sequence groups meets a -U/-D
// record in a merge; Java throws the same way.
var ErrPartialUpdateDelete = errors.New("by default, partial update can not accept delete records; configure 'ignore-delete', " +
	"'partial-update.remove-record-on-delete', or 'sequence-group's (optionally with 'partial-update.remove-record-on-sequence-group')")

// newPartialConfig is PartialUpdateMergeFunction.Factory.
func newPartialConfig(options map[string]string, e *Engine) (*partialConfig, error) {
	rt := e.rowType
	c := &partialConfig{
		ignoreDelete:  e.ignoreDelete,
		groups:        make([]*seqGroup, len(rt)),
		aggs:          make([]func() fieldAgg, len(rt)),
		partialDelete: map[int]bool{},
	}
	c.removeOnDelete = e.partialRemoveOnDelete
	removeOnGroup, hasRemoveOnGroup := options[OptPartialUpdateRemoveOnSequenceGroup]
	for _, f := range rt {
		c.nullable = append(c.nullable, f.Type.Nullable)
	}

	requireField := func(key, name string) (int, error) {
		i := rt.Index(name)
		if i < 0 {
			return 0, fmt.Errorf("option %s: field %s can not be found in table schema", key, name)
		}
		return i, nil
	}
	orderingIndex := map[string]int{}
	var orderingNames, protectedNames []string
	owner := make([]string, len(rt)) // option key that claimed each field
	for _, k := range sortedKeys(options) {
		if !strings.HasPrefix(k, "fields") || !strings.HasSuffix(k, "sequence-group") {
			continue
		}
		if !strings.HasPrefix(k, "fields.") || !strings.HasSuffix(k, ".sequence-group") || len(k) <= len("fields..sequence-group") {
			return nil, fmt.Errorf("invalid sequence-group option: %s", k)
		}
		g := &seqGroup{key: k}
		for _, name := range strings.Split(k[len("fields."):len(k)-len(".sequence-group")], ",") {
			i, err := requireField(k, name)
			if err != nil {
				return nil, err
			}
			if containsBlob(rt[i].Type) {
				return nil, fmt.Errorf("option %s: field %q with type %s cannot be used as a sequence-group ordering field", k, name, rt[i].Type)
			}
			g.fields = append(g.fields, i)
		}
		g.cmp = fieldsComparator(rt, g.fields, true)
		claim := func(i int) error {
			if owner[i] != "" {
				// Java either rejects this or lets one group silently win,
				// depending on hash order; refuse it outright.
				return fmt.Errorf("option %s: field %s is defined repeatedly by multiple groups (also in %s)", k, rt[i].Name, owner[i])
			}
			owner[i] = k
			c.groups[i] = g
			return nil
		}
		for _, name := range strings.Split(options[k], ",") {
			i, err := requireField(k, name)
			if err != nil {
				return nil, err
			}
			if contains(e.primaryKeys, name) {
				return nil, fmt.Errorf("option %s: the sequence-group contains primary key field %q, which is not allowed", k, name)
			}
			if err := claim(i); err != nil {
				return nil, err
			}
			protectedNames = append(protectedNames, name)
		}
		for _, i := range g.fields {
			name := rt[i].Name
			if contains(e.primaryKeys, name) {
				return nil, fmt.Errorf("option %s: the sequence-group contains primary key field %q, which is not allowed", k, name)
			}
			if err := claim(i); err != nil {
				return nil, err
			}
			orderingNames = append(orderingNames, name)
			orderingIndex[name] = i
		}
		c.hasGroups = true
		c.groupList = append(c.groupList, g)
	}

	for i, f := range rt {
		if contains(orderingNames, f.Name) {
			continue // ordering fields never aggregate
		}
		fn, key := fieldAggFunc(options, f.Name)
		if fn != "" && !contains(e.primaryKeys, f.Name) {
			c.nonKeyAggs = true
		}
		if contains(e.primaryKeys, f.Name) {
			fn, key = aggPrimaryKey, "primary key"
		} else if fn != "" && fn != AggLastNonNullValue && !contains(protectedNames, f.Name) {
			return nil, fmt.Errorf("option %s: must use sequence group for aggregation functions but not found for field %s", key, f.Name)
		}
		if fn == "" {
			continue
		}
		fac, err := aggFactory(fn, f, options, key)
		if err != nil {
			return nil, err
		}
		c.aggs[i] = fac
	}

	if c.removeOnDelete && c.ignoreDelete {
		return nil, fmt.Errorf("options %s and %s have conflicting behavior so should not be enabled at the same time", OptIgnoreDelete, OptPartialUpdateRemoveOnDelete)
	}
	if hasRemoveOnGroup && c.ignoreDelete {
		return nil, fmt.Errorf("options %s and %s have conflicting behavior so should not be enabled at the same time", OptIgnoreDelete, OptPartialUpdateRemoveOnSequenceGroup)
	}
	if c.removeOnDelete && c.hasGroups {
		return nil, fmt.Errorf("options sequence-group and %s have conflicting behavior so should not be enabled at the same time", OptPartialUpdateRemoveOnDelete)
	}
	if hasRemoveOnGroup {
		for _, name := range strings.Split(removeOnGroup, ",") {
			i, ok := orderingIndex[name]
			if !ok {
				return nil, fmt.Errorf("option %s: field '%s' must be part of sequence groups", OptPartialUpdateRemoveOnSequenceGroup, name)
			}
			c.partialDelete[i] = true
		}
	}
	return c, nil
}

func containsBlob(t table.DataType) bool {
	switch t.Root {
	case table.TypeBlob:
		return true
	case table.TypeArray, table.TypeMultiset, table.TypeVector:
		return t.Element != nil && containsBlob(*t.Element)
	case table.TypeMap:
		return (t.Key != nil && containsBlob(*t.Key)) || (t.Value != nil && containsBlob(*t.Value))
	case table.TypeRow:
		for _, f := range t.Fields {
			if containsBlob(f.Type) {
				return true
			}
		}
	}
	return false
}

// partialUpdate is PartialUpdateMergeFunction, transliterated so that the
// field-by-field order of sequence-group processing (which decides what a
// protected field is compared against) matches Java.
//
// Result: kind -D if the last record set the delete mark
// (remove-record-on-delete / remove-record-on-sequence-group) or no addition
// was seen, else +I; sequence number of the last record not skipped by
// ignore-delete; key of the last record.
type partialUpdate struct {
	cfg *partialConfig

	aggs         []fieldAgg
	key          table.Row
	latestSeq    int64
	row          table.Row
	deleteRow    bool
	filled       bool
	meetInsert   bool
	processed    []bool
	updatedOrder []bool
	// pickColumns' scratch rows.
	pcCur, pcCand table.Row
}

func newPartialUpdate(cfg *partialConfig, rowType table.RowType, ignoreDelete bool) *partialUpdate {
	p := &partialUpdate{cfg: cfg, aggs: make([]fieldAgg, len(cfg.aggs))}
	for i, f := range cfg.aggs {
		if f != nil {
			p.aggs[i] = f()
		}
	}
	p.processed = make([]bool, len(cfg.aggs))
	p.updatedOrder = make([]bool, len(cfg.aggs))
	p.Reset()
	return p
}

func (p *partialUpdate) Reset() {
	p.key = nil
	p.meetInsert, p.filled, p.deleteRow = false, false, false
	p.row = make(table.Row, len(p.aggs))
	p.latestSeq = 0
	for _, a := range p.aggs {
		if a != nil {
			a.reset()
		}
	}
}

func (p *partialUpdate) Add(kv table.KeyValue) error {
	p.key = kv.Key
	p.deleteRow = false
	if !kv.Kind.IsAdd() {
		if !p.filled {
			row, err := initRow(kv.Value, p.cfg.nullable)
			if err != nil {
				return err
			}
			p.row, p.filled = row, true
		}
		// Files written by Paimon <= 0.7 may hold retractions despite ignore-delete.
		if p.cfg.ignoreDelete {
			return nil
		}
		p.latestSeq = kv.Seq
		if p.cfg.hasGroups {
			return p.retractWithGroups(kv)
		}
		if p.cfg.removeOnDelete {
			if kv.Kind == table.RowKindDelete {
				row, err := initRow(kv.Value, p.cfg.nullable)
				if err != nil {
					return err
				}
				p.deleteRow, p.row = true, row
			}
			return nil
		}
		return ErrPartialUpdateDelete
	}
	p.latestSeq = kv.Seq
	var err error
	if p.cfg.hasGroups {
		err = p.updateWithGroups(kv)
	} else {
		err = p.updateNonNull(kv)
	}
	if err != nil {
		return err
	}
	p.meetInsert, p.filled = true, true
	return nil
}

// updateNonNull: without sequence groups configured aggregators are not used
// (only last_non_null_value is allowed, and it is what this does).
func (p *partialUpdate) updateNonNull(kv table.KeyValue) error {
	for i := range p.row {
		v := field(kv.Value, i)
		if v != nil {
			p.row[i] = v
		} else if !p.cfg.nullable[i] {
			return fmt.Errorf("field %d can not be null", i)
		}
	}
	return nil
}

// emptyGroup reports whether all ordering fields of g are null in the input;
// if so they are marked processed.
func (p *partialUpdate) emptyGroup(kv table.KeyValue, g *seqGroup) bool {
	for _, f := range g.fields {
		if field(kv.Value, f) != nil {
			return false
		}
	}
	for _, f := range g.fields {
		p.processed[f] = true
	}
	return true
}

func (p *partialUpdate) updateWithGroups(kv table.KeyValue) error {
	clear(p.processed)
	for i := range p.row {
		g, a := p.cfg.groups[i], p.aggs[i]
		acc, in := p.row[i], field(kv.Value, i)
		var err error
		if g == nil {
			if a != nil {
				p.row[i], err = a.agg(acc, in)
			} else if in != nil {
				p.row[i] = in
			}
			if err != nil {
				return fmt.Errorf("field %d: %w", i, err)
			}
			continue
		}
		if p.processed[i] || p.emptyGroup(kv, g) {
			continue
		}
		if g.cmp(kv.Value, p.row) >= 0 {
			if g.isOrderingField(i) {
				// All ordering fields of the group advance together.
				for _, f := range g.fields {
					p.row[f] = field(kv.Value, f)
					p.processed[f] = true
				}
				continue
			}
			if a == nil {
				p.row[i] = in
			} else if p.row[i], err = a.agg(acc, in); err != nil {
				return fmt.Errorf("field %d: %w", i, err)
			}
		} else if a != nil {
			if p.row[i], err = a.aggReversed(acc, in); err != nil {
				return fmt.Errorf("field %d: %w", i, err)
			}
		}
	}
	return nil
}

func (p *partialUpdate) retractWithGroups(kv table.KeyValue) error {
	clear(p.processed)
	clear(p.updatedOrder)
	for i := range p.row {
		g, a := p.cfg.groups[i], p.aggs[i]
		if g == nil || p.processed[i] || p.emptyGroup(kv, g) {
			continue
		}
		var err error
		if g.cmp(kv.Value, p.row) >= 0 {
			if g.isOrderingField(i) {
				for _, f := range g.fields {
					if !p.updatedOrder[f] {
						if kv.Kind == table.RowKindDelete && p.cfg.partialDelete[f] {
							row, err := initRow(kv.Value, p.cfg.nullable)
							if err != nil {
								return err
							}
							p.deleteRow, p.row = true, row
							return nil
						}
						p.row[f] = field(kv.Value, f)
						p.updatedOrder[f] = true
					}
					p.processed[f] = true
				}
				continue
			}
			if a == nil {
				p.row[i] = nil
			} else if p.row[i], err = a.retract(p.row[i], field(kv.Value, i)); err != nil {
				return fmt.Errorf("field %d: %w", i, err)
			}
		} else if a != nil {
			if p.row[i], err = a.retract(p.row[i], field(kv.Value, i)); err != nil {
				return fmt.Errorf("field %d: %w", i, err)
			}
		}
	}
	return nil
}

// Result returns the working row itself; Reset allocates a new one.
func (p *partialUpdate) Result() (table.KeyValue, bool, error) {
	kind := table.RowKindInsert
	if p.deleteRow || !p.meetInsert {
		kind = table.RowKindDelete
	}
	return table.KeyValue{Key: p.key, Seq: p.latestSeq, Kind: kind, Value: p.row}, true, nil
}

// pickColumns is the column-wise form of a partial-update merge of additions
// only, for the batch merge: src[i] is set to the record (index in merge
// order) whose value field i takes, or -1 for null; the key and sequence
// number come from the last record and the kind is +I. It declines (false)
// what it does not cover: retractions, aggregate functions on value fields
// with sequence groups, and nulls in NOT NULL fields (the record-wise merge
// reports those).
//
// Without sequence groups a field takes its last non-null value. With them,
// a field outside every group does the same; a group is won by the last
// record whose ordering fields are not all null and compare >= those of the
// group's previous winner (updateWithGroups decides field by field, but
// every field of a group sees the same comparison), and all the group's
// fields take the winner's values, nulls included.
func (p *partialUpdate) pickColumns(v groupView, src []int) (bool, error) {
	cfg := p.cfg
	if cfg.hasGroups && cfg.nonKeyAggs {
		return false, nil
	}
	n := v.records()
	for r := range n {
		if v.retract(r) {
			return false, nil
		}
	}
	for i := range src {
		src[i] = -1
		if cfg.groups[i] != nil {
			continue
		}
		for r := n - 1; r >= 0; r-- {
			if !v.null(r, i) {
				src[i] = r
				break
			}
		}
		if !cfg.hasGroups && !cfg.nullable[i] {
			for r := range n {
				if v.null(r, i) {
					return false, nil
				}
			}
		}
	}
	if !cfg.hasGroups {
		return true, nil
	}
	// Two rows hold the ordering fields of the winner so far and of the
	// candidate; the comparator reads nothing else.
	if len(p.pcCur) != len(src) {
		p.pcCur, p.pcCand = make(table.Row, len(src)), make(table.Row, len(src))
	}
	cur, cand := p.pcCur, p.pcCand
	for _, g := range cfg.groupList {
		for _, f := range g.fields {
			cur[f] = nil
		}
		win := -1
		for r := range n {
			empty := true
			for _, f := range g.fields {
				if !v.null(r, f) {
					empty = false
					break
				}
			}
			if empty {
				continue
			}
			for _, f := range g.fields {
				x, err := v.value(r, f)
				if err != nil {
					return false, err
				}
				cand[f] = x
			}
			if win < 0 || g.cmp(cand, cur) >= 0 {
				win = r
				cur, cand = cand, cur
			}
		}
		for _, f := range g.fields {
			cur[f], cand[f] = nil, nil
		}
		for i, gi := range cfg.groups {
			if gi == g {
				src[i] = win
			}
		}
	}
	return true, nil
}

// groupView is what pickColumns reads of a key's records, in merge order.
type groupView interface {
	records() int
	retract(r int) bool
	null(r, field int) bool
	value(r, field int) (any, error)
}
