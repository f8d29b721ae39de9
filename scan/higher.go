package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// HigherLevels answers merge.KeyLookup for a compaction: does a level above
// its output level hold a key? It is a streaming anti-join, the interim
// stand-in for Paimon's LookupLevels (a disk-backed lookup is issue #14):
// every level above 0 is one sorted run of files with disjoint key ranges,
// and a compaction asks for its keys in ascending order, so each level keeps
// at most one file open and reads it forward. A file is opened only when an
// asked key falls inside its key range (files no key of the compaction
// reaches are never read), and only its key columns are fetched (files in
// another layout, e.g. written under an older key schema, are read by rows).
//
// Keys asked out of order are still answered correctly (the file is read
// again from its start), only slower.
type HigherLevels struct {
	ctx      context.Context
	t        *table.Table
	keyTypes []table.DataType
	read     datafile.Schema // the key fields only
	full     datafile.Schema // the table's read schema
	keyCodec *datafile.Codec // nil: every file is read by rows
	schemaOf SchemaFunc
	levels   []*levelRun
}

// NewHigherLevels prepares the lookup over files, the live files of one
// bucket at levels above a compaction's output level. read is the table's
// read schema (only its key fields are read). It fails when two files of
// one level overlap, which no valid Paimon table has.
func NewHigherLevels(ctx context.Context, t *table.Table, files []*manifest.Entry, keyTypes []table.DataType, read datafile.Schema, schemaOf SchemaFunc) (*HigherLevels, error) {
	keyFields, err := read.KeyFields()
	if err != nil {
		return nil, fmt.Errorf("higher-level lookup of %s: %w", t.FullName(), err)
	}
	h := &HigherLevels{ctx: ctx, t: t, keyTypes: keyTypes, schemaOf: schemaOf, full: read,
		read: datafile.Schema{Fields: keyFields, KeyNames: read.KeyNames}}
	// The key columns of files in compactd's layout are fetched alone (nil:
	// a key the batch codec cannot take; every file is then read by rows).
	h.keyCodec, _ = datafile.NewKeyCodec(read)
	byLevel := map[int32][]lookupFile{}
	for _, e := range files {
		if e.File.Level == 0 {
			return nil, fmt.Errorf("higher-level lookup of %s: data file %s is at level 0", t.FullName(), e.File.FileName)
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
func (h *HigherLevels) Levels() int { return len(h.levels) }

// Contains reports whether any level holds key (a record of any kind, as
// Paimon's lookup files store every record).
func (h *HigherLevels) Contains(key table.Row) (bool, error) {
	for _, l := range h.levels {
		ok, err := l.contains(key)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// Close closes the open files.
func (h *HigherLevels) Close() error {
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
type levelRun struct {
	h     *HigherLevels
	level int32
	files []lookupFile
	open  int // index of the open file, -1 if none
	r     keySource
	cur   table.Row // key the reader is at; nil once the file is exhausted
	asked table.Row // last key asked in the open file
	steps uint
}

func (l *levelRun) contains(key table.Row) (bool, error) {
	kt := l.h.keyTypes
	i := sort.Search(len(l.files), func(i int) bool { return table.CompareRows(kt, l.files[i].hi, key) >= 0 })
	if i == len(l.files) || table.CompareRows(kt, l.files[i].lo, key) > 0 {
		return false, nil // no file of this level covers key
	}
	if l.open != i || (l.asked != nil && table.CompareRows(kt, key, l.asked) < 0) {
		if err := l.openFile(i); err != nil {
			return false, err
		}
	}
	l.asked = key
	for l.cur != nil && table.CompareRows(kt, l.cur, key) < 0 {
		if err := l.advance(); err != nil {
			return false, err
		}
	}
	return l.cur != nil && table.CompareRows(kt, l.cur, key) == 0, nil
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
	r, err := l.h.openKeys(path, fileSchema)
	if err != nil {
		return fmt.Errorf("higher-level lookup of %s, level %d: %w", l.h.t.FullName(), l.level, err)
	}
	l.r, l.open, l.asked = r, i, nil
	return l.advance()
}

// keySource yields the keys of one data file in file order.
type keySource interface {
	next() (table.Row, error) // io.EOF at the end
	Close() error
}

// openKeys reads only the key columns when the file has compactd's layout
// for them, else the keys of every record through the row reader.
func (h *HigherLevels) openKeys(path string, fileSchema datafile.Schema) (keySource, error) {
	if h.keyCodec != nil {
		br, err := datafile.OpenKeyBatches(h.ctx, h.t.FileIO(), path, fileSchema, h.full, h.keyCodec)
		if err == nil {
			return &batchKeys{r: br, codec: h.keyCodec, b: h.keyCodec.NewBatch()}, nil
		}
		if !errors.Is(err, datafile.ErrNoBatchPath) {
			return nil, err
		}
	}
	r, err := datafile.OpenKeyValue(h.ctx, h.t.FileIO(), path, fileSchema, h.read)
	if err != nil {
		return nil, err
	}
	return rowKeys{r}, nil
}

type rowKeys struct{ r *datafile.KeyValueReader }

func (k rowKeys) next() (table.Row, error) {
	kv, err := k.r.Next()
	return kv.Key, err
}

func (k rowKeys) Close() error { return k.r.Close() }

type batchKeys struct {
	r     *datafile.BatchReader
	codec *datafile.Codec
	b     *datafile.Batch
	i     int
}

func (k *batchKeys) next() (table.Row, error) {
	for k.i >= k.b.N {
		if err := k.r.Next(k.b, BatchSize); err != nil {
			return nil, err
		}
		k.i = 0
	}
	key, err := k.codec.RowAt(k.b, k.i)
	k.i++
	return key, err
}

func (k *batchKeys) Close() error { return k.r.Close() }

// advance moves the reader to its next record's key.
func (l *levelRun) advance() error {
	if l.steps++; l.steps%1024 == 0 {
		if err := l.h.ctx.Err(); err != nil {
			return err
		}
	}
	key, err := l.r.next()
	if errors.Is(err, io.EOF) {
		l.cur = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("higher-level lookup of %s, level %d, data file %s: %w", l.h.t.FullName(), l.level, l.files[l.open].e.File.FileName, err)
	}
	l.cur = key
	return nil
}

func (l *levelRun) close() error {
	l.open, l.cur, l.asked = -1, nil, nil
	if l.r == nil {
		return nil
	}
	err := l.r.Close()
	l.r = nil
	return err
}
