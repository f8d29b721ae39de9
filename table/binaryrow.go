package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// BinaryRow is Paimon's compact row format. Manifests store it "serialized":
// a 4-byte big-endian arity followed by the row bytes. The row itself is
// little-endian: a header word whose first byte is the row kind and whose
// remaining bits are the null bits, one 8-byte slot per field, then a
// variable part of 8-byte-aligned chunks for values that do not fit a slot.
//
// Partitions and file identifiers are compared by these bytes in Java, so
// the encoder reproduces Java's BinaryRowWriter output exactly, including the
// zeroed padding and the chunk Java reserves for a null non-compact DECIMAL
// or TIMESTAMP.

const (
	// binaryRowMaxInline is the longest string/binary stored in the slot.
	binaryRowMaxInline = 7
	// compactDecimalPrecision is the largest precision stored as an int64.
	compactDecimalPrecision = 18
	// compactTimestampPrecision is the largest precision stored as millis.
	compactTimestampPrecision = 3
	// maxBinaryRowArity bounds the arity a decoder accepts; Paimon rows are
	// table columns, far below this.
	maxBinaryRowArity = 1 << 16
)

// ErrCorruptBinaryRow is wrapped by every decode error caused by the bytes.
var ErrCorruptBinaryRow = errors.New("corrupt binary row")

// emptyBinaryRow is the serialized row of arity 0: the _PARTITION of an
// unpartitioned table and the min/max key of append-table files.
var emptyBinaryRow = [12]byte{}

// EmptyBinaryRow returns a fresh copy of the 12-byte serialized empty row.
func EmptyBinaryRow() []byte {
	b := emptyBinaryRow
	return b[:]
}

// binaryRowHeaderWidth is the size of the row-kind byte plus null bits,
// rounded up to whole 8-byte words.
func binaryRowHeaderWidth(arity int) int {
	return ((arity + 63 + 8) / 64) * 8
}

// BinaryRowArity returns the arity prefix of a serialized BinaryRow.
func BinaryRowArity(data []byte) (int, error) {
	if len(data) < 4 {
		return 0, fmt.Errorf("%w: %d bytes, need at least 4", ErrCorruptBinaryRow, len(data))
	}
	a := int32(binary.BigEndian.Uint32(data))
	if a < 0 || a > maxBinaryRowArity {
		return 0, fmt.Errorf("%w: arity %d", ErrCorruptBinaryRow, a)
	}
	return int(a), nil
}

