package table

import (
	"fmt"
	"math/big"
)

// Row is one row of values. Each value is nil (SQL NULL) or the Go
// representation of its Paimon type:
//
//	BOOLEAN bool              TINYINT int8        SMALLINT int16
//	INT int32                 BIGINT int64        FLOAT float32
//	DOUBLE float64            CHAR/VARCHAR string BINARY/VARBINARY []byte
//	DECIMAL Decimal           DATE int32 (days since 1970-01-01)
//	TIME int32 (millis of day)
//	TIMESTAMP / TIMESTAMP_LTZ Timestamp
//	ARRAY []any               MULTISET *Map (element -> int32 count)
//	MAP *Map                  ROW Row
//	VARIANT, BLOB []byte (carried, never interpreted)
type Row []any

// Decimal is an exact decimal: Unscaled × 10^-Scale.
type Decimal struct {
	Unscaled  *big.Int
	Precision int
	Scale     int
}

func (d Decimal) String() string {
	if d.Unscaled == nil {
		return "<nil>"
	}
	r := new(big.Rat).SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	return r.FloatString(d.Scale)
}

// Timestamp is Paimon's timestamp: milliseconds since the epoch plus the
// nanoseconds within that millisecond (0..999999).
type Timestamp struct {
	Millis      int64
	NanoOfMilli int32
}

// Map holds MAP and MULTISET values as parallel key and value slices in the
// order they were read.
type Map struct {
	Keys   []any
	Values []any
}

// RowKind is the change type of a record, stored as _VALUE_KIND.
type RowKind int8

const (
	RowKindInsert       RowKind = 0 // +I
	RowKindUpdateBefore RowKind = 1 // -U
	RowKindUpdateAfter  RowKind = 2 // +U
	RowKindDelete       RowKind = 3 // -D
)

// IsAdd reports whether the kind adds a row (+I or +U).
func (k RowKind) IsAdd() bool { return k == RowKindInsert || k == RowKindUpdateAfter }

// ShortString is the form Paimon prints: +I, -U, +U, -D.
func (k RowKind) ShortString() string {
	switch k {
	case RowKindInsert:
		return "+I"
	case RowKindUpdateBefore:
		return "-U"
	case RowKindUpdateAfter:
		return "+U"
	case RowKindDelete:
		return "-D"
	}
	return fmt.Sprintf("?%d", int8(k))
}

// ParseRowKind parses +I, -U, +U or -D.
func ParseRowKind(s string) (RowKind, error) {
	switch s {
	case "+I":
		return RowKindInsert, nil
	case "-U":
		return RowKindUpdateBefore, nil
	case "+U":
		return RowKindUpdateAfter, nil
	case "-D":
		return RowKindDelete, nil
	}
	return 0, fmt.Errorf("unknown row kind %q", s)
}

// KeyValue is one record of a primary-key table's data file: the trimmed
// primary key, the sequence number, the row kind and the full value row.
type KeyValue struct {
	Key   Row
	Seq   int64
	Kind  RowKind
	Value Row
}
