package write

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
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
	keyIdx  []int
	partIdx []int
	bktIdx  []int
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
	for _, k := range s.TrimmedPrimaryKeys() {
		w.keyIdx = append(w.keyIdx, s.Fields.Index(k))
	}
	for _, k := range s.PartitionKeys {
		w.partIdx = append(w.partIdx, s.Fields.Index(k))
	}
	for _, k := range s.BucketKeys() {
		w.bktIdx = append(w.bktIdx, s.Fields.Index(k))
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

func project(row table.Row, idx []int) table.Row {
	out := make(table.Row, len(idx))
	for i, j := range idx {
		out[i] = row[j]
	}
	return out
}

// Write buffers one row with its change kind until the next Commit.
func (w *Writer) Write(kind table.RowKind, row table.Row) error {
	if len(row) != len(w.schema.Fields) {
		return fmt.Errorf("write to %s: row has %d fields, want %d", w.t.FullName(), len(row), len(w.schema.Fields))
	}
	part, err := table.EncodeBinaryRow(types(w.schema.PartitionType()), project(row, w.partIdx))
	if err != nil {
		return fmt.Errorf("write to %s: partition: %w", w.t.FullName(), err)
	}
	bk, err := table.EncodeBinaryRow(types(w.schema.BucketKeyType()), project(row, w.bktIdx))
	if err != nil {
		return fmt.Errorf("write to %s: bucket key: %w", w.t.FullName(), err)
	}
	h, err := table.HashBinaryRow(bk)
	if err != nil {
		return err
	}
	id := bucketID{string(part), table.BucketOf(h, int32(w.t.Options().Bucket))}
	seq := w.nextSeq[id]
	w.nextSeq[id] = seq + 1
	w.pending[id] = append(w.pending[id], table.KeyValue{Key: project(row, w.keyIdx), Seq: seq, Kind: kind, Value: slices.Clone(row)})
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
	keyTypes := w.eng.KeyTypes()
	for _, id := range ids {
		kvs := w.pending[id]
		slices.SortStableFunc(kvs, func(a, b table.KeyValue) int {
			if c := table.CompareRows(keyTypes, a.Key, b.Key); c != 0 {
				return c
			}
			return cmp.Compare(a.Seq, b.Seq)
		})
		r := NewRoller(ctx, w.t, []byte(id.partition), id.bucket, 0, manifest.FileSourceAppend)
		r.now = w.now
		merged := w.eng.NewReader(ctx, []merge.Iterator{merge.FromSlice(kvs)}, false)
		for {
			kv, err := merged.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err == nil {
				err = r.Write(kv)
			}
			if err != nil {
				merged.Close()
				r.Abort()
				abort()
				return nil, fmt.Errorf("write to %s: %w", w.t.FullName(), err)
			}
		}
		merged.Close()
		metas, err := r.Close()
		written = append(written, r.Written()...)
		if err != nil {
			abort()
			return nil, fmt.Errorf("write to %s: %w", w.t.FullName(), err)
		}
		for _, m := range metas {
			entries = append(entries, manifest.Entry{Kind: manifest.FileKindAdd, Partition: []byte(id.partition),
				Bucket: id.bucket, TotalBuckets: int32(w.t.Options().Bucket), File: m})
		}
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
