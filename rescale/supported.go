package rescale

import (
	"fmt"
	"strings"

	"github.com/compactd/compactd/merge"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/write"
)

// Supported reports why compactd refuses to rescale t to bucketNum
// buckets, before anything is read; nil if it can.
//
// The bucket rules are Paimon's: a fixed-bucket table (bucket > 0) is
// rescaled to its own bucket option only, the documented workflow being
// ALTER TABLE ... SET ('bucket' = 'N') and then rescaling the old
// partitions (Java's writers refuse a partition whose files have another
// bucket count than the option: "Try to write ... with a new bucket num");
// a postpone-bucket table (bucket = -2) takes any N >= 1, which its
// postpone compaction then keeps for the partition. Dynamic-bucket tables
// (their hash index would have to be rebuilt) and append tables are
// refused.
//
// The other refusals are those of compact.Supported that apply to a job
// that reads every level of a bucket and writes top-level Parquet files:
// primary-key secondary indexes Java would rebuild, VECTOR and BLOB
// columns compactd cannot read, row tracking and data evolution, deletion
// vectors where Java's schema validation rejects them, non-Parquet output
// formats, level-0 formats compactd cannot read, and merge-engine options
// the merge does not implement; and a bucket-function.type other than the
// default, whose placement of rows compactd does not reproduce.
func Supported(t *table.Table, bucketNum int) error {
	o := t.Options()
	if !t.HasPrimaryKey() {
		return fmt.Errorf("rescale %s: not supported: append tables (compactd rescales primary-key tables only)", t.FullName())
	}
	switch {
	case o.Bucket == table.BucketDynamic:
		return fmt.Errorf("rescale %s: not supported: dynamic-bucket tables (bucket=-1; their bucket assignment lives in hash index files that a rescale would have to rebuild)", t.FullName())
	case o.Bucket == table.BucketPostpone:
		if bucketNum < 1 {
			return fmt.Errorf("rescale %s: a postpone-bucket table (bucket=-2) needs the bucket number to rescale to (--bucket-num N, N >= 1), as Paimon's rescale does", t.FullName())
		}
	case o.Bucket > 0:
		if bucketNum != o.Bucket {
			return fmt.Errorf("rescale %s: --bucket-num %d differs from the table's bucket=%d; a fixed-bucket table is rescaled to its own bucket option (Java's writers refuse a partition with another bucket count): first ALTER TABLE %s SET ('bucket' = '%d'), then rescale the partitions",
				t.FullName(), bucketNum, o.Bucket, t.FullName(), bucketNum)
		}
	default:
		return fmt.Errorf("rescale %s: invalid bucket=%d: Paimon requires bucket > 0, -1 (dynamic) or -2 (postponed)", t.FullName(), o.Bucket)
	}
	opts := t.Schema().EffectiveOptions()
	for k := range opts {
		if strings.HasPrefix(k, "pk-") && strings.HasSuffix(k, ".index.columns") {
			return fmt.Errorf("rescale %s: not supported yet: %s=%s (a primary-key secondary index, which Java rebuilds when it writes; compactd would leave it stale)", t.FullName(), k, opts[k])
		}
	}
	for _, f := range t.Schema().Fields {
		if f.Type.Has(table.TypeVector) || f.Type.Root == table.TypeBlob {
			return fmt.Errorf("rescale %s: not supported yet: column %s of type %s (compactd cannot read it)", t.FullName(), f.Name, f.Type)
		}
	}
	if o.RowTrackingEnabled || o.DataEvolutionEnabled {
		return fmt.Errorf("rescale %s: not supported yet: row-tracking / data-evolution tables", t.FullName())
	}
	if o.DeletionVectorsEnabled {
		if o.MergeEngine == table.MergeFirstRow {
			return fmt.Errorf("rescale %s: invalid: deletion-vectors.enabled=true with merge-engine first-row (Java rejects this schema)", t.FullName())
		}
		if v := strings.ToLower(strings.TrimSpace(opts["pk-clustering-override"])); v != "" && v != "false" {
			return fmt.Errorf("rescale %s: not supported yet: pk-clustering-override=%s with deletion vectors", t.FullName(), opts["pk-clustering-override"])
		}
	}
	if o.ChangelogProducer == table.ChangelogFullCompaction && (o.DeletionVectorsEnabled || o.MergeEngine == table.MergeFirstRow) {
		return fmt.Errorf("rescale %s: invalid: changelog-producer=full-compaction with deletion vectors or first-row (Java rejects this schema)", t.FullName())
	}
	// Every level is read, the top level is written.
	for level := 0; level < max(o.NumLevels, 2); level++ {
		lo, err := datafile.OptionsForLevel(opts, level)
		if err != nil {
			return fmt.Errorf("rescale %s: not supported: %w", t.FullName(), err)
		}
		f := strings.ToLower(strings.TrimSpace(lo[table.OptFileFormat]))
		parquet := f == "" || f == "parquet"
		if level == o.NumLevels-1 && !parquet {
			return fmt.Errorf("rescale %s: not supported: top-level (%d) files would be %s (compactd writes Parquet only)", t.FullName(), level, f)
		}
		if !parquet && f != "avro" {
			return fmt.Errorf("rescale %s: not supported: level-%d files are %s (compactd reads Parquet and Avro data files)", t.FullName(), level, f)
		}
	}
	s := t.Schema()
	if err := merge.Validate(opts, s.Fields, s.PrimaryKeys, s.PartitionKeys...); err != nil {
		return fmt.Errorf("rescale %s: %w", t.FullName(), err)
	}
	if _, err := write.NewRouter(s); err != nil {
		return fmt.Errorf("rescale %s: not supported: %w", t.FullName(), err)
	}
	return nil
}
