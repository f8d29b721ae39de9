package table

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Schema file format versions (Java TableSchema constants).
const (
	SchemaVersionPaimon07 = 1 // missing "version" means this
	SchemaVersionPaimon08 = 2
	SchemaVersionCurrent  = 3
)

const schemaPrefix = "schema-"

// SchemaFileName is the name of schema id inside schema/.
func SchemaFileName(id int64) string { return schemaPrefix + strconv.FormatInt(id, 10) }

// TableSchema is one schema/schema-<id> file.
type TableSchema struct {
	Version        int
	ID             int64
	Fields         RowType
	HighestFieldID int
	PartitionKeys  []string
	PrimaryKeys    []string
	// Options as stored in the file, without the compatibility defaults of
	// old versions (see CoreOptions for the effective view).
	Options    map[string]string
	Comment    *string
	TimeMillis int64

	optOrder      []string // key order of the file, for byte-exact rewrites
	noVersionKey  bool
	noTimeMillis  bool
	trimmedPK     []string
	bucketKeys    []string
	effectiveOpts map[string]string
	parsedOptions *Options
}

// ParseTableSchema parses and validates a schema file the way Java's
// SchemaSerializer and TableSchema constructor do.
func ParseTableSchema(data []byte) (*TableSchema, error) {
	root, err := parseOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("parse schema JSON: %w", err)
	}
	if root.kind != jObject {
		return nil, fmt.Errorf("schema: expected a JSON object, got %s", root.kindName())
	}
	s := &TableSchema{Version: SchemaVersionPaimon07}
	if v, ok := root.get("version"); ok && v.kind != jNull {
		n, err := v.asInt64("version")
		if err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		s.Version = int(n)
	} else {
		s.noVersionKey = true
	}
	req := func(key string) (jnode, error) {
		v, ok := root.get(key)
		if !ok || v.kind == jNull {
			return jnode{}, fmt.Errorf("schema: missing %q", key)
		}
		return v, nil
	}
	v, err := req("id")
	if err != nil {
		return nil, err
	}
	if s.ID, err = v.asInt64("id"); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if v, err = req("fields"); err != nil {
		return nil, err
	}
	if v.kind != jArray {
		return nil, fmt.Errorf("schema: %q: expected an array, got %s", "fields", v.kindName())
	}
	for i, fn := range v.vals {
		var f DataField
		if err := f.UnmarshalJSON(renderCompact(fn)); err != nil {
			return nil, fmt.Errorf("schema: field %d: %w", i, err)
		}
		s.Fields = append(s.Fields, f)
	}
	if v, err = req("highestFieldId"); err != nil {
		return nil, err
	}
	hf, err := v.asInt64("highestFieldId")
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s.HighestFieldID = int(hf)
	for _, key := range []string{"partitionKeys", "primaryKeys"} {
		if v, err = req(key); err != nil {
			return nil, err
		}
		if v.kind != jArray {
			return nil, fmt.Errorf("schema: %q: expected an array, got %s", key, v.kindName())
		}
		list := []string{}
		for _, e := range v.vals {
			str, err := e.asString(key)
			if err != nil {
				return nil, fmt.Errorf("schema: %w", err)
			}
			list = append(list, str)
		}
		if key == "partitionKeys" {
			s.PartitionKeys = list
		} else {
			s.PrimaryKeys = list
		}
	}
	if v, err = req("options"); err != nil {
		return nil, err
	}
	if v.kind != jObject {
		return nil, fmt.Errorf("schema: %q: expected an object, got %s", "options", v.kindName())
	}
	s.Options = make(map[string]string, len(v.keys))
	for i, k := range v.keys {
		// Java reads option values with asText, so numbers and booleans
		// written unquoted by hand still work.
		ov := v.vals[i]
		var str string
		switch ov.kind {
		case jString, jNumber, jBool:
			str = ov.str
		case jNull:
			str = "null"
		default:
			return nil, fmt.Errorf("schema: option %q: expected a string, got %s", k, ov.kindName())
		}
		if _, dup := s.Options[k]; !dup {
			s.optOrder = append(s.optOrder, k)
		}
		s.Options[k] = str
	}
	if v, ok := root.get("comment"); ok && v.kind != jNull {
		c, err := v.asString("comment")
		if err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		s.Comment = &c
	}
	if v, ok := root.get("timeMillis"); ok && v.kind != jNull {
		if s.TimeMillis, err = v.asInt64("timeMillis"); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
	} else {
		s.noTimeMillis = true
	}
	if err := s.init(); err != nil {
		return nil, err
	}
	return s, nil
}

// renderCompact writes a jnode as compact JSON for the standard decoder.
func renderCompact(n jnode) []byte {
	// The pretty form is valid JSON too; DataField parsing does not care.
	return renderJackson(n)
}

