package orphan

import (
	"context"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// RunTable removes orphan files of an open table (all its branches).
func RunTable(ctx context.Context, t *table.Table, o RunOptions) (Report, error) {
	return Run(ctx, reach.TableSource(t), o)
}
