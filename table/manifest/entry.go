package manifest

import (
	"fmt"
	"strings"
	"time"
)

// FileSource says which kind of write produced a data file (_FILE_SOURCE).
type FileSource int32

const (
	FileSourceAppend  FileSource = 0 // written by a writer flush
	FileSourceCompact FileSource = 1 // written by compaction
)

func (s FileSource) String() string {
	switch s {
	case FileSourceAppend:
		return "APPEND"
	case FileSourceCompact:
		return "COMPACT"
	}
	return fmt.Sprintf("FileSource(%d)", int32(s))
}

// FileKind is the kind of a manifest entry (_KIND).
type FileKind int8

const (
	FileKindAdd    FileKind = 0
	FileKindDelete FileKind = 1
)

func (k FileKind) String() string {
	switch k {
	case FileKindAdd:
		return "ADD"
	case FileKindDelete:
		return "DELETE"
	}
	return fmt.Sprintf("FileKind(%d)", int8(k))
}

// DataFileMeta describes one data file (the _FILE record of a manifest
// entry). It holds every field of every manifest layout from 0.8 to HEAD;
// fields a layout lacks read as nil. Nil slices and pointers are written as
// Avro null, so a nil ValueStatsCols ("stats cover all columns") and an empty
// one ("no stats columns") stay distinct.
type DataFileMeta struct {
	FileName          string
	FileSize          int64
	RowCount          int64
	MinKey            []byte // serialized BinaryRow; empty row for append tables
	MaxKey            []byte
	KeyStats          SimpleStats
	ValueStats        SimpleStats
	MinSequenceNumber int64
	MaxSequenceNumber int64
	SchemaID          int64
	Level             int32
	ExtraFiles        []string
	// CreationTime is milliseconds of the writer's local wall-clock time
	// read as if it were UTC (see LocalMillis); nil if absent.
	CreationTime   *int64
	DeleteRowCount *int64 // since 0.8; nil = unknown (may contain retracts)
	EmbeddedIndex  []byte // since 0.8; nil = none
	FileSource     *FileSource
	ValueStatsCols []string // since 1.0; nil = all columns of the file schema
	ExternalPath   *string  // since 1.0
	FirstRowID     *int64   // since 1.3, row-tracking tables
	WriteCols      []string // since 1.3, data-evolution tables
	// WriteColsSequences exists only after 2.0 (unreleased HEAD); writers
	// emit the field only when some entry carries it.
	WriteColsSequences []int64
}

// LocalMillis converts t to the value Java stores in _CREATION_TIME: the
// local wall-clock time of t interpreted as UTC, in epoch milliseconds.
func LocalMillis(t time.Time) int64 {
	_, offset := t.Zone()
	return t.UnixMilli() + int64(offset)*1000
}

// Entry is one record of a data or changelog manifest.
type Entry struct {
	Kind         FileKind
	Partition    []byte // serialized BinaryRow; EmptyBinaryRow() if unpartitioned
	Bucket       int32
	TotalBuckets int32
	File         DataFileMeta
}

// FileIdentifier is the key Java's FileEntry.Identifier uses to match a
// DELETE entry with its ADD: partition bytes, bucket, level, file name,
// extra files, embedded index bytes and external path. It is comparable and
// can key a map.
type FileIdentifier struct {
	Partition        string // the partition bytes
	Bucket           int32
	Level            int32
	FileName         string
	ExtraFiles       string // NUL-joined; see Identifier
	HasEmbeddedIndex bool
	EmbeddedIndex    string
	HasExternalPath  bool
	ExternalPath     string
}

// Identifier returns the entry's file identifier.
func (e *Entry) Identifier() FileIdentifier {
	id := FileIdentifier{
		Partition: string(e.Partition),
		Bucket:    e.Bucket,
		Level:     e.File.Level,
		FileName:  e.File.FileName,
		// File names never contain NUL, so joining keeps lists distinct.
		ExtraFiles:       strings.Join(e.File.ExtraFiles, "\x00"),
		HasEmbeddedIndex: e.File.EmbeddedIndex != nil,
		EmbeddedIndex:    string(e.File.EmbeddedIndex),
	}
	if len(e.File.ExtraFiles) > 0 {
		// Distinguish [] from [""].
		id.ExtraFiles = "\x01" + id.ExtraFiles
	}
	if e.File.ExternalPath != nil {
		id.HasExternalPath = true
		id.ExternalPath = *e.File.ExternalPath
	}
	return id
}

func (id FileIdentifier) String() string {
	ext := "null"
	if id.HasExternalPath {
		ext = id.ExternalPath
	}
	extra := []string{}
	if id.ExtraFiles != "" {
		extra = strings.Split(strings.TrimPrefix(id.ExtraFiles, "\x01"), "\x00")
	}
	return fmt.Sprintf("{partition=%x, bucket=%d, level=%d, file=%s, extraFiles=%q, externalPath=%s}",
		id.Partition, id.Bucket, id.Level, id.FileName, extra, ext)
}
