package manifest

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/fileio"
)

// manifestVersion is the _VERSION of manifest entries and manifest lists.
const manifestVersion = 2

// Writer schemas, byte for byte as Java 1.3–2.0 writes them into the header
// (checked against Java-written fixture files). Nullable fields are
// ["null", T] unions: Java's reader takes branch 1 as the value.
const (
	avroStatsFields = `"fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]`

	manifestEntrySchemaHead = `{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[` +
		`{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},` +
		`{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},` +
		`{"name":"_FILE","type":{"type":"record","name":"record__FILE","fields":[` +
		`{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},` +
		`{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},` +
		`{"name":"_KEY_STATS","type":{"type":"record","name":"record__FILE__KEY_STATS",` + avroStatsFields + `}},` +
		`{"name":"_VALUE_STATS","type":{"type":"record","name":"record__FILE__VALUE_STATS",` + avroStatsFields + `}},` +
		`{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},` +
		`{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},` +
		`{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},` +
		`{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},` +
		`{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},` +
		`{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},` +
		`{"name":"_FILE_SOURCE","type":["null","int"],"default":null},` +
		`{"name":"_VALUE_STATS_COLS","type":["null",{"type":"array","items":"string"}],"default":null},` +
		`{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},` +
		`{"name":"_FIRST_ROW_ID","type":["null","long"],"default":null},` +
		`{"name":"_WRITE_COLS","type":["null",{"type":"array","items":"string"}],"default":null}`

	// manifestEntrySchema is the 20-field _FILE layout of 1.3–2.0.
	manifestEntrySchema = manifestEntrySchemaHead + `]}}]}`

	// manifestEntrySchemaWithSequences adds HEAD's 21st field; used only
	// when an entry carries WriteColsSequences, so nothing read is lost.
	manifestEntrySchemaWithSequences = manifestEntrySchemaHead +
		`,{"name":"_WRITE_COLS_SEQUENCES","type":["null",{"type":"array","items":"long"}],"default":null}]}}]}`
)

// Read reads a data or changelog manifest file in any layout
// written by Paimon 0.8 to 2.x.
func Read(ctx context.Context, fio fileio.FileIO, path string) ([]Entry, error) {
	return readMetadataFile(ctx, fio, path, "manifest", Decode)
}

// Decode decodes the bytes of a manifest file.
func Decode(data []byte) ([]Entry, error) {
	s := &slab{}
	return decodeEntries(data, func(v any) (Entry, error) { return decodeEntry(v, s) })
}

// decodeEntry decodes one entry, its bytes and optional numbers copied
// into s (nothing aliases the decoded block).
func decodeEntry(v any, s *slab) (Entry, error) {
	r, err := topRecord(v, "manifest entry")
	if err != nil {
		return Entry{}, err
	}
	r.slab = s
	if ver := r.int32("_VERSION"); r.err == nil && ver != manifestVersion {
		return Entry{}, fmt.Errorf("manifest entry _VERSION %d, only %d is supported (Java: please recreate the table)", ver, manifestVersion)
	}
	var e Entry
	e.Kind = r.fileKind()
	e.Partition = r.sharedBytes("_PARTITION") // a manifest holds few partitions
	e.Bucket = r.int32("_BUCKET")
	e.TotalBuckets = r.int32("_TOTAL_BUCKETS")
	if fr := r.record("_FILE", true); fr != nil {
		e.File = decodeDataFileMeta(fr)
		r.done(fr)
	}
	if r.err != nil {
		return Entry{}, r.err
	}
	return e, nil
}

