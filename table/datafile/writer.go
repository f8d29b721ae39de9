package datafile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Defaults Java uses when the table options do not say otherwise.
const (
	defaultBlockSize = 128 << 20 // parquet.block.size
	defaultPageSize  = 1 << 20   // parquet.page.size
	writeBatch       = 256
	// dictionaryMaxBytes bounds a column's dictionary per row group like
	// parquet-mr's parquet.dictionary.page.size (1 MiB); past it the column
	// continues in PLAIN.
	dictionaryMaxBytes = 1 << 20
)

// emitter is the inverse of an assembler: it stripes one value into the
// leaf columns with repetition and definition levels.
type emitter interface {
	emit(v any, rep, def int, out [][]parquet.Value) error
}

type leafEm struct {
	col      int
	optional bool
	enc      encodeFunc
	name     string
}

func (e *leafEm) emit(v any, rep, def int, out [][]parquet.Value) error {
	if v == nil {
		if !e.optional {
			return fmt.Errorf("null in NOT NULL column %s", e.name)
		}
		out[e.col] = append(out[e.col], parquet.NullValue().Level(rep, def, e.col))
		return nil
	}
	pv, err := e.enc(v)
	if err != nil {
		return fmt.Errorf("column %s: %w", e.name, err)
	}
	if e.optional {
		def++
	}
	out[e.col] = append(out[e.col], pv.Level(rep, def, e.col))
	return nil
}

func nullAll(cols []int, rep, def int, out [][]parquet.Value) {
	for _, c := range cols {
		out[c] = append(out[c], parquet.NullValue().Level(rep, def, c))
	}
}

type rowEm struct {
	optional bool
	fields   []emitter
	cols     []int
	name     string
}

func (e *rowEm) emit(v any, rep, def int, out [][]parquet.Value) error {
	if v == nil {
		if !e.optional {
			return fmt.Errorf("null in NOT NULL column %s", e.name)
		}
		nullAll(e.cols, rep, def, out)
		return nil
	}
	row, ok := v.(table.Row)
	if !ok || len(row) != len(e.fields) {
		return fmt.Errorf("column %s: value %T is not a row of %d fields", e.name, v, len(e.fields))
	}
	if e.optional {
		def++
	}
	for i, f := range e.fields {
		if err := f.emit(row[i], rep, def, out); err != nil {
			return err
		}
	}
	return nil
}

type repEm struct {
	optional bool
	rep      int // repetition level of the repeated group
	key      emitter
	elem     emitter
	cols     []int
	name     string
}

func (e *repEm) emit(v any, rep, def int, out [][]parquet.Value) error {
	if v == nil {
		if !e.optional {
			return fmt.Errorf("null in NOT NULL column %s", e.name)
		}
		nullAll(e.cols, rep, def, out)
		return nil
	}
	if e.optional {
		def++
	}
	if e.key == nil {
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("column %s: value %T is not an array", e.name, v)
		}
		if len(list) == 0 {
			nullAll(e.cols, rep, def, out)
			return nil
		}
		for i, x := range list {
			r := rep
			if i > 0 {
				r = e.rep
			}
			if err := e.elem.emit(x, r, def+1, out); err != nil {
				return err
			}
		}
		return nil
	}
	m, ok := v.(*table.Map)
	if !ok || m == nil || len(m.Keys) != len(m.Values) {
		return fmt.Errorf("column %s: value %T is not a map", e.name, v)
	}
	if len(m.Keys) == 0 {
		nullAll(e.cols, rep, def, out)
		return nil
	}
	for i := range m.Keys {
		r := rep
		if i > 0 {
			r = e.rep
		}
		if err := e.key.emit(m.Keys[i], r, def+1, out); err != nil {
			return err
		}
		if err := e.elem.emit(m.Values[i], r, def+1, out); err != nil {
			return err
		}
	}
	return nil
}

