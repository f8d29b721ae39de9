package merge

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/compactd/compactd/table"
)

// Merge engine names (option merge-engine).
const (
	EngineDeduplicate   = "deduplicate"
	EnginePartialUpdate = "partial-update"
	EngineAggregation   = "aggregation"
	EngineFirstRow      = "first-row"
)

// Option keys read by this package (CoreOptions). The first five are
// parsed by table.ParseOptions (their one parser and default); the others
// are merge-only and read here.
const (
	OptMergeEngine                        = table.OptMergeEngine
	OptIgnoreDelete                       = table.OptIgnoreDelete
	OptSequenceField                      = table.OptSequenceField
	OptSequenceFieldSortOrder             = table.OptSequenceFieldSortOrder
	OptPartialUpdateRemoveOnDelete        = table.OptPartialUpdateRemoveRecordOnDel
	OptRowKindField                       = "rowkind.field"
	OptPartialUpdateRemoveOnSequenceGroup = "partial-update.remove-record-on-sequence-group"
	OptAggregationRemoveOnDelete          = "aggregation.remove-record-on-delete"
	OptFieldsDefaultAggFunc               = "fields.default-aggregate-function"
)

// Engine is a table's merge engine with every merge-related option resolved
// and validated. It is immutable and safe for concurrent use; NewFunction
// gives each merge its own state.
//
// Result records (what Function.Result returns for a key with ≥ 2 records;
// a key with one record passes unchanged through the reducer):
//
//   - deduplicate: the newest record as it is — its sequence number and row
//     kind included (a trailing -D/-U stays a retraction). With ignore-delete,
//     retractions are skipped and a key with only retractions yields nothing.
//   - first-row: the oldest +I/+U record as it is; with ignore-delete
//     retractions are skipped, otherwise a retraction is an error.
//   - partial-update: a new +I row (or -D, see PartialUpdate) carrying the key
//     of the newest record and the sequence number of the newest record that
//     was not skipped by ignore-delete (0 if all were skipped).
//   - aggregation: a new +I row (-D only if aggregation.remove-record-on-delete
//     and the newest record is a -D) with the newest record's key and sequence
//     number.
type Engine struct {
	name         string
	rowType      table.RowType
	primaryKeys  []string
	keyTypes     []table.DataType
	ignoreDelete bool
	seqFields    []int
	seqAscending bool
	// partialRemoveOnDelete is partial-update.remove-record-on-delete.
	partialRemoveOnDelete bool

	partial *partialConfig
	agg     *aggConfig
}

// Validate checks that the merge options of a table are supported and
// consistent, without touching data. It reports the first problem, naming
// the option. Arguments as for NewEngine.
func Validate(options map[string]string, rowType table.RowType, primaryKeys []string, partitionKeys ...string) error {
	_, err := NewEngine(options, rowType, primaryKeys, partitionKeys...)
	return err
}

// NewMergeFunction returns a fresh merge function for the table. Arguments as
// for NewEngine.
func NewMergeFunction(options map[string]string, rowType table.RowType, primaryKeys []string, partitionKeys ...string) (Function, error) {
	e, err := NewEngine(options, rowType, primaryKeys, partitionKeys...)
	if err != nil {
		return nil, err
	}
	return e.NewFunction(), nil
}

