package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// jnode is a JSON value that keeps the order of object keys, so that
// metadata files can be written with the key order Java uses and re-written
// byte for byte.
type jnode struct {
	kind jkind
	str  string // jString: the text; jNumber: the literal; jBool: "true"/"false"
	keys []string
	vals []jnode // object values (parallel to keys) or array elements
}

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

func jStr(s string) jnode   { return jnode{kind: jString, str: s} }
func jInt(n int64) jnode    { return jnode{kind: jNumber, str: strconv.FormatInt(n, 10)} }
func jRaw(lit string) jnode { return jnode{kind: jNumber, str: lit} }
func jNullNode() jnode      { return jnode{kind: jNull} }

func (n *jnode) add(key string, v jnode) {
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// get returns the value of key in an object and whether it is present.
func (n jnode) get(key string) (jnode, bool) {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i], true
		}
	}
	return jnode{}, false
}

// parseOrdered parses one JSON document into a jnode, keeping key order and
// number literals as written (so int64 values survive).
func parseOrdered(data []byte) (jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeNode(dec, 0)
	if err != nil {
		return jnode{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return jnode{}, fmt.Errorf("trailing data after JSON value")
	}
	return n, nil
}

const maxJSONDepth = 200

func decodeNode(dec *json.Decoder, depth int) (jnode, error) {
	if depth > maxJSONDepth {
		return jnode{}, fmt.Errorf("JSON nested deeper than %d", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return jnode{}, io.ErrUnexpectedEOF
		}
		return jnode{}, err
	}
	switch t := tok.(type) {
	case nil:
		return jnode{kind: jNull}, nil
	case bool:
		return jnode{kind: jBool, str: strconv.FormatBool(t)}, nil
	case json.Number:
		return jnode{kind: jNumber, str: string(t)}, nil
	case string:
		return jStr(t), nil
	case json.Delim:
		switch t {
		case '{':
			n := jnode{kind: jObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return jnode{}, err
				}
				key, ok := kt.(string)
				if !ok {
					return jnode{}, fmt.Errorf("object key is not a string")
				}
				v, err := decodeNode(dec, depth+1)
				if err != nil {
					return jnode{}, err
				}
				n.add(key, v)
			}
			if _, err := dec.Token(); err != nil {
				return jnode{}, err
			}
			return n, nil
		case '[':
			n := jnode{kind: jArray}
			for dec.More() {
				v, err := decodeNode(dec, depth+1)
				if err != nil {
					return jnode{}, err
				}
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return jnode{}, err
			}
			return n, nil
		}
	}
	return jnode{}, fmt.Errorf("unexpected JSON token %v", tok)
}

// renderJackson writes n as Java Paimon's JsonSerdeUtil does: Jackson's
// DefaultPrettyPrinter (two-space indent per object nesting, `"k" : v`,
// arrays inline as `[ a, b ]`, empty containers as `{ }` / `[ ]`) with
// Jackson's string escaping and no trailing newline.
func renderJackson(n jnode) []byte {
	var b bytes.Buffer
	writeJackson(&b, n, 0)
	return b.Bytes()
}

func writeJackson(b *bytes.Buffer, n jnode, level int) {
	switch n.kind {
	case jNull:
		b.WriteString("null")
	case jBool, jNumber:
		b.WriteString(n.str)
	case jString:
		writeJacksonString(b, n.str)
	case jArray:
		b.WriteByte('[')
		if len(n.vals) == 0 {
			b.WriteString(" ]")
			return
		}
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte(' ')
			// Arrays are inline in Jackson's printer: they do not add an
			// indentation level, only objects do.
			writeJackson(b, v, level)
		}
		b.WriteString(" ]")
	case jObject:
		b.WriteByte('{')
		if len(n.keys) == 0 {
			b.WriteString(" }")
			return
		}
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
			writeIndent(b, level+1)
			writeJacksonString(b, k)
			b.WriteString(" : ")
			writeJackson(b, n.vals[i], level+1)
		}
		b.WriteByte('\n')
		writeIndent(b, level)
		b.WriteByte('}')
	}
}

func writeIndent(b *bytes.Buffer, level int) {
	for i := 0; i < level; i++ {
		b.WriteString("  ")
	}
}

const upperHex = "0123456789ABCDEF"

// writeJacksonString quotes s the way Jackson does by default: only '"', '\'
// and control characters are escaped (short forms for \b \t \n \f \r,
// \u00XX with upper-case hex otherwise); everything else, including
// non-ASCII, is written as UTF-8.
func writeJacksonString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString("\uFFFD")
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(upperHex[c>>4])
				b.WriteByte(upperHex[c&0xF])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

// Accessors used by the metadata decoders. Each names the key in its error.

func (n jnode) asInt64(key string) (int64, error) {
	if n.kind != jNumber {
		return 0, fmt.Errorf("%q: expected a number, got %s", key, n.kindName())
	}
	v, err := strconv.ParseInt(n.str, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", key, err)
	}
	return v, nil
}

func (n jnode) asString(key string) (string, error) {
	if n.kind != jString {
		return "", fmt.Errorf("%q: expected a string, got %s", key, n.kindName())
	}
	return n.str, nil
}

func (n jnode) kindName() string {
	switch n.kind {
	case jNull:
		return "null"
	case jBool:
		return "boolean"
	case jNumber:
		return "number"
	case jString:
		return "string"
	case jArray:
		return "array"
	}
	return "object"
}

// fromMarshaled converts the output of json.Marshal into a jnode.
func fromMarshaled(v any) (jnode, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return jnode{}, err
	}
	return parseOrdered(data)
}