// buildEmitter mirrors parquetNode: same column order, so leaf column
// numbers line up with the schema parquet-go derives.
func buildEmitter(t table.DataType, name string, rep int, next *int) (emitter, error) {
	start := *next
	cols := func() []int {
		out := make([]int, 0, *next-start)
		for i := start; i < *next; i++ {
			out = append(out, i)
		}
		return out
	}
	switch t.Root {
	case table.TypeRow:
		e := &rowEm{optional: t.Nullable, name: name}
		for _, f := range t.Fields {
			sub, err := buildEmitter(f.Type, name+"."+f.Name, rep, next)
			if err != nil {
				return nil, err
			}
			e.fields = append(e.fields, sub)
		}
		e.cols = cols()
		return e, nil
	case table.TypeArray:
		el, err := buildEmitter(*t.Element, name+".element", rep+1, next)
		if err != nil {
			return nil, err
		}
		return &repEm{optional: t.Nullable, rep: rep + 1, elem: el, cols: cols(), name: name}, nil
	case table.TypeMap, table.TypeMultiset:
		kt, vt := t.Key, t.Value
		if t.Root == table.TypeMultiset {
			kt, vt = t.Element, &table.DataType{Root: table.TypeInt}
		}
		k, err := buildEmitter(kt.WithNullable(false), name+".key", rep+1, next)
		if err != nil {
			return nil, err
		}
		v, err := buildEmitter(*vt, name+".value", rep+1, next)
		if err != nil {
			return nil, err
		}
		return &repEm{optional: t.Nullable, rep: rep + 1, key: k, elem: v, cols: cols(), name: name}, nil
	}
	enc, err := leafEncoder(t)
	if err != nil {
		return nil, fmt.Errorf("column %s: %w", name, err)
	}
	e := &leafEm{col: *next, optional: t.Nullable, enc: enc, name: name}
	*next++
	return e, nil
}

// compressionCodec maps file.compression (and the zstd level) to a codec.
func compressionCodec(o *table.Options) (compress.Codec, error) {
	name := strings.ToLower(o.FileCompression)
	switch name {
	case "zstd":
		level := o.FileCompressionZstdLevel
		// klauspost/compress offers four speeds; map zstd levels onto them
		// as its EncoderLevelFromZstd does.
		var l zstd.Level
		switch {
		case level < 3:
			l = zstd.SpeedFastest
		case level < 6:
			l = zstd.SpeedDefault
		case level < 10:
			l = zstd.SpeedBetterCompression
		default:
			l = zstd.SpeedBestCompression
		}
		return &zstd.Codec{Level: l}, nil
	case "snappy":
		return &snappy.Codec{}, nil
	case "gzip":
		return &gzip.Codec{}, nil
	case "lz4":
		return &lz4.Codec{}, nil
	case "none", "uncompressed":
		return &uncompressed.Codec{}, nil
	}
	return nil, fmt.Errorf("file.compression %q is not supported", name)
}

func sizeOption(options map[string]string, key string, def int64) (int64, error) {
	v, ok := options[key]
	if !ok {
		return def, nil
	}
	n, err := parseMemorySize(v)
	if err != nil {
		return 0, fmt.Errorf("invalid %s %q: %w", key, v, err)
	}
	return n, nil
}

// parseMemorySize parses Paimon memory sizes: a number with an optional
// unit (b, kb, mb, gb, k, m, g, with or without "i"/space).
func parseMemorySize(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, err
	}
	switch strings.TrimSpace(s[i:]) {
	case "", "b", "bytes":
		return n, nil
	case "k", "kb", "kib", "kibibytes":
		return n << 10, nil
	case "m", "mb", "mib", "mebibytes":
		return n << 20, nil
	case "g", "gb", "gib", "gibibytes":
		return n << 30, nil
	case "t", "tb", "tib":
		return n << 40, nil
	}
	return 0, fmt.Errorf("unknown unit")
}

// FileStats is what DataFileMeta needs about a written file. Value stats
// cover every column written in schema order (ValueStatsCols); a caller
// that wants Java's dense form drops the columns whose min, max and null
// count are all nil.
type FileStats struct {
	Path           string
	RowCount       int64
	FileSize       int64
	MinKey, MaxKey table.Row // KeyValue files only
	KeyStats       Stats     // KeyValue files only, one per trimmed key
	ValueStats     Stats
	ValueStatsCols []string
	MinSeq, MaxSeq int64 // KeyValue files only
	DeleteRowCount int64 // -U and -D records
}

