package datafile

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

func newAvroSource(ctx context.Context, fio fileio.FileIO, path string, fileFields table.RowType, wants []want) (source, error) {
	return nil, fmt.Errorf("data file %s: Avro data files are not supported yet", path)
}
