package manifest

import "bytes"

// SimpleStats is Paimon's per-column statistics record (_KEY_STATS,
// _VALUE_STATS, _PARTITION_STATS): min and max values as serialized
// BinaryRows with one field per stats column (a null field = unknown), and a
// null count per column (a nil element = unknown).
//
// The stats row type is the column types forced nullable. Empty stats (used
// for append-table keys and unpartitioned partition stats) are two empty
// rows and an empty NullCounts. Building and decoding the rows needs the
// column types: table.NewSimpleStats, table.DecodeSimpleStats and
// table.StatsCollector.
type SimpleStats struct {
	MinValues  []byte
	MaxValues  []byte
	NullCounts []*int64
}

// emptyRow is the serialized BinaryRow of arity 0 (table.EmptyBinaryRow):
// the _PARTITION of an unpartitioned table, the min/max key of append-table
// files and the rows of empty stats.
var emptyRow = [12]byte{}

// EmptySimpleStats returns stats over zero columns, as Java writes them.
func EmptySimpleStats() SimpleStats {
	mn, mx := emptyRow, emptyRow
	return SimpleStats{MinValues: mn[:], MaxValues: mx[:], NullCounts: []*int64{}}
}

// Equal reports whether both stats have identical bytes and null counts.
func (s SimpleStats) Equal(o SimpleStats) bool {
	if !bytes.Equal(s.MinValues, o.MinValues) || !bytes.Equal(s.MaxValues, o.MaxValues) || len(s.NullCounts) != len(o.NullCounts) {
		return false
	}
	for i, a := range s.NullCounts {
		b := o.NullCounts[i]
		if (a == nil) != (b == nil) || (a != nil && *a != *b) {
			return false
		}
	}
	return true
}
