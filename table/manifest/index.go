package manifest

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/fileio"
)

// indexManifestVersion is the _VERSION of index-manifest entries.
const indexManifestVersion = 1

// Index types found in index manifests.
const (
	IndexTypeHash            = "HASH"
	IndexTypeDeletionVectors = "DELETION_VECTORS"
)

// IndexEntry is one record of an index manifest: an index file of a
// partition and bucket. Index manifests list the full live set, so Java
// only stores ADD entries.
type IndexEntry struct {
	Kind      FileKind
	Partition []byte // serialized BinaryRow
	Bucket    int32
	IndexFile IndexFileMeta
}

// IndexFileMeta describes one file under index/.
type IndexFileMeta struct {
	IndexType string
	FileName  string
	FileSize  int64
	// RowCount is the number of hashes (HASH) or of data files with a
	// deletion vector (DELETION_VECTORS).
	RowCount int64
	// DeletionVectors lists, in file order, where each data file's vector
	// lives inside a DELETION_VECTORS file; nil for other index types.
	DeletionVectors []DeletionVectorMeta
	ExternalPath    *string          // since 1.3
	GlobalIndex     *GlobalIndexMeta // since 1.4
}

// DeletionVectorMeta locates one data file's deletion vector.
type DeletionVectorMeta struct {
	DataFileName string // f0
	Offset       int32  // f1: offset of the vector's size field
	Length       int32  // f2: vector length without size and CRC
	Cardinality  *int64 // deleted rows; since 1.0
}

// GlobalIndexMeta is the _GLOBAL_INDEX record of global index files.
type GlobalIndexMeta struct {
	RowRangeStart int64
	RowRangeEnd   int64
	IndexFieldID  int32
	ExtraFieldIDs []int32 // nil = null
	IndexMeta     []byte  // nil = null
	SourceMeta    []byte  // nil = null; since 2.0
}

const (
	indexManifestSchemaHead = `{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[` +
		`{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},` +
		`{"name":"_BUCKET","type":"int"},{"name":"_INDEX_TYPE","type":"string"},{"name":"_FILE_NAME","type":"string"},` +
		`{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},` +
		`{"name":"_DELETIONS_VECTORS_RANGES","type":["null",{"type":"array","items":["null",{"type":"record","name":"record__DELETIONS_VECTORS_RANGES","fields":[` +
		`{"name":"f0","type":"string"},{"name":"f1","type":"int"},{"name":"f2","type":"int"},` +
		`{"name":"_CARDINALITY","type":["null","long"],"default":null}]}]}],"default":null},` +
		`{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null}`

	// indexManifestSchema is the 1.3 layout, written when no entry has a
	// global index.
	indexManifestSchema = indexManifestSchemaHead + `]}`

	// indexManifestSchemaGlobal is the 2.0 layout with _GLOBAL_INDEX.
	indexManifestSchemaGlobal = indexManifestSchemaHead +
		`,{"name":"_GLOBAL_INDEX","type":["null",{"type":"record","name":"record__GLOBAL_INDEX","fields":[` +
		`{"name":"_ROW_RANGE_START","type":"long"},{"name":"_ROW_RANGE_END","type":"long"},{"name":"_INDEX_FIELD_ID","type":"int"},` +
		`{"name":"_EXTRA_FIELD_IDS","type":["null",{"type":"array","items":"int"}],"default":null},` +
		`{"name":"_INDEX_META","type":["null","bytes"],"default":null},` +
		`{"name":"_SOURCE_META","type":["null","bytes"],"default":null}]}],"default":null}]}`
)

// ReadIndex reads an index manifest in any layout from 0.8 on.
func ReadIndex(ctx context.Context, fio fileio.FileIO, path string) ([]IndexEntry, error) {
	return readMetadataFile(ctx, fio, path, "index manifest", DecodeIndex)
}

// DecodeIndex decodes the bytes of an index manifest.
func DecodeIndex(data []byte) ([]IndexEntry, error) {
	return decodeEntries(data, decodeIndexEntry)
}

