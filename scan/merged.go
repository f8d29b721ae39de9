package scan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// DeletionVector marks deleted row positions of one data file.
type DeletionVector interface {
	IsDeleted(pos int64) bool
}

// SchemaFunc resolves a data file's schema id to its layout.
type SchemaFunc func(ctx context.Context, id int64) (datafile.Schema, error)

// Merge says how OpenMerged and OpenMergedBatches merge the records of a key.
type Merge struct {
	// DropDelete drops merged retractions.
	DropDelete bool
	// FirstRow merges as Paimon's first-row compaction of level-0 files into
	// a level above 0 (merge.Engine.FirstRowCompactOptions): keys that Higher
	// holds are dropped unless a record of theirs comes from a level above
	// 0. Higher answers for the levels above the output level (nil: none).
	FirstRow bool
	Higher   merge.HigherLookup
	// Lookup merges as Java reads a lookup-style table (changelog-producer
	// =lookup, deletion vectors, force-lookup; not first-row): through
	// LookupMergeFunction, which takes the level-0 records of a key and only
	// the record of the lowest level above 0, since Java's lookup compaction
	// already merged the levels above into it (merge.Options.Lookup).
	Lookup bool
	// LookupCompact merges as Paimon's lookup compaction of level-0 files
	// into a level above 0, for every engine
	// (merge.Engine.LookupCompactOptions; first-row as FirstRow with
	// LookupCompact.Higher). It excludes FirstRow, Higher and Lookup.
	LookupCompact *merge.LookupCompact
	// FullChangelog merges as Paimon's full-compaction changelog rewriter
	// (merge.FullChangelog): the plain merge, with the changelog of every
	// key from its top-level record to the merged one. It excludes the
	// other options but DropDelete.
	FullChangelog *merge.FullChangelog
	// FirstRowChangelog, with FirstRow, receives the record of every key
	// new to the bucket (merge.Options.FirstRowChangelog).
	FirstRowChangelog func(table.KeyValue) error
}

func (m Merge) options(eng *merge.Engine) (merge.Options, error) {
	if m.FirstRowChangelog != nil && !m.FirstRow {
		return merge.Options{}, errors.New("a first-row changelog without the first-row compaction merge")
	}
	if m.FullChangelog != nil {
		if m.FirstRow || m.Lookup || m.Higher != nil || m.LookupCompact != nil {
			return merge.Options{}, errors.New("the full-compaction changelog merge excludes the first-row, lookup and higher-level options")
		}
		o := eng.ReaderOptions(m.DropDelete)
		o.FullChangelog = m.FullChangelog
		return o, nil
	}
	if m.LookupCompact != nil {
		if m.FirstRow || m.Lookup || m.Higher != nil {
			return merge.Options{}, errors.New("the lookup compaction merge excludes the first-row, lookup-read and higher-level options")
		}
		return eng.LookupCompactOptions(m.DropDelete, *m.LookupCompact)
	}
	if m.FirstRow {
		if m.Lookup {
			return merge.Options{}, errors.New("first-row compaction and lookup reads do not combine")
		}
		o, err := eng.FirstRowCompactOptions(m.DropDelete, m.Higher)
		o.FirstRowChangelog = m.FirstRowChangelog
		return o, err
	}
	if m.Lookup {
		if m.Higher != nil {
			return merge.Options{}, errors.New("a higher-level lookup without the first-row compaction merge")
		}
		return eng.LookupOptions(m.DropDelete, false), nil
	}
	if m.Higher != nil {
		return merge.Options{}, errors.New("a higher-level lookup without the first-row compaction merge")
	}
	return eng.ReaderOptions(m.DropDelete), nil
}

// OpenMerged merges the given files of one bucket as Paimon's merge-tree
// reader does: files are grouped into sections of overlapping key ranges,
// each section's sorted runs are merged through the engine, and the
// sections are read one after the other, so only one section's files are
// open at a time. Records carry their file's level.
func OpenMerged(ctx context.Context, t *table.Table, files []*manifest.Entry, eng *merge.Engine, read datafile.Schema, schemaOf SchemaFunc, dvs map[string]DeletionVector, m Merge) (merge.Iterator, error) {
	opts, err := m.options(eng)
	if err != nil {
		return nil, err
	}
	sections, err := sectionsOf(files, eng.KeyTypes())
	if err != nil {
		return nil, err
	}
	parts := make([]merge.Iterator, 0, len(sections))
	for _, section := range sections {
		parts = append(parts, &lazySection{ctx: ctx, t: t, runs: section, eng: eng, opts: opts, read: read, schemaOf: schemaOf, dvs: dvs})
	}
	return merge.Concat(parts...), nil
}

