package write

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// CreateTable writes schema-0 of a new table, exclusively: an existing
// table is never overwritten.
func CreateTable(ctx context.Context, fio fileio.FileIO, warehouse, database, name string, s *table.TableSchema) (*table.Table, error) {
	root, err := table.ResolveTablePath(ctx, fio, warehouse, database, name)
	if err != nil {
		return nil, fmt.Errorf("create %w", err)
	}
	data, err := s.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("create table %s.%s: %w", database, name, err)
	}
	path := fileio.Join(root, table.SchemaDir, table.SchemaFileName(s.ID))
	if err := fio.WriteExclusive(ctx, path, data); err != nil {
		return nil, fmt.Errorf("create table %s.%s: %w", database, name, err)
	}
	return table.Open(ctx, fio, warehouse, database, name)
}

type bucketID struct {
	partition string
	bucket    int32
}

// Writer writes rows of a fixed-bucket primary-key table as a write-only
// Paimon writer does: every commit flushes each touched bucket as one
// level-0 file, with records of one key merged by the merge engine and
// sequence numbers continuing from the bucket's highest.
type Writer struct {
	t       *table.Table
	user    string
	ident   int64
	eng     *merge.Engine
	schema  *table.TableSchema
	route   *Router
	pending map[bucketID][]table.KeyValue
	nextSeq map[bucketID]int64
	now     func() time.Time
}

// NewWriter opens a writer with its own commit user.
func NewWriter(ctx context.Context, t *table.Table, commitUser string) (*Writer, error) {
	s := t.Schema()
	if !s.HasPrimaryKey() {
		return nil, fmt.Errorf("writer for %s: only primary-key tables are supported", t.FullName())
	}
	if t.Options().Bucket <= 0 {
		return nil, fmt.Errorf("writer for %s: only fixed-bucket tables are supported (bucket=%d)", t.FullName(), t.Options().Bucket)
	}
	eng, err := merge.NewEngine(s.EffectiveOptions(), s.Fields, s.PrimaryKeys, s.PartitionKeys...)
	if err != nil {
		return nil, fmt.Errorf("writer for %s: %w", t.FullName(), err)
	}
	w := &Writer{t: t, user: commitUser, eng: eng, schema: s,
		pending: map[bucketID][]table.KeyValue{}, nextSeq: map[bucketID]int64{}, now: time.Now}
	if w.route, err = NewRouter(s); err != nil {
		return nil, fmt.Errorf("writer for %s: %w", t.FullName(), err)
	}
	latest, err := t.LatestSnapshot(ctx)
	if err != nil && !errors.Is(err, table.ErrNoSnapshot) {
		return nil, err
	}
	if latest != nil {
		fs, err := t.FileSet(ctx, latest)
		if err != nil {
			return nil, err
		}
		for _, b := range fs.Buckets() {
			id := bucketID{string(b.Partition), b.Bucket}
			for i := range b.Files {
				w.nextSeq[id] = max(w.nextSeq[id], b.Files[i].File.MaxSequenceNumber+1)
			}
		}
	}
	return w, nil
}

// Write buffers one row with its change kind until the next Commit.
func (w *Writer) Write(kind table.RowKind, row table.Row) error {
	if len(row) != len(w.schema.Fields) {
		return fmt.Errorf("write to %s: row has %d fields, want %d", w.t.FullName(), len(row), len(w.schema.Fields))
	}
	part, err := w.route.Partition(row)
	if err != nil {
		return fmt.Errorf("write to %s: %w", w.t.FullName(), err)
	}
	bucket, err := w.route.Bucket(row, int32(w.t.Options().Bucket))
	if err != nil {
		return fmt.Errorf("write to %s: %w", w.t.FullName(), err)
	}
	id := bucketID{string(part), bucket}
	seq := w.nextSeq[id]
	w.nextSeq[id] = seq + 1
	w.pending[id] = append(w.pending[id], table.KeyValue{Key: w.route.Key(row), Seq: seq, Kind: kind, Value: slices.Clone(row)})
	return nil
}

// Commit flushes the buffered rows as level-0 files and publishes them as
// one APPEND snapshot. It returns nil when nothing was buffered.
func (w *Writer) Commit(ctx context.Context) (*table.Snapshot, error) {
	if len(w.pending) == 0 {
		return nil, nil
	}
	ids := make([]bucketID, 0, len(w.pending))
	for id := range w.pending {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b bucketID) int {
		if c := cmp.Compare(a.partition, b.partition); c != 0 {
			return c
		}
		return cmp.Compare(a.bucket, b.bucket)
	})
	var entries []manifest.Entry
	var written []string
	abort := func() { w.t.DeleteUnreferenced(written) }
	for _, id := range ids {
		f, err := FlushBucket(ctx, w.t, w.eng, []byte(id.partition), id.bucket, int32(w.t.Options().Bucket), w.pending[id], false, w.now)
		if err != nil {
			abort()
			return nil, err
		}
		written = append(written, f.Written...)
		entries = append(entries, f.Entries...)
	}
	w.ident++
	res, err := w.t.Commit(ctx, table.CommitRequest{Kind: table.CommitAppend, CommitUser: w.user, CommitIdentifier: w.ident, Entries: entries})
	if err != nil {
		var conflict *table.ConflictError
		if errors.As(err, &conflict) {
			abort()
		}
		return nil, err
	}
	w.pending = map[bucketID][]table.KeyValue{}
	return res.Snapshot, nil
}
