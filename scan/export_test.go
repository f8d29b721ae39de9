package scan

import (
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

// ForceRecordPath makes sc merge and read record by record, so tests can
// compare the batch path against the record path.
func ForceRecordPath(sc *Scanner) { sc.rowPath = true }

// BatchPath reports whether sc reads its buckets on the batch path.
func BatchPath(sc *Scanner) bool { return !sc.rowPath && (sc.codec != nil || sc.rowCodec != nil) }

// BatchRowJSON is row i of b (of codec's layout, fields) as EachJSON
// writes it from the vectors.
func BatchRowJSON(fields table.RowType, codec *datafile.Codec, b *datafile.Batch, i int) ([]byte, error) {
	cols := make([]int, len(fields))
	for j := range cols {
		cols[j] = j
	}
	return newBatchJSON(fields, codec, cols).appendRow(nil, b, i)
}