func decodeIndexEntry(v any) (IndexEntry, error) {
	r, err := topRecord(v, "index manifest entry")
	if err != nil {
		return IndexEntry{}, err
	}
	if ver := r.int32("_VERSION"); r.err == nil && ver != indexManifestVersion {
		return IndexEntry{}, fmt.Errorf("index manifest _VERSION %d, only %d is supported", ver, indexManifestVersion)
	}
	var e IndexEntry
	e.Kind = r.fileKind()
	e.Partition = r.bytes("_PARTITION")
	e.Bucket = r.int32("_BUCKET")
	e.IndexFile = IndexFileMeta{
		IndexType:    r.string("_INDEX_TYPE"),
		FileName:     r.string("_FILE_NAME"),
		FileSize:     r.int64("_FILE_SIZE"),
		RowCount:     r.int64("_ROW_COUNT"),
		ExternalPath: r.optString("_EXTERNAL_PATH"),
	}
	if a := r.array("_DELETIONS_VECTORS_RANGES"); a != nil {
		dvs := make([]DeletionVectorMeta, 0, len(a))
		for j, item := range a {
			rec, ok := item.(*avroRec)
			if !ok {
				r.failf("_DELETIONS_VECTORS_RANGES[%d]: want record, have %T", j, item)
				break
			}
			dr := &avroFieldReader{rec: rec, path: fmt.Sprintf("%s._DELETIONS_VECTORS_RANGES[%d]", r.path, j)}
			dvs = append(dvs, DeletionVectorMeta{
				DataFileName: dr.string("f0"),
				Offset:       dr.int32("f1"),
				Length:       dr.int32("f2"),
				Cardinality:  dr.optInt64("_CARDINALITY"),
			})
			r.done(dr)
		}
		e.IndexFile.DeletionVectors = dvs
	}
	if gr := r.record("_GLOBAL_INDEX", false); gr != nil {
		g := &GlobalIndexMeta{
			RowRangeStart: gr.int64("_ROW_RANGE_START"),
			RowRangeEnd:   gr.int64("_ROW_RANGE_END"),
			IndexFieldID:  gr.int32("_INDEX_FIELD_ID"),
			IndexMeta:     gr.optBytes("_INDEX_META"),
			SourceMeta:    gr.optBytes("_SOURCE_META"),
		}
		if a := gr.array("_EXTRA_FIELD_IDS"); a != nil {
			g.ExtraFieldIDs = make([]int32, len(a))
			for j, x := range a {
				id, ok := x.(int32)
				if !ok {
					gr.failf("_EXTRA_FIELD_IDS[%d]: want int, have %T", j, x)
					break
				}
				g.ExtraFieldIDs[j] = id
			}
		}
		r.done(gr)
		e.IndexFile.GlobalIndex = g
	}
	if r.err != nil {
		return IndexEntry{}, r.err
	}
	return e, nil
}

// EncodeIndex encodes index-manifest entries: the 1.3 layout, or
// the 2.0 layout with _GLOBAL_INDEX when an entry has a global index; in
// format f (ORC: the 1.4 layout, _GLOBAL_INDEX always present).
func EncodeIndex(entries []IndexEntry, f Format) ([]byte, error) {
	if f.ORC {
		return encodeORCIndex(entries, f.ORCOptions)
	}
	codec, err := avroCodecName(f.Compression)
	if err != nil {
		return nil, err
	}
	global := false
	for i := range entries {
		if entries[i].IndexFile.GlobalIndex != nil {
			global = true
			break
		}
	}
	schema := indexManifestSchema
	if global {
		schema = indexManifestSchemaGlobal
	}
	return writeAvroFile(schema, codec, len(entries), func(w *avroWriter, i int) error {
		e := &entries[i]
		if e.Kind != FileKindAdd && e.Kind != FileKindDelete {
			return fmt.Errorf("index entry %d: invalid kind %d", i, e.Kind)
		}
		f := &e.IndexFile
		w.int(indexManifestVersion)
		w.int(int32(e.Kind))
		w.bytes(orEmptyRow(e.Partition))
		w.int(e.Bucket)
		w.string(f.IndexType)
		w.string(f.FileName)
		w.long(f.FileSize)
		w.long(f.RowCount)
		if f.DeletionVectors == nil {
			w.null()
		} else {
			w.present()
			if len(f.DeletionVectors) > 0 {
				w.long(int64(len(f.DeletionVectors)))
				for _, dv := range f.DeletionVectors {
					w.present() // items are ["null", record]
					w.string(dv.DataFileName)
					w.int(dv.Offset)
					w.int(dv.Length)
					w.optLong(dv.Cardinality)
				}
			}
			w.long(0)
		}
		w.optString(f.ExternalPath)
		if global {
			g := f.GlobalIndex
			if g == nil {
				w.null()
				return nil
			}
			w.present()
			w.long(g.RowRangeStart)
			w.long(g.RowRangeEnd)
			w.int(g.IndexFieldID)
			if g.ExtraFieldIDs == nil {
				w.null()
			} else {
				w.present()
				if len(g.ExtraFieldIDs) > 0 {
					w.long(int64(len(g.ExtraFieldIDs)))
					for _, id := range g.ExtraFieldIDs {
						w.int(id)
					}
				}
				w.long(0)
			}
			w.optBytes(g.IndexMeta)
			w.optBytes(g.SourceMeta)
		}
		return nil
	})
}

// WriteIndex writes a new index manifest file and returns its size.
func WriteIndex(ctx context.Context, fio fileio.FileIO, path string, entries []IndexEntry, f Format) (int64, error) {
	return writeMetadataFile(ctx, fio, path, "index manifest", func() ([]byte, error) { return EncodeIndex(entries, f) })
}
