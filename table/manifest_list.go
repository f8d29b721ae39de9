package table

import (
	"context"
	"fmt"
	"math"

	"github.com/compactd/compactd/fileio"
)

// ManifestFileMeta is one row of a manifest list: a manifest file and the
// summary readers use to skip it. Nil ranges (absent before 1.1 / 1.4, or
// unknown) never prune.
type ManifestFileMeta struct {
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

// ReadManifestList reads a manifest list in any layout (7, 11 or 13 fields).
func ReadManifestList(ctx context.Context, fio fileio.FileIO, path string) ([]ManifestFileMeta, error) {
	return readMetadataFile(ctx, fio, path, "manifest list", DecodeManifestList)
}

// DecodeManifestList decodes the bytes of a manifest list.
func DecodeManifestList(data []byte) ([]ManifestFileMeta, error) {
	f, err := readAvroFile(data)
	if err != nil {
		return nil, err
	}
	out := make([]ManifestFileMeta, 0, len(f.values))
	for i, v := range f.values {
		r, err := topRecord(v, "manifest list entry")
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrCorruptManifest, i, err)
		}
		if ver := r.int32("_VERSION"); r.err == nil && ver != manifestVersion {
			return nil, fmt.Errorf("%w: entry %d: manifest list _VERSION %d, only %d is supported", ErrCorruptManifest, i, ver, manifestVersion)
		}
		m := ManifestFileMeta{
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
			return nil, fmt.Errorf("%w: entry %d: %w", ErrCorruptManifest, i, r.err)
		}
		out = append(out, m)
	}
	return out, nil
}

// EncodeManifestList encodes a manifest list in the 13-field layout.
func EncodeManifestList(metas []ManifestFileMeta, compression string) ([]byte, error) {
	codec, err := avroCodecName(compression)
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

// WriteManifestList writes a new manifest list file and returns its size.
func WriteManifestList(ctx context.Context, fio fileio.FileIO, path string, metas []ManifestFileMeta, compression string) (int64, error) {
	return writeMetadataFile(ctx, fio, path, "manifest list", func() ([]byte, error) { return EncodeManifestList(metas, compression) })
}

// NewManifestFileMeta summarises a written manifest as Java's manifest
// writer does: ADD/DELETE counts, full partition stats over every entry, the
// max schema id of the files (latestSchemaID for an empty manifest), bucket
// and level ranges, and the row-id range when every file has a first row id.
// partitionTypes are the table's partition column types.
func NewManifestFileMeta(fileName string, fileSize int64, entries []ManifestEntry, partitionTypes []DataType, latestSchemaID int64) (ManifestFileMeta, error) {
	m := ManifestFileMeta{FileName: fileName, FileSize: fileSize}
	stats := NewStatsCollector(statsTypes(partitionTypes))
	schemaID := int64(math.MinInt64)
	minBucket, maxBucket := int32(math.MaxInt32), int32(math.MinInt32)
	minLevel, maxLevel := int32(math.MaxInt32), int32(math.MinInt32)
	minRow, maxRow := int64(math.MaxInt64), int64(math.MinInt64)
	rowIDs := true
	for i := range entries {
		e := &entries[i]
		switch e.Kind {
		case FileKindAdd:
			m.NumAddedFiles++
		case FileKindDelete:
			m.NumDeletedFiles++
		default:
			return ManifestFileMeta{}, fmt.Errorf("manifest %s: entry %d has invalid kind %d", fileName, i, e.Kind)
		}
		schemaID = max(schemaID, e.File.SchemaID)
		minBucket, maxBucket = min(minBucket, e.Bucket), max(maxBucket, e.Bucket)
		minLevel, maxLevel = min(minLevel, e.File.Level), max(maxLevel, e.File.Level)
		if rowIDs {
			if e.File.FirstRowID == nil {
				rowIDs = false
			} else {
				minRow = min(minRow, *e.File.FirstRowID)
				maxRow = max(maxRow, *e.File.FirstRowID+e.File.RowCount-1)
			}
		}
		if err := stats.AddBinaryRow(orEmptyRow(e.Partition)); err != nil {
			return ManifestFileMeta{}, fmt.Errorf("manifest %s: entry %d partition: %w", fileName, i, err)
		}
	}
	ps, err := stats.Result()
	if err != nil {
		return ManifestFileMeta{}, fmt.Errorf("manifest %s: partition stats: %w", fileName, err)
	}
	m.PartitionStats = ps
	if len(entries) > 0 {
		m.SchemaID = schemaID
	} else {
		m.SchemaID = latestSchemaID
	}
	// Java stamps the accumulators even when they were never updated.
	m.MinBucket, m.MaxBucket = &minBucket, &maxBucket
	m.MinLevel, m.MaxLevel = &minLevel, &maxLevel
	if rowIDs {
		m.MinRowID, m.MaxRowID = &minRow, &maxRow
	}
	return m, nil
}

// statsTypes returns the types forced nullable, the stats row type.
func statsTypes(types []DataType) []DataType {
	out := make([]DataType, len(types))
	for i, t := range types {
		out[i] = t.WithNullable(true)
	}
	return out
}
