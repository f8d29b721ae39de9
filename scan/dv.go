package scan

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/table"
)

func readDeletionVector(ctx context.Context, t *table.Table, path string, m table.DeletionVectorMeta) (DeletionVector, error) {
	return nil, fmt.Errorf("deletion vectors not supported yet")
}