// init derives and validates what Java's TableSchema constructor does:
// trimmed primary keys, bucket keys, and the options.
func (s *TableSchema) init() error {
	names := map[string]bool{}
	for _, f := range s.Fields {
		names[f.Name] = true
	}
	for _, k := range s.PartitionKeys {
		if !names[k] {
			return fmt.Errorf("schema %d: partition key %q is not a field", s.ID, k)
		}
	}
	for _, k := range s.PrimaryKeys {
		if !names[k] {
			return fmt.Errorf("schema %d: primary key %q is not a field", s.ID, k)
		}
	}
	s.trimmedPK = nil
	for _, k := range s.PrimaryKeys {
		if !slices.Contains(s.PartitionKeys, k) {
			s.trimmedPK = append(s.trimmedPK, k)
		}
	}
	if len(s.PrimaryKeys) > 0 && len(s.trimmedPK) == 0 {
		return fmt.Errorf("schema %d: primary key %v must not equal the partition keys %v", s.ID, s.PrimaryKeys, s.PartitionKeys)
	}
	// The compatibility defaults of old schema versions are part of the
	// effective options (Java puts them into the map it reads).
	s.effectiveOpts = make(map[string]string, len(s.Options)+2)
	for k, v := range s.Options {
		s.effectiveOpts[k] = v
	}
	if _, ok := s.effectiveOpts[OptBucket]; !ok && s.Version <= SchemaVersionPaimon07 {
		s.effectiveOpts[OptBucket] = "1"
	}
	if _, ok := s.effectiveOpts[OptFileFormat]; !ok && s.Version <= SchemaVersionPaimon08 {
		s.effectiveOpts[OptFileFormat] = "orc"
	}
	opts, err := ParseOptions(s.effectiveOpts)
	if err != nil {
		return fmt.Errorf("schema %d: %w", s.ID, err)
	}
	s.parsedOptions = opts
	s.bucketKeys = nil
	if bk := opts.BucketKey; len(bk) > 0 {
		for _, k := range bk {
			if !names[k] {
				return fmt.Errorf("schema %d: bucket key %q is not a field", s.ID, k)
			}
			if slices.Contains(s.PartitionKeys, k) {
				return fmt.Errorf("schema %d: bucket key %q is a partition key", s.ID, k)
			}
			if len(s.PrimaryKeys) > 0 && !slices.Contains(s.PrimaryKeys, k) {
				return fmt.Errorf("schema %d: bucket key %q is not in the primary key", s.ID, k)
			}
		}
		s.bucketKeys = slices.Clone(bk)
	} else {
		s.bucketKeys = slices.Clone(s.trimmedPK)
	}
	return nil
}

// NewTableSchema builds a version-3 schema and validates it like a parsed one.
func NewTableSchema(id int64, fields RowType, highestFieldID int, partitionKeys, primaryKeys []string,
	options map[string]string, comment *string, timeMillis int64) (*TableSchema, error) {
	if partitionKeys == nil {
		partitionKeys = []string{}
	}
	if primaryKeys == nil {
		primaryKeys = []string{}
	}
	if options == nil {
		options = map[string]string{}
	}
	s := &TableSchema{
		Version: SchemaVersionCurrent, ID: id, Fields: fields, HighestFieldID: highestFieldID,
		PartitionKeys: partitionKeys, PrimaryKeys: primaryKeys, Options: options,
		Comment: comment, TimeMillis: timeMillis,
	}
	if err := s.init(); err != nil {
		return nil, err
	}
	return s, nil
}

// CoreOptions is the typed view of the effective options (with the
// compatibility defaults of schema versions ≤ 2 applied).
func (s *TableSchema) CoreOptions() *Options { return s.parsedOptions }

// EffectiveOptions are the stored options plus the compatibility defaults.
func (s *TableSchema) EffectiveOptions() map[string]string { return s.effectiveOpts }

// HasPrimaryKey reports whether this is a primary-key table.
func (s *TableSchema) HasPrimaryKey() bool { return len(s.PrimaryKeys) > 0 }

// CrossPartitionUpdate reports whether a key may move between partitions:
// a primary-key table whose primary key does not contain every partition
// key (Java's TableSchema.crossPartitionUpdate). With bucket=-1 Java
// assigns such tables' buckets through a global key index (KEY_DYNAMIC
// bucket mode), not through the per-bucket HASH index files.
func (s *TableSchema) CrossPartitionUpdate() bool {
	if len(s.PrimaryKeys) == 0 || len(s.PartitionKeys) == 0 {
		return false
	}
	for _, p := range s.PartitionKeys {
		if !slices.Contains(s.PrimaryKeys, p) {
			return true
		}
	}
	return false
}

