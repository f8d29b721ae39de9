package table

// The manifest-list row of a manifest table writes: its summary needs the
// partition types, which the manifest codec (table/manifest) does not know.

import (
	"fmt"
	"math"

	"github.com/compactd/compactd/table/manifest"
)

// NewManifestListEntry summarises a written manifest as Java's manifest
// writer does: ADD/DELETE counts, full partition stats over every entry, the
// max schema id of the files (latestSchemaID for an empty manifest), bucket
// and level ranges, and the row-id range when every file has a first row id.
// partitionTypes are the table's partition column types.
func NewManifestListEntry(fileName string, fileSize int64, entries []manifest.Entry, partitionTypes []DataType, latestSchemaID int64) (manifest.ListEntry, error) {
	m := manifest.ListEntry{FileName: fileName, FileSize: fileSize}
	stats := NewStatsCollector(StatsTypes(partitionTypes))
	schemaID := int64(math.MinInt64)
	minBucket, maxBucket := int32(math.MaxInt32), int32(math.MinInt32)
	minLevel, maxLevel := int32(math.MaxInt32), int32(math.MinInt32)
	minRow, maxRow := int64(math.MaxInt64), int64(math.MinInt64)
	rowIDs := true
	for i := range entries {
		e := &entries[i]
		switch e.Kind {
		case manifest.FileKindAdd:
			m.NumAddedFiles++
		case manifest.FileKindDelete:
			m.NumDeletedFiles++
		default:
			return manifest.ListEntry{}, fmt.Errorf("manifest %s: entry %d has invalid kind %d", fileName, i, e.Kind)
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
		if err := stats.AddBinaryRow(partitionOrEmpty(e.Partition)); err != nil {
			return manifest.ListEntry{}, fmt.Errorf("manifest %s: entry %d partition: %w", fileName, i, err)
		}
	}
	ps, err := stats.Result()
	if err != nil {
		return manifest.ListEntry{}, fmt.Errorf("manifest %s: partition stats: %w", fileName, err)
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

// partitionOrEmpty is the empty BinaryRow for a nil partition, as the
// manifest codec writes it.
func partitionOrEmpty(p []byte) []byte {
	if p == nil {
		return emptyBinaryRow[:]
	}
	return p
}

// StatsTypes returns the column types forced nullable: the row type of
// their SimpleStats.
func StatsTypes(types []DataType) []DataType {
	out := make([]DataType, len(types))
	for i, t := range types {
		out[i] = t.WithNullable(true)
	}
	return out
}
