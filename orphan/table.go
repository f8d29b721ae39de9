package orphan

import (
	"context"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/table"
)

// RunTable removes orphan files of an open table (all its branches).
func RunTable(ctx context.Context, t *table.Table, o RunOptions) (Report, error) {
	return Run(ctx, expire.TableSource(t), o)
}