// pqWriter writes rows of a fixed column layout into one Parquet file.
type pqWriter struct {
	path      string
	out       fileio.Writer
	tail      *tailWriter
	layout    *pqLayout
	w         *parquet.Writer //nolint:staticcheck // SA1019: the row path writes parquet.Rows through it; GenericWriter would need a Go type per schema
	ems       []emitter
	nLeaves   int
	cols      [][]parquet.Value
	batch     []parquet.Row
	buffered  int64 // estimated bytes in the current row group
	blockSize int64
	rows      int64
	colls     []*colCollector
	closed    bool
	bs        *batchState // set by the first batch written
}

// formatWriter is one data file being written in its format (Parquet:
// pqWriter, ORC: orcFileWriter); KeyValueWriter and RowWriter add the
// Paimon layout and file statistics on top.
type formatWriter interface {
	write(row []any) error
	initBatch(fields table.RowType) error
	writeBatch(b *Batch, from, to int) error
	close() (int64, error)
	abort() error
	stats(from, to int) Stats
	estimated() int64
	rowCount() int64
	filePath() string
	batchDec(j int) decodeFunc
}

func (w *pqWriter) rowCount() int64           { return w.rows }
func (w *pqWriter) filePath() string          { return w.path }
func (w *pqWriter) batchDec(j int) decodeFunc { return w.bs.decs[j] }

// newFormatWriter parses a writer's options (the table's, with any
// per-level values applied) through table.ParseOptions, which holds the
// parsers and defaults of file.format, file.compression and its zstd
// level, and opens a writer of that format: Parquet or ORC; another
// format is refused.
func newFormatWriter(ctx context.Context, fio fileio.FileIO, path string, fields table.RowType, options map[string]string) (formatWriter, error) {
	topts, err := table.ParseOptions(options)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	switch topts.FileFormat {
	case "parquet":
		return newPQWriter(ctx, fio, path, fields, topts, options)
	case "orc":
		return newORCWriter(ctx, fio, path, fields, topts, options)
	}
	return nil, fmt.Errorf("data file %s: not supported: file.format=%s", path, topts.FileFormat)
}

// newPQWriter opens a Parquet writer; topts are options parsed by
// newFormatWriter, options the same map (for the Parquet and statistics
// keys only this package reads).
func newPQWriter(ctx context.Context, fio fileio.FileIO, path string, fields table.RowType, topts *table.Options, options map[string]string) (*pqWriter, error) {
	layout, err := parquetSchema(fields)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	codec, err := compressionCodec(topts)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	blockSize, err := sizeOption(options, "parquet.block.size", defaultBlockSize)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	pageSize, err := sizeOption(options, "parquet.page.size", defaultPageSize)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	modes, err := statsModes(fields, options)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	w := &pqWriter{path: path, layout: layout, blockSize: blockSize}
	next := 0
	for _, f := range fields {
		e, err := buildEmitter(f.Type, f.Name, 0, &next)
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", path, err)
		}
		w.ems = append(w.ems, e)
	}
	w.nLeaves = next
	if n := len(layout.schema.Columns()); n != next {
		return nil, fmt.Errorf("data file %s: schema has %d leaf columns, emitters %d", path, n, next)
	}
	for i, f := range fields {
		w.colls = append(w.colls, newCollector(f.Type, modes[i]))
	}
	w.cols = make([][]parquet.Value, next)
	out, err := fio.Create(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("create data file %s: %w", path, err)
	}
	w.out = out
	w.tail = &tailWriter{w: out}
	w.w = parquet.NewWriter(w.tail,
		layout.schema,
		parquet.Compression(codec),
		parquet.DataPageVersion(1),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		parquet.PageBufferSize(int(pageSize)),
		// Page-header statistics would repeat the decimal ordering problem
		// dropUnorderedStats fixes in the footer; Java filters with the
		// footer and column indexes only.
		parquet.DataPageStatistics(false),
		parquet.DictionaryMaxBytes(dictionaryMaxBytes),
		parquet.CreatedBy("compactd", "0.1", "compactd"),
	)
	return w, nil
}

