package orc

import (
	"encoding/binary"
	"fmt"
)

// pbField is one field of a protobuf message: varint fields carry v,
// length-delimited ones b.
type pbField struct {
	num  int
	wire int
	v    uint64
	b    []byte
}

// pbWalk calls fn for every field of message m in order.
func pbWalk(m []byte, fn func(f pbField) error) error {
	for len(m) > 0 {
		key, n := binary.Uvarint(m)
		if n <= 0 {
			return fmt.Errorf("%w: bad protobuf key", ErrCorrupt)
		}
		m = m[n:]
		f := pbField{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			v, n := binary.Uvarint(m)
			if n <= 0 {
				return fmt.Errorf("%w: bad protobuf varint", ErrCorrupt)
			}
			f.v, m = v, m[n:]
		case 1:
			if len(m) < 8 {
				return fmt.Errorf("%w: short protobuf fixed64", ErrCorrupt)
			}
			f.v, m = binary.LittleEndian.Uint64(m), m[8:]
		case 2:
			l, n := binary.Uvarint(m)
			if n <= 0 || l > uint64(len(m)-n) {
				return fmt.Errorf("%w: bad protobuf length", ErrCorrupt)
			}
			f.b, m = m[n:n+int(l)], m[n+int(l):]
		case 5:
			if len(m) < 4 {
				return fmt.Errorf("%w: short protobuf fixed32", ErrCorrupt)
			}
			f.v, m = uint64(binary.LittleEndian.Uint32(m)), m[4:]
		default:
			return fmt.Errorf("%w: protobuf wire type %d", ErrCorrupt, f.wire)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// pbUints appends the values of a repeated uint field, packed (wire 2) or
// not (wire 0).
func pbUints(dst []uint64, f pbField) ([]uint64, error) {
	if f.wire == 0 {
		return append(dst, f.v), nil
	}
	if f.wire != 2 {
		return nil, fmt.Errorf("%w: repeated varint field %d has wire type %d", ErrCorrupt, f.num, f.wire)
	}
	b := f.b
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("%w: bad packed varint", ErrCorrupt)
		}
		dst, b = append(dst, v), b[n:]
	}
	return dst, nil
}