// EncodeBinaryRow encodes row (row kind +I) in the serialized form Java
// writes into manifests. types gives the Paimon type of each field; only
// atomic types are supported, which covers partitions, keys and stats.
func EncodeBinaryRow(types []DataType, row Row) ([]byte, error) {
	if len(types) != len(row) {
		return nil, fmt.Errorf("encode binary row: %d types for %d values", len(types), len(row))
	}
	arity := len(types)
	w := binaryRowHeaderWidth(arity)
	fixed := w + 8*arity
	buf := make([]byte, 4+fixed, 4+fixed+16*arity)
	binary.BigEndian.PutUint32(buf, uint32(arity))
	// Offsets inside the row are relative to the row start, after the prefix.
	rowStart := 4
	setNull := func(i int) {
		bit := i + 8
		buf[rowStart+bit/8] |= 1 << (bit % 8)
	}
	slot := func(i int) []byte {
		o := rowStart + w + 8*i
		return buf[o : o+8]
	}
	// appendVar appends a chunk padded to 8 bytes and returns its offset
	// from the row start.
	appendVar := func(data []byte, reserve int) uint64 {
		off := len(buf) - rowStart
		n := (max(len(data), reserve) + 7) &^ 7
		start := len(buf)
		buf = append(buf, make([]byte, n)...)
		copy(buf[start:], data)
		return uint64(off)
	}
	for i, t := range types {
		v := row[i]
		if v == nil {
			setNull(i)
			switch {
			case t.Root == TypeDecimal && t.Precision > compactDecimalPrecision:
				off := appendVar(nil, 16)
				binary.LittleEndian.PutUint64(slot(i), off<<32)
			case (t.Root == TypeTimestamp || t.Root == TypeTimestampLTZ) && t.Precision > compactTimestampPrecision:
				off := appendVar(nil, 8)
				binary.LittleEndian.PutUint64(slot(i), off<<32)
			}
			continue
		}
		s := slot(i)
		bad := func() error {
			return fmt.Errorf("encode binary row: field %d of type %s: unexpected Go value %T", i, t, v)
		}
		switch t.Root {
		case TypeBoolean:
			b, ok := v.(bool)
			if !ok {
				return nil, bad()
			}
			if b {
				s[0] = 1
			}
		case TypeTinyInt:
			x, ok := v.(int8)
			if !ok {
				return nil, bad()
			}
			s[0] = byte(x)
		case TypeSmallInt:
			x, ok := v.(int16)
			if !ok {
				return nil, bad()
			}
			binary.LittleEndian.PutUint16(s, uint16(x))
		case TypeInt, TypeDate, TypeTime:
			x, ok := v.(int32)
			if !ok {
				return nil, bad()
			}
			binary.LittleEndian.PutUint32(s, uint32(x))
		case TypeBigInt:
			x, ok := v.(int64)
			if !ok {
				return nil, bad()
			}
			binary.LittleEndian.PutUint64(s, uint64(x))
		case TypeFloat:
			x, ok := v.(float32)
			if !ok {
				return nil, bad()
			}
			binary.LittleEndian.PutUint32(s, math.Float32bits(x))
		case TypeDouble:
			x, ok := v.(float64)
			if !ok {
				return nil, bad()
			}
			binary.LittleEndian.PutUint64(s, math.Float64bits(x))
		case TypeChar, TypeVarChar:
			x, ok := v.(string)
			if !ok {
				return nil, bad()
			}
			if len(x) <= binaryRowMaxInline {
				copy(s, x)
				s[7] = 0x80 | byte(len(x))
			} else {
				off := appendVar([]byte(x), 0)
				binary.LittleEndian.PutUint64(slot(i), off<<32|uint64(len(x)))
			}
		case TypeBinary, TypeVarBinary:
			x, ok := v.([]byte)
			if !ok {
				return nil, bad()
			}
			if len(x) <= binaryRowMaxInline {
				copy(s, x)
				s[7] = 0x80 | byte(len(x))
			} else {
				off := appendVar(x, 0)
				binary.LittleEndian.PutUint64(slot(i), off<<32|uint64(len(x)))
			}
		case TypeDecimal:
			d, ok := v.(Decimal)
			if !ok || d.Unscaled == nil {
				return nil, bad()
			}
			if d.Scale != t.Scale {
				return nil, fmt.Errorf("encode binary row: field %d: decimal scale %d does not match type %s", i, d.Scale, t)
			}
			// Java cannot represent a value with more digits than the
			// precision (Decimal.fromBigDecimal gives null).
			if new(big.Int).Abs(d.Unscaled).Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Precision)), nil)) >= 0 {
				return nil, fmt.Errorf("encode binary row: field %d: decimal %s has more than %d digits", i, d, t.Precision)
			}
			if t.Precision <= compactDecimalPrecision {
				if !d.Unscaled.IsInt64() {
					return nil, fmt.Errorf("encode binary row: field %d: decimal %s overflows %s", i, d, t)
				}
				binary.LittleEndian.PutUint64(s, uint64(d.Unscaled.Int64()))
			} else {
				b := bigIntToJavaBytes(d.Unscaled)
				if len(b) > 16 {
					return nil, fmt.Errorf("encode binary row: field %d: decimal %s overflows %s", i, d, t)
				}
				off := appendVar(b, 16)
				binary.LittleEndian.PutUint64(slot(i), off<<32|uint64(len(b)))
			}
		case TypeTimestamp, TypeTimestampLTZ:
			ts, ok := v.(Timestamp)
			if !ok {
				return nil, bad()
			}
			if t.Precision <= compactTimestampPrecision {
				binary.LittleEndian.PutUint64(s, uint64(ts.Millis))
			} else {
				if ts.NanoOfMilli < 0 || ts.NanoOfMilli > 999_999 {
					return nil, fmt.Errorf("encode binary row: field %d: nano-of-milli %d out of range", i, ts.NanoOfMilli)
				}
				var m [8]byte
				binary.LittleEndian.PutUint64(m[:], uint64(ts.Millis))
				off := appendVar(m[:], 8)
				binary.LittleEndian.PutUint64(slot(i), off<<32|uint64(ts.NanoOfMilli))
			}
		default:
			return nil, fmt.Errorf("encode binary row: field %d: type %s is not supported in binary rows", i, t)
		}
	}
	return buf, nil
}

