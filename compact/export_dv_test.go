package compact

import (
	"context"

	"github.com/compactd/compactd/table"
)

// CommitResults is commitResults, for the deletion-vector commit tests:
// compaction refuses deletion-vector tables until the lookup merge is
// wired, so they build JobResults themselves.
func CommitResults(ctx context.Context, t *table.Table, results []*JobResult, o Options) (*table.Snapshot, []*JobResult, error) {
	return commitResults(ctx, t, nil, results, o, &CommitStats{})
}
