package orc

import (
	"encoding/binary"
	"math"
)

// pb builds a protobuf message field by field (the writer's side of
// pbWalk): only the wire types the ORC tail uses.
type pb []byte

func (b pb) key(num, wire int) pb { return putUvarint(b, uint64(num)<<3|uint64(wire)) }

func (b pb) uint(num int, v uint64) pb { return putUvarint(b.key(num, 0), v) }

func (b pb) sint(num int, v int64) pb { return putUvarint(b.key(num, 0), zigzag(v)) }

func (b pb) bool(num int, v bool) pb {
	if v {
		return b.uint(num, 1)
	}
	return b.uint(num, 0)
}

func (b pb) bytes(num int, v []byte) pb {
	b = putUvarint(b.key(num, 2), uint64(len(v)))
	return append(b, v...)
}

func (b pb) str(num int, v string) pb { return b.bytes(num, []byte(v)) }

func (b pb) double(num int, v float64) pb {
	return binary.LittleEndian.AppendUint64(b.key(num, 1), math.Float64bits(v))
}

func (b pb) packed(num int, vs []uint64) pb {
	if len(vs) == 0 {
		return b
	}
	var body []byte
	for _, v := range vs {
		body = putUvarint(body, v)
	}
	return b.bytes(num, body)
}
