package table

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/compactd/compactd/fileio"
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
		if isJavaBlank(s) {
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
func (p *PathFactory) DataFilePath(partition []byte, bucket int32, f *DataFileMeta) (string, error) {
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
func (p *PathFactory) IndexFileOf(partition []byte, bucket int32, f *IndexFileMeta) (string, error) {
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
func (p *PathFactory) ExtraFilePath(partition []byte, bucket int32, f *DataFileMeta, extra string) (string, error) {
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

// isJavaBlank is StringUtils.isNullOrWhitespaceOnly: empty or only
// characters for which Java's Character.isWhitespace holds.
func isJavaBlank(s string) bool {
	for _, r := range s {
		if !javaIsWhitespace(r) {
			return false
		}
	}
	return true
}

func javaIsWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', 0x0B, '\f', '\r', 0x1C, 0x1D, 0x1E, 0x1F:
		return true
	case 0x00A0, 0x2007, 0x202F:
		return false
	}
	return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

// PartitionValueString renders a non-null partition value as Java does for
// directory names. legacy (partition.legacy-name, default true) uses the
// toString of Paimon's internal value: DATE as its day number, TIME as
// millis of day, TIMESTAMP as LocalDateTime.toString. Otherwise the value is
// cast to STRING (DATE yyyy-MM-dd, TIMESTAMP yyyy-MM-dd HH:mm:ss[.f]).
func PartitionValueString(t DataType, v any, legacy bool) (string, error) {
	switch t.Root {
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			break
		}
		return strconv.FormatBool(b), nil
	case TypeTinyInt, TypeSmallInt, TypeInt, TypeBigInt:
		n, ok := asInt64(v)
		if !ok {
			break
		}
		return strconv.FormatInt(n, 10), nil
	case TypeFloat:
		f, ok := v.(float32)
		if !ok {
			break
		}
		return JavaFloatString(float64(f), 32), nil
	case TypeDouble:
		f, ok := v.(float64)
		if !ok {
			break
		}
		return JavaFloatString(f, 64), nil
	case TypeChar, TypeVarChar:
		s, ok := v.(string)
		if !ok {
			break
		}
		return s, nil
	case TypeDecimal:
		d, ok := v.(Decimal)
		if !ok || d.Unscaled == nil {
			break
		}
		return d.String(), nil
	case TypeDate:
		n, ok := v.(int32)
		if !ok {
			break
		}
		if legacy {
			return strconv.FormatInt(int64(n), 10), nil
		}
		return formatLocalDate(int64(n)), nil
	case TypeTime:
		n, ok := v.(int32)
		if !ok {
			break
		}
		if legacy {
			return strconv.FormatInt(int64(n), 10), nil
		}
		return formatSQLTime(n, t.Precision), nil
	case TypeTimestamp, TypeTimestampLTZ:
		ts, ok := v.(Timestamp)
		if !ok {
			break
		}
		if legacy {
			return localDateTimeString(ts), nil
		}
		if t.Root == TypeTimestampLTZ {
			// Java shifts to the JVM default zone before formatting.
			_, off := time.UnixMilli(ts.Millis).Zone()
			ts.Millis += int64(off) * 1000
		}
		return formatSQLTimestamp(ts, t.Precision), nil
	case TypeBinary, TypeVarBinary:
		if legacy {
			return "", fmt.Errorf("binary partition values have no stable legacy name")
		}
		b, ok := v.([]byte)
		if !ok {
			break
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	default:
		return "", fmt.Errorf("type %s cannot be a partition key", t)
	}
	return "", fmt.Errorf("value %v (%T) does not match type %s", v, v, t)
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// JavaFloatString formats as Float.toString/Double.toString: plain notation
// with at least one fraction digit for 10^-3 <= |f| < 10^7, otherwise
// d.dddE±n. Digits are the shortest that round-trip, as JDK 19+ prints
// them (older JDKs print a few values with more digits).
func JavaFloatString(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, bits)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	if e >= -3 && e < 7 {
		var intPart, frac string
		if e >= 0 {
			for len(digits) < e+1 {
				digits += "0"
			}
			intPart, frac = digits[:e+1], digits[e+1:]
		} else {
			intPart, frac = "0", strings.Repeat("0", -e-1)+digits
		}
		if frac == "" {
			frac = "0"
		}
		return sign + intPart + "." + frac
	}
	if len(digits) == 1 {
		// Scientific notation shows two digits at least, and Java picks
		// the two-digit decimal nearest the value: Double.MIN_VALUE is
		// 4.9E-324, not 5.0E-324.
		mant, exp, _ = strings.Cut(strings.TrimPrefix(strconv.FormatFloat(f, 'e', 1, bits), "-"), "e")
		e, _ = strconv.Atoi(exp)
		digits = strings.Replace(mant, ".", "", 1)
	}
	return sign + digits[:1] + "." + digits[1:] + "E" + strconv.Itoa(e)
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date.
func civil(days int64) (year int64, month, day int) {
	t := time.Unix(days*86400, 0).UTC()
	return int64(t.Year()), int(t.Month()), t.Day()
}

// formatLocalDate is Java LocalDate.toString.
func formatLocalDate(days int64) string {
	y, m, d := civil(days)
	var ys string
	switch {
	case y < 0 && y > -1000:
		ys = fmt.Sprintf("-%04d", -y)
	case y >= 0 && y < 1000:
		ys = fmt.Sprintf("%04d", y)
	case y > 9999:
		ys = "+" + strconv.FormatInt(y, 10)
	default:
		ys = strconv.FormatInt(y, 10)
	}
	return fmt.Sprintf("%s-%02d-%02d", ys, m, d)
}

// localDateTimeString is Java LocalDateTime.toString of a Paimon timestamp
// (what Timestamp.toString returns): seconds only when non-zero, fraction
// in groups of three digits.
func localDateTimeString(ts Timestamp) string {
	days, nanoOfDay := ts.DayNanos()
	h := nanoOfDay / 3_600_000_000_000
	mi := nanoOfDay / 60_000_000_000 % 60
	s := nanoOfDay / 1_000_000_000 % 60
	nano := nanoOfDay % 1_000_000_000
	out := fmt.Sprintf("%sT%02d:%02d", formatLocalDate(days), h, mi)
	if s > 0 || nano > 0 {
		out += fmt.Sprintf(":%02d", s)
		switch {
		case nano == 0:
		case nano%1_000_000 == 0:
			out += fmt.Sprintf(".%03d", nano/1_000_000)
		case nano%1000 == 0:
			out += fmt.Sprintf(".%06d", nano/1000)
		default:
			out += fmt.Sprintf(".%09d", nano)
		}
	}
	return out
}

// formatSQLTimestamp is Paimon's DateTimeUtils.formatTimestamp(ts,
// precision): yyyy-MM-dd HH:mm:ss, then the nine-digit fraction with
// trailing zeros removed while longer than precision.
func formatSQLTimestamp(ts Timestamp, precision int) string {
	days, nanoOfDay := ts.DayNanos()
	out := fmt.Sprintf("%s %02d:%02d:%02d", formatLocalDate(days),
		nanoOfDay/3_600_000_000_000, nanoOfDay/60_000_000_000%60, nanoOfDay/1_000_000_000%60)
	return out + trimmedFraction(fmt.Sprintf("%09d", nanoOfDay%1_000_000_000), precision)
}

// formatSQLTime renders TIME(p) millis of day as HH:mm:ss[.fff].
func formatSQLTime(ms int32, precision int) string {
	m := int64(ms)
	out := fmt.Sprintf("%02d:%02d:%02d", m/3_600_000, m/60_000%60, m/1000%60)
	return out + trimmedFraction(fmt.Sprintf("%03d", m%1000), min(precision, 3))
}

func trimmedFraction(frac string, precision int) string {
	for len(frac) > precision && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	if frac == "" {
		return ""
	}
	return "." + frac
}
