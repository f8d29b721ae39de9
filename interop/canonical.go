package interop

import (
	"fmt"

	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
)

// CanonicalRow converts a compactd row into the canonical, normalized form
// the oracles print, through the same encoder `compactd scan` uses, so a
// row read by compactd compares directly with a row read by Java.
func CanonicalRow(rt table.RowType, row table.Row) (Row, error) {
	if len(row) != len(rt) {
		return nil, fmt.Errorf("row has %d values for %d fields", len(row), len(rt))
	}
	b, err := scan.AppendJSON(nil, rt, row)
	if err != nil {
		return nil, err
	}
	rows, err := ParseRows(b)
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}
