package table

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// TypeRoot is the kind of a Paimon data type.
type TypeRoot int

const (
	TypeBoolean TypeRoot = iota
	TypeTinyInt
	TypeSmallInt
	TypeInt
	TypeBigInt
	TypeFloat
	TypeDouble
	TypeDecimal
	TypeChar
	TypeVarChar
	TypeBinary
	TypeVarBinary
	TypeDate
	TypeTime
	TypeTimestamp
	TypeTimestampLTZ
	TypeArray
	TypeMap
	TypeMultiset
	TypeRow
	TypeVariant
	TypeBlob
	TypeVector
)

// MaxLength is the length of STRING and BYTES (VARCHAR/VARBINARY of the
// largest length).
const MaxLength = 2147483647

// DataType is a Paimon logical type as found in schema files.
//
// Length is the length of CHAR/VARCHAR/BINARY/VARBINARY and of VECTOR;
// Precision and Scale belong to DECIMAL, Precision to TIME and TIMESTAMP.
type DataType struct {
	Root      TypeRoot
	Nullable  bool
	Length    int
	Precision int
	Scale     int
	Element   *DataType   // ARRAY, MULTISET, VECTOR
	Key       *DataType   // MAP
	Value     *DataType   // MAP
	Fields    []DataField // ROW
}

// DataField is a column (or a nested ROW field) with its stable id.
type DataField struct {
	ID           int
	Name         string
	Type         DataType
	Description  *string
	DefaultValue *string
}

// String returns the SQL form Java writes into schema files for atomic types
// and a readable form for composite ones.
func (t DataType) String() string {
	var s string
	switch t.Root {
	case TypeBoolean:
		s = "BOOLEAN"
	case TypeTinyInt:
		s = "TINYINT"
	case TypeSmallInt:
		s = "SMALLINT"
	case TypeInt:
		s = "INT"
	case TypeBigInt:
		s = "BIGINT"
	case TypeFloat:
		s = "FLOAT"
	case TypeDouble:
		s = "DOUBLE"
	case TypeDecimal:
		s = fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case TypeChar:
		s = fmt.Sprintf("CHAR(%d)", t.Length)
	case TypeVarChar:
		if t.Length == MaxLength {
			s = "STRING"
		} else {
			s = fmt.Sprintf("VARCHAR(%d)", t.Length)
		}
	case TypeBinary:
		s = fmt.Sprintf("BINARY(%d)", t.Length)
	case TypeVarBinary:
		if t.Length == MaxLength {
			s = "BYTES"
		} else {
			s = fmt.Sprintf("VARBINARY(%d)", t.Length)
		}
	case TypeDate:
		s = "DATE"
	case TypeTime:
		s = fmt.Sprintf("TIME(%d)", t.Precision)
	case TypeTimestamp:
		s = fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	case TypeTimestampLTZ:
		s = fmt.Sprintf("TIMESTAMP(%d) WITH LOCAL TIME ZONE", t.Precision)
	case TypeVariant:
		s = "VARIANT"
	case TypeBlob:
		s = "BLOB"
	case TypeArray:
		s = "ARRAY<" + t.Element.String() + ">"
	case TypeMultiset:
		s = "MULTISET<" + t.Element.String() + ">"
	case TypeVector:
		s = fmt.Sprintf("VECTOR<%s, %d>", t.Element.String(), t.Length)
	case TypeMap:
		s = "MAP<" + t.Key.String() + ", " + t.Value.String() + ">"
	case TypeRow:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + " " + f.Type.String()
		}
		s = "ROW<" + strings.Join(parts, ", ") + ">"
	default:
		s = fmt.Sprintf("UNKNOWN(%d)", int(t.Root))
	}
	if !t.Nullable {
		s += " NOT NULL"
	}
	return s
}

// IsComposite reports whether the type is serialised as a JSON object.
func (t DataType) IsComposite() bool {
	switch t.Root {
	case TypeArray, TypeMap, TypeMultiset, TypeRow, TypeVector:
		return true
	}
	return false
}

// Has reports whether t is of type root or nests one (element, key, value
// or field types, at any depth).
func (t DataType) Has(root TypeRoot) bool {
	if t.Root == root {
		return true
	}
	for _, n := range []*DataType{t.Element, t.Key, t.Value} {
		if n != nil && n.Has(root) {
			return true
		}
	}
	for _, f := range t.Fields {
		if f.Type.Has(root) {
			return true
		}
	}
	return false
}

