package manifest

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/compactd/compactd/internal/orc"
)

// Format is how a table's metadata files (manifests, manifest lists, index
// manifests) are written: Paimon's manifest.format. Java reads every
// metadata file of a table with the reader of the table's format, so all
// of them must be written in it. The zero value is Avro with zstd.
type Format struct {
	// ORC selects manifest.format=orc, written with ORCOptions (from
	// table.ORCWriterOptions: manifest.compression unless orc.compress).
	ORC        bool
	ORCOptions orc.WriterOptions
	// Compression is the Avro codec: manifest.compression; "" = zstd.
	Compression string
}

// Avro is the Avro format with Paimon's manifest.compression value.
func Avro(compression string) Format { return Format{Compression: compression} }

// ORC is the ORC format with the given writer settings.
func ORC(opts orc.WriterOptions) Format { return Format{ORC: true, ORCOptions: opts} }

// Check reports why files of this format cannot be written (an Avro codec
// compactd has no writer for), before any is.
func (f Format) Check() error {
	if f.ORC {
		return nil
	}
	_, err := avroCodecName(f.Compression)
	return err
}

func (f Format) String() string {
	if f.ORC {
		return "orc/" + f.ORCOptions.Compression.String()
	}
	return "avro/" + f.Compression
}

// Paimon's field ids in ORC metadata files (the paimon.id attribute): a
// record's fields count from 0 (the top level's _VERSION is -1), and a
// list's element has SpecialFields' id for its field at depth 0.
const (
	orcIDAttribute   = "paimon.id"
	orcElementIDBase = (1<<31 - 1) / 4
	orcDepthLimit    = 1 << 10
)

// orcField is one field of an ORC metadata schema; its id is its
// position, less one at the top level (orcRecord).
type orcField struct {
	name string
	t    *orc.TypeDesc
}

func orcLeaf(k orc.Kind) *orc.TypeDesc { return &orc.TypeDesc{Kind: k} }

func orcList(elem *orc.TypeDesc) *orc.TypeDesc {
	return &orc.TypeDesc{Kind: orc.List, Children: []*orc.TypeDesc{elem}}
}

// orcRecord builds a STRUCT whose field k has paimon.id k+firstID (and a
// list field's element the id Java derives from it).
func orcRecord(firstID int, fields ...orcField) *orc.TypeDesc {
	t := &orc.TypeDesc{Kind: orc.Struct}
	for k, f := range fields {
		id := k + firstID
		f.t.Attributes = map[string]string{orcIDAttribute: strconv.Itoa(id)}
		if f.t.Kind == orc.List {
			f.t.Children[0].Attributes = map[string]string{orcIDAttribute: strconv.Itoa(orcElementIDBase + id*orcDepthLimit + 1)}
		}
		t.Fields = append(t.Fields, f.name)
		t.Children = append(t.Children, f.t)
	}
	return t
}

func orcStatsType() *orc.TypeDesc {
	return orcRecord(0,
		orcField{"_MIN_VALUES", orcLeaf(orc.Binary)},
		orcField{"_MAX_VALUES", orcLeaf(orc.Binary)},
		orcField{"_NULL_COUNTS", orcList(orcLeaf(orc.Long))})
}

// The ORC schemas Java Paimon 1.4 writes (checked against its files in
// testdata/orc-1.4): the Avro layouts' fields with their Paimon types
// (TINYINT _KIND and _FILE_SOURCE, TIMESTAMP(3) _CREATION_TIME).
func orcManifestSchema(withSequences bool) *orc.TypeDesc {
	file := []orcField{
		{"_FILE_NAME", orcLeaf(orc.String)},
		{"_FILE_SIZE", orcLeaf(orc.Long)},
		{"_ROW_COUNT", orcLeaf(orc.Long)},
		{"_MIN_KEY", orcLeaf(orc.Binary)},
		{"_MAX_KEY", orcLeaf(orc.Binary)},
		{"_KEY_STATS", orcStatsType()},
		{"_VALUE_STATS", orcStatsType()},
		{"_MIN_SEQUENCE_NUMBER", orcLeaf(orc.Long)},
		{"_MAX_SEQUENCE_NUMBER", orcLeaf(orc.Long)},
		{"_SCHEMA_ID", orcLeaf(orc.Long)},
		{"_LEVEL", orcLeaf(orc.Int)},
		{"_EXTRA_FILES", orcList(orcLeaf(orc.String))},
		{"_CREATION_TIME", orcLeaf(orc.Timestamp)},
		{"_DELETE_ROW_COUNT", orcLeaf(orc.Long)},
		{"_EMBEDDED_FILE_INDEX", orcLeaf(orc.Binary)},
		{"_FILE_SOURCE", orcLeaf(orc.Byte)},
		{"_VALUE_STATS_COLS", orcList(orcLeaf(orc.String))},
		{"_EXTERNAL_PATH", orcLeaf(orc.String)},
		{"_FIRST_ROW_ID", orcLeaf(orc.Long)},
		{"_WRITE_COLS", orcList(orcLeaf(orc.String))},
	}
	if withSequences {
		file = append(file, orcField{"_WRITE_COLS_SEQUENCES", orcList(orcLeaf(orc.Long))})
	}
	return orcRecord(-1,
		orcField{"_VERSION", orcLeaf(orc.Int)},
		orcField{"_KIND", orcLeaf(orc.Byte)},
		orcField{"_PARTITION", orcLeaf(orc.Binary)},
		orcField{"_BUCKET", orcLeaf(orc.Int)},
		orcField{"_TOTAL_BUCKETS", orcLeaf(orc.Int)},
		orcField{"_FILE", orcRecord(0, file...)})
}