// DecodeBinaryRow decodes a serialized BinaryRow (arity prefix + row) whose
// fields have the given types. Corrupt input gives an error, never a panic.
func DecodeBinaryRow(types []DataType, data []byte) (Row, error) {
	arity, err := BinaryRowArity(data)
	if err != nil {
		return nil, err
	}
	if arity != len(types) {
		return nil, fmt.Errorf("%w: arity %d, expected %d fields", ErrCorruptBinaryRow, arity, len(types))
	}
	row := data[4:]
	w := binaryRowHeaderWidth(arity)
	if len(row) < w+8*arity {
		return nil, fmt.Errorf("%w: %d row bytes, need at least %d for arity %d", ErrCorruptBinaryRow, len(row), w+8*arity, arity)
	}
	out := make(Row, arity)
	for i, t := range types {
		bit := i + 8
		if row[bit/8]&(1<<(bit%8)) != 0 {
			continue
		}
		s := row[w+8*i : w+8*i+8]
		word := binary.LittleEndian.Uint64(s)
		// varPart returns the chunk a slot points to, bounds-checked.
		varPart := func(size uint64) ([]byte, error) {
			off := word >> 32
			if off > uint64(len(row)) || size > uint64(len(row))-off {
				return nil, fmt.Errorf("%w: field %d points to [%d,+%d) outside %d row bytes", ErrCorruptBinaryRow, i, off, size, len(row))
			}
			return row[off : off+size], nil
		}
		// bytesValue reads an inline or variable-part string/binary.
		bytesValue := func() ([]byte, error) {
			if s[7]&0x80 != 0 {
				n := int(s[7] & 0x7f)
				if n > binaryRowMaxInline {
					return nil, fmt.Errorf("%w: field %d inline length %d", ErrCorruptBinaryRow, i, n)
				}
				return s[:n], nil
			}
			return varPart(word & 0xffffffff)
		}
		switch t.Root {
		case TypeBoolean:
			out[i] = s[0] != 0
		case TypeTinyInt:
			out[i] = int8(s[0])
		case TypeSmallInt:
			out[i] = int16(binary.LittleEndian.Uint16(s))
		case TypeInt, TypeDate, TypeTime:
			out[i] = int32(binary.LittleEndian.Uint32(s))
		case TypeBigInt:
			out[i] = int64(word)
		case TypeFloat:
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(s))
		case TypeDouble:
			out[i] = math.Float64frombits(word)
		case TypeChar, TypeVarChar:
			b, err := bytesValue()
			if err != nil {
				return nil, err
			}
			// Invalid UTF-8 is kept as is: the bytes are what Java compares.
			out[i] = string(b)
		case TypeBinary, TypeVarBinary:
			b, err := bytesValue()
			if err != nil {
				return nil, err
			}
			out[i] = append([]byte{}, b...)
		case TypeDecimal:
			if t.Precision <= compactDecimalPrecision {
				out[i] = Decimal{Unscaled: big.NewInt(int64(word)), Precision: t.Precision, Scale: t.Scale}
				continue
			}
			size := word & 0xffffffff
			if size > 16 {
				return nil, fmt.Errorf("%w: field %d decimal of %d bytes", ErrCorruptBinaryRow, i, size)
			}
			b, err := varPart(size)
			if err != nil {
				return nil, err
			}
			out[i] = Decimal{Unscaled: javaBytesToBigInt(b), Precision: t.Precision, Scale: t.Scale}
		case TypeTimestamp, TypeTimestampLTZ:
			if t.Precision <= compactTimestampPrecision {
				out[i] = Timestamp{Millis: int64(word)}
				continue
			}
			nano := word & 0xffffffff
			if nano > 999_999 {
				return nil, fmt.Errorf("%w: field %d nano-of-milli %d", ErrCorruptBinaryRow, i, nano)
			}
			b, err := varPart(8)
			if err != nil {
				return nil, err
			}
			out[i] = Timestamp{Millis: int64(binary.LittleEndian.Uint64(b)), NanoOfMilli: int32(nano)}
		default:
			return nil, fmt.Errorf("decode binary row: field %d: type %s is not supported in binary rows", i, t)
		}
	}
	return out, nil
}

// bigIntToJavaBytes returns the minimal big-endian two's-complement bytes
// of x, as Java's BigInteger.toByteArray does (at least one byte).
func bigIntToJavaBytes(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// For negative x, k bytes suffice when -2^(8k-1) <= x; the encoding is
	// x + 2^(8k).
	m := new(big.Int).Neg(x)
	m.Sub(m, big.NewInt(1)) // |x|-1 = ^x
	k := (m.BitLen() + 1 + 7) / 8
	y := new(big.Int).Lsh(big.NewInt(1), uint(8*k))
	y.Add(y, x)
	b := y.Bytes()
	if len(b) < k {
		b = append(make([]byte, k-len(b)), b...)
	}
	return b
}

// javaBytesToBigInt is the inverse of bigIntToJavaBytes.
func javaBytesToBigInt(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

// HashBinaryRow is Java's BinaryRow.hashCode: MurmurHash3 (32-bit, seed 42)
// over the row bytes of a serialized BinaryRow, excluding the arity prefix.
// It decides the bucket of a row in fixed-bucket tables and is the value the
// dynamic-bucket HASH index stores.
func HashBinaryRow(serialized []byte) (int32, error) {
	if _, err := BinaryRowArity(serialized); err != nil {
		return 0, err
	}
	row := serialized[4:]
	if len(row)%4 != 0 {
		return 0, fmt.Errorf("%w: row size %d is not word aligned", ErrCorruptBinaryRow, len(row))
	}
	h := uint32(42)
	for i := 0; i+4 <= len(row); i += 4 {
		k := binary.LittleEndian.Uint32(row[i:])
		k *= 0xcc9e2d51
		k = bits.RotateLeft32(k, 15)
		k *= 0x1b873593
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	h ^= uint32(len(row))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h), nil
}

// BucketOf is Paimon's default bucket function: abs(hash % numBuckets) with
// Java's truncating remainder.
func BucketOf(hash int32, numBuckets int32) int32 {
	if numBuckets <= 0 {
		return 0
	}
	b := hash % numBuckets
	if b < 0 {
		b = -b
	}
	return b
}