// TrimmedPrimaryKeys are the primary keys minus the partition keys: the key
// columns of data files and of _MIN_KEY/_MAX_KEY.
func (s *TableSchema) TrimmedPrimaryKeys() []string { return s.trimmedPK }

// BucketKeys are bucket-key if set, else the trimmed primary keys (empty
// for append tables without bucket-key).
func (s *TableSchema) BucketKeys() []string { return s.bucketKeys }

// FieldNames returns the top-level column names in order.
func (s *TableSchema) FieldNames() []string {
	out := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = f.Name
	}
	return out
}

// Field returns the top-level field with the given name.
func (s *TableSchema) Field(name string) (DataField, bool) {
	if i := s.Fields.Index(name); i >= 0 {
		return s.Fields[i], true
	}
	return DataField{}, false
}

// FieldByID returns the top-level field with the given id.
func (s *TableSchema) FieldByID(id int) (DataField, bool) {
	if i := s.Fields.IndexByID(id); i >= 0 {
		return s.Fields[i], true
	}
	return DataField{}, false
}

// Project returns the fields with the given names in that order; unknown
// names are skipped as Java's projectedDataFields does.
func (s *TableSchema) Project(names []string) RowType {
	out := RowType{}
	for _, n := range names {
		if f, ok := s.Field(n); ok {
			out = append(out, f)
		}
	}
	return out
}

// PartitionType is the row type of the partition (BinaryRow of _PARTITION).
func (s *TableSchema) PartitionType() RowType { return s.Project(s.PartitionKeys) }

// TrimmedPrimaryKeyType is the row type of _MIN_KEY/_MAX_KEY.
func (s *TableSchema) TrimmedPrimaryKeyType() RowType { return s.Project(s.trimmedPK) }

// PrimaryKeyType is the row type of the full primary key.
func (s *TableSchema) PrimaryKeyType() RowType { return s.Project(s.PrimaryKeys) }

// BucketKeyType is the row type hashed for fixed buckets.
func (s *TableSchema) BucketKeyType() RowType { return s.Project(s.bucketKeys) }

// typesOf returns the data types of a row type.
func typesOf(r RowType) []DataType {
	out := make([]DataType, len(r))
	for i, f := range r {
		out[i] = f.Type
	}
	return out
}

// toNode builds the schema object in the order Java's SchemaSerializer
// writes it.
func (s *TableSchema) toNode() (jnode, error) {
	o := jnode{kind: jObject}
	if !s.noVersionKey {
		o.add("version", jInt(int64(s.Version)))
	}
	o.add("id", jInt(s.ID))
	fields := jnode{kind: jArray}
	for _, f := range s.Fields {
		n, err := fromMarshaled(f)
		if err != nil {
			return jnode{}, fmt.Errorf("schema %d: field %q: %w", s.ID, f.Name, err)
		}
		fields.vals = append(fields.vals, n)
	}
	o.add("fields", fields)
	o.add("highestFieldId", jInt(int64(s.HighestFieldID)))
	for _, kv := range []struct {
		key  string
		list []string
	}{{"partitionKeys", s.PartitionKeys}, {"primaryKeys", s.PrimaryKeys}} {
		a := jnode{kind: jArray}
		for _, k := range kv.list {
			a.vals = append(a.vals, jStr(k))
		}
		o.add(kv.key, a)
	}
	opts := jnode{kind: jObject}
	for _, k := range orderedKeys(s.Options, s.optOrder, func(a, b string) bool { return a < b }) {
		opts.add(k, jStr(s.Options[k]))
	}
	o.add("options", opts)
	if s.Comment != nil {
		o.add("comment", jStr(*s.Comment))
	}
	if !s.noTimeMillis {
		o.add("timeMillis", jInt(s.TimeMillis))
	}
	return o, nil
}

// MarshalJSON writes the schema as Java does (Jackson pretty printer, key
// order of SchemaSerializer). A parsed schema is reproduced byte for byte:
// option order and absent version/timeMillis keys of old files are kept.
func (s TableSchema) MarshalJSON() ([]byte, error) {
	n, err := s.toNode()
	if err != nil {
		return nil, err
	}
	return renderJackson(n), nil
}

// UnmarshalJSON parses and validates a schema file body.
func (s *TableSchema) UnmarshalJSON(data []byte) error {
	p, err := ParseTableSchema(data)
	if err != nil {
		return err
	}
	*s = *p
	return nil
}

// String is a short description for logs.
func (s *TableSchema) String() string {
	return fmt.Sprintf("schema %d (%d fields, partition %s, pk %s)", s.ID, len(s.Fields),
		strings.Join(s.PartitionKeys, ","), strings.Join(s.PrimaryKeys, ","))
}
