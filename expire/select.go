package expire

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/compactd/compactd/table"
)

// SnapshotTime is one existing snapshot as Select needs it.
type SnapshotTime struct {
	ID         int64
	TimeMillis int64 // commit time, epoch milliseconds
}

// SelectInput is everything Select decides on.
type SelectInput struct {
	// Snapshots are the snapshot files that exist, in any order. Gaps in the
	// ids are allowed (a crashed expiration or a manual deletion leaves them).
	Snapshots []SnapshotTime
	Consumers []table.Consumer
	Options   Options
	Now       time.Time
}

// Selection is Select's decision.
type Selection struct {
	Earliest int64 // smallest existing snapshot id (0 if none)
	Latest   int64 // largest existing snapshot id (0 if none)
	// End is the first retained snapshot, the new EARLIEST. Every existing
	// snapshot below End expires. End always names an existing snapshot when
	// the table has one.
	End int64
	// Expire lists the existing snapshot ids in [Earliest, End), ascending.
	Expire []int64
	// ExpiredConsumers are consumers older than consumer.expiration-time;
	// they no longer protect snapshots (Paimon deletes their files first).
	ExpiredConsumers []string
}

// Select decides which snapshots expire, as ExpireSnapshotsImpl.expire does:
//
//   - everything below latest-retainMax+1 must go, whatever its age;
//   - at least retainMin snapshot ids (latest-retainMin+1 .. latest) stay;
//   - no snapshot at or after the smallest consumer nextSnapshot goes
//     (unless consumer.changelog-only);
//   - at most Limit ids past the earliest go per run;
//   - a snapshot may go only when the snapshot after it is older than
//     time-retained (a missing successor does not hold it back).
//
// One deliberate difference: when Java's end falls on a missing snapshot id
// (a gap), Java deletes that range's data files but never the snapshot
// files, so it repeats the same partial work forever. Select lowers End to
// the nearest existing snapshot below it, which keeps one more snapshot and
// always makes progress on the next run.
func Select(in SelectInput) (Selection, error) {
	o := in.Options
	if err := o.Validate(); err != nil {
		return Selection{}, err
	}
	var sel Selection
	if len(in.Snapshots) == 0 {
		return sel, nil
	}
	byID, ids, err := byID("snapshot", in.Snapshots)
	if err != nil {
		return Selection{}, err
	}
	earliest, latest := ids[0], ids[len(ids)-1]
	sel.Earliest, sel.Latest, sel.End = earliest, latest, earliest

	minConsumer := int64(math.MaxInt64)
	for _, c := range in.Consumers {
		if o.ConsumerExpiration > 0 && c.ModTime.Before(in.Now.Add(-o.ConsumerExpiration)) {
			sel.ExpiredConsumers = append(sel.ExpiredConsumers, c.ID)
			continue
		}
		minConsumer = min(minConsumer, c.NextSnapshot)
	}

	minID := max(latest-int64(o.RetainMax)+1, earliest)
	maxExclusive := latest - int64(o.RetainMin) + 1
	if !o.ConsumerChangelogOnly {
		maxExclusive = min(maxExclusive, minConsumer)
	}
	maxExclusive = min(maxExclusive, satAdd(earliest, int64(o.Limit)))

	olderThan := in.Now.UnixMilli() - o.TimeRetained.Milliseconds()
	end := maxExclusive
	for id := minID; id < maxExclusive; id++ {
		if t, ok := byID[id+1]; ok && olderThan <= t {
			end = id
			break
		}
	}
	if end <= earliest {
		return sel, nil
	}
	// Lower End onto an existing snapshot (see the doc comment).
	i, found := slices.BinarySearch(ids, end)
	if !found {
		i--
		end = ids[i]
	}
	sel.End = end
	sel.Expire = slices.Clone(ids[:i])
	return sel, nil
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// byID indexes the commit times of snapshots (or changelogs: what) by id
// and lists the ids ascending; an id listed twice is an error.
func byID(what string, times []SnapshotTime) (map[int64]int64, []int64, error) {
	m := make(map[int64]int64, len(times))
	ids := make([]int64, 0, len(times))
	for _, s := range times {
		if _, dup := m[s.ID]; dup {
			return nil, nil, fmt.Errorf("%s %d listed twice", what, s.ID)
		}
		m[s.ID] = s.TimeMillis
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return m, ids, nil
}
