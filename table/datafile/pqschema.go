package datafile

import (
	"fmt"
	"reflect"

	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// Ids Paimon gives the synthetic nodes of nested types (ParquetSchemaConverter):
// an ARRAY element or MAP value gets base + id*1024 + depth, a MAP key
// base - id*1024 - depth, depth counting nested ARRAY/MAP levels from 1.
const nestedIDBase = 536870911

// group is a parquet.Node for a group whose fields keep their declared order
// (parquet.Group sorts by name, which would reorder Paimon's columns).
type group struct {
	typ      parquet.Type
	fields   []parquet.Field
	id       int
	optional bool
	repeated bool
	hasID    bool // list and key_value groups carry no id
	keyValue bool // the repeated group of a MAP
}

func (g *group) ID() int                         { return g.id }
func (g *group) String() string                  { return fmt.Sprintf("group(%d fields)", len(g.fields)) }
func (g *group) Type() parquet.Type              { return g.typ }
func (g *group) Optional() bool                  { return g.optional }
func (g *group) Repeated() bool                  { return g.repeated }
func (g *group) Required() bool                  { return !g.optional && !g.repeated }
func (g *group) Leaf() bool                      { return false }
func (g *group) Fields() []parquet.Field         { return g.fields }
func (g *group) Encoding() encoding.Encoding     { return nil }
func (g *group) Compression() compress.Codec     { return nil }
func (g *group) GoType() reflect.Type            { return reflect.TypeFor[map[string]any]() }
func (g *group) add(name string, n parquet.Node) { g.fields = append(g.fields, field{n, name}) }

// field names a node inside a group.
type field struct {
	parquet.Node
	name string
}

func (f field) Name() string                           { return f.name }
func (f field) Value(base reflect.Value) reflect.Value { return base.MapIndex(reflect.ValueOf(f.name)) }

var (
	plainGroupType = parquet.Group{}.Type()
	listGroupType  = parquet.List(parquet.Leaf(parquet.Int32Type)).Type()
	mapGroupType   = parquet.Map(parquet.Leaf(parquet.Int32Type), parquet.Leaf(parquet.Int32Type)).Type()
)

// parquetSchema builds the Parquet schema Java Paimon writes for fields:
// message paimon_schema, field ids on every column, REQUIRED for NOT NULL.
func parquetSchema(fields table.RowType) (*pqLayout, error) {
	root := &group{typ: plainGroupType}
	for _, f := range fields {
		n, err := parquetNode(f.Type, f.ID, f.ID, 0)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		root.add(f.Name, n)
	}
	// The ids in schema-element order (root first) so the footer can be
	// stamped with ids parquet-go cannot write (0).
	l := &pqLayout{schema: parquet.NewSchema("paimon_schema", root)}
	var walk func(n parquet.Node)
	walk = func(n parquet.Node) {
		if f, ok := n.(field); ok {
			n = f.Node
		}
		id, kv := n.ID(), false
		if g, ok := n.(*group); ok {
			kv = g.keyValue
			if !g.hasID {
				id = -1
			}
		}
		l.ids = append(l.ids, id)
		l.mapKV = append(l.mapKV, kv)
		for _, c := range n.Fields() {
			walk(c)
		}
	}
	walk(root)
	return l, nil
}

// pqLayout is a Parquet schema plus what the footer rewrite needs.
type pqLayout struct {
	schema *parquet.Schema
	ids    []int  // per schema element, -1 for none
	mapKV  []bool // per schema element
}

// idNode carries a field id; unlike parquet.FieldID it lets the id be read
// back for footer patching even when it is 0 (parquet-go drops 0 on write).
func withID(n parquet.Node, id int, nullable bool) parquet.Node {
	if nullable {
		n = parquet.Optional(n)
	} else {
		n = parquet.Required(n)
	}
	return parquet.FieldID(n, id)
}

// Nested ids follow SpecialFields: computed in int32 arithmetic like Java.
func arrayElementID(id, depth int) int {
	return int(int32(nestedIDBase) + int32(id)*1024 + int32(depth))
}
func mapKeyID(id, depth int) int   { return int(int32(nestedIDBase) - int32(id)*1024 - int32(depth)) }
func mapValueID(id, depth int) int { return arrayElementID(id, depth) }

// parquetNode converts type t of the top-level or ROW field with id baseID
// at ARRAY/MAP nesting depth; the node itself gets id nodeID (the field id,
// or a synthetic element/key/value id).
func parquetNode(t table.DataType, baseID, id, depth int) (parquet.Node, error) {
	leaf, err := parquetLeaf(t)
	if err != nil {
		return nil, err
	}
	if leaf != nil {
		return withID(leaf, id, t.Nullable), nil
	}
	switch t.Root {
	case table.TypeArray:
		elem, err := parquetNode(*t.Element, baseID, arrayElementID(baseID, depth+1), depth+1)
		if err != nil {
			return nil, err
		}
		list := &group{typ: plainGroupType, repeated: true}
		list.add("element", elem)
		g := &group{typ: listGroupType, id: id, hasID: true, optional: t.Nullable}
		g.add("list", list)
		return g, nil
	case table.TypeMap, table.TypeMultiset:
		kt := t.Key
		vt := t.Value
		if t.Root == table.TypeMultiset {
			kt = t.Element
			vt = &table.DataType{Root: table.TypeInt}
		}
		k, err := parquetNode(kt.WithNullable(false), baseID, mapKeyID(baseID, depth+1), depth+1)
		if err != nil {
			return nil, err
		}
		v, err := parquetNode(*vt, baseID, mapValueID(baseID, depth+1), depth+1)
		if err != nil {
			return nil, err
		}
		kv := &group{typ: plainGroupType, repeated: true, keyValue: true}
		kv.add("key", k)
		kv.add("value", v)
		g := &group{typ: mapGroupType, id: id, hasID: true, optional: t.Nullable}
		g.add("key_value", kv)
		return g, nil
	case table.TypeRow:
		g := &group{typ: plainGroupType, id: id, hasID: true, optional: t.Nullable}
		for _, f := range t.Fields {
			// A ROW's fields restart the numbering from their own ids.
			n, err := parquetNode(f.Type, f.ID, f.ID, 0)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			g.add(f.Name, n)
		}
		return g, nil
	}
	return nil, fmt.Errorf("type %s is not supported in Parquet data files", t)
}

// decimalBytes is the FIXED_LEN_BYTE_ARRAY size Paimon uses for DECIMAL(p>18).
func decimalBytes(precision int) int {
	n := 1
	for {
		// smallest n with 2^(8n-1) >= 10^p, i.e. (8n-1)*log10(2) >= p
		if float64(8*n-1)*0.30102999566398120 >= float64(precision) {
			return n
		}
		n++
	}
}

// parquetLeaf returns the leaf node (without repetition) of an atomic type,
// or nil for composite types.
func parquetLeaf(t table.DataType) (parquet.Node, error) {
	switch t.Root {
	case table.TypeBoolean:
		return parquet.Leaf(parquet.BooleanType), nil
	case table.TypeTinyInt:
		return parquet.Int(8), nil
	case table.TypeSmallInt:
		return parquet.Int(16), nil
	case table.TypeInt:
		return parquet.Leaf(parquet.Int32Type), nil
	case table.TypeBigInt:
		return parquet.Leaf(parquet.Int64Type), nil
	case table.TypeFloat:
		return parquet.Leaf(parquet.FloatType), nil
	case table.TypeDouble:
		return parquet.Leaf(parquet.DoubleType), nil
	case table.TypeChar, table.TypeVarChar:
		// Dictionary-encoded like Java's writer (which falls back to PLAIN
		// when the dictionary outgrows a page; DictionaryMaxBytes here).
		return parquet.Encoded(parquet.String(), &parquet.RLEDictionary), nil
	case table.TypeBinary, table.TypeVarBinary, table.TypeBlob:
		return parquet.Encoded(parquet.Leaf(parquet.ByteArrayType), &parquet.RLEDictionary), nil
	case table.TypeDecimal:
		switch {
		case t.Precision <= 9:
			return parquet.Decimal(t.Scale, t.Precision, parquet.Int32Type), nil
		case t.Precision <= 18:
			return parquet.Decimal(t.Scale, t.Precision, parquet.Int64Type), nil
		default:
			return parquet.Decimal(t.Scale, t.Precision, parquet.FixedLenByteArrayType(decimalBytes(t.Precision))), nil
		}
	case table.TypeDate:
		return parquet.Date(), nil
	case table.TypeTime:
		return parquet.TimeAdjusted(parquet.Millisecond, true), nil
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		utc := t.Root == table.TypeTimestampLTZ
		switch {
		case t.Precision <= 3:
			return parquet.TimestampAdjusted(parquet.Millisecond, utc), nil
		case t.Precision <= 6:
			return parquet.TimestampAdjusted(parquet.Microsecond, utc), nil
		default:
			return parquet.Leaf(parquet.Int96Type), nil
		}
	case table.TypeArray, table.TypeMap, table.TypeMultiset, table.TypeRow:
		return nil, nil
	}
	return nil, fmt.Errorf("type %s is not supported in Parquet data files", t)
}
