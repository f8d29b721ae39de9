package table

import (
	"context"
	"fmt"
	"slices"

	"github.com/compactd/compactd/fileio"
)

// indexManifestVersion is the _VERSION of index-manifest entries.
const indexManifestVersion = 1

// Index types found in index manifests.
const (
	IndexTypeHash            = "HASH"
	IndexTypeDeletionVectors = "DELETION_VECTORS"
)

// IndexManifestEntry is one record of an index manifest: an index file of a
// partition and bucket. Index manifests list the full live set, so Java
// only stores ADD entries.
type IndexManifestEntry struct {
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

// ReadIndexManifest reads an index manifest in any layout from 0.8 on.
func ReadIndexManifest(ctx context.Context, fio fileio.FileIO, path string) ([]IndexManifestEntry, error) {
	return readMetadataFile(ctx, fio, path, "index manifest", DecodeIndexManifest)
}

// DecodeIndexManifest decodes the bytes of an index manifest.
func DecodeIndexManifest(data []byte) ([]IndexManifestEntry, error) {
	return decodeEntries(data, decodeIndexManifestEntry)
}

func decodeIndexManifestEntry(v any) (IndexManifestEntry, error) {
	r, err := topRecord(v, "index manifest entry")
	if err != nil {
		return IndexManifestEntry{}, err
	}
	if ver := r.int32("_VERSION"); r.err == nil && ver != indexManifestVersion {
		return IndexManifestEntry{}, fmt.Errorf("index manifest _VERSION %d, only %d is supported", ver, indexManifestVersion)
	}
	var e IndexManifestEntry
	kind := r.int32("_KIND")
	switch FileKind(kind) {
	case FileKindAdd, FileKindDelete:
		e.Kind = FileKind(kind)
	default:
		r.failf("unknown _KIND %d", kind)
	}
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
		return IndexManifestEntry{}, r.err
	}
	return e, nil
}

// EncodeIndexManifest encodes index-manifest entries: the 1.3 layout, or
// the 2.0 layout with _GLOBAL_INDEX when an entry has a global index.
func EncodeIndexManifest(entries []IndexManifestEntry, compression string) ([]byte, error) {
	codec, err := avroCodecName(compression)
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

// WriteIndexManifest writes a new index manifest file and returns its size.
func WriteIndexManifest(ctx context.Context, fio fileio.FileIO, path string, entries []IndexManifestEntry, compression string) (int64, error) {
	return writeMetadataFile(ctx, fio, path, "index manifest", func() ([]byte, error) { return EncodeIndexManifest(entries, compression) })
}

// IndexChange replaces the index files of one type of a partition and
// bucket in the index manifest, as Java's IndexManifestFileHandler combines
// a fixed-bucket table's index files (BucketedCombiner): every entry of
// (Partition, Bucket, IndexType) goes, the ADD entries of Files come. Base
// are the entries the change was computed from (the bucket's files of that
// type in the snapshot a job read); a commit whose latest snapshot holds
// other files for the key conflicts instead of overwriting what a
// concurrent writer recorded there.
type IndexChange struct {
	Partition []byte // serialized BinaryRow
	Bucket    int32
	IndexType string
	Base      []IndexFileMeta
	Files     []IndexFileMeta
}

// Entries are the index-manifest ADD entries of the change's files.
func (c *IndexChange) Entries() []IndexManifestEntry {
	out := make([]IndexManifestEntry, len(c.Files))
	for i, f := range c.Files {
		out[i] = IndexManifestEntry{Kind: FileKindAdd, Partition: c.Partition, Bucket: c.Bucket, IndexFile: f}
	}
	return out
}

// sameKey reports whether e is an entry of the change's partition, bucket
// and index type.
func (c *IndexChange) sameKey(e *IndexManifestEntry) bool {
	return e.Bucket == c.Bucket && e.IndexFile.IndexType == c.IndexType && string(e.Partition) == string(c.Partition)
}

// CheckIndexBase reports whether the change still applies on top of an
// index manifest's entries: their files of the change's partition, bucket
// and type must be exactly the change's Base. Otherwise another writer
// changed them since the change was computed, and applying it would drop
// what that writer recorded (a deletion vector lost is a deleted row back).
// Java's ConflictDetection does not check this for fixed-bucket tables; it
// relies on one writer per bucket.
func CheckIndexBase(entries []IndexManifestEntry, c *IndexChange) error {
	var have []string
	for i := range entries {
		if c.sameKey(&entries[i]) {
			have = append(have, entries[i].IndexFile.FileName)
		}
	}
	want := make([]string, len(c.Base))
	for i, f := range c.Base {
		want[i] = f.FileName
	}
	slices.Sort(have)
	slices.Sort(want)
	if !slices.Equal(have, want) {
		return fmt.Errorf("bucket %d: the %s index files changed concurrently (now %v, the change was computed on %v)", c.Bucket, c.IndexType, have, want)
	}
	return nil
}

// CombineIndexEntries is the index manifest after changes: Java's
// IndexManifestFileHandler for fixed-bucket tables (BucketedCombiner) drops
// every entry of a changed (partition, bucket, type) and adds the change's
// files; other entries (HASH indexes, other buckets) stay as they are, in
// their order.
func CombineIndexEntries(entries []IndexManifestEntry, changes []IndexChange) []IndexManifestEntry {
	out := make([]IndexManifestEntry, 0, len(entries)+len(changes))
	for i := range entries {
		replaced := false
		for j := range changes {
			if changes[j].sameKey(&entries[i]) {
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, entries[i])
		}
	}
	for i := range changes {
		out = append(out, changes[i].Entries()...)
	}
	return out
}
