package scan

import (
	"context"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
)

func readDeletionVector(ctx context.Context, t *table.Table, path string, m table.DeletionVectorMeta) (DeletionVector, error) {
	return datafile.ReadDeletionVector(ctx, t.FileIO(), path, int64(m.Offset), int64(m.Length))
}
