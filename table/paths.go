package table

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/internal/javacompat"
	"github.com/compactd/compactd/table/manifest"
	"github.com/google/uuid"
)

// Directory and file-name prefixes of the table layout (Java
// FileStorePathFactory, SnapshotManager, SchemaManager, TagManager,
// ConsumerManager, BranchManager).
const (
	DatabaseSuffix        = ".db"
	SchemaDir             = "schema"
	SnapshotDir           = "snapshot"
	ManifestDir           = "manifest"
	IndexDir              = "index"
	StatisticsDir         = "statistics"
	TagDir                = "tag"
	ConsumerDir           = "consumer"
	ChangelogDir          = "changelog"
	BranchDir             = "branch"
	ManifestPrefix        = "manifest-"
	ManifestListPrefix    = "manifest-list-"
	IndexManifestPrefix   = "index-manifest-"
	IndexFilePrefix       = "index-"
	StatisticsPrefix      = "stat-"
	BucketPrefix          = "bucket-"
	BucketPostponeDirName = "bucket-postpone"
	TagPrefix             = "tag-"
	ConsumerPrefix        = "consumer-"
	ChangelogPrefix       = "changelog-"
	BranchPrefix          = "branch-"
	FileIndexSuffix       = ".index"
)

// DatabasePath is <warehouse>/<db>.db.
func DatabasePath(warehouse, database string) string {
	return fileio.Join(warehouse, database+DatabaseSuffix)
}

// TablePath is <warehouse>/<db>.db/<table>.
func TablePath(warehouse, database, table string) string {
	return fileio.Join(DatabasePath(warehouse, database), table)
}

// BucketDirName is "bucket-<n>", or "bucket-postpone" for bucket -2.
func BucketDirName(bucket int32) string {
	if bucket == BucketPostpone {
		return BucketPostponeDirName
	}
	return BucketPrefix + strconv.FormatInt(int64(bucket), 10)
}

// PathFactory computes every path of a table from its root, partition type
// and options, and names new files the way Java does
// (<prefix><uuid>-<counter>[.<ext>], one UUID per factory).
type PathFactory struct {
	root            string
	partitionKeys   []string
	partitionTypes  []DataType
	defaultPartName string
	legacyName      bool
	dataDir         string
	indexInDataDir  bool

	fileFormat         string
	dataPrefix         string
	changelogPrefix    string
	dataExtension      string
	changelogExtension string
	uuid               string
	manifestCount      atomic.Int64
	manifestListCount  atomic.Int64
	indexManifestCount atomic.Int64
	indexFileCount     atomic.Int64
	statsCount         atomic.Int64
	dataFileCount      atomic.Int64
}

// NewPathFactory returns the path factory of the table at root with the
// given schema (its partition keys and effective options).
func NewPathFactory(root string, schema *TableSchema) *PathFactory {
	o := schema.CoreOptions()
	pt := schema.PartitionType()
	p := &PathFactory{
		root:            strings.TrimRight(root, "/"),
		partitionKeys:   schema.PartitionKeys,
		partitionTypes:  typesOf(pt),
		defaultPartName: o.PartitionDefaultName,
		legacyName:      o.PartitionLegacyName,
		dataDir:         o.DataFilePathDirectory,
		indexInDataDir:  o.IndexFileInDataFileDir,
		fileFormat:      o.FileFormat,
		dataPrefix:      o.DataFilePrefix,
		changelogPrefix: o.ChangelogFilePrefix,
		uuid:            uuid.NewString(),
	}
	p.dataExtension = dataFileExtension(o.FileFormat, o.FileCompression, o.FileSuffixIncludeCompression)
	clFormat, clCompression := o.ChangelogFileFormat, o.ChangelogFileCompression
	if clFormat == "" {
		clFormat = o.FileFormat
	}
	if clCompression == "" {
		clCompression = o.FileCompression
	}
	p.changelogExtension = dataFileExtension(clFormat, clCompression, o.FileSuffixIncludeCompression)
	return p
}

// compressionExtensions maps Hadoop compression names to file extensions
// (Java HadoopCompressionType); other names are used as they are.
var compressionExtensions = map[string]string{
	"none": "", "gzip": "gz", "bzip2": "bz2", "deflate": "deflate",
	"snappy": "snappy", "lz4": "lz4", "zstd": "zst",
}

// dataFileExtension is Java DataFilePathFactory.makeExtension.
func dataFileExtension(format, compression string, includeCompression bool) string {
	ext := ""
	if compression != "" {
		if e, ok := compressionExtensions[strings.ToLower(compression)]; ok {
			ext = e
		} else {
			ext = compression
		}
	}
	isText := strings.EqualFold(format, "json") || strings.EqualFold(format, "csv")
	switch {
	case ext != "" && isText:
		return "." + format + "." + ext
	case ext != "" && includeCompression:
		return "." + ext + "." + format
	}
	return "." + format
}