// NewEngine resolves the merge engine of a primary-key table from its options
// (schema options merged with any dynamic options), value row type (all
// columns, in schema order), primary key names as declared in the schema and
// partition key names.
//
// The merge key (KeyTypes, what KeyValue.Key holds) is the primary key
// without the partition columns, Paimon's trimmed primary key. The merge
// semantics use the full primary key, as Java does: under aggregation and
// partial-update every primary-key column, partition columns included, takes
// the input value (Paimon's internal "primary-key" aggregator). Passing the
// trimmed key as primaryKeys and no partition keys gives the same key but
// aggregates partition columns as ordinary value columns.
func NewEngine(options map[string]string, rowType table.RowType, primaryKeys []string, partitionKeys ...string) (*Engine, error) {
	if len(primaryKeys) == 0 {
		return nil, fmt.Errorf("merge engines apply to primary-key tables only, the table has no primary key")
	}
	e := &Engine{rowType: rowType, primaryKeys: primaryKeys, seqAscending: true}
	for _, pk := range primaryKeys {
		i := rowType.Index(pk)
		if i < 0 {
			return nil, fmt.Errorf("primary key field %q not found in the row type", pk)
		}
		if contains(partitionKeys, pk) {
			continue
		}
		e.keyTypes = append(e.keyTypes, rowType[i].Type)
	}
	if len(e.keyTypes) == 0 {
		return nil, fmt.Errorf("primary key %v is the same as the partition fields %v; the trimmed primary key would be empty", primaryKeys, partitionKeys)
	}

	// merge-engine, ignore-delete (and its older names), sequence.field,
	// its sort order and partial-update.remove-record-on-delete are
	// table's to parse.
	t, err := table.ParseOptions(options)
	if err != nil {
		return nil, err
	}
	name := string(t.MergeEngine)
	e.name = name
	e.ignoreDelete = t.IgnoreDelete
	e.seqAscending = t.SequenceFieldSortOrder != table.SortDescending
	e.partialRemoveOnDelete = t.PartialUpdateRemoveRecordOnDelete

	if err := validateFieldsPrefix(options, rowType); err != nil {
		return nil, err
	}
	if err := e.resolveSequenceField(t.SequenceField, options); err != nil {
		return nil, err
	}
	if f, ok := options[OptRowKindField]; ok && rowType.Index(f) < 0 {
		return nil, fmt.Errorf("option %s: rowkind field %q can not be found in table schema", OptRowKindField, f)
	}

	switch name {
	case EnginePartialUpdate:
		if e.partial, err = newPartialConfig(options, e); err != nil {
			return nil, err
		}
	case EngineAggregation:
		if e.agg, err = newAggConfig(options, e); err != nil {
			return nil, err
		}
	case EngineFirstRow:
		if len(e.seqFields) > 0 {
			return nil, fmt.Errorf("option %s: sequence field is not supported with the first-row merge engine", OptSequenceField)
		}
	}
	return e, nil
}

// Name is the merge engine: deduplicate, partial-update, aggregation or first-row.
func (e *Engine) Name() string { return e.name }

// KeyTypes are the types of the trimmed primary key fields, in key order.
func (e *Engine) KeyTypes() []table.DataType { return e.keyTypes }

// IgnoreDelete reports ignore-delete (or one of its older names).
func (e *Engine) IgnoreDelete() bool { return e.ignoreDelete }

// HasSequenceField reports whether sequence.field is set.
func (e *Engine) HasSequenceField() bool { return len(e.seqFields) > 0 }

// SeqCompare orders two value rows by sequence.field as Paimon's
// UserDefinedSeqComparator does: field by field, each by CompareValues,
// negated for descending sort order except that NULL always sorts first. It
// is nil when the table has no sequence.field.
func (e *Engine) SeqCompare() func(a, b table.Row) int {
	if len(e.seqFields) == 0 {
		return nil
	}
	return fieldsComparator(e.rowType, e.seqFields, e.seqAscending)
}

// NewFunction returns a merge function with fresh state.
func (e *Engine) NewFunction() Function {
	switch e.name {
	case EnginePartialUpdate:
		return newPartialUpdate(e.partial, e.rowType, e.ignoreDelete)
	case EngineAggregation:
		return newAggregate(e.agg, e.rowType)
	case EngineFirstRow:
		return &firstRow{ignoreDelete: e.ignoreDelete}
	default:
		return &deduplicate{ignoreDelete: e.ignoreDelete}
	}
}

// ReaderOptions returns the Options for merging this table's runs.
func (e *Engine) ReaderOptions(dropDelete bool) Options {
	return Options{KeyTypes: e.keyTypes, SeqCompare: e.SeqCompare(), DropDelete: dropDelete}
}

