package merge

import (
	"fmt"

	"github.com/compactd/compactd/table"
)

type aggConfig struct {
	removeOnDelete bool
	factories      []func() fieldAgg
	nullable       []bool
}

// aggFactory validates fn for field f once and returns a constructor for
// fresh instances (some aggregators keep per-merge state).
func aggFactory(fn string, f table.DataField, options map[string]string, fnKey string) (func() fieldAgg, error) {
	if _, err := newFieldAgg(fn, f, options, fnKey); err != nil {
		return nil, err
	}
	return func() fieldAgg {
		a, _ := newFieldAgg(fn, f, options, fnKey) // validated above
		return a
	}, nil
}

// fieldAggFunc returns the configured function of a field and the option key
// it came from: fields.<f>.aggregate-function, else
// fields.default-aggregate-function, else "".
func fieldAggFunc(options map[string]string, name string) (string, string) {
	if v, ok := options[fieldKey(name, "aggregate-function")]; ok {
		return v, fieldKey(name, "aggregate-function")
	}
	if v, ok := options[OptFieldsDefaultAggFunc]; ok {
		return v, OptFieldsDefaultAggFunc
	}
	return "", ""
}

// newAggConfig is AggregateMergeFunction.Factory: primary-key fields pass
// through, sequence.field fields take last_value, the rest their configured
// function or last_non_null_value.
func newAggConfig(options map[string]string, e *Engine) (*aggConfig, error) {
	c := &aggConfig{}
	var err error
	if c.removeOnDelete, err = boolOption(options, OptAggregationRemoveOnDelete, false); err != nil {
		return nil, err
	}
	seq := map[int]bool{}
	for _, i := range e.seqFields {
		seq[i] = true
	}
	for i, f := range e.rowType {
		fn, key := fieldAggFunc(options, f.Name)
		switch {
		case seq[i]:
			fn, key = AggLastValue, OptSequenceField
		case contains(e.primaryKeys, f.Name):
			fn, key = aggPrimaryKey, "primary key"
		case fn == "":
			fn, key = AggLastNonNullValue, fieldKey(f.Name, "aggregate-function")
		}
		fac, err := aggFactory(fn, f, options, key)
		if err != nil {
			return nil, err
		}
		c.factories = append(c.factories, fac)
		c.nullable = append(c.nullable, f.Type.Nullable)
	}
	return c, nil
}

// aggregate is AggregateMergeFunction.
//
// Every record folds into the accumulator row (additions with agg, -U/-D with
// retract). With aggregation.remove-record-on-delete a -D replaces the row by
// its own values and marks the result -D; a later record clears the mark and
// aggregates on top of those values. ignore-delete is not consulted (Java does
// not either: it only filters at write time).
type aggregate struct {
	cfg     *aggConfig
	aggs    []fieldAgg
	row     table.Row
	latest  table.KeyValue
	has     bool
	deleted bool
}

func newAggregate(cfg *aggConfig, rowType table.RowType) *aggregate {
	a := &aggregate{cfg: cfg}
	for _, f := range cfg.factories {
		a.aggs = append(a.aggs, f())
	}
	a.Reset()
	return a
}

func (a *aggregate) Reset() {
	a.row = make(table.Row, len(a.aggs))
	for _, g := range a.aggs {
		g.reset()
	}
	a.latest, a.has, a.deleted = table.KeyValue{}, false, false
}

func (a *aggregate) Add(kv table.KeyValue) error {
	a.latest, a.has = kv, true
	a.deleted = a.cfg.removeOnDelete && kv.Kind == table.RowKindDelete
	if a.deleted {
		row, err := initRow(kv.Value, a.cfg.nullable)
		if err != nil {
			return err
		}
		a.row = row
		return nil
	}
	retract := !kv.Kind.IsAdd()
	for i, g := range a.aggs {
		var (
			v   any
			err error
		)
		if retract {
			v, err = g.retract(a.row[i], field(kv.Value, i))
		} else {
			v, err = g.agg(a.row[i], field(kv.Value, i))
		}
		if err != nil {
			return fmt.Errorf("field %d: %w", i, err)
		}
		a.row[i] = v
	}
	return nil
}

// Result returns the accumulator row itself; Reset allocates a new one, so
// the caller may keep it.
func (a *aggregate) Result() (table.KeyValue, bool, error) {
	if !a.has {
		return table.KeyValue{}, false, fmt.Errorf("aggregate merge function has no input")
	}
	kind := table.RowKindInsert
	if a.deleted {
		kind = table.RowKindDelete
	}
	return table.KeyValue{Key: a.latest.Key, Seq: a.latest.Seq, Kind: kind, Value: a.row}, true, nil
}

// initRow copies a record's values into a fresh row; a NULL in a NOT NULL
// column is an error, as in Java.
func initRow(v table.Row, nullable []bool) (table.Row, error) {
	row := make(table.Row, len(nullable))
	for i := range row {
		x := field(v, i)
		if x == nil && !nullable[i] {
			return nil, fmt.Errorf("field %d can not be null", i)
		}
		row[i] = x
	}
	return row, nil
}
