package datafile

import (
	"context"
	"fmt"
	"strings"

	"github.com/compactd/compactd/table"
)

// Field ids and names of the system columns of a KeyValue file. Key columns
// carry the id of the table column plus KeyFieldIDOffset.
const (
	KeyFieldPrefix     = "_KEY_"
	KeyFieldIDOffset   = 1073741823 // Integer.MAX_VALUE / 2
	SequenceNumberName = "_SEQUENCE_NUMBER"
	SequenceNumberID   = 2147483646 // Integer.MAX_VALUE - 1
	ValueKindName      = "_VALUE_KIND"
	ValueKindID        = 2147483645 // Integer.MAX_VALUE - 2
)

// Schema is the part of a table schema a data file depends on: the table
// columns and, for primary-key tables, the trimmed primary key (primary keys
// minus partition keys, in primary-key order). KeyNames is empty for
// append tables.
type Schema struct {
	Fields   table.RowType
	KeyNames []string
}

// TrimmedPrimaryKeys returns the primary keys that are not partition keys,
// which is what Paimon stores in the _KEY_ columns. When every primary key is
// a partition key Paimon refuses the table; the full list is returned then.
func TrimmedPrimaryKeys(primaryKeys, partitionKeys []string) []string {
	var out []string
	for _, k := range primaryKeys {
		isPart := false
		for _, p := range partitionKeys {
			if p == k {
				isPart = true
				break
			}
		}
		if !isPart {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return append([]string(nil), primaryKeys...)
	}
	return out
}

// KeyFields returns the table fields named by KeyNames, in key order.
func (s Schema) KeyFields() (table.RowType, error) {
	out := make(table.RowType, 0, len(s.KeyNames))
	for _, k := range s.KeyNames {
		i := s.Fields.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("primary key %q is not a column", k)
		}
		out = append(out, s.Fields[i])
	}
	return out, nil
}

// KeyValueFields returns the column layout of a KeyValue data file:
// _KEY_<k>... (NOT NULL, id + KeyFieldIDOffset), _SEQUENCE_NUMBER,
// _VALUE_KIND, then every table column.
func (s Schema) KeyValueFields() (table.RowType, error) {
	keys, err := s.KeyFields()
	if err != nil {
		return nil, err
	}
	out := make(table.RowType, 0, len(keys)+2+len(s.Fields))
	for _, k := range keys {
		out = append(out, table.DataField{
			ID:   k.ID + KeyFieldIDOffset,
			Name: KeyFieldPrefix + k.Name,
			Type: k.Type.WithNullable(false),
		})
	}
	out = append(out,
		table.DataField{ID: SequenceNumberID, Name: SequenceNumberName, Type: table.DataType{Root: table.TypeBigInt}},
		table.DataField{ID: ValueKindID, Name: ValueKindName, Type: table.DataType{Root: table.TypeTinyInt}},
	)
	return append(out, s.Fields...), nil
}

// isSystemField reports whether a file column is one of Paimon's system
// columns, which get truncate(128) statistics by default.
func isSystemField(name string) bool {
	return strings.HasPrefix(name, KeyFieldPrefix) || name == SequenceNumberName || name == ValueKindName
}

// Format is a data file format.
type Format string

const (
	FormatParquet Format = "parquet"
	FormatAvro    Format = "avro"
	FormatORC     Format = "orc"
)

// FormatOf derives the format from a data file name (data-<uuid>-<n>.<format>).
func FormatOf(path string) (Format, error) {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return "", fmt.Errorf("data file %s: no format extension", path)
	}
	switch f := Format(strings.ToLower(path[i+1:])); f {
	case FormatParquet, FormatAvro, FormatORC:
		return f, nil
	default:
		return "", fmt.Errorf("data file %s: not supported: file.format=%s", path, f)
	}
}

// SchemaOf is the data-file schema of schema version id of t: the columns
// and trimmed primary key its files were written with (the table reads
// each schema file once).
func SchemaOf(ctx context.Context, t *table.Table, id int64) (Schema, error) {
	ts, err := t.SchemaByID(ctx, id)
	if err != nil {
		return Schema{}, err
	}
	return Schema{Fields: ts.Fields, KeyNames: ts.TrimmedPrimaryKeys()}, nil
}
