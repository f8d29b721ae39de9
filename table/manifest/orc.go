package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/compactd/compactd/internal/avro"
	"github.com/compactd/compactd/internal/orc"
)

// readORCFile decodes a whole ORC metadata file (manifest.format=orc) into
// the generic records the Avro path yields, so that one set of field
// readers serves both: every ORC column becomes a nullable Avro field of
// the same name (STRUCT a record, LIST an array, integers int or long,
// strings string, binaries bytes, TIMESTAMP a long of wall-clock epoch
// milliseconds, as Java's Avro manifests store _CREATION_TIME).
func readORCFile(data []byte) (*avroFile, error) {
	f, err := orc.Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	n := 0
	js, err := orcAvroSchema(f, 0, &n)
	if err != nil {
		return nil, err
	}
	text, err := json.Marshal(js)
	if err != nil {
		return nil, err
	}
	schema, err := avro.ParseSchema(text)
	if err != nil {
		return nil, fmt.Errorf("ORC manifest schema: %w", err)
	}
	out := &avroFile{codec: "orc-" + f.Compression.String()}
	for s := range f.Stripes {
		st, err := f.ReadStripe(s, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		// The root struct itself is not decoded, only its columns.
		top := f.Types[0].Subtypes
		for r := 0; r < st.NumRows; r++ {
			rec := &avro.Record{Schema: schema, Values: make([]any, len(top))}
			for k, id := range top {
				v, err := orcAvroValue(st.Columns[id], r, schema.Fields[k].Schema)
				if err != nil {
					return nil, err
				}
				rec.Values[k] = v
			}
			out.values = append(out.values, rec)
		}
	}
	return out, nil
}

// orcAvroSchema is the Avro schema (as JSON values) of ORC column id.
func orcAvroSchema(f *orc.File, id int, n *int) (any, error) {
	t := f.Types[id]
	switch t.Kind {
	case orc.Boolean:
		return "boolean", nil
	case orc.Byte, orc.Short, orc.Int, orc.Date:
		return "int", nil
	case orc.Long, orc.Timestamp, orc.TimestampInstant:
		return "long", nil
	case orc.Float:
		return "float", nil
	case orc.Double:
		return "double", nil
	case orc.String, orc.Varchar, orc.Char:
		return "string", nil
	case orc.Binary:
		return "bytes", nil
	case orc.List:
		items, err := orcAvroSchema(f, t.Subtypes[0], n)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": []any{"null", items}}, nil
	case orc.Struct:
		*n++
		fields := make([]any, len(t.Subtypes))
		for k, sub := range t.Subtypes {
			ft, err := orcAvroSchema(f, sub, n)
			if err != nil {
				return nil, err
			}
			fields[k] = map[string]any{"name": t.FieldNames[k], "type": []any{"null", ft}}
		}
		return map[string]any{"type": "record", "name": fmt.Sprintf("orc%d", *n), "fields": fields}, nil
	}
	return nil, fmt.Errorf("%w: ORC %s column in a metadata file", ErrUnsupportedFormat, t.Kind)
}

// nonNull is the non-null branch of a ["null", T] union.
func nonNull(s *avro.Schema) *avro.Schema {
	if s.Kind == avro.Union && len(s.Branches) == 2 {
		return s.Branches[1]
	}
	return s
}

// orcAvroValue is entry i of column c as the value internal/avro would
// decode under schema s.
func orcAvroValue(c *orc.Column, i int, s *avro.Schema) (any, error) {
	if c.Null(i) {
		return nil, nil
	}
	s = nonNull(s)
	if k := c.Type.Kind; k == orc.Struct || k == orc.List {
		return orcAvroNested(c, i, s)
	}
	switch v := c.Value(i).(type) {
	case bool, float64:
		if c.Type.Kind == orc.Float {
			return float32(v.(float64)), nil
		}
		return v, nil
	case int64:
		if s.Kind == avro.Int {
			return int32(v), nil
		}
		return v, nil
	case []byte:
		if s.Kind == avro.String {
			return string(v), nil
		}
		return v, nil
	case orc.Time:
		return v.Secs*1000 + int64(v.Nanos)/1e6, nil
	}
	return nil, fmt.Errorf("%w: ORC %s value in a metadata file", ErrUnsupportedFormat, c.Type.Kind)
}

func orcAvroNested(c *orc.Column, i int, s *avro.Schema) (any, error) {
	j := c.Index(i)
	switch c.Type.Kind {
	case orc.Struct:
		rec := &avro.Record{Schema: s, Values: make([]any, len(c.Children))}
		for k, ch := range c.Children {
			v, err := orcAvroValue(ch, j, s.Fields[k].Schema)
			if err != nil {
				return nil, err
			}
			rec.Values[k] = v
		}
		return rec, nil
	case orc.List:
		lo, hi := c.Offsets[j], c.Offsets[j+1]
		out := make([]any, 0, hi-lo)
		for k := lo; k < hi; k++ {
			v, err := orcAvroValue(c.Children[0], k, s.Items)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: ORC %s value in a metadata file", ErrUnsupportedFormat, c.Type.Kind)
}
