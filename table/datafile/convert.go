package datafile

import (
	"bytes"
	"fmt"
	"math/big"

	"github.com/compactd/compactd/internal/javacompat"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// julianEpochDay is the Julian day number of 1970-01-01, the epoch of INT96
// timestamps.
const julianEpochDay = javacompat.JulianEpochDay

const (
	millisPerDay = 86400000
	nanosPerDay  = 86400000000000
)

type decodeFunc func(parquet.Value) (any, error)

// timeUnitOf returns the unit of a TIMESTAMP/TIME logical or converted type:
// 1 millis, 2 micros, 3 nanos, 0 unknown.
func timeUnitOf(typ parquet.Type) int {
	if lt := typ.LogicalType(); lt != nil {
		var u format.TimeUnit
		switch v := lt.Value.(type) {
		case *format.TimestampType:
			u = v.Unit
		case *format.TimeType:
			u = v.Unit
		default:
			return 0
		}
		switch u.Value.(type) {
		case *format.MilliSeconds:
			return 1
		case *format.MicroSeconds:
			return 2
		case *format.NanoSeconds:
			return 3
		}
	}
	if ct := typ.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.TimestampMillis, deprecated.TimeMillis:
			return 1
		case deprecated.TimestampMicros, deprecated.TimeMicros:
			return 2
		}
	}
	return 0
}

// leafDecoder converts a Parquet leaf value of physical type typ into the Go
// value of Paimon type t. Byte slices are copied: page buffers are reused.
func leafDecoder(t table.DataType, typ parquet.Type) (decodeFunc, error) {
	kind := typ.Kind()
	bad := func() (decodeFunc, error) {
		return nil, fmt.Errorf("cannot read Parquet %s (%s) as %s", kind, typ, t)
	}
	switch t.Root {
	case table.TypeBoolean:
		if kind != parquet.Boolean {
			return bad()
		}
		return func(v parquet.Value) (any, error) { return v.Boolean(), nil }, nil
	case table.TypeTinyInt, table.TypeSmallInt, table.TypeInt, table.TypeDate:
		if kind != parquet.Int32 {
			return bad()
		}
		switch t.Root {
		case table.TypeTinyInt:
			return func(v parquet.Value) (any, error) { return int8(v.Int32()), nil }, nil
		case table.TypeSmallInt:
			return func(v parquet.Value) (any, error) { return int16(v.Int32()), nil }, nil
		}
		return func(v parquet.Value) (any, error) { return v.Int32(), nil }, nil
	case table.TypeBigInt:
		switch kind {
		case parquet.Int64:
			return func(v parquet.Value) (any, error) { return v.Int64(), nil }, nil
		case parquet.Int32:
			return func(v parquet.Value) (any, error) { return int64(v.Int32()), nil }, nil
		}
		return bad()
	case table.TypeFloat:
		if kind != parquet.Float {
			return bad()
		}
		return func(v parquet.Value) (any, error) { return v.Float(), nil }, nil
	case table.TypeDouble:
		switch kind {
		case parquet.Double:
			return func(v parquet.Value) (any, error) { return v.Double(), nil }, nil
		case parquet.Float:
			return func(v parquet.Value) (any, error) { return float64(v.Float()), nil }, nil
		}
		return bad()
	case table.TypeChar, table.TypeVarChar:
		if kind != parquet.ByteArray && kind != parquet.FixedLenByteArray {
			return bad()
		}
		return func(v parquet.Value) (any, error) { return string(v.ByteArray()), nil }, nil
	case table.TypeBinary, table.TypeVarBinary, table.TypeBlob:
		if kind != parquet.ByteArray && kind != parquet.FixedLenByteArray {
			return bad()
		}
		return func(v parquet.Value) (any, error) { return bytes.Clone(v.ByteArray()), nil }, nil
	case table.TypeDecimal:
		p, s := t.Precision, t.Scale
		switch kind {
		case parquet.Int32:
			return func(v parquet.Value) (any, error) {
				return table.Decimal{Unscaled: big.NewInt(int64(v.Int32())), Precision: p, Scale: s}, nil
			}, nil
		case parquet.Int64:
			return func(v parquet.Value) (any, error) {
				return table.Decimal{Unscaled: big.NewInt(v.Int64()), Precision: p, Scale: s}, nil
			}, nil
		case parquet.ByteArray, parquet.FixedLenByteArray:
			return func(v parquet.Value) (any, error) {
				return table.Decimal{Unscaled: bigFromTwosComplement(v.ByteArray()), Precision: p, Scale: s}, nil
			}, nil
		}
		return bad()
	case table.TypeTime:
		switch kind {
		case parquet.Int32:
			return func(v parquet.Value) (any, error) { return v.Int32(), nil }, nil
		case parquet.Int64:
			div := int64(1000)
			if timeUnitOf(typ) == 3 {
				div = 1000000
			}
			return func(v parquet.Value) (any, error) { return int32(v.Int64() / div), nil }, nil
		}
		return bad()
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		switch kind {
		case parquet.Int96:
			return func(v parquet.Value) (any, error) { return timestampFromInt96(v.Int96()), nil }, nil
		case parquet.Int64:
			switch int64TimestampUnit(t, typ) {
			case 1:
				return func(v parquet.Value) (any, error) { return table.Timestamp{Millis: v.Int64()}, nil }, nil
			case 2:
				return func(v parquet.Value) (any, error) { return table.TimestampFromMicros(v.Int64()), nil }, nil
			default:
				return func(v parquet.Value) (any, error) { return table.TimestampFromNanos(v.Int64()), nil }, nil
			}
		}
		return bad()
	}
	return nil, fmt.Errorf("type %s is not supported in Parquet data files", t)
}

