package maint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// Partition expiration strategies (partition.expiration-strategy).
const (
	StrategyValuesTime = table.PartitionStrategyValuesTime
	StrategyUpdateTime = table.PartitionStrategyUpdateTime
)

// PartitionExpireOptions are a table's partition.* expiration options,
// parsed by table (table.Options.PartitionExpiration).
type PartitionExpireOptions = table.PartitionExpiration

// PartitionExpireOptionsFromTable reads the options with Paimon's defaults
// through table's parser.
func PartitionExpireOptionsFromTable(raw map[string]string) (PartitionExpireOptions, error) {
	return table.ParsePartitionExpiration(raw)
}

// PartitionInfo is one live partition as expiry sees it.
type PartitionInfo struct {
	// Values are the partition values as Paimon's
	// RowDataToObjectArrayConverter renders them with toString (nil = null).
	Values []*string
	// LastFileCreation is the newest creationTime of its files (a wall
	// clock); zero when unknown. Only update-time reads it.
	LastFileCreation time.Time
}

// SelectExpiredPartitions is NormalPartitionExpire.doExpire's choice at now
// (a wall clock): partitions whose time is before now − ExpirationTime
// (values-time: time from the values, unparsable or null values never
// expire; update-time: the newest file's creation time), sorted by their
// values joined with "," (null as defaultName), at most MaxNum. It returns
// indices into parts.
func SelectExpiredPartitions(keys []string, parts []PartitionInfo, o PartitionExpireOptions, defaultName string, now time.Time) ([]int, error) {
	if o.ExpirationTime <= 0 {
		return nil, nil
	}
	before := now.Add(-o.ExpirationTime)
	var ext *TimeExtractor
	if o.Strategy != StrategyUpdateTime {
		var err error
		if ext, err = NewTimeExtractor(o.TimestampPattern, o.TimestampFormatter); err != nil {
			return nil, err
		}
	}
	var out []int
	for i, p := range parts {
		if ext == nil {
			if !p.LastFileCreation.IsZero() && before.After(p.LastFileCreation) {
				out = append(out, i)
			}
			continue
		}
		pt, err := ext.Extract(keys, p.Values)
		if err != nil {
			continue
		}
		if before.After(pt) {
			out = append(out, i)
		}
	}
	joined := func(i int) string {
		vs := make([]string, len(parts[i].Values))
		for k, v := range parts[i].Values {
			if v == nil {
				vs[k] = defaultName
			} else {
				vs[k] = *v
			}
		}
		return strings.Join(vs, ",")
	}
	slices.SortStableFunc(out, func(a, b int) int { return strings.Compare(joined(a), joined(b)) })
	if o.MaxNum >= 0 && len(out) > o.MaxNum {
		out = out[:o.MaxNum]
	}
	return out, nil
}

// javaInternalString is toString of the value Paimon's
// RowDataToObjectArrayConverter yields for a partition field: strings as
// they are, numbers in decimal, DATE as its day number (so a DATE partition
// only expires with a pattern that makes it parse, as in Java).
func javaInternalString(v any) (*string, bool) {
	if v == nil {
		return nil, true
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case bool:
		s = strconv.FormatBool(x)
	case int8:
		s = strconv.FormatInt(int64(x), 10)
	case int16:
		s = strconv.FormatInt(int64(x), 10)
	case int32:
		s = strconv.FormatInt(int64(x), 10)
	case int64:
		s = strconv.FormatInt(x, 10)
	case table.Decimal:
		s = x.String()
	default:
		return nil, false
	}
	return &s, true
}

// PartitionExpireRunOptions configure ExpirePartitions.
type PartitionExpireRunOptions struct {
	// Options override the table's options when not nil.
	Options *PartitionExpireOptions
	Now     time.Time // zero: time.Now()
	DryRun  bool
	// CommitUser defaults to a fresh UUID.
	CommitUser string
}

// ExpiredPartition is one dropped partition.
type ExpiredPartition struct {
	Spec  string `json:"partition"` // k1=v1/k2=v2
	Files int    `json:"files"`     // live data files deleted by the commit
	Rows  int64  `json:"rows"`
}

