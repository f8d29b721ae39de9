package datafile

import (
	"errors"
	"fmt"

	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
)

// Records are rebuilt from Parquet's striped form: each leaf column holds a
// value per (repeated) occurrence with definition and repetition levels; an
// assembler consumes the values of one row from its leaves and rebuilds the
// nested Go value.

var errCorrupt = errors.New("corrupt nested column: levels out of step")

// cursor is the values of the current row, per leaf column.
type cursor struct {
	vals [][]parquet.Value
	pos  []int
}

func (c *cursor) peek(col int) (parquet.Value, bool) {
	p := c.pos[col]
	if p >= len(c.vals[col]) {
		return parquet.Value{}, false
	}
	return c.vals[col][p], true
}

func (c *cursor) skip(leaves []int) {
	for _, l := range leaves {
		c.pos[l]++
	}
}

type assembler interface {
	read(c *cursor) (any, error)
}

type leafAsm struct {
	col    int
	maxDef int
	dec    decodeFunc
	cols   []int
}

func (a *leafAsm) read(c *cursor) (any, error) {
	v, ok := c.peek(a.col)
	if !ok {
		return nil, errCorrupt
	}
	c.pos[a.col]++
	if v.DefinitionLevel() < a.maxDef || v.IsNull() {
		return nil, nil
	}
	return a.dec(v)
}

type rowAsm struct {
	def      int // definition level when the group itself is present
	optional bool
	fields   []assembler // nil for a field the file lacks
	cols     []int
}

func (a *rowAsm) read(c *cursor) (any, error) {
	if a.optional {
		v, ok := c.peek(a.cols[0])
		if !ok {
			return nil, errCorrupt
		}
		if v.DefinitionLevel() < a.def {
			c.skip(a.cols)
			return nil, nil
		}
	}
	row := make(table.Row, len(a.fields))
	for i, f := range a.fields {
		if f == nil {
			continue
		}
		x, err := f.read(c)
		if err != nil {
			return nil, err
		}
		row[i] = x
	}
	return row, nil
}

// repAsm reads ARRAY (one child) and MAP/MULTISET (key and value children).
type repAsm struct {
	def      int // level when the list/map itself is non-null
	elemDef  int // level when at least one entry exists
	rep      int // repetition level of the repeated group
	optional bool
	key      assembler // MAP only
	elem     assembler // element or map value
	isMap    bool
	cols     []int
}

func (a *repAsm) read(c *cursor) (any, error) {
	first := a.cols[0]
	v, ok := c.peek(first)
	if !ok {
		return nil, errCorrupt
	}
	dl := v.DefinitionLevel()
	if a.optional && dl < a.def {
		c.skip(a.cols)
		return nil, nil
	}
	if dl < a.elemDef {
		c.skip(a.cols)
		if a.isMap {
			return &table.Map{Keys: []any{}, Values: []any{}}, nil
		}
		return []any{}, nil
	}
	var keys, vals []any
	for {
		if a.key != nil {
			k, err := a.key.read(c)
			if err != nil {
				return nil, err
			}
			keys = append(keys, k)
		}
		e, err := a.elem.read(c)
		if err != nil {
			return nil, err
		}
		vals = append(vals, e)
		v, ok := c.peek(first)
		if !ok || v.RepetitionLevel() < a.rep {
			break
		}
	}
	if a.isMap {
		return &table.Map{Keys: keys, Values: vals}, nil
	}
	return vals, nil
}

// countLeaves counts the leaf columns under n.
func countLeaves(n parquet.Node) int {
	if n.Leaf() {
		return 1
	}
	c := 0
	for _, f := range n.Fields() {
		c += countLeaves(f)
	}
	return c
}

func fieldByName(n parquet.Node, name string) (parquet.Field, int) {
	for i, f := range n.Fields() {
		if f.Name() == name {
			return f, i
		}
	}
	return nil, -1
}

