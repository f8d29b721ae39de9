package write

import (
	"fmt"

	"github.com/compactd/compactd/table"
)

// OptBucketFunctionType is CoreOptions bucket-function.type. Only Java's
// default (MurmurHash of the bucket key's BinaryRow) is implemented; a
// table with another function has its rows placed by rules compactd does
// not reproduce, so routing refuses it.
const OptBucketFunctionType = "bucket-function.type"

// Router places rows of a primary-key table as Java's
// FixedBucketRowKeyExtractor does: the partition as BinaryRow bytes, the
// trimmed primary key, and the bucket abs(hash(bucket key) % n) for any
// bucket count n, so that the same router serves fixed-bucket writes,
// postponed rows assigned to real buckets and rescales.
type Router struct {
	partTypes, bktTypes     []table.DataType
	keyIdx, partIdx, bktIdx []int
}

// NewRouter prepares the router of schema s.
func NewRouter(s *table.TableSchema) (*Router, error) {
	if v, ok := s.EffectiveOptions()[OptBucketFunctionType]; ok && v != "" && v != "default" {
		return nil, fmt.Errorf("%s=%s is not supported (compactd places rows by the default bucket function only)", OptBucketFunctionType, v)
	}
	r := &Router{partTypes: types(s.PartitionType()), bktTypes: types(s.BucketKeyType())}
	for _, k := range s.TrimmedPrimaryKeys() {
		r.keyIdx = append(r.keyIdx, s.Fields.Index(k))
	}
	for _, k := range s.PartitionKeys {
		r.partIdx = append(r.partIdx, s.Fields.Index(k))
	}
	for _, k := range s.BucketKeys() {
		i := s.Fields.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("bucket key %s is not a column", k)
		}
		r.bktIdx = append(r.bktIdx, i)
	}
	if len(r.bktIdx) == 0 {
		return nil, fmt.Errorf("the table has no bucket key")
	}
	return r, nil
}

// Partition is the BinaryRow of row's partition columns.
func (r *Router) Partition(row table.Row) ([]byte, error) {
	b, err := table.EncodeBinaryRow(r.partTypes, project(row, r.partIdx))
	if err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	return b, nil
}

// Key is row's trimmed primary key.
func (r *Router) Key(row table.Row) table.Row { return project(row, r.keyIdx) }

// Bucket is the bucket of row among n buckets.
func (r *Router) Bucket(row table.Row, n int32) (int32, error) {
	if n <= 0 {
		return 0, fmt.Errorf("invalid bucket count %d", n)
	}
	bk, err := table.EncodeBinaryRow(r.bktTypes, project(row, r.bktIdx))
	if err != nil {
		return 0, fmt.Errorf("bucket key: %w", err)
	}
	h, err := table.HashBinaryRow(bk)
	if err != nil {
		return 0, fmt.Errorf("bucket key: %w", err)
	}
	return table.BucketOf(h, n), nil
}

func project(row table.Row, idx []int) table.Row {
	out := make(table.Row, len(idx))
	for i, j := range idx {
		out[i] = row[j]
	}
	return out
}