func decodeDataFileMeta(r *avroFieldReader) DataFileMeta {
	m := DataFileMeta{
		FileName:          r.string("_FILE_NAME"),
		FileSize:          r.int64("_FILE_SIZE"),
		RowCount:          r.int64("_ROW_COUNT"),
		MinKey:            r.bytes("_MIN_KEY"),
		MaxKey:            r.bytes("_MAX_KEY"),
		KeyStats:          r.simpleStats("_KEY_STATS"),
		ValueStats:        r.simpleStats("_VALUE_STATS"),
		MinSequenceNumber: r.int64("_MIN_SEQUENCE_NUMBER"),
		MaxSequenceNumber: r.int64("_MAX_SEQUENCE_NUMBER"),
		SchemaID:          r.int64("_SCHEMA_ID"),
		Level:             r.int32("_LEVEL"),
		ExtraFiles:        r.stringArray("_EXTRA_FILES", true),
		CreationTime:      r.optInt64("_CREATION_TIME"),
		DeleteRowCount:    r.optInt64("_DELETE_ROW_COUNT"),
		EmbeddedIndex:     r.optBytes("_EMBEDDED_FILE_INDEX"),
		ValueStatsCols:    r.stringArray("_VALUE_STATS_COLS", false),
		ExternalPath:      r.optString("_EXTERNAL_PATH"),
		FirstRowID:        r.optInt64("_FIRST_ROW_ID"),
		WriteCols:         r.stringArray("_WRITE_COLS", false),
	}
	m.FileSource = r.fileSource("_FILE_SOURCE")
	if a := r.array("_WRITE_COLS_SEQUENCES"); a != nil {
		m.WriteColsSequences = make([]int64, len(a))
		for i, e := range a {
			x, ok := e.(int64)
			if !ok {
				r.failf("field _WRITE_COLS_SEQUENCES[%d]: want long, have %T", i, e)
				break
			}
			m.WriteColsSequences[i] = x
		}
	}
	return m
}

// Encode encodes entries as a manifest file in the 1.3–2.0 layout, in
// format f.
func Encode(entries []Entry, f Format) ([]byte, error) {
	withSeq := false
	for i := range entries {
		if entries[i].File.WriteColsSequences != nil {
			withSeq = true
			break
		}
	}
	if f.ORC {
		return encodeORCManifest(entries, f.ORCOptions, withSeq)
	}
	codec, err := avroCodecName(f.Compression)
	if err != nil {
		return nil, err
	}
	schema := manifestEntrySchema
	if withSeq {
		schema = manifestEntrySchemaWithSequences
	}
	return writeAvroFile(schema, codec, len(entries), func(w *avroWriter, i int) error {
		e := &entries[i]
		if e.Kind != FileKindAdd && e.Kind != FileKindDelete {
			return fmt.Errorf("entry %d: invalid kind %d", i, e.Kind)
		}
		w.int(manifestVersion)
		w.int(int32(e.Kind))
		w.bytes(orEmptyRow(e.Partition))
		w.int(e.Bucket)
		w.int(e.TotalBuckets)
		encodeDataFileMeta(w, &e.File, withSeq)
		return nil
	})
}

func encodeDataFileMeta(w *avroWriter, m *DataFileMeta, withSeq bool) {
	w.string(m.FileName)
	w.long(m.FileSize)
	w.long(m.RowCount)
	w.bytes(orEmptyRow(m.MinKey))
	w.bytes(orEmptyRow(m.MaxKey))
	w.simpleStats(m.KeyStats)
	w.simpleStats(m.ValueStats)
	w.long(m.MinSequenceNumber)
	w.long(m.MaxSequenceNumber)
	w.long(m.SchemaID)
	w.int(m.Level)
	w.stringArray(m.ExtraFiles)
	w.optLong(m.CreationTime)
	w.optLong(m.DeleteRowCount)
	w.optBytes(m.EmbeddedIndex)
	if m.FileSource == nil {
		w.null()
	} else {
		w.present()
		w.int(int32(*m.FileSource))
	}
	w.optStringArray(m.ValueStatsCols)
	w.optString(m.ExternalPath)
	w.optLong(m.FirstRowID)
	w.optStringArray(m.WriteCols)
	if withSeq {
		if m.WriteColsSequences == nil {
			w.null()
		} else {
			w.present()
			if len(m.WriteColsSequences) > 0 {
				w.long(int64(len(m.WriteColsSequences)))
				for _, s := range m.WriteColsSequences {
					w.long(s)
				}
			}
			w.long(0)
		}
	}
}

// Write writes entries as a new manifest file and returns its size,
// the _FILE_SIZE its manifest-list row must carry.
func Write(ctx context.Context, fio fileio.FileIO, path string, entries []Entry, f Format) (int64, error) {
	return writeMetadataFile(ctx, fio, path, "manifest", func() ([]byte, error) { return Encode(entries, f) })
}