// buildAssembler builds the reader of Parquet node n (whose leaves start at
// column *next) as Paimon type t. def and rep are the levels of n's parent.
func buildAssembler(n parquet.Node, t table.DataType, def, rep int, next *int) (assembler, error) {
	if n.Optional() {
		def++
	}
	if n.Repeated() {
		// A repeated field outside a LIST/MAP annotation (legacy 1-level list).
		return nil, fmt.Errorf("unannotated repeated field is not supported")
	}
	start := *next
	cols := func() []int {
		out := make([]int, 0, *next-start)
		for i := start; i < *next; i++ {
			out = append(out, i)
		}
		return out
	}
	if n.Leaf() {
		if t.IsComposite() {
			return nil, fmt.Errorf("a Parquet leaf %s cannot be read as %s", n.Type(), t)
		}
		dec, err := leafDecoder(t, n.Type())
		if err != nil {
			return nil, err
		}
		*next++
		return &leafAsm{col: start, maxDef: def, dec: dec, cols: cols()}, nil
	}
	switch t.Root {
	case table.TypeRow:
		a := &rowAsm{def: def, optional: n.Optional()}
		// Nested fields are matched by name, like top-level columns; file
		// fields absent from t are skipped.
		a.fields = make([]assembler, len(t.Fields))
		for _, f := range n.Fields() {
			idx := -1
			for j, tf := range t.Fields {
				if tf.Name == f.Name() {
					idx = j
				}
			}
			if idx < 0 {
				*next += countLeaves(f)
				continue
			}
			sub, err := buildAssembler(f, t.Fields[idx].Type, def, rep, next)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name(), err)
			}
			a.fields[idx] = sub
		}
		a.cols = cols()
		if len(a.cols) == 0 {
			return nil, fmt.Errorf("empty group")
		}
		return a, nil
	case table.TypeArray, table.TypeMap, table.TypeMultiset:
		fs := n.Fields()
		if len(fs) != 1 || !fs[0].Repeated() {
			return nil, fmt.Errorf("%s group must have one repeated child", t)
		}
		r := fs[0]
		a := &repAsm{def: def, elemDef: def + 1, rep: rep + 1, optional: n.Optional()}
		if t.Root == table.TypeArray {
			var elemNode parquet.Node = r
			// 3-level list: repeated group with exactly one field is the
			// wrapper; otherwise (2-level) the repeated node is the element.
			if !r.Leaf() && len(r.Fields()) == 1 && r.Fields()[0].Name() != "array" && !(t.Element.Root == table.TypeRow && len(t.Element.Fields) == 1 && r.Fields()[0].Name() == t.Element.Fields[0].Name) {
				elemNode = r.Fields()[0]
				el, err := buildAssembler(elemNode, *t.Element, def+1, rep+1, next)
				if err != nil {
					return nil, fmt.Errorf("element: %w", err)
				}
				a.elem = el
			} else {
				el, err := buildAssembler(required{elemNode}, *t.Element, def+1, rep+1, next)
				if err != nil {
					return nil, fmt.Errorf("element: %w", err)
				}
				a.elem = el
			}
		} else {
			kt, vt := t.Key, t.Value
			if t.Root == table.TypeMultiset {
				kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
			}
			a.isMap = true
			kf := r.Fields()
			if len(kf) != 2 {
				return nil, fmt.Errorf("%s key_value group must have two fields", t)
			}
			k, err := buildAssembler(kf[0], *kt, def+1, rep+1, next)
			if err != nil {
				return nil, fmt.Errorf("key: %w", err)
			}
			v, err := buildAssembler(kf[1], *vt, def+1, rep+1, next)
			if err != nil {
				return nil, fmt.Errorf("value: %w", err)
			}
			a.key, a.elem = k, v
		}
		a.cols = cols()
		return a, nil
	}
	return nil, fmt.Errorf("a Parquet group cannot be read as %s", t)
}

// required presents a repeated node as a required one: its repetition is
// accounted for by the enclosing list.
type required struct{ parquet.Node }

func (required) Optional() bool { return false }
func (required) Repeated() bool { return false }
func (required) Required() bool { return true }
