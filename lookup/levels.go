package lookup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

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

// Options say what a lookup returns and which rows it sees.
type Options struct {
	// Values makes every hit carry the full record (sequence number, kind,
	// value), as Paimon's value-persisting processors do; without it a hit
	// has the key, file, level and position only (PersistPositionProcessor,
	// PersistEmptyProcessor).
	Values bool
	// DeletionVectors are the existing deletion vectors of the files, by
	// data file name: rows they delete are invisible to the lookup, as
	// Paimon builds its lookup files through a reader that applies them.
	DeletionVectors map[string]DeletionVector
}

// Levels is Paimon's LookupLevels for one compaction of one bucket: point
// lookups of keys in the levels above the compaction's output level, first
// hit from the lowest level (merge.HigherLookup).
//
// It is a streaming merge-join, not a disk index: every level above 0 is
// one sorted run of files with disjoint key ranges, and a compaction asks
// its keys in ascending order, so each level keeps at most one file open
// and reads it forward. Memory is bounded by one open file (one decoded
// page per column, or one row group for files read by rows) per level; no
// temp directory is needed. Java answers the same questions from local
// lookup files built from the whole data file with the same reader, so the
// answers are equal: in a level, the only file that can hold a key is the
// first whose max key is >= the key; a row its deletion vector deletes is
// absent, and the search goes on to the next level.
//
// A file is opened only when an asked key falls inside its key range (files
// no key of the compaction reaches are never read). Without Values only its
// key columns are fetched (files in another layout, e.g. written under an
// older key schema, are read by rows). Keys asked out of order are still
// answered correctly (the file is read again from its start), only slower.
type Levels struct {
	ctx      context.Context
	t        *table.Table
	keyTypes []table.DataType
	opts     Options
	read     datafile.Schema   // what a row source reads: the key fields, or the full read schema with Values
	full     datafile.Schema   // the table's read schema
	keyCodec *datafile.Codec   // key-only batches (no Values); nil: read by rows
	kvCodec  *datafile.KVCodec // full batches (Values); nil: read by rows
	schemaOf SchemaFunc
	levels   []*levelRun
}

var _ merge.HigherLookup = (*Levels)(nil)

