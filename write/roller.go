package write

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
)

// Roller writes KeyValue records of one bucket into data files, cutting a
// new file when the current one reaches the target size.
type Roller struct {
	rolling[*datafile.KeyValueWriter]
}

// NewRoller prepares a writer of files at the given level of one bucket,
// written with the table's latest schema.
func NewRoller(ctx context.Context, t *table.Table, partition []byte, bucket int32, level int32, source manifest.FileSource) *Roller {
	return newKVRoller(ctx, t, partition, bucket, level, source, t.Schema().EffectiveOptions(), nil)
}

// newKVRoller is a Roller of files named by name (nil: data files) written
// with the writer options opts.
func newKVRoller(ctx context.Context, t *table.Table, partition []byte, bucket int32, level int32, source manifest.FileSource, opts map[string]string, name func() string) *Roller {
	s := t.Schema()
	schema := datafile.Schema{Fields: s.Fields, KeyNames: s.TrimmedPrimaryKeys()}
	r := &Roller{}
	r.rolling = rolling[*datafile.KeyValueWriter]{
		ctx: ctx, t: t, partition: partition, bucket: bucket,
		target: t.Options().TargetFileSizeFor(true),
		now:    time.Now,
		name:   name,
		create: func(path string) (*datafile.KeyValueWriter, error) {
			return datafile.NewKeyValueWriter(ctx, t.FileIO(), path, schema, opts)
		},
		meta: func(st *datafile.FileStats) (manifest.DataFileMeta, error) {
			return FileMeta(st, s, level, source, r.now())
		},
	}
	return r
}

// Write appends one record; records come in key order.
func (r *Roller) Write(kv table.KeyValue) error {
	if err := r.open(); err != nil {
		return err
	}
	if err := r.cur.Write(kv); err != nil {
		return err
	}
	return r.rollIfDue()
}

// WriteBatch appends the rows of b (a batch of the table schema's KeyValue
// layout, in key order). Files roll at the same rows as with Write.
func (r *Roller) WriteBatch(b *datafile.Batch) error {
	return r.writeBatch(b, func() {}, func(int) {})
}

// Options of changelog files (CoreOptions changelog-file.*): each replaces
// the data file's option of the same level for changelog files.
const (
	OptChangelogFileFormat      = "changelog-file.format"
	OptChangelogFileCompression = "changelog-file.compression"
	OptChangelogFileStatsMode   = "changelog-file.stats-mode"
)

// NewChangelogRoller prepares a writer of the changelog files a compaction
// to level produces in one bucket, as Java's
// KeyValueFileWriterFactory.createRollingChangelogFileWriter does: files
// named <changelog-file.prefix><uuid>-<n>, in the layout of data files
// (records keep their row kinds), with file source APPEND and the output
// level; format, compression and stats mode are the level's (per-level
// options applied), each replaced by its changelog-file.* option when set.
// Parquet and ORC are written: another changelog format is an error.
func NewChangelogRoller(ctx context.Context, t *table.Table, partition []byte, bucket int32, level int32) (*Roller, error) {
	s := t.Schema()
	opts, err := ChangelogFileOptions(s.EffectiveOptions(), int(level))
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.FullName(), err)
	}
	if f := opts[table.OptFileFormat]; f != "" && f != "parquet" && f != "orc" {
		return nil, fmt.Errorf("table %s: changelog files of level %d would be %s: compactd writes Parquet and ORC only", t.FullName(), level, f)
	}
	return newKVRoller(ctx, t, partition, bucket, level, manifest.FileSourceAppend, opts, t.Paths().NewChangelogFileName), nil
}

// ChangelogFileOptions are the writer options of changelog files of level
// (Java's FormatContext for a changelog WriteFormatKey): the level's data
// file options with changelog-file.format, .compression and .stats-mode
// in place of file.format, file.compression and metadata.stats-mode.
func ChangelogFileOptions(options map[string]string, level int) (map[string]string, error) {
	opts, err := datafile.OptionsForLevel(options, level)
	if err != nil {
		return nil, err
	}
	for _, o := range [][2]string{
		{OptChangelogFileFormat, table.OptFileFormat},
		{OptChangelogFileCompression, "file.compression"},
		{OptChangelogFileStatsMode, "metadata.stats-mode"},
	} {
		if v, ok := options[o[0]]; ok && strings.TrimSpace(v) != "" {
			v = strings.TrimSpace(v)
			if o[1] == table.OptFileFormat {
				v = strings.ToLower(v)
			}
			opts[o[1]] = v
		}
	}
	if f, ok := opts[table.OptFileFormat]; ok {
		opts[table.OptFileFormat] = strings.ToLower(strings.TrimSpace(f))
	}
	return opts, nil
}