// int64TimestampUnit is the unit of an INT64 TIMESTAMP leaf of type typ
// holding values of t: 1 millis, 2 micros, 3 nanos.
func int64TimestampUnit(t table.DataType, typ parquet.Type) int {
	unit := timeUnitOf(typ)
	if unit == 0 { // no annotation: trust the declared precision
		unit = 1
		if t.Precision > 3 {
			unit = 2
		}
		if t.Precision > 6 {
			unit = 3
		}
	}
	return unit
}

// timestampFromInt96 reads an INT96 timestamp: nanoseconds of the day
// (signed: Java writes instants before 1970 with day and nanoseconds both
// rounded towards zero, so 1969-12-31T23:59:59.999999999 is day 0 and -1 ns)
// and the Julian day, normalised with floor division as Java's vectorized
// reader does.
func timestampFromInt96(v deprecated.Int96) table.Timestamp {
	nanosOfDay := int64(uint64(v[0]) | uint64(v[1])<<32)
	day := int64(int32(v[2])) - julianEpochDay
	return table.TimestampFromDayNanos(day, nanosOfDay)
}

// int96FromTimestamp writes an INT96 timestamp exactly as Java Paimon's
// ParquetRowDataWriter does: day and millisecond of day by Java's division
// towards zero, so an instant before 1970 gets the day after its calendar day
// and negative nanoseconds. Java's reader and timestampFromInt96 floor that
// back; writing the same bytes keeps the record path and the batch path
// (which copies INT96 values untouched) identical to Java's compaction.
func int96FromTimestamp(ts table.Timestamp) deprecated.Int96 {
	day := ts.Millis / millisPerDay                                         // towards zero, as Java
	nanos := uint64(ts.Millis%millisPerDay*1000000 + int64(ts.NanoOfMilli)) // may be negative, as Java
	return deprecated.Int96{uint32(nanos), uint32(nanos >> 32), uint32(int32(day + julianEpochDay))}
}

// bigFromTwosComplement decodes a big-endian two's-complement integer.
func bigFromTwosComplement(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

// twosComplement encodes x big-endian in exactly n bytes, sign-extended.
func twosComplement(x *big.Int, n int) ([]byte, error) {
	out := make([]byte, n)
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) > n || (len(b) == n && b[0]&0x80 != 0) {
			return nil, fmt.Errorf("decimal %s does not fit %d bytes", x, n)
		}
		copy(out[n-len(b):], b)
		return out, nil
	}
	// two's complement of a negative number: 2^(8n) + x
	y := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), x)
	b := y.Bytes()
	if len(b) > n || (len(b) == n && b[0]&0x80 == 0) {
		return nil, fmt.Errorf("decimal %s does not fit %d bytes", x, n)
	}
	for i := range out[:n-len(b)] {
		out[i] = 0xff
	}
	copy(out[n-len(b):], b)
	return out, nil
}