func (w *pqWriter) write(row []any) error {
	for i := range w.cols {
		w.cols[i] = w.cols[i][:0]
	}
	for i, e := range w.ems {
		if err := e.emit(row[i], 0, 0, w.cols); err != nil {
			return fmt.Errorf("write data file %s: %w", w.path, err)
		}
	}
	n := 0
	for _, c := range w.cols {
		n += len(c)
	}
	var pr parquet.Row
	if len(w.batch) < cap(w.batch) {
		pr = w.batch[:len(w.batch)+1][len(w.batch)][:0]
	}
	for _, c := range w.cols {
		for _, v := range c {
			pr = append(pr, v)
			w.buffered += valueSize(v)
		}
	}
	for i, c := range w.colls {
		c.add(row[i])
	}
	w.batch = append(w.batch, pr)
	w.rows++
	if len(w.batch) >= writeBatch {
		return w.flushBatch()
	}
	return nil
}

func (w *pqWriter) flushBatch() error {
	if len(w.batch) == 0 {
		return nil
	}
	if _, err := w.w.WriteRows(w.batch); err != nil {
		return fmt.Errorf("write data file %s: %w", w.path, err)
	}
	w.batch = w.batch[:0]
	if w.buffered >= w.blockSize {
		if err := w.w.Flush(); err != nil {
			return fmt.Errorf("write data file %s: %w", w.path, err)
		}
		w.buffered = 0
	}
	return nil
}

func (w *pqWriter) close() (int64, error) {
	if w.closed {
		return 0, errors.New("data file writer already closed")
	}
	w.closed = true
	err := w.flushBatch()
	if err == nil && w.buffered > 0 {
		err = w.w.Flush()
	}
	if err == nil {
		w.tail.hold = true
		err = w.w.Close()
	}
	if err == nil {
		err = w.tail.finish(w.layout.ids, w.layout.mapKV)
	}
	if err == nil {
		err = w.out.Close()
	}
	if err != nil {
		w.out.Abort()
		return 0, fmt.Errorf("write data file %s: %w", w.path, err)
	}
	return w.tail.n, nil
}

func (w *pqWriter) abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.out.Abort()
}

func (w *pqWriter) stats(from, to int) Stats {
	s := Stats{Min: make(table.Row, to-from), Max: make(table.Row, to-from), NullCounts: make([]*int64, to-from)}
	for i := from; i < to; i++ {
		s.Min[i-from], s.Max[i-from], s.NullCounts[i-from] = w.colls[i].result()
	}
	return s
}

// KeyValueWriter writes one KeyValue data file of a primary-key table.
// Records must be given in key order, then sequence order; the caller rolls
// files (EstimatedSize) and assigns sequence numbers.
type KeyValueWriter struct {
	fw         formatWriter
	nKey       int
	row        []any
	stats      FileStats
	valueNames []string
	lastKey    table.Row
	fields     table.RowType // the KeyValue layout
}

// NewKeyValueWriter creates a Parquet KeyValue file at path with the layout
// of schema. options are the table options (file.compression,
// file.compression.zstd-level, parquet.block.size, parquet.page.size,
// metadata.stats-mode, fields.<f>.stats-mode, ...).
func NewKeyValueWriter(ctx context.Context, fio fileio.FileIO, path string, schema Schema, options map[string]string) (*KeyValueWriter, error) {
	fields, err := schema.KeyValueFields()
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	pq, err := newFormatWriter(ctx, fio, path, fields, options)
	if err != nil {
		return nil, err
	}
	w := &KeyValueWriter{fw: pq, nKey: len(schema.KeyNames), row: make([]any, len(fields)), fields: fields}
	for _, f := range schema.Fields {
		w.valueNames = append(w.valueNames, f.Name)
	}
	return w, nil
}