// PartitionExpireReport says what ExpirePartitions dropped (or would).
type PartitionExpireReport struct {
	DryRun     bool               `json:"dryRun"`
	Partitions []ExpiredPartition `json:"partitions"`
	// Snapshots are the OVERWRITE snapshots committed (one per batch).
	Snapshots []int64 `json:"snapshots"`
}

// ExpirePartitions drops the table's expired partitions as Paimon's
// NormalPartitionExpire does through FileStoreCommit.dropPartitions: an
// OVERWRITE commit (identifier Long.MAX_VALUE) whose delta DELETEs every
// live data file of the chosen partitions, one commit per batch of
// partition.expiration-batch-size. The files themselves are deleted later
// by snapshot expiration, as in Paimon. A commit that conflicts (a
// concurrent compaction replaced files of a dropped partition) is planned
// again from the new latest snapshot; files a writer adds to a dropped
// partition concurrently survive until the next run.
//
// Tables whose dropped partitions have index files (deletion vectors,
// dynamic-bucket hash indexes) are refused: table.Commit carries the index
// manifest over unchanged and cannot drop those entries.
func ExpirePartitions(ctx context.Context, t *table.Table, ro PartitionExpireRunOptions) (PartitionExpireReport, error) {
	rep := PartitionExpireReport{DryRun: ro.DryRun}
	fail := func(err error) (PartitionExpireReport, error) {
		return rep, fmt.Errorf("expire partitions of %s: %w", t.FullName(), err)
	}
	var o PartitionExpireOptions
	if ro.Options != nil {
		o = *ro.Options
	} else {
		var err error
		if o, err = t.Options().PartitionExpiration(); err != nil {
			return fail(err)
		}
	}
	if len(t.Schema().PartitionKeys) == 0 {
		return fail(errors.New("the table is not partitioned"))
	}
	if o.ExpirationTime <= 0 {
		return fail(errors.New("partition.expiration-time is not set"))
	}
	// With partitions kept in a metastore, Java drops them there (and their
	// .done partitions); an OVERWRITE commit alone would leave the metastore
	// listing partitions that no longer exist.
	if table.MetastorePartitioned(t.Options().Raw) {
		return fail(errors.New("metastore.partitioned-table=true: partitions must be dropped through the metastore, which compactd does not do"))
	}
	now := ro.Now
	if now.IsZero() {
		now = time.Now()
	}
	user := ro.CommitUser
	if user == "" {
		user = uuid.NewString()
	}
	// The partitions are chosen once (at most MaxNum, as Java does); each
	// batch is then rebuilt from the latest snapshot, so it deletes exactly
	// the files live at that moment.
	first, _, err := planPartitionExpiry(ctx, t, o, WallClock(now), nil)
	if err != nil {
		return fail(err)
	}
	if ro.DryRun || len(first) == 0 {
		rep.Partitions = partitionsOf(first)
		return rep, nil
	}
	var remaining []string
	for _, p := range first {
		remaining = append(remaining, p.key)
	}
	reported := map[string]int{}
	const maxReplans = 5
	replans := 0
	for len(remaining) > 0 {
		cur, from, err := planPartitionExpiry(ctx, t, o, WallClock(now), remaining)
		if err != nil {
			return fail(err)
		}
		if len(cur) == 0 {
			break
		}
		// Partitions that lost all their files meanwhile are done.
		remaining = remaining[:0]
		for _, p := range cur {
			remaining = append(remaining, p.key)
		}
		batch := len(cur)
		if o.BatchSize > 0 && o.BatchSize < batch {
			batch = o.BatchSize
		}
		part := cur[:batch]
		var entries []manifest.Entry
		for _, p := range part {
			for _, e := range p.entries {
				d := e
				d.Kind = manifest.FileKindDelete
				entries = append(entries, d)
			}
		}
		res, err := t.Commit(ctx, table.CommitRequest{
			Kind: table.CommitOverwrite, CommitUser: user, CommitIdentifier: table.BatchCommitIdentifier,
			Entries: entries, Check: true, Now: now,
		})
		var conflict *table.ConflictError
		if errors.As(err, &conflict) && replans < maxReplans {
			replans++
			continue
		}
		if err != nil {
			return fail(err)
		}
		rep.Snapshots = append(rep.Snapshots, res.Snapshot.ID)
		for _, ep := range partitionsOf(part) {
			if i, ok := reported[ep.Spec]; ok {
				rep.Partitions[i].Files += ep.Files
				rep.Partitions[i].Rows += ep.Rows
				continue
			}
			reported[ep.Spec] = len(rep.Partitions)
			rep.Partitions = append(rep.Partitions, ep)
		}
		if res.Snapshot.ID != from+1 && replans < maxReplans {
			// Another commit landed between the plan and ours: a writer
			// may have added files to these partitions. Look again.
			replans++
			continue
		}
		remaining = remaining[batch:]
	}
	return rep, nil
}

