package compact

// Postponed buckets (bucket = -2): writers put primary-key rows into
// bucket-postpone, unsorted and in arrival order, and batch readers do not
// see them until a compaction assigns them to real buckets. This is Java's
// postponed compaction (Flink's CompactAction for postpone tables:
// PostponeBucketCompactSplitSource, PostponeBucketCompactOperator,
// PostponeBucketCommittableRewriter): per partition, the bucket count is the
// one the partition's real buckets already have, else the postpone options'
// choice; every writer's files are replayed in creation order into the
// buckets their keys hash to, as a fixed-bucket writer with new sequence
// numbers writes them (sorted, merged, level 0); one COMPACT snapshot
// deletes the postponed files and adds the new ones. The usual compaction
// of the real buckets then runs on top, as Java's compacts each touched
// bucket after writing.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// Postponed is the backlog waiting in a table's bucket-postpone: rows no
// batch reader sees until a postponed compaction moves them.
type Postponed struct {
	Partitions int   `json:"partitions"`
	Files      int   `json:"files"`
	Rows       int64 `json:"rows"`
	Bytes      int64 `json:"bytes"`
	// Assigned is filled by a run: the buckets the rows went to.
	Assigned int `json:"assignedBuckets"`
	// Snapshot is the COMPACT snapshot that moved them (0: none).
	Snapshot int64 `json:"snapshot"`
}

// PostponedOf counts the postponed files of fs, restricted to one
// partition path when partition is not empty.
func PostponedOf(fs *table.FileSet, partition string) Postponed {
	var p Postponed
	if fs == nil {
		return p
	}
	for _, part := range fs.Partitions {
		if partition != "" && part.Path != partition {
			continue
		}
		for _, b := range part.Buckets {
			if b.Bucket != table.BucketPostpone || len(b.Files) == 0 {
				continue
			}
			p.Partitions++
			for i := range b.Files {
				p.Files++
				p.Rows += b.Files[i].File.RowCount
				p.Bytes += b.Files[i].File.FileSize
			}
		}
	}
	return p
}