// Write appends a record.
func (w *KeyValueWriter) Write(kv table.KeyValue) error {
	if len(kv.Key) != w.nKey || len(kv.Value) != len(w.row)-w.nKey-2 {
		return fmt.Errorf("write data file %s: record has %d key and %d value fields, want %d and %d",
			w.fw.filePath(), len(kv.Key), len(kv.Value), w.nKey, len(w.row)-w.nKey-2)
	}
	copy(w.row, kv.Key)
	w.row[w.nKey] = kv.Seq
	w.row[w.nKey+1] = int8(kv.Kind)
	copy(w.row[w.nKey+2:], kv.Value)
	if err := w.fw.write(w.row); err != nil {
		return err
	}
	s := &w.stats
	if s.RowCount == 0 {
		s.MinKey = append(table.Row(nil), kv.Key...)
		s.MinSeq, s.MaxSeq = kv.Seq, kv.Seq
	}
	// The caller may reuse its key slice; keep our own copy of the last key.
	w.lastKey = append(w.lastKey[:0], kv.Key...)
	s.MinSeq = min(s.MinSeq, kv.Seq)
	s.MaxSeq = max(s.MaxSeq, kv.Seq)
	if !kv.Kind.IsAdd() {
		s.DeleteRowCount++
	}
	s.RowCount++
	return nil
}

// RowCount is the number of records written so far.
func (w *KeyValueWriter) RowCount() int64 { return w.stats.RowCount }

// EstimatedSize is the approximate uncompressed size written so far, for
// rolling files at target-file-size.
func (w *KeyValueWriter) EstimatedSize() int64 { return w.fw.estimated() }

// Close finishes the file and returns its statistics.
func (w *KeyValueWriter) Close() (*FileStats, error) {
	size, err := w.fw.close()
	if err != nil {
		return nil, err
	}
	s := w.stats
	s.Path = w.fw.filePath()
	s.FileSize = size
	s.MaxKey = append(table.Row(nil), w.lastKey...)
	s.KeyStats = w.fw.stats(0, w.nKey)
	s.ValueStats = w.fw.stats(w.nKey+2, len(w.row))
	s.ValueStatsCols = w.valueNames
	return &s, nil
}

// Abort discards the file.
func (w *KeyValueWriter) Abort() error { return w.fw.abort() }

// RowWriter writes one data file of an append table.
type RowWriter struct {
	fw     formatWriter
	names  []string
	n      int
	fields table.RowType
}

// NewRowWriter creates a Parquet data file of an append table with the
// given columns; options as for NewKeyValueWriter.
func NewRowWriter(ctx context.Context, fio fileio.FileIO, path string, fields table.RowType, options map[string]string) (*RowWriter, error) {
	pq, err := newFormatWriter(ctx, fio, path, fields, options)
	if err != nil {
		return nil, err
	}
	w := &RowWriter{fw: pq, n: len(fields), fields: fields}
	for _, f := range fields {
		w.names = append(w.names, f.Name)
	}
	return w, nil
}

// Write appends a row.
func (w *RowWriter) Write(row table.Row) error {
	if len(row) != w.n {
		return fmt.Errorf("write data file %s: row has %d fields, want %d", w.fw.filePath(), len(row), w.n)
	}
	return w.fw.write(row)
}

// RowCount is the number of rows written so far.
func (w *RowWriter) RowCount() int64 { return w.fw.rowCount() }

// EstimatedSize is the approximate uncompressed size written so far.
func (w *RowWriter) EstimatedSize() int64 { return w.fw.estimated() }

// Close finishes the file and returns its statistics (no key or sequence
// fields: the caller assigns sequence numbers to append files).
func (w *RowWriter) Close() (*FileStats, error) {
	size, err := w.fw.close()
	if err != nil {
		return nil, err
	}
	s := &FileStats{Path: w.fw.filePath(), RowCount: w.fw.rowCount(), FileSize: size, ValueStatsCols: w.names}
	s.ValueStats = w.fw.stats(0, w.n)
	return s, nil
}

// Abort discards the file.
func (w *RowWriter) Abort() error { return w.fw.abort() }

func (w *pqWriter) estimated() int64 { return w.tail.n + w.buffered }

// valueSize estimates the encoded size of a value for row-group sizing.
func valueSize(v parquet.Value) int64 {
	if v.IsNull() {
		return 1
	}
	switch v.Kind() {
	case parquet.ByteArray:
		return 4 + int64(len(v.ByteArray()))
	case parquet.FixedLenByteArray:
		return int64(len(v.ByteArray()))
	case parquet.Int96:
		return 12
	case parquet.Boolean:
		return 1
	case parquet.Int32, parquet.Float:
		return 4
	}
	return 8
}