type plannedPartition struct {
	key     string // partition bytes
	spec    string
	entries []manifest.Entry
}

func partitionsOf(ps []plannedPartition) []ExpiredPartition {
	out := make([]ExpiredPartition, 0, len(ps))
	for _, p := range ps {
		ep := ExpiredPartition{Spec: p.spec, Files: len(p.entries)}
		for _, e := range p.entries {
			ep.Rows += e.File.RowCount
		}
		out = append(out, ep)
	}
	return out
}

// planPartitionExpiry reads the latest snapshot's live files, groups them by
// partition and selects the expired partitions in Paimon's order, or, when
// only is not nil, the partitions (by key) in only that still have files,
// in that order. It returns the snapshot it read.
func planPartitionExpiry(ctx context.Context, t *table.Table, o PartitionExpireOptions, now time.Time, only []string) ([]plannedPartition, int64, error) {
	snap, err := t.LatestSnapshot(ctx)
	if errors.Is(err, table.ErrNoSnapshot) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	adds, _, _, err := t.LiveEntries(ctx, snap)
	if err != nil {
		return nil, 0, err
	}
	schema := t.Schema()
	ptype := schema.PartitionType()
	types := make([]table.DataType, len(ptype))
	for i, f := range ptype {
		types[i] = f.Type
	}
	byPart := map[string]int{}
	var infos []PartitionInfo
	var planned []plannedPartition
	for _, e := range adds {
		i, ok := byPart[string(e.Partition)]
		if !ok {
			row, err := table.DecodeBinaryRow(types, e.Partition)
			if err != nil {
				return nil, 0, fmt.Errorf("partition of %s: %w", e.File.FileName, err)
			}
			spec, err := t.Paths().PartitionPathOfRow(row)
			if err != nil {
				return nil, 0, fmt.Errorf("partition of %s: %w", e.File.FileName, err)
			}
			info := PartitionInfo{Values: make([]*string, len(row))}
			supported := true
			for k, v := range row {
				s, ok := javaInternalString(v)
				if !ok {
					supported = false
				}
				info.Values[k] = s
			}
			if !supported {
				// Such a value never parses as a time in Paimon either
				// (values-time); keep it out of the selection.
				info.Values = make([]*string, len(row))
			}
			i = len(infos)
			byPart[string(e.Partition)] = i
			infos = append(infos, info)
			planned = append(planned, plannedPartition{key: string(e.Partition), spec: spec})
		}
		planned[i].entries = append(planned[i].entries, e)
		if e.File.CreationTime != nil {
			ct := time.UnixMilli(*e.File.CreationTime).UTC()
			if ct.After(infos[i].LastFileCreation) {
				infos[i].LastFileCreation = ct
			}
		}
	}
	var out []plannedPartition
	if only != nil {
		for _, k := range only {
			if i, ok := byPart[k]; ok {
				out = append(out, planned[i])
			}
		}
	} else {
		idx, err := SelectExpiredPartitions(schema.PartitionKeys, infos, o, t.Options().PartitionDefaultName, now)
		if err != nil {
			return nil, 0, err
		}
		for _, i := range idx {
			out = append(out, planned[i])
		}
	}
	if len(out) > 0 && snap.IndexManifest != nil {
		index, err := t.IndexEntries(ctx, snap)
		if err != nil {
			return nil, 0, err
		}
		dropped := map[string]bool{}
		for _, p := range out {
			dropped[string(p.entries[0].Partition)] = true
		}
		for _, ie := range index {
			if dropped[string(ie.Partition)] {
				return nil, 0, fmt.Errorf("partition %s has index file %s: dropping partitions with index files is not supported", planned[byPart[string(ie.Partition)]].spec, ie.IndexFile.FileName)
			}
		}
	}
	return out, snap.ID, nil
}