// postponedSupported refuses postponed tables whose postponed compaction
// Java does differently than compactd would.
func postponedSupported(t *table.Table, overrides map[string]string) error {
	opts := mergeOptions(t.Schema().EffectiveOptions(), overrides)
	po, err := table.ParsePostponeOptions(opts)
	if err != nil {
		return fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	if po.MergeOnRead {
		return fmt.Errorf("table %s: not supported yet: %s=true with bucket=-2 (readers merge postponed rows themselves)", t.FullName(), table.OptPostponeMergeOnRead)
	}
	if !t.HasPrimaryKey() {
		return fmt.Errorf("table %s: invalid bucket=-2 on a table without primary key (Java rejects this schema)", t.FullName())
	}
	if _, err := write.NewRouter(t.Schema()); err != nil {
		return fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	return nil
}

// postponedBucket is one real bucket the postponed rows go to.
type postponedBucket struct {
	partition []byte
	bucket    int32
	firstSeq  int64 // the first sequence number given to a postponed row
	nextSeq   int64
	pending   []table.KeyValue
}

// assignPostponed moves the postponed rows of t's latest snapshot into real
// buckets and commits that as one COMPACT snapshot. It returns what it
// moved (zero when nothing was postponed). A dry run only counts.
func assignPostponed(ctx context.Context, t *table.Table, o Options, now func() time.Time, st *CommitStats) (Postponed, error) {
	latest, err := t.LatestSnapshot(ctx)
	if isNoSnapshot(err) {
		return Postponed{}, nil
	}
	if err != nil {
		return Postponed{}, err
	}
	fs, err := t.FileSet(ctx, latest)
	if err != nil {
		return Postponed{}, err
	}
	sum := PostponedOf(fs, o.Partition)
	for _, e := range fs.Index {
		if e.Bucket == table.BucketPostpone {
			// Java's writers do not write them; a postponed file with
			// deleted rows would need them applied to its replay.
			return sum, fmt.Errorf("table %s: not supported: index file %s (%s) of bucket-postpone", t.FullName(), e.IndexFile.FileName, e.IndexFile.IndexType)
		}
	}
	if sum.Files == 0 || o.DryRun || o.Bucket != nil || o.Buckets != nil {
		// A run restricted to one bucket leaves postponed rows alone: they
		// would land in buckets it was not asked to touch.
		return sum, nil
	}
	s := t.Schema()
	opts := mergeOptions(s.EffectiveOptions(), o.Overrides)
	po, err := table.ParsePostponeOptions(opts)
	if err != nil {
		return sum, fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	eng, err := merge.NewEngine(opts, s.Fields, s.PrimaryKeys, s.PartitionKeys...)
	if err != nil {
		return sum, fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	route, err := write.NewRouter(s)
	if err != nil {
		return sum, fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	to, err := optionsWith(t, o.Overrides)
	if err != nil {
		return sum, err
	}
	inputChangelog := to.ChangelogProducer == table.ChangelogInput
	read := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}

	var entries, changelog []manifest.Entry
	var written []string
	fail := func(err error) (Postponed, error) {
		t.DeleteUnreferenced(written)
		return sum, err
	}
	var targets []*postponedBucket
	for _, part := range fs.Partitions {
		if o.Partition != "" && part.Path != o.Partition {
			continue
		}
		var postponed *table.BucketFiles
		known := int32(0)
		maxSeq := map[int32]int64{}
		for _, b := range part.Buckets {
			if b.Bucket == table.BucketPostpone {
				postponed = b
				continue
			}
			for i := range b.Files {
				e := &b.Files[i]
				if e.TotalBuckets <= 0 {
					continue
				}
				if known != 0 && e.TotalBuckets != known {
					return fail(fmt.Errorf("table %s partition %q: files have %d and %d total buckets (file %s)", t.FullName(), part.Path, known, e.TotalBuckets, e.File.FileName))
				}
				known = e.TotalBuckets
			}
			for i := range b.Files {
				maxSeq[b.Bucket] = max(maxSeq[b.Bucket], b.Files[i].File.MaxSequenceNumber+1)
			}
		}
		if postponed == nil || len(postponed.Files) == 0 {
			continue
		}
		n := known
		if n == 0 {
			var rows int64
			for i := range postponed.Files {
				rows += postponed.Files[i].File.RowCount
			}
			if n, err = po.BucketsFor(rows); err != nil {
				return fail(fmt.Errorf("table %s partition %q: %w", t.FullName(), part.Path, err))
			}
		}
		files, err := replayOrder(postponed.Files)
		if err != nil {
			return fail(fmt.Errorf("table %s partition %q: %w", t.FullName(), part.Path, err))
		}
		buckets := map[int32]*postponedBucket{}
		var buffered int64
		flush := func() error {
			ids := make([]int32, 0, len(buckets))
			for id, b := range buckets {
				if len(b.pending) > 0 {
					ids = append(ids, id)
				}
			}
			slices.Sort(ids)
			for _, id := range ids {
				b := buckets[id]
				f, err := write.FlushBucket(ctx, t, eng, b.partition, b.bucket, n, b.pending, inputChangelog, now)
				if err != nil {
					return err
				}
				written = append(written, f.Written...)
				entries = append(entries, f.Entries...)
				changelog = append(changelog, f.Changelog...)
				b.pending = nil
			}
			buffered = 0
			return nil
		}
		for _, e := range files {
			path, err := t.DataFilePath(e)
			if err != nil {
				return fail(err)
			}
			fileSchema, err := datafile.SchemaOf(ctx, t, e.File.SchemaID)
			if err != nil {
				return fail(fmt.Errorf("table %s: postponed file %s: schema %d: %w", t.FullName(), path, e.File.SchemaID, err))
			}
			// A rough in-memory size per record, for flushing as a Java
			// writer does when its write buffer fills.
			perRow := int64(256)
			if e.File.RowCount > 0 {
				perRow = max(perRow, 4*e.File.FileSize/e.File.RowCount)
			}
			r, err := datafile.OpenKeyValue(ctx, t.FileIO(), path, fileSchema, read)
			if err != nil {
				return fail(fmt.Errorf("table %s: %w", t.FullName(), err))
			}
			for {
				kv, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err == nil {
					err = ctx.Err()
				}
				var id int32
				if err == nil {
					id, err = route.Bucket(kv.Value, n)
				}
				if err != nil {
					r.Close()
					return fail(fmt.Errorf("table %s: postponed file %s: %w", t.FullName(), path, err))
				}
				b := buckets[id]
				if b == nil {
					b = &postponedBucket{partition: part.Partition, bucket: id, firstSeq: maxSeq[id], nextSeq: maxSeq[id]}
					buckets[id] = b
					targets = append(targets, b)
				}
				kv.Seq = b.nextSeq
				b.nextSeq++
				b.pending = append(b.pending, kv)
				buffered += perRow
				if buffered >= po.WriteBufferSize {
					if err := flush(); err != nil {
						r.Close()
						return fail(err)
					}
				}
			}
			if err := r.Close(); err != nil {
				return fail(fmt.Errorf("table %s: postponed file %s: %w", t.FullName(), path, err))
			}
		}
		if err := flush(); err != nil {
			return fail(err)
		}
		for i := range postponed.Files {
			d := postponed.Files[i]
			d.Kind = manifest.FileKindDelete
			entries = append(entries, d)
		}
	}
	sum.Assigned = len(targets)
	if o.BeforeCommit != nil {
		o.BeforeCommit()
	}
	// DELETEs before ADDs, as CommitRequest wants.
	slices.SortStableFunc(entries, func(a, b manifest.Entry) int { return cmp.Compare(b.Kind, a.Kind) })
	res, err := t.Commit(ctx, table.CommitRequest{
		Kind: table.CommitCompact, CommitUser: o.CommitUser, CommitIdentifier: table.BatchCommitIdentifier,
		Entries: entries, Changelog: changelog,
		Verify:    func(ctx context.Context, s *table.Snapshot) error { return noNewRecords(ctx, t, latest, s, targets) },
		OnAttempt: commitCounting(st),
	})
	if err != nil {
		if conflict := (*table.ConflictError)(nil); errors.As(err, &conflict) {
			st.Conflicts++
		}
		if !errors.Is(err, table.ErrCommitOutcomeUnknown) {
			t.DeleteUnreferenced(written)
		}
		return sum, fmt.Errorf("table %s: commit postponed rows: %w", t.FullName(), err)
	}
	sum.Snapshot = res.Snapshot.ID
	slog.Info("postponed rows assigned to buckets", "table", t.FullName(), "snapshot", sum.Snapshot,
		"partitions", sum.Partitions, "files", sum.Files, "rows", sum.Rows, "buckets", sum.Assigned)
	return sum, nil
}

// replayOrder is the order Java replays postponed files in
// (PostponeUtils.groupPostponeFiles): the files of one writer (the name's
// prefix up to "-w-") in creation-time order, equal times keeping manifest
// order; writers one after another in the order they first appear, as
// Java gives no order between writers.
func replayOrder(files []manifest.Entry) ([]*manifest.Entry, error) {
	var order []string
	groups := map[string][]*manifest.Entry{}
	for i := range files {
		e := &files[i]
		name := e.File.FileName
		cut := strings.LastIndex(name, "-w-")
		if cut < 0 {
			return nil, fmt.Errorf("postponed file %s does not name its writer (no \"-w-\" in the name, as Java's postponed writers write)", name)
		}
		w := name[:cut+3]
		if _, ok := groups[w]; !ok {
			order = append(order, w)
		}
		groups[w] = append(groups[w], e)
	}
	var out []*manifest.Entry
	for _, w := range order {
		g := groups[w]
		slices.SortStableFunc(g, func(a, b *manifest.Entry) int {
			return cmp.Compare(creationMillis(a), creationMillis(b))
		})
		out = append(out, g...)
	}
	return out, nil
}

func creationMillis(e *manifest.Entry) int64 {
	if e.File.CreationTime == nil {
		return 0
	}
	return *e.File.CreationTime
}

// noNewRecords is the postponed commit's precondition: since base no
// commit added records to a bucket the postponed rows go to (a Java batch
// writer writing fixed buckets of a postponed table would), because their
// sequence numbers could collide with the ones given to postponed rows.
func noNewRecords(ctx context.Context, t *table.Table, base, latest *table.Snapshot, targets []*postponedBucket) error {
	if latest == nil || latest.ID == base.ID {
		return nil
	}
	fs, err := t.FileSet(ctx, latest)
	if err != nil {
		return err
	}
	for _, tb := range targets {
		b := fs.Bucket(tb.partition, tb.bucket)
		if b == nil {
			continue
		}
		for i := range b.Files {
			if b.Files[i].File.MaxSequenceNumber >= tb.firstSeq {
				return &table.ConflictError{Table: t.FullName(), Snapshot: latest.ID,
					Reason: fmt.Sprintf("bucket %d received file %s since snapshot %d, with sequence numbers the postponed rows were given", tb.bucket, b.Files[i].File.FileName, base.ID)}
			}
		}
	}
	return nil
}
