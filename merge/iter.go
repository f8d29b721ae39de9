// Package merge implements the merge side of Paimon primary-key compaction:
// a streaming k-way merge of sorted runs ordered exactly as Paimon's
// SortMergeReader orders records, the merge engines (deduplicate,
// partial-update, aggregation, first-row) configured from table options, and
// IntervalPartition-style grouping of files into sections of sorted runs.
//
// Nothing here touches files: runs arrive as Iterators and the merged stream
// leaves as an Iterator, so the executor decides how records are read and
// written.
package merge

import (
	"errors"
	"io"

	"github.com/compactd/compactd/table"
)

// Iterator yields the records of one sorted run in key order. Next returns
// io.EOF after the last record.
//
// The merge keeps returned records (their Key and Value rows) after calling
// Next again, so an implementation must not reuse row memory between calls.
type Iterator interface {
	Next() (table.KeyValue, error)
	Close() error
}

// Leveled is implemented by iterators that know the LSM level of the record
// they returned last. Only the lookup wrappers (Options.Lookup, and
// Options.Higher of the first-row compaction) need levels; iterators that do
// not implement it count as level 0.
type Leveled interface {
	Level() int
}

// WithLevel marks every record of it as coming from the given level.
func WithLevel(it Iterator, level int) Iterator {
	return &leveledIter{Iterator: it, level: level}
}

type leveledIter struct {
	Iterator
	level int
}

func (l *leveledIter) Level() int { return l.level }

// levelOf reports the level of the record it returned last.
func levelOf(it Iterator) int {
	if l, ok := it.(Leveled); ok {
		return l.Level()
	}
	return 0
}

// Concat chains iterators: the files of one sorted run, or the merged output
// of consecutive sections. Each part is closed as soon as it is exhausted;
// Close closes the rest.
func Concat(iters ...Iterator) Iterator {
	return &concatIter{iters: iters}
}

type concatIter struct {
	iters []Iterator
	cur   Iterator
}

func (c *concatIter) Next() (table.KeyValue, error) {
	for {
		if c.cur == nil {
			if len(c.iters) == 0 {
				return table.KeyValue{}, io.EOF
			}
			c.cur, c.iters = c.iters[0], c.iters[1:]
		}
		kv, err := c.cur.Next()
		if err == nil {
			return kv, nil
		}
		if !errors.Is(err, io.EOF) {
			return table.KeyValue{}, err
		}
		cur := c.cur
		c.cur = nil
		if err := cur.Close(); err != nil {
			return table.KeyValue{}, err
		}
	}
}

// Level forwards the level of the part that produced the last record.
func (c *concatIter) Level() int {
	if c.cur == nil {
		return 0
	}
	return levelOf(c.cur)
}

func (c *concatIter) Close() error {
	var errs []error
	if c.cur != nil {
		errs = append(errs, c.cur.Close())
		c.cur = nil
	}
	for _, it := range c.iters {
		errs = append(errs, it.Close())
	}
	c.iters = nil
	return errors.Join(errs...)
}

// FromSlice iterates over records already in memory (tests, small runs).
func FromSlice(kvs []table.KeyValue) Iterator {
	return &sliceIter{kvs: kvs}
}

type sliceIter struct {
	kvs []table.KeyValue
}

func (s *sliceIter) Next() (table.KeyValue, error) {
	if len(s.kvs) == 0 {
		return table.KeyValue{}, io.EOF
	}
	kv := s.kvs[0]
	s.kvs = s.kvs[1:]
	return kv, nil
}

func (s *sliceIter) Close() error { return nil }

// Collect drains it into a slice and closes it.
func Collect(it Iterator) ([]table.KeyValue, error) {
	var out []table.KeyValue
	for {
		kv, err := it.Next()
		if errors.Is(err, io.EOF) {
			return out, it.Close()
		}
		if err != nil {
			return out, errors.Join(err, it.Close())
		}
		out = append(out, kv)
	}
}