type encodeFunc func(any) (parquet.Value, error)

func typeErr(v any, t table.DataType) error {
	return fmt.Errorf("value %v of Go type %T is not a %s", v, v, t)
}

// leafEncoder is the inverse of leafDecoder for the Parquet types Java writes
// (pqschema.go).
func leafEncoder(t table.DataType) (encodeFunc, error) {
	switch t.Root {
	case table.TypeBoolean:
		return func(a any) (parquet.Value, error) {
			v, ok := a.(bool)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			return parquet.BooleanValue(v), nil
		}, nil
	case table.TypeTinyInt:
		return func(a any) (parquet.Value, error) {
			v, ok := a.(int8)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			return parquet.Int32Value(int32(v)), nil
		}, nil
	case table.TypeSmallInt:
		return func(a any) (parquet.Value, error) {
			v, ok := a.(int16)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			return parquet.Int32Value(int32(v)), nil
		}, nil
	case table.TypeInt, table.TypeDate, table.TypeTime:
		return func(a any) (parquet.Value, error) {
			v, ok := a.(int32)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			return parquet.Int32Value(v), nil
		}, nil
	case table.TypeBigInt:
		return func(a any) (parquet.Value, error) {
			v, ok := a.(int64)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			return parquet.Int64Value(v), nil
		}, nil
	case table.TypeFloat:
		return func(a any) (parquet.Value, error) {
			v, ok := a.(float32)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			return parquet.FloatValue(v), nil
		}, nil
	case table.TypeDouble:
		return func(a any) (parquet.Value, error) {
			v, ok := a.(float64)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			return parquet.DoubleValue(v), nil
		}, nil
	case table.TypeChar, table.TypeVarChar:
		return func(a any) (parquet.Value, error) {
			v, ok := a.(string)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			return parquet.ByteArrayValue([]byte(v)), nil
		}, nil
	case table.TypeBinary, table.TypeVarBinary:
		return func(a any) (parquet.Value, error) {
			v, ok := a.([]byte)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			return parquet.ByteArrayValue(v), nil
		}, nil
	case table.TypeDecimal:
		p := t.Precision
		n := decimalBytes(p)
		return func(a any) (parquet.Value, error) {
			d, ok := a.(table.Decimal)
			if !ok || d.Unscaled == nil {
				return parquet.Value{}, typeErr(a, t)
			}
			if d.Scale != t.Scale {
				return parquet.Value{}, fmt.Errorf("decimal %s has scale %d, column %s", d, d.Scale, t)
			}
			switch {
			case p <= 9:
				if !d.Unscaled.IsInt64() || d.Unscaled.Int64() != int64(int32(d.Unscaled.Int64())) {
					return parquet.Value{}, fmt.Errorf("decimal %s overflows %s", d, t)
				}
				return parquet.Int32Value(int32(d.Unscaled.Int64())), nil
			case p <= 18:
				if !d.Unscaled.IsInt64() {
					return parquet.Value{}, fmt.Errorf("decimal %s overflows %s", d, t)
				}
				return parquet.Int64Value(d.Unscaled.Int64()), nil
			}
			b, err := twosComplement(d.Unscaled, n)
			if err != nil {
				return parquet.Value{}, err
			}
			return parquet.FixedLenByteArrayValue(b), nil
		}, nil
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		p := t.Precision
		return func(a any) (parquet.Value, error) {
			ts, ok := a.(table.Timestamp)
			if !ok {
				return parquet.Value{}, typeErr(a, t)
			}
			switch {
			case p <= 3:
				return parquet.Int64Value(ts.Millis), nil
			case p <= 6:
				return parquet.Int64Value(ts.Micros()), nil
			}
			return parquet.Int96Value(int96FromTimestamp(ts)), nil
		}, nil
	}
	return nil, fmt.Errorf("type %s is not supported in Parquet data files", t)
}