// New prepares the lookup over files, the live files of one bucket at
// levels above a compaction's output level (none at level 0). read is the
// table's read schema. It fails when two files of one level overlap, which
// no valid Paimon table has.
func New(ctx context.Context, t *table.Table, files []*manifest.Entry, keyTypes []table.DataType, read datafile.Schema, schemaOf SchemaFunc, opts Options) (*Levels, error) {
	keyFields, err := read.KeyFields()
	if err != nil {
		return nil, fmt.Errorf("higher-level lookup of %s: %w", t.FullName(), err)
	}
	h := &Levels{ctx: ctx, t: t, keyTypes: keyTypes, schemaOf: schemaOf, full: read, opts: opts}
	if opts.Values {
		h.read = read
		// nil: a layout the batch codec cannot take; files are read by rows.
		h.kvCodec, _ = datafile.NewKVCodec(read)
	} else {
		h.read = datafile.Schema{Fields: keyFields, KeyNames: read.KeyNames}
		h.keyCodec, _ = datafile.NewKeyCodec(read)
	}
	byLevel := map[int32][]lookupFile{}
	for _, e := range files {
		if e.File.Level <= 0 {
			return nil, fmt.Errorf("higher-level lookup of %s: data file %s is at level %d", t.FullName(), e.File.FileName, e.File.Level)
		}
		lo, err := table.DecodeBinaryRow(keyTypes, e.File.MinKey)
		if err != nil {
			return nil, fmt.Errorf("higher-level lookup of %s: data file %s: min key: %w", t.FullName(), e.File.FileName, err)
		}
		hi, err := table.DecodeBinaryRow(keyTypes, e.File.MaxKey)
		if err != nil {
			return nil, fmt.Errorf("higher-level lookup of %s: data file %s: max key: %w", t.FullName(), e.File.FileName, err)
		}
		byLevel[e.File.Level] = append(byLevel[e.File.Level], lookupFile{e: e, lo: lo, hi: hi})
	}
	levels := make([]int32, 0, len(byLevel))
	for l := range byLevel {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	for _, l := range levels {
		fs := byLevel[l]
		slices.SortFunc(fs, func(a, b lookupFile) int { return table.CompareRows(keyTypes, a.lo, b.lo) })
		for i := 1; i < len(fs); i++ {
			if table.CompareRows(keyTypes, fs[i-1].hi, fs[i].lo) >= 0 {
				return nil, fmt.Errorf("higher-level lookup of %s: level %d holds overlapping data files %s and %s", t.FullName(), l, fs[i-1].e.File.FileName, fs[i].e.File.FileName)
			}
		}
		h.levels = append(h.levels, &levelRun{h: h, level: l, files: fs, open: -1})
	}
	return h, nil
}

// Levels is the number of levels the lookup covers.
func (h *Levels) Levels() int { return len(h.levels) }

// Lookup returns the first live record of key in the levels, lowest level
// first (merge.HigherLookup).
func (h *Levels) Lookup(key table.Row) (merge.Hit, bool, error) {
	for _, l := range h.levels {
		hit, ok, err := l.lookup(key)
		if err != nil || ok {
			return hit, ok, err
		}
	}
	return merge.Hit{}, false, nil
}

// Close closes the open files.
func (h *Levels) Close() error {
	var errs []error
	for _, l := range h.levels {
		errs = append(errs, l.close())
	}
	return errors.Join(errs...)
}

type lookupFile struct {
	e      *manifest.Entry
	lo, hi table.Row
}

// levelRun is the cursor over one level's files.
//
// Invariant while a file is open: cur is the key of the first live row
// (not deleted by the file's deletion vector) at or after asked in file
// order, at position pos (nil once the file is exhausted), and every live
// row before it has a key < asked.
type levelRun struct {
	h     *Levels
	level int32
	files []lookupFile
	open  int // index of the open file, -1 if none
	dv    DeletionVector
	r     rowSource
	cur   table.Row // key of the row the reader is at; nil once the file is exhausted
	pos   int64     // physical position of cur's row
	asked table.Row // last key asked in the open file
	steps uint
}

func (l *levelRun) lookup(key table.Row) (merge.Hit, bool, error) {
	kt := l.h.keyTypes
	// The only file of the level that can hold key: the first whose max
	// key is >= key (LookupUtils.lookup), if its min key is <= key.
	i := sort.Search(len(l.files), func(i int) bool { return table.CompareRows(kt, l.files[i].hi, key) >= 0 })
	if i == len(l.files) || table.CompareRows(kt, l.files[i].lo, key) > 0 {
		return merge.Hit{}, false, nil
	}
	if l.open != i || (l.asked != nil && table.CompareRows(kt, key, l.asked) < 0) {
		if err := l.openFile(i); err != nil {
			return merge.Hit{}, false, err
		}
	}
	l.asked = key
	for l.cur != nil && table.CompareRows(kt, l.cur, key) < 0 {
		if err := l.advance(); err != nil {
			return merge.Hit{}, false, err
		}
	}
	if l.cur == nil || table.CompareRows(kt, l.cur, key) != 0 {
		return merge.Hit{}, false, nil
	}
	e := l.files[l.open].e
	hit := merge.Hit{File: e.File.FileName, Entry: e, Level: int(l.level), Pos: l.pos, KV: table.KeyValue{Key: l.cur}}
	if l.h.opts.Values {
		kv, err := l.r.record()
		if err != nil {
			return merge.Hit{}, false, l.fileErr(err)
		}
		hit.KV, hit.HasValue = kv, true
	}
	return hit, true, nil
}

func (l *levelRun) openFile(i int) error {
	if err := l.close(); err != nil {
		return err
	}
	e := l.files[i].e
	path, err := l.h.t.DataFilePath(e)
	if err != nil {
		return err
	}
	fileSchema, err := l.h.schemaOf(l.h.ctx, e.File.SchemaID)
	if err != nil {
		return fmt.Errorf("data file %s: schema %d: %w", path, e.File.SchemaID, err)
	}
	r, err := l.h.openRows(path, fileSchema)
	if err != nil {
		return fmt.Errorf("higher-level lookup of %s, level %d: %w", l.h.t.FullName(), l.level, err)
	}
	l.r, l.open, l.asked = r, i, nil
	l.dv = l.h.opts.DeletionVectors[e.File.FileName]
	return l.advance()
}

// rowSource yields the rows of one data file in file order, every row
// (deleted ones included), with its physical position.
type rowSource interface {
	next() (key table.Row, pos int64, err error) // io.EOF at the end
	// record is the full record of the row next returned last (only for
	// sources opened with values).
	record() (table.KeyValue, error)
	Close() error
}

// openRows reads the file page by page when it has compactd's layout for
// what is read (key columns only, or the whole read schema with Values),
// else through the row reader (schema evolution, other formats).
func (h *Levels) openRows(path string, fileSchema datafile.Schema) (rowSource, error) {
	switch {
	case h.keyCodec != nil:
		br, err := datafile.OpenKeyBatches(h.ctx, h.t.FileIO(), path, fileSchema, h.full, h.keyCodec)
		if err == nil {
			return &batchRows{r: br, key: h.keyCodec.RowAt, b: h.keyCodec.NewBatch(), pos: -1}, nil
		}
		if !errors.Is(err, datafile.ErrNoBatchPath) {
			return nil, err
		}
	case h.kvCodec != nil:
		br, err := datafile.OpenKeyValueBatches(h.ctx, h.t.FileIO(), path, fileSchema, h.full, h.kvCodec)
		if err == nil {
			return &batchRows{r: br, key: h.kvCodec.KeyAt, kv: h.kvCodec, b: h.kvCodec.NewBatch(), pos: -1}, nil
		}
		if !errors.Is(err, datafile.ErrNoBatchPath) {
			return nil, err
		}
	}
	r, err := datafile.OpenKeyValue(h.ctx, h.t.FileIO(), path, fileSchema, h.read)
	if err != nil {
		return nil, err
	}
	return &recordRows{r: r}, nil
}

type recordRows struct {
	r  *datafile.KeyValueReader
	kv table.KeyValue
}

func (k *recordRows) next() (table.Row, int64, error) {
	kv, err := k.r.Next()
	if err != nil {
		return nil, 0, err
	}
	k.kv = kv
	return kv.Key, k.r.Pos(), nil
}

func (k *recordRows) record() (table.KeyValue, error) { return k.kv, nil }

func (k *recordRows) Close() error { return k.r.Close() }

// batchRows reads batches; the batch reader returns every row of the file
// in order, so a row's position is the number of rows before it.
type batchRows struct {
	r   *datafile.BatchReader
	key func(*datafile.Batch, int) (table.Row, error)
	kv  *datafile.KVCodec // nil: key columns only
	b   *datafile.Batch
	i   int   // next row of b
	pos int64 // position of the row returned last
}

func (k *batchRows) next() (table.Row, int64, error) {
	for k.i >= k.b.N {
		if err := k.r.Next(k.b, batchRowsMax); err != nil {
			return nil, 0, err
		}
		k.i = 0
	}
	key, err := k.key(k.b, k.i)
	k.i++
	k.pos++
	return key, k.pos, err
}

func (k *batchRows) record() (table.KeyValue, error) {
	if k.kv == nil {
		return table.KeyValue{}, errors.New("lookup opened without values")
	}
	return k.kv.Record(k.b, k.i-1)
}

func (k *batchRows) Close() error { return k.r.Close() }

// advance moves the reader to its next live row.
func (l *levelRun) advance() error {
	for {
		if l.steps++; l.steps%1024 == 0 {
			if err := l.h.ctx.Err(); err != nil {
				return err
			}
		}
		key, pos, err := l.r.next()
		if errors.Is(err, io.EOF) {
			l.cur = nil
			return nil
		}
		if err != nil {
			return l.fileErr(err)
		}
		if l.dv != nil && l.dv.IsDeleted(pos) {
			continue
		}
		l.cur, l.pos = key, pos
		return nil
	}
}

func (l *levelRun) fileErr(err error) error {
	return fmt.Errorf("higher-level lookup of %s, level %d, data file %s: %w", l.h.t.FullName(), l.level, l.files[l.open].e.File.FileName, err)
}

func (l *levelRun) close() error {
	l.open, l.cur, l.asked, l.dv = -1, nil, nil, nil
	if l.r == nil {
		return nil
	}
	err := l.r.Close()
	l.r = nil
	return err
}

// batchRowsMax is the number of rows per batch read.
const batchRowsMax = 1024
