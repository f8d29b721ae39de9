package orc

import (
	"math/big"
)

// Time is a decoded timestamp: seconds since 1970 and the nanoseconds of
// that second.
type Time struct {
	Secs  int64
	Nanos int32
}

// Dec is a decoded decimal: its unscaled value at the column's scale.
type Dec struct {
	Unscaled *big.Int
	Scale    int
}

// KV is one entry of a MAP value.
type KV struct{ Key, Value any }

// Value is entry i of c as a generic Go value: nil, bool, int64 (integers,
// DATE days), float64, []byte (strings and binaries, aliasing the stripe),
// Dec, Time, []any (STRUCT fields, LIST elements) or []KV (MAP).
func (c *Column) Value(i int) any {
	if c.Null(i) {
		return nil
	}
	j := c.Index(i)
	switch c.Type.Kind {
	case Boolean:
		return c.Bools[j]
	case Byte, Short, Int, Long, Date:
		return c.Int(j)
	case Float, Double:
		return c.Floats[j]
	case String, Varchar, Char, Binary:
		return c.BytesAt(j)
	case Decimal:
		return Dec{Unscaled: c.Decimal(j), Scale: c.Type.Scale}
	case Timestamp, TimestampInstant:
		return Time{Secs: c.Secs[j], Nanos: c.Nanos[j]}
	case Struct:
		out := make([]any, len(c.Children))
		for k, ch := range c.Children {
			out[k] = ch.Value(j)
		}
		return out
	case List:
		lo, hi := c.Offsets[j], c.Offsets[j+1]
		out := make([]any, 0, hi-lo)
		for k := lo; k < hi; k++ {
			out = append(out, c.Children[0].Value(k))
		}
		return out
	case Map:
		lo, hi := c.Offsets[j], c.Offsets[j+1]
		out := make([]KV, 0, hi-lo)
		for k := lo; k < hi; k++ {
			out = append(out, KV{Key: c.Children[0].Value(k), Value: c.Children[1].Value(k)})
		}
		return out
	}
	return nil
}