func orcManifestListSchema() *orc.TypeDesc {
	return orcRecord(-1,
		orcField{"_VERSION", orcLeaf(orc.Int)},
		orcField{"_FILE_NAME", orcLeaf(orc.String)},
		orcField{"_FILE_SIZE", orcLeaf(orc.Long)},
		orcField{"_NUM_ADDED_FILES", orcLeaf(orc.Long)},
		orcField{"_NUM_DELETED_FILES", orcLeaf(orc.Long)},
		orcField{"_PARTITION_STATS", orcStatsType()},
		orcField{"_SCHEMA_ID", orcLeaf(orc.Long)},
		orcField{"_MIN_BUCKET", orcLeaf(orc.Int)},
		orcField{"_MAX_BUCKET", orcLeaf(orc.Int)},
		orcField{"_MIN_LEVEL", orcLeaf(orc.Int)},
		orcField{"_MAX_LEVEL", orcLeaf(orc.Int)},
		orcField{"_MIN_ROW_ID", orcLeaf(orc.Long)},
		orcField{"_MAX_ROW_ID", orcLeaf(orc.Long)})
}

// orcIndexManifestSchema always has _GLOBAL_INDEX, as 1.4 writes it;
// _SOURCE_META (2.0) only when an entry carries one.
func orcIndexManifestSchema(withSourceMeta bool) *orc.TypeDesc {
	global := []orcField{
		{"_ROW_RANGE_START", orcLeaf(orc.Long)},
		{"_ROW_RANGE_END", orcLeaf(orc.Long)},
		{"_INDEX_FIELD_ID", orcLeaf(orc.Int)},
		{"_EXTRA_FIELD_IDS", orcList(orcLeaf(orc.Int))},
		{"_INDEX_META", orcLeaf(orc.Binary)},
	}
	if withSourceMeta {
		global = append(global, orcField{"_SOURCE_META", orcLeaf(orc.Binary)})
	}
	// Java names the deletion-vector range fields f0..f2 (an anonymous
	// ROW type) and the fourth _CARDINALITY.
	ranges := orcRecord(0,
		orcField{"f0", orcLeaf(orc.String)},
		orcField{"f1", orcLeaf(orc.Int)},
		orcField{"f2", orcLeaf(orc.Int)},
		orcField{"_CARDINALITY", orcLeaf(orc.Long)})
	return orcRecord(-1,
		orcField{"_VERSION", orcLeaf(orc.Int)},
		orcField{"_KIND", orcLeaf(orc.Byte)},
		orcField{"_PARTITION", orcLeaf(orc.Binary)},
		orcField{"_BUCKET", orcLeaf(orc.Int)},
		orcField{"_INDEX_TYPE", orcLeaf(orc.String)},
		orcField{"_FILE_NAME", orcLeaf(orc.String)},
		orcField{"_FILE_SIZE", orcLeaf(orc.Long)},
		orcField{"_ROW_COUNT", orcLeaf(orc.Long)},
		orcField{"_DELETIONS_VECTORS_RANGES", orcList(ranges)},
		orcField{"_EXTERNAL_PATH", orcLeaf(orc.String)},
		orcField{"_GLOBAL_INDEX", orcRecord(0, global...)})
}

