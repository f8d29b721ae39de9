package scan

import (
	"context"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

func readDeletionVector(ctx context.Context, t *table.Table, path string, m manifest.DeletionVectorMeta) (DeletionVector, error) {
	return datafile.ReadDeletionVector(ctx, t.FileIO(), path, int64(m.Offset), int64(m.Length))
}