// LookupOptions returns the Options for a lookup-style table (the planner
// decides which tables are: changelog-producer=lookup, deletion vectors,
// force-lookup, ...). Paimon wraps every merge function but first-row in
// LookupMergeFunction. noReducer selects the lookup-changelog compaction path
// (LookupChangelogMergeFunctionWrapper / FirstRowMergeFunctionWrapper), which
// merges single records too; the plain rewrite path and reads keep the reducer.
func (e *Engine) LookupOptions(dropDelete, noReducer bool) Options {
	o := e.ReaderOptions(dropDelete)
	o.Lookup = e.name != EngineFirstRow
	o.NoReducer = noReducer
	return o
}

// NewReader merges runs of this table with a fresh merge function.
func (e *Engine) NewReader(ctx context.Context, runs []Iterator, dropDelete bool) *Reader {
	return NewReader(ctx, runs, e.NewFunction(), e.ReaderOptions(dropDelete))
}

// resolveSequenceField checks the sequence.field names (as table splits
// them) against the schema and the aggregation options.
func (e *Engine) resolveSequenceField(fields []string, options map[string]string) error {
	seen := map[string]bool{}
	for _, f := range fields {
		i := e.rowType.Index(f)
		if i < 0 {
			return fmt.Errorf("option %s: sequence field %q can not be found in table schema", OptSequenceField, f)
		}
		if _, ok := options[fieldKey(f, "aggregate-function")]; ok {
			return fmt.Errorf("option %s: should not define aggregation on sequence field %q", fieldKey(f, "aggregate-function"), f)
		}
		if seen[f] {
			return fmt.Errorf("option %s: sequence field %q is defined repeatedly", OptSequenceField, f)
		}
		seen[f] = true
		e.seqFields = append(e.seqFields, i)
	}
	return nil
}

// fieldsComparator is UserDefinedSeqComparator over the given field indexes:
// nulls first regardless of direction (Paimon generates nullIsLast=false and
// only negates the non-null comparison).
func fieldsComparator(rowType table.RowType, fields []int, ascending bool) func(a, b table.Row) int {
	types := make([]table.DataType, len(fields))
	for i, f := range fields {
		types[i] = rowType[f].Type
	}
	return func(a, b table.Row) int {
		for i, f := range fields {
			x, y := field(a, f), field(b, f)
			switch {
			case x == nil && y == nil:
				continue
			case x == nil:
				return -1
			case y == nil:
				return 1
			}
			c := table.CompareValues(types[i], x, y)
			if c != 0 {
				if !ascending {
					return -c
				}
				return c
			}
		}
		return 0
	}
}

func field(r table.Row, i int) any {
	if i < len(r) {
		return r[i]
	}
	return nil
}

func fieldKey(field, suffix string) string { return "fields." + field + "." + suffix }

// boolOption reads a merge-only boolean option (per-field options and
// aggregation.remove-record-on-delete): the key, then its fallback keys in
// order; "true"/"false" in any case.
func boolOption(options map[string]string, key string, def bool, fallbacks ...string) (bool, error) {
	for _, k := range append([]string{key}, fallbacks...) {
		v, ok := options[k]
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, fmt.Errorf("option %s: invalid boolean %q", k, v)
	}
	return def, nil
}

// validateFieldsPrefix mirrors SchemaValidation.validateFieldsPrefix: every
// "fields.<a,b>.<...>" option must name existing fields, and dotted paths into
// ROW fields are rejected.
func validateFieldsPrefix(options map[string]string, rowType table.RowType) error {
	for _, k := range sortedKeys(options) {
		if !strings.HasPrefix(k, "fields") {
			continue
		}
		segments := strings.Split(k, ".")
		if len(segments) < 2 {
			return fmt.Errorf("option %s: missing field name", k)
		}
		fields := strings.Split(segments[1], ",")
		for _, f := range fields {
			if f != "default-aggregate-function" && rowType.Index(f) < 0 {
				return fmt.Errorf("option %s: field %s can not be found in table schema", k, f)
			}
		}
		if len(segments) > 3 && len(fields) == 1 {
			if i := rowType.Index(fields[0]); i >= 0 && rowType[i].Type.Root == table.TypeRow {
				return fmt.Errorf("option %s: nested-field path is not supported on ROW field %q", k, fields[0])
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
