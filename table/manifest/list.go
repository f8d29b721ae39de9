package manifest

import (
	"context"
	"fmt"

	"github.com/compactd/compactd/fileio"
)

// ListEntry is one row of a manifest list: a manifest file and the
// summary readers use to skip it. Nil ranges (absent before 1.1 / 1.4, or
// unknown) never prune.
type ListEntry struct {
	FileName        string
	FileSize        int64
	NumAddedFiles   int64
	NumDeletedFiles int64
	PartitionStats  SimpleStats
	SchemaID        int64
	MinBucket       *int32 // since 1.1
	MaxBucket       *int32
	MinLevel        *int32
	MaxLevel        *int32
	MinRowID        *int64 // since 1.4, row-tracking tables
	MaxRowID        *int64
}

// manifestListSchema is the 13-field layout written since 1.4.
const manifestListSchema = `{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[` +
	`{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},` +
	`{"name":"_NUM_ADDED_FILES","type":"long"},{"name":"_NUM_DELETED_FILES","type":"long"},` +
	`{"name":"_PARTITION_STATS","type":{"type":"record","name":"record__PARTITION_STATS",` + avroStatsFields + `}},` +
	`{"name":"_SCHEMA_ID","type":"long"},` +
	`{"name":"_MIN_BUCKET","type":["null","int"],"default":null},{"name":"_MAX_BUCKET","type":["null","int"],"default":null},` +
	`{"name":"_MIN_LEVEL","type":["null","int"],"default":null},{"name":"_MAX_LEVEL","type":["null","int"],"default":null},` +
	`{"name":"_MIN_ROW_ID","type":["null","long"],"default":null},{"name":"_MAX_ROW_ID","type":["null","long"],"default":null}]}`

// ReadList reads a manifest list in any layout (7, 11 or 13 fields).
func ReadList(ctx context.Context, fio fileio.FileIO, path string) ([]ListEntry, error) {
	return readMetadataFile(ctx, fio, path, "manifest list", DecodeList)
}

// DecodeList decodes the bytes of a manifest list.
func DecodeList(data []byte) ([]ListEntry, error) {
	f, err := readAvroFile(data)
	if err != nil {
		return nil, err
	}
	out := make([]ListEntry, 0, len(f.values))
	for i, v := range f.values {
		r, err := topRecord(v, "manifest list entry")
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, err)
		}
		if ver := r.int32("_VERSION"); r.err == nil && ver != manifestVersion {
			return nil, fmt.Errorf("%w: entry %d: manifest list _VERSION %d, only %d is supported", ErrCorrupt, i, ver, manifestVersion)
		}
		m := ListEntry{
			FileName:        r.string("_FILE_NAME"),
			FileSize:        r.int64("_FILE_SIZE"),
			NumAddedFiles:   r.int64("_NUM_ADDED_FILES"),
			NumDeletedFiles: r.int64("_NUM_DELETED_FILES"),
			PartitionStats:  r.simpleStats("_PARTITION_STATS"),
			SchemaID:        r.int64("_SCHEMA_ID"),
			MinBucket:       r.optInt32("_MIN_BUCKET"),
			MaxBucket:       r.optInt32("_MAX_BUCKET"),
			MinLevel:        r.optInt32("_MIN_LEVEL"),
			MaxLevel:        r.optInt32("_MAX_LEVEL"),
			MinRowID:        r.optInt64("_MIN_ROW_ID"),
			MaxRowID:        r.optInt64("_MAX_ROW_ID"),
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrCorrupt, i, r.err)
		}
		out = append(out, m)
	}
	return out, nil
}

// EncodeList encodes a manifest list in the 13-field layout, in format f.
func EncodeList(metas []ListEntry, f Format) ([]byte, error) {
	if f.ORC {
		return encodeORCList(metas, f.ORCOptions)
	}
	codec, err := avroCodecName(f.Compression)
	if err != nil {
		return nil, err
	}
	return writeAvroFile(manifestListSchema, codec, len(metas), func(w *avroWriter, i int) error {
		m := &metas[i]
		w.int(manifestVersion)
		w.string(m.FileName)
		w.long(m.FileSize)
		w.long(m.NumAddedFiles)
		w.long(m.NumDeletedFiles)
		w.simpleStats(m.PartitionStats)
		w.long(m.SchemaID)
		w.optInt(m.MinBucket)
		w.optInt(m.MaxBucket)
		w.optInt(m.MinLevel)
		w.optInt(m.MaxLevel)
		w.optLong(m.MinRowID)
		w.optLong(m.MaxRowID)
		return nil
	})
}

// WriteList writes a new manifest list file and returns its size.
func WriteList(ctx context.Context, fio fileio.FileIO, path string, metas []ListEntry, f Format) (int64, error) {
	return writeMetadataFile(ctx, fio, path, "manifest list", func() ([]byte, error) { return EncodeList(metas, f) })
}