// FileFormatOf returns the format of a data file from its name as Java's
// DataFilePathFactory.formatIdentifier does: the last extension, or the one
// before it when the last is a compression extension.
func FileFormatOf(fileName string) (string, error) {
	i := strings.LastIndexByte(fileName, '.')
	if i < 0 {
		return "", fmt.Errorf("%s is not a legal data file name", fileName)
	}
	ext := fileName[i+1:]
	for _, ce := range compressionExtensions {
		if ce != "" && strings.EqualFold(ext, ce) {
			j := strings.LastIndexByte(fileName[:i], '.')
			if j < 0 {
				return "", fmt.Errorf("%s is not a legal data file name", fileName)
			}
			return fileName[j+1 : i], nil
		}
	}
	return ext, nil
}

// Root is the table directory.
func (p *PathFactory) Root() string { return p.root }

// UUID is the UUID this factory puts in new file names.
func (p *PathFactory) UUID() string { return p.uuid }

func (p *PathFactory) SchemaDir() string     { return fileio.Join(p.root, SchemaDir) }
func (p *PathFactory) SnapshotDir() string   { return fileio.Join(p.root, SnapshotDir) }
func (p *PathFactory) ManifestDir() string   { return fileio.Join(p.root, ManifestDir) }
func (p *PathFactory) IndexDir() string      { return fileio.Join(p.root, IndexDir) }
func (p *PathFactory) StatisticsDir() string { return fileio.Join(p.root, StatisticsDir) }
func (p *PathFactory) TagDir() string        { return fileio.Join(p.root, TagDir) }
func (p *PathFactory) ConsumerDir() string   { return fileio.Join(p.root, ConsumerDir) }
func (p *PathFactory) ChangelogDir() string  { return fileio.Join(p.root, ChangelogDir) }

// SchemaPath is schema/schema-<id>.
func (p *PathFactory) SchemaPath(id int64) string {
	return fileio.Join(p.SchemaDir(), SchemaFileName(id))
}

// SnapshotPath is snapshot/snapshot-<id>.
func (p *PathFactory) SnapshotPath(id int64) string {
	return fileio.Join(p.SnapshotDir(), SnapshotFileName(id))
}

// LatestHintPath and EarliestHintPath are the snapshot hint files.
func (p *PathFactory) LatestHintPath() string   { return fileio.Join(p.SnapshotDir(), hintLatest) }
func (p *PathFactory) EarliestHintPath() string { return fileio.Join(p.SnapshotDir(), hintEarliest) }

// ManifestPath resolves a manifest, manifest-list or index-manifest name.
func (p *PathFactory) ManifestPath(name string) string { return fileio.Join(p.ManifestDir(), name) }

// IndexFilePath resolves an index file name (index/ directory).
func (p *PathFactory) IndexFilePath(name string) string { return fileio.Join(p.IndexDir(), name) }

// StatisticsPath resolves a statistics file name.
func (p *PathFactory) StatisticsPath(name string) string {
	return fileio.Join(p.StatisticsDir(), name)
}

// TagPath is tag/tag-<name>.
func (p *PathFactory) TagPath(name string) string {
	return fileio.Join(p.TagDir(), TagPrefix+name)
}

// ConsumerPath is consumer/consumer-<id>.
func (p *PathFactory) ConsumerPath(id string) string {
	return fileio.Join(p.ConsumerDir(), ConsumerPrefix+id)
}

// ChangelogPath is changelog/changelog-<id> (decoupled changelog metadata).
func (p *PathFactory) ChangelogPath(id int64) string {
	return fileio.Join(p.ChangelogDir(), ChangelogPrefix+strconv.FormatInt(id, 10))
}

func (p *PathFactory) next(c *atomic.Int64) string {
	return p.uuid + "-" + strconv.FormatInt(c.Add(1)-1, 10)
}

// NewManifestFileName returns a fresh manifest-<uuid>-<n>.
func (p *PathFactory) NewManifestFileName() string { return ManifestPrefix + p.next(&p.manifestCount) }

// NewManifestListName returns a fresh manifest-list-<uuid>-<n>.
func (p *PathFactory) NewManifestListName() string {
	return ManifestListPrefix + p.next(&p.manifestListCount)
}

// NewIndexManifestName returns a fresh index-manifest-<uuid>-<n>.
func (p *PathFactory) NewIndexManifestName() string {
	return IndexManifestPrefix + p.next(&p.indexManifestCount)
}

// NewIndexFileName returns a fresh index-<uuid>-<n> (index/ directory).
func (p *PathFactory) NewIndexFileName() string { return IndexFilePrefix + p.next(&p.indexFileCount) }

// NewStatisticsFileName returns a fresh stat-<uuid>-<n>.
func (p *PathFactory) NewStatisticsFileName() string {
	return StatisticsPrefix + p.next(&p.statsCount)
}

// NewDataFileName returns a fresh <data-file.prefix><uuid>-<n><ext>, e.g.
// data-<uuid>-0.parquet.
func (p *PathFactory) NewDataFileName() string {
	return p.dataPrefix + p.next(&p.dataFileCount) + p.dataExtension
}

// NewChangelogFileName returns a fresh <changelog-file.prefix><uuid>-<n><ext>.
func (p *PathFactory) NewChangelogFileName() string {
	return p.changelogPrefix + p.next(&p.dataFileCount) + p.changelogExtension
}