// writeORCFile writes n rows, row(i) giving row i's top-level values in
// the generic form orc.Writer takes.
func writeORCFile(schema *orc.TypeDesc, opts orc.WriterOptions, n int, row func(i int) ([]any, error)) ([]byte, error) {
	var buf bytes.Buffer
	w, err := orc.NewWriter(&buf, schema, opts)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		r, err := row(i)
		if err == nil {
			err = w.Write(r)
		}
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Nullable values in the writer's generic form: a nil pointer or slice is
// a null, never a typed nil that would read as present.
func orcOptLong(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

func orcOptInt(v *int32) any {
	if v == nil {
		return nil
	}
	return *v
}

func orcOptString(v *string) any {
	if v == nil {
		return nil
	}
	return *v
}

func orcOptBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// orcListValue is a LIST value: a nil slice is null, else one element per
// item, as f gives it.
func orcListValue[T any](a []T, f func(T) any) any {
	if a == nil {
		return nil
	}
	out := make([]any, len(a))
	for i, x := range a {
		out[i] = f(x)
	}
	return out
}

func orcAny[T any](x T) any { return x }

// orcStrings is a list of strings; nil stays null unless required (a
// non-null Avro array such as _EXTRA_FILES, written empty).
func orcStrings(a []string, required bool) any {
	if a == nil && required {
		a = []string{}
	}
	return orcListValue(a, orcAny[string])
}

func orcStats(s SimpleStats) []any {
	return []any{orcBytes(s.MinValues), orcBytes(s.MaxValues), orcListValue(s.NullCounts, orcOptLong)}
}

// orcBytes is a required binary: a nil slice is the empty row, as the Avro
// path writes it.
func orcBytes(b []byte) []byte { return orEmptyRow(b) }

// orcMillis is _CREATION_TIME's epoch milliseconds (wall clock, as Java
// stores a LocalDateTime) as an ORC TIMESTAMP value.
func orcMillis(ms *int64) any {
	if ms == nil {
		return nil
	}
	secs, rem := *ms/1000, *ms%1000
	if rem < 0 {
		secs, rem = secs-1, rem+1000
	}
	return orc.Time{Secs: secs, Nanos: int32(rem) * 1e6}
}

func checkKind(k FileKind) error {
	if k != FileKindAdd && k != FileKindDelete {
		return fmt.Errorf("invalid kind %d", k)
	}
	return nil
}

func encodeORCManifest(entries []Entry, opts orc.WriterOptions, withSeq bool) ([]byte, error) {
	return writeORCFile(orcManifestSchema(withSeq), opts, len(entries), func(i int) ([]any, error) {
		e := &entries[i]
		if err := checkKind(e.Kind); err != nil {
			return nil, err
		}
		m := &e.File
		var src any
		if m.FileSource != nil {
			src = int64(*m.FileSource)
		}
		file := []any{
			m.FileName, m.FileSize, m.RowCount, orcBytes(m.MinKey), orcBytes(m.MaxKey),
			orcStats(m.KeyStats), orcStats(m.ValueStats),
			m.MinSequenceNumber, m.MaxSequenceNumber, m.SchemaID, m.Level,
			orcStrings(m.ExtraFiles, true), orcMillis(m.CreationTime), orcOptLong(m.DeleteRowCount),
			orcOptBytes(m.EmbeddedIndex), src, orcStrings(m.ValueStatsCols, false), orcOptString(m.ExternalPath),
			orcOptLong(m.FirstRowID), orcStrings(m.WriteCols, false),
		}
		if withSeq {
			file = append(file, orcListValue(m.WriteColsSequences, orcAny[int64]))
		}
		return []any{int32(manifestVersion), int64(e.Kind), orcBytes(e.Partition), e.Bucket, e.TotalBuckets, file}, nil
	})
}

func encodeORCList(metas []ListEntry, opts orc.WriterOptions) ([]byte, error) {
	return writeORCFile(orcManifestListSchema(), opts, len(metas), func(i int) ([]any, error) {
		m := &metas[i]
		return []any{
			int32(manifestVersion), m.FileName, m.FileSize, m.NumAddedFiles, m.NumDeletedFiles,
			orcStats(m.PartitionStats), m.SchemaID,
			orcOptInt(m.MinBucket), orcOptInt(m.MaxBucket), orcOptInt(m.MinLevel), orcOptInt(m.MaxLevel),
			orcOptLong(m.MinRowID), orcOptLong(m.MaxRowID),
		}, nil
	})
}

func encodeORCIndex(entries []IndexEntry, opts orc.WriterOptions) ([]byte, error) {
	withSource := false
	for i := range entries {
		if g := entries[i].IndexFile.GlobalIndex; g != nil && g.SourceMeta != nil {
			withSource = true
		}
	}
	return writeORCFile(orcIndexManifestSchema(withSource), opts, len(entries), func(i int) ([]any, error) {
		e := &entries[i]
		if err := checkKind(e.Kind); err != nil {
			return nil, err
		}
		f := &e.IndexFile
		ranges := orcListValue(f.DeletionVectors, func(dv DeletionVectorMeta) any {
			return []any{dv.DataFileName, dv.Offset, dv.Length, orcOptLong(dv.Cardinality)}
		})
		var global any
		if g := f.GlobalIndex; g != nil {
			gv := []any{g.RowRangeStart, g.RowRangeEnd, g.IndexFieldID, orcListValue(g.ExtraFieldIDs, orcAny[int32]), orcOptBytes(g.IndexMeta)}
			if withSource {
				gv = append(gv, orcOptBytes(g.SourceMeta))
			}
			global = gv
		}
		return []any{
			int32(indexManifestVersion), int64(e.Kind), orcBytes(e.Partition), e.Bucket, f.IndexType, f.FileName,
			f.FileSize, f.RowCount, ranges, orcOptString(f.ExternalPath), global,
		}, nil
	})
}