// WithNullable returns a copy of t with the given nullability.
func (t DataType) WithNullable(n bool) DataType { t.Nullable = n; return t }

// MarshalJSON writes the type as Java's SchemaSerializer does.
func (t DataType) MarshalJSON() ([]byte, error) {
	if !t.IsComposite() {
		return json.Marshal(t.String())
	}
	// Field order follows Java: type, then element / key,value / fields.
	var b strings.Builder
	name := map[TypeRoot]string{TypeArray: "ARRAY", TypeMap: "MAP", TypeMultiset: "MULTISET", TypeRow: "ROW", TypeVector: "VECTOR"}[t.Root]
	if !t.Nullable {
		name += " NOT NULL"
	}
	tn, _ := json.Marshal(name)
	b.WriteString(`{"type":`)
	b.Write(tn)
	switch t.Root {
	case TypeArray, TypeMultiset:
		e, err := json.Marshal(t.Element)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"element":`)
		b.Write(e)
	case TypeVector:
		e, err := json.Marshal(t.Element)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"element":`)
		b.Write(e)
		b.WriteString(`,"length":` + strconv.Itoa(t.Length))
	case TypeMap:
		k, err := json.Marshal(t.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(t.Value)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"key":`)
		b.Write(k)
		b.WriteString(`,"value":`)
		b.Write(v)
	case TypeRow:
		f, err := json.Marshal(t.Fields)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"fields":`)
		b.Write(f)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// UnmarshalJSON parses a type as Java's DataTypeJsonParser does.
func (t *DataType) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		p, err := ParseAtomicType(s)
		if err != nil {
			return err
		}
		*t = p
		return nil
	}
	var obj struct {
		Type    string           `json:"type"`
		Element *DataType        `json:"element"`
		Key     *DataType        `json:"key"`
		Value   *DataType        `json:"value"`
		Fields  []DataField      `json:"fields"`
		Length  *int             `json:"length"`
		Extra   *json.RawMessage `json:"-"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("data type %s: %w", truncate(string(data), 80), err)
	}
	name, nullable := cutNotNull(obj.Type)
	out := DataType{Nullable: nullable}
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "ARRAY":
		out.Root = TypeArray
	case "MULTISET":
		out.Root = TypeMultiset
	case "MAP":
		out.Root = TypeMap
	case "ROW":
		out.Root = TypeRow
	case "VECTOR":
		out.Root = TypeVector
	default:
		return fmt.Errorf("unknown composite data type %q", obj.Type)
	}
	switch out.Root {
	case TypeArray, TypeMultiset, TypeVector:
		if obj.Element == nil {
			return fmt.Errorf("data type %s: missing element", obj.Type)
		}
		out.Element = obj.Element
		if out.Root == TypeVector {
			if obj.Length == nil {
				return fmt.Errorf("data type %s: missing length", obj.Type)
			}
			out.Length = *obj.Length
		}
	case TypeMap:
		if obj.Key == nil || obj.Value == nil {
			return fmt.Errorf("data type %s: missing key or value", obj.Type)
		}
		out.Key, out.Value = obj.Key, obj.Value
	case TypeRow:
		if obj.Fields == nil {
			return fmt.Errorf("data type %s: missing fields", obj.Type)
		}
		out.Fields = obj.Fields
	}
	*t = out
	return nil
}

type dataFieldJSON struct {
	ID           int      `json:"id"`
	Name         string   `json:"name"`
	Type         DataType `json:"type"`
	Description  *string  `json:"description,omitempty"`
	DefaultValue *string  `json:"defaultValue,omitempty"`
}

// MarshalJSON writes the field with optional keys omitted as Java does.
func (f DataField) MarshalJSON() ([]byte, error) {
	return json.Marshal(dataFieldJSON(f))
}

// UnmarshalJSON reads a field; id, name and type are required.
func (f *DataField) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("data field: %w", err)
	}
	for _, k := range []string{"id", "name", "type"} {
		if _, ok := raw[k]; !ok {
			return fmt.Errorf("data field %s: missing %q", truncate(string(data), 80), k)
		}
	}
	var j dataFieldJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("data field %s: %w", truncate(string(data), 80), err)
	}
	*f = DataField(j)
	return nil
}

func cutNotNull(s string) (string, bool) {
	s = strings.TrimSpace(s)
	u := strings.ToUpper(s)
	if strings.HasSuffix(u, " NOT NULL") {
		return strings.TrimSpace(s[:len(s)-len(" NOT NULL")]), false
	}
	if strings.HasSuffix(u, " NULL") {
		return strings.TrimSpace(s[:len(s)-len(" NULL")]), true
	}
	return s, true
}

// ParseAtomicType parses the SQL form of an atomic type ("INT NOT NULL",
// "DECIMAL(10, 2)", "TIMESTAMP(3) WITH LOCAL TIME ZONE", ...).
func ParseAtomicType(s string) (DataType, error) {
	body, nullable := cutNotNull(s)
	u := strings.ToUpper(strings.Join(strings.Fields(body), " "))
	name, args, err := splitArgs(u)
	if err != nil {
		return DataType{}, fmt.Errorf("data type %q: %w", s, err)
	}
	t := DataType{Nullable: nullable}
	arg := func(i, def int) int {
		if i < len(args) {
			return args[i]
		}
		return def
	}
	ltz := false
	switch {
	case strings.HasSuffix(name, " WITH LOCAL TIME ZONE"):
		name = strings.TrimSpace(strings.TrimSuffix(name, " WITH LOCAL TIME ZONE"))
		ltz = true
	case strings.HasSuffix(name, " WITHOUT TIME ZONE"):
		name = strings.TrimSpace(strings.TrimSuffix(name, " WITHOUT TIME ZONE"))
	}
	switch name {
	case "BOOLEAN":
		t.Root = TypeBoolean
	case "TINYINT":
		t.Root = TypeTinyInt
	case "SMALLINT":
		t.Root = TypeSmallInt
	case "INT", "INTEGER":
		t.Root = TypeInt
	case "BIGINT":
		t.Root = TypeBigInt
	case "FLOAT":
		t.Root = TypeFloat
	case "DOUBLE", "DOUBLE PRECISION":
		t.Root = TypeDouble
	case "DECIMAL", "DEC", "NUMERIC":
		t.Root, t.Precision, t.Scale = TypeDecimal, arg(0, 10), arg(1, 0)
	case "CHAR":
		t.Root, t.Length = TypeChar, arg(0, 1)
	case "VARCHAR":
		t.Root, t.Length = TypeVarChar, arg(0, 1)
	case "STRING":
		t.Root, t.Length = TypeVarChar, MaxLength
	case "BINARY":
		t.Root, t.Length = TypeBinary, arg(0, 1)
	case "VARBINARY":
		t.Root, t.Length = TypeVarBinary, arg(0, 1)
	case "BYTES":
		t.Root, t.Length = TypeVarBinary, MaxLength
	case "DATE":
		t.Root = TypeDate
	case "TIME":
		t.Root, t.Precision = TypeTime, arg(0, 0)
	case "TIMESTAMP":
		t.Root, t.Precision = TypeTimestamp, arg(0, 6)
		if ltz {
			t.Root = TypeTimestampLTZ
		}
	case "TIMESTAMP_LTZ":
		t.Root, t.Precision = TypeTimestampLTZ, arg(0, 6)
	case "VARIANT":
		t.Root = TypeVariant
	case "BLOB":
		t.Root = TypeBlob
	default:
		return DataType{}, fmt.Errorf("unknown data type %q", s)
	}
	if ltz && t.Root != TypeTimestampLTZ {
		return DataType{}, fmt.Errorf("unknown data type %q", s)
	}
	return t, nil
}

// splitArgs splits "DECIMAL(10, 2) X" into "DECIMAL X" and [10 2].
func splitArgs(u string) (string, []int, error) {
	open := strings.IndexByte(u, '(')
	if open < 0 {
		return u, nil, nil
	}
	closing := strings.IndexByte(u[open:], ')')
	if closing < 0 {
		return "", nil, fmt.Errorf("unbalanced parenthesis")
	}
	closing += open
	var args []int
	for _, p := range strings.Split(u[open+1:closing], ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return "", nil, fmt.Errorf("bad type parameter %q", p)
		}
		args = append(args, n)
	}
	name := strings.TrimSpace(u[:open]) + u[closing+1:]
	return strings.TrimSpace(name), args, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// RowType is an ordered list of fields, a table's columns.
type RowType []DataField

// Index returns the position of the named field or -1.
func (r RowType) Index(name string) int {
	for i, f := range r {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// IndexByID returns the position of the field with the given id or -1.
func (r RowType) IndexByID(id int) int {
	for i, f := range r {
		if f.ID == id {
			return i
		}
	}
	return -1
}