// sectionsOf groups files into sections of overlapping key ranges, each a
// list of sorted runs (merge.IntervalPartition on the files' key bounds).
func sectionsOf(files []*manifest.Entry, keyTypes []table.DataType) ([][][]*manifest.Entry, error) {
	bounds := make(map[*manifest.Entry][2]table.Row, len(files))
	for _, e := range files {
		lo, err := table.DecodeBinaryRow(keyTypes, e.File.MinKey)
		if err != nil {
			return nil, fmt.Errorf("data file %s: min key: %w", e.File.FileName, err)
		}
		hi, err := table.DecodeBinaryRow(keyTypes, e.File.MaxKey)
		if err != nil {
			return nil, fmt.Errorf("data file %s: max key: %w", e.File.FileName, err)
		}
		bounds[e] = [2]table.Row{lo, hi}
	}
	return merge.IntervalPartition(files, keyTypes, func(e *manifest.Entry) (table.Row, table.Row) {
		b := bounds[e]
		return b[0], b[1]
	}), nil
}

// lazySection opens its files when first read.
type lazySection struct {
	ctx      context.Context
	t        *table.Table
	runs     [][]*manifest.Entry
	eng      *merge.Engine
	opts     merge.Options
	read     datafile.Schema
	schemaOf SchemaFunc
	dvs      map[string]DeletionVector
	r        merge.Iterator
}

func (s *lazySection) Next() (table.KeyValue, error) {
	if s.r == nil {
		iters := make([]merge.Iterator, 0, len(s.runs))
		for _, run := range s.runs {
			files := make([]merge.Iterator, 0, len(run))
			for _, e := range run {
				// Runs of a section can mix levels; each record carries its file's.
				files = append(files, merge.WithLevel(&lazyFile{ctx: s.ctx, t: s.t, e: e, read: s.read, schemaOf: s.schemaOf, dv: s.dvs[e.File.FileName]}, int(e.File.Level)))
			}
			iters = append(iters, merge.Concat(files...))
		}
		s.r = s.eng.NewReaderWith(s.ctx, iters, s.opts)
	}
	return s.r.Next()
}

func (s *lazySection) Close() error {
	if s.r == nil {
		return nil
	}
	return s.r.Close()
}

// lazyFile opens one data file when first read and skips rows its
// deletion vector marks.
type lazyFile struct {
	ctx      context.Context
	t        *table.Table
	e        *manifest.Entry
	read     datafile.Schema
	schemaOf SchemaFunc
	dv       DeletionVector
	r        *datafile.KeyValueReader
	done     bool
}

func (f *lazyFile) Next() (table.KeyValue, error) {
	if f.done {
		return table.KeyValue{}, io.EOF
	}
	if f.r == nil {
		path, err := f.t.DataFilePath(f.e)
		if err != nil {
			return table.KeyValue{}, err
		}
		fileSchema, err := f.schemaOf(f.ctx, f.e.File.SchemaID)
		if err != nil {
			return table.KeyValue{}, fmt.Errorf("data file %s: schema %d: %w", path, f.e.File.SchemaID, err)
		}
		r, err := datafile.OpenKeyValue(f.ctx, f.t.FileIO(), path, fileSchema, f.read)
		if err != nil {
			return table.KeyValue{}, err
		}
		f.r = r
	}
	for {
		kv, err := f.r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				f.done = true
				cerr := f.r.Close()
				f.r = nil
				if cerr != nil {
					return table.KeyValue{}, cerr
				}
			}
			return table.KeyValue{}, err
		}
		if f.dv != nil && f.dv.IsDeleted(f.r.Pos()) {
			continue
		}
		return kv, nil
	}
}

func (f *lazyFile) Close() error {
	f.done = true
	if f.r == nil {
		return nil
	}
	err := f.r.Close()
	f.r = nil
	return err
}

// sortBySequence orders append files as Java reads them: by minimum
// sequence number, file name breaking ties.
func sortBySequence(files []*manifest.Entry) {
	slices.SortStableFunc(files, func(a, b *manifest.Entry) int {
		if c := cmp.Compare(a.File.MinSequenceNumber, b.File.MinSequenceNumber); c != 0 {
			return c
		}
		return cmp.Compare(a.File.FileName, b.File.FileName)
	})
}

// deletionVectors loads the deletion vectors of a bucket's files, keyed by
// data file name.
func (sc *Scanner) deletionVectors(ctx context.Context, b *table.BucketFiles) (map[string]DeletionVector, error) {
	return BucketDeletionVectors(ctx, sc.t, b)
}

// BucketDeletionVectors loads the deletion vectors the bucket's index files
// hold for its data files, keyed by data file name (nil: none).
func BucketDeletionVectors(ctx context.Context, t *table.Table, b *table.BucketFiles) (map[string]DeletionVector, error) {
	var out map[string]DeletionVector
	for _, idx := range b.IndexFiles {
		if idx.IndexType != manifest.IndexTypeDeletionVectors {
			continue
		}
		path, err := t.Paths().IndexFileOf(b.Partition, b.Bucket, &idx)
		if err != nil {
			return nil, err
		}
		for _, m := range idx.DeletionVectors {
			dv, err := readDeletionVector(ctx, t, path, m)
			if err != nil {
				return nil, fmt.Errorf("deletion vector of %s in %s: %w", m.DataFileName, path, err)
			}
			if out == nil {
				out = map[string]DeletionVector{}
			}
			out[m.DataFileName] = dv
		}
	}
	return out, nil
}
