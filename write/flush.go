package write

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/manifest"
)

// Flushed is what flushing one bucket's buffered records wrote.
type Flushed struct {
	// Entries are the ADD entries of the level-0 data files.
	Entries []manifest.Entry
	// Changelog are the ADD entries of the changelog files
	// (changelog-producer=input only).
	Changelog []manifest.Entry
	// Written are the paths of every file written, for cleanup when the
	// commit does not happen.
	Written []string
	// Rows is the number of data records written (after merging).
	Rows int64
}

// FlushBucket writes one bucket's buffered records as Java's MergeTreeWriter
// flushes its write buffer: records sorted by key, then by sequence number,
// the records of one key merged by the engine, written as level-0 data files
// with file source APPEND. With inputChangelog (changelog-producer=input)
// every record, unmerged and in the same order, also goes to level-0
// changelog files. kvs is sorted in place. On error nothing written is left
// behind.
func FlushBucket(ctx context.Context, t *table.Table, eng *merge.Engine, partition []byte, bucket, totalBuckets int32, kvs []table.KeyValue, inputChangelog bool, now func() time.Time) (*Flushed, error) {
	keyTypes := eng.KeyTypes()
	slices.SortStableFunc(kvs, func(a, b table.KeyValue) int {
		if c := table.CompareRows(keyTypes, a.Key, b.Key); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	out := &Flushed{}
	fail := func(err error) (*Flushed, error) {
		t.DeleteUnreferenced(out.Written)
		return nil, fmt.Errorf("write to %s bucket %d: %w", t.FullName(), bucket, err)
	}
	entries := func(metas []manifest.DataFileMeta) []manifest.Entry {
		es := make([]manifest.Entry, 0, len(metas))
		for _, m := range metas {
			es = append(es, manifest.Entry{Kind: manifest.FileKindAdd, Partition: partition,
				Bucket: bucket, TotalBuckets: totalBuckets, File: m})
		}
		return es
	}
	if inputChangelog {
		cr, err := NewChangelogRoller(ctx, t, partition, bucket, 0)
		if err != nil {
			return fail(err)
		}
		if now != nil {
			cr.now = now
		}
		for _, kv := range kvs {
			if err := cr.Write(kv); err != nil {
				cr.Abort()
				return fail(err)
			}
		}
		metas, err := cr.Close()
		out.Written = append(out.Written, cr.Written()...)
		if err != nil {
			return fail(err)
		}
		out.Changelog = entries(metas)
	}
	r := NewRoller(ctx, t, partition, bucket, 0, manifest.FileSourceAppend)
	if now != nil {
		r.now = now
	}
	merged := eng.NewReader(ctx, []merge.Iterator{merge.FromSlice(kvs)}, false)
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
			return fail(err)
		}
		out.Rows++
	}
	merged.Close()
	metas, err := r.Close()
	out.Written = append(out.Written, r.Written()...)
	if err != nil {
		return fail(err)
	}
	out.Entries = entries(metas)
	return out, nil
}