// PartitionPath is the relative partition directory ("k1=v1/k2=v2", no
// trailing slash; "" for unpartitioned tables) of a serialized partition
// BinaryRow.
func (p *PathFactory) PartitionPath(partition []byte) (string, error) {
	if len(p.partitionKeys) == 0 {
		return "", nil
	}
	row, err := DecodeBinaryRow(p.partitionTypes, partition)
	if err != nil {
		return "", fmt.Errorf("partition %x: %w", partition, err)
	}
	return p.PartitionPathOfRow(row)
}

// PartitionPathOfRow is PartitionPath for a decoded partition row.
func (p *PathFactory) PartitionPathOfRow(row Row) (string, error) {
	spec, err := p.PartitionSpec(row)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, kv := range spec {
		if i > 0 {
			b.WriteByte('/')
		}
		if kv[0] == "" || kv[1] == "" {
			return "", fmt.Errorf("partition %s: empty key or value cannot be a path", kv[0])
		}
		b.WriteString(EscapePathName(kv[0]))
		b.WriteByte('=')
		b.WriteString(EscapePathName(kv[1]))
	}
	return b.String(), nil
}

// PartitionSpec returns (key, value string) pairs of a partition row, with
// null and blank values replaced by partition.default-name (Java
// InternalRowPartitionComputer.generatePartValues).
func (p *PathFactory) PartitionSpec(row Row) ([][2]string, error) {
	if len(row) != len(p.partitionKeys) {
		return nil, fmt.Errorf("partition row has %d fields, table has %d partition keys", len(row), len(p.partitionKeys))
	}
	out := make([][2]string, len(row))
	for i, v := range row {
		s := ""
		if v != nil {
			var err error
			s, err = PartitionValueString(p.partitionTypes[i], v, p.legacyName)
			if err != nil {
				return nil, fmt.Errorf("partition key %s: %w", p.partitionKeys[i], err)
			}
		}
		if javacompat.IsBlank(s) {
			s = p.defaultPartName
		}
		out[i] = [2]string{p.partitionKeys[i], s}
	}
	return out, nil
}

// RelativeBucketPath is [data-file.path-directory/][partition/]bucket-<n>.
func (p *PathFactory) RelativeBucketPath(partition []byte, bucket int32) (string, error) {
	part, err := p.PartitionPath(partition)
	if err != nil {
		return "", err
	}
	return fileio.Join(p.dataDir, part, BucketDirName(bucket)), nil
}

// BucketPath is the absolute bucket directory.
func (p *PathFactory) BucketPath(partition []byte, bucket int32) (string, error) {
	rel, err := p.RelativeBucketPath(partition, bucket)
	if err != nil {
		return "", err
	}
	return fileio.Join(p.root, rel), nil
}

// DataFilePath is where a data file lives: its _EXTERNAL_PATH when set,
// else the bucket directory plus its name.
func (p *PathFactory) DataFilePath(partition []byte, bucket int32, f *manifest.DataFileMeta) (string, error) {
	if f.ExternalPath != nil {
		return *f.ExternalPath, nil
	}
	dir, err := p.BucketPath(partition, bucket)
	if err != nil {
		return "", err
	}
	return fileio.Join(dir, f.FileName), nil
}

// IndexFileOf is where an index file of a partition and bucket lives: its
// external path when set, else the bucket directory when
// index-file-in-data-file-dir is true, else index/ (Java
// FileStorePathFactory.indexFileFactory).
func (p *PathFactory) IndexFileOf(partition []byte, bucket int32, f *manifest.IndexFileMeta) (string, error) {
	if f.ExternalPath != nil {
		return *f.ExternalPath, nil
	}
	if !p.indexInDataDir {
		return p.IndexFilePath(f.FileName), nil
	}
	dir, err := p.BucketPath(partition, bucket)
	if err != nil {
		return "", err
	}
	return fileio.Join(dir, f.FileName), nil
}

// ExtraFilePath is where one of a data file's _EXTRA_FILES lives: next to
// the data file (in the external directory when the file is external).
func (p *PathFactory) ExtraFilePath(partition []byte, bucket int32, f *manifest.DataFileMeta, extra string) (string, error) {
	if f.ExternalPath != nil {
		return fileio.Join(fileio.Dir(*f.ExternalPath), extra), nil
	}
	dir, err := p.BucketPath(partition, bucket)
	if err != nil {
		return "", err
	}
	return fileio.Join(dir, extra), nil
}

// EscapePathName escapes a partition key or value as Java's
// PartitionPathUtils.escapePathName: ASCII control characters, DEL and
// "#%'*/:=?\{}[]^ become %XX (upper-case hex); everything else is kept.
func EscapePathName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsPathEscape(c) {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&0xF])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func needsPathEscape(c byte) bool {
	if c < 0x20 || c == 0x7F {
		return true
	}
	switch c {
	case '"', '#', '%', '\'', '*', '/', ':', '=', '?', '\\', '{', '}', '[', ']', '^':
		return true
	}
	return false
}

// UnescapePathName reverses EscapePathName.
func UnescapePathName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
