package datafile

import (
	"fmt"

	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// appendORCRef is appendORC as it was before it grew its destinations once
// per call and walked present flags directly (commit 487c8bb): the
// reference TestAppendORCMatchesReference compares it with.
func appendORCRef(v *Vec, st *orc.Stripe, c *orc.Column, t table.DataType, lo, n int, vp *int) error {
	j := *vp
	next := func() int { k := j; j++; return k }
	defer func() {
		if c.Present == nil {
			*vp = lo + n
		} else {
			*vp = j
		}
	}()
	if c.Present != nil && v.Null == nil {
		for i := lo; i < lo+n; i++ {
			if c.Null(i) {
				return errORCNull
			}
		}
	}
	if v.Null != nil {
		for i := lo; i < lo+n; i++ {
			v.Null = append(v.Null, c.Null(i))
		}
	}
	switch v.Kind {
	case parquet.Boolean:
		for i := lo; i < lo+n; i++ {
			v.Bool = append(v.Bool, !c.Null(i) && c.Bools[next()])
		}
	case parquet.Int32:
		switch {
		case t.Root == table.TypeDecimal:
			for i := lo; i < lo+n; i++ {
				var x int64
				if !c.Null(i) {
					var err error
					if x, err = orcDec64(c, next()); err != nil {
						return err
					}
					if x != int64(int32(x)) {
						return fmt.Errorf("decimal %d overflows %s", x, t)
					}
				}
				v.I32 = append(v.I32, int32(x))
			}
		case c.Present == nil:
			v.I32 = append(v.I32, c.Ints32[lo:lo+n]...)
		default:
			for i := lo; i < lo+n; i++ {
				var x int32
				if !c.Null(i) {
					x = c.Ints32[next()]
				}
				v.I32 = append(v.I32, x)
			}
		}
	case parquet.Int64:
		switch t.Root {
		case table.TypeDecimal:
			for i := lo; i < lo+n; i++ {
				var x int64
				if !c.Null(i) {
					var err error
					if x, err = orcDec64(c, next()); err != nil {
						return err
					}
				}
				v.I64 = append(v.I64, x)
			}
		case table.TypeTimestamp, table.TypeTimestampLTZ:
			if err := orcZoneOK(st, t); err != nil {
				return err
			}
			for i := lo; i < lo+n; i++ {
				var x int64
				if !c.Null(i) {
					k := next()
					s, ns := c.Secs[k], int64(c.Nanos[k])
					if t.Precision <= 3 {
						x = s*1000 + ns/1e6
					} else {
						x = s*1e6 + ns/1e3
					}
				}
				v.I64 = append(v.I64, x)
			}
		default:
			if c.Present == nil {
				v.I64 = append(v.I64, c.Ints[lo:lo+n]...)
				break
			}
			for i := lo; i < lo+n; i++ {
				var x int64
				if !c.Null(i) {
					x = c.Ints[next()]
				}
				v.I64 = append(v.I64, x)
			}
		}
	case parquet.Int96:
		if err := orcZoneOK(st, t); err != nil {
			return err
		}
		for i := lo; i < lo+n; i++ {
			if c.Null(i) {
				v.I96 = append(v.I96, deprecated.Int96{}) // a null's slot is zero
				continue
			}
			k := next()
			ns := int64(c.Nanos[k])
			ts := table.Timestamp{Millis: c.Secs[k]*1000 + ns/1e6, NanoOfMilli: int32(ns % 1e6)}
			v.I96 = append(v.I96, int96FromTimestamp(ts))
		}
	case parquet.Float:
		for i := lo; i < lo+n; i++ {
			var x float64
			if !c.Null(i) {
				x = c.Floats[next()]
			}
			v.F32 = append(v.F32, float32(x))
		}
	case parquet.Double:
		if c.Present == nil {
			v.F64 = append(v.F64, c.Floats[lo:lo+n]...)
			break
		}
		for i := lo; i < lo+n; i++ {
			var x float64
			if !c.Null(i) {
				x = c.Floats[next()]
			}
			v.F64 = append(v.F64, x)
		}
	case parquet.ByteArray:
		for i := lo; i < lo+n; i++ {
			if !c.Null(i) {
				v.Bytes = append(v.Bytes, c.BytesAt(next())...)
			}
			v.Offs = append(v.Offs, uint32(len(v.Bytes)))
		}
		if len(v.Bytes) > MaxBatchBytes {
			return ErrBatchTooLarge
		}
	case parquet.FixedLenByteArray: // DECIMAL of precision > 18
		w := decimalBytes(t.Precision)
		for i := lo; i < lo+n; i++ {
			if !c.Null(i) {
				b, err := twosComplement(c.Decimal(next()), w)
				if err != nil {
					return err
				}
				v.Bytes = append(v.Bytes, b...)
			}
			v.Offs = append(v.Offs, uint32(len(v.Bytes)))
		}
	default:
		return fmt.Errorf("not supported: batch column of Parquet type %s", v.Kind)
	}
	return nil
}
