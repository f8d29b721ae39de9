package planner

import (
	"slices"
	"time"
)

// IdlePartitions are the partitions of view that had no new data for at
// least idle at now, sorted: those whose newest live file (in any bucket,
// bucket-postpone included) was created at or before now − idle. This is
// Paimon's compact action with partition_idle_time (CompactorSourceBuilder
// and AppendTableCompact keep the partitions whose
// PartitionEntry.lastFileCreationTime, the latest creation time of their
// live files, is at most now − idle). A file of unknown creation time
// counts as old. Compaction rewrites files, so a partition compacted at t
// is idle again from t + idle, when its full compaction finds nothing left
// to do in buckets already fully compacted.
func IdlePartitions(view View, idle time.Duration, now time.Time) []string {
	newest := map[string]time.Time{}
	for _, b := range view.Buckets {
		n, seen := newest[b.Partition]
		if !seen {
			newest[b.Partition] = time.Time{}
		}
		for _, f := range b.Files {
			if f.CreationTime.After(n) {
				n = f.CreationTime
			}
		}
		if n.After(newest[b.Partition]) {
			newest[b.Partition] = n
		}
	}
	cutoff := now.Add(-idle)
	var out []string
	for p, n := range newest {
		if !n.After(cutoff) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
