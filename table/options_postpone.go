package table

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Options of postponed-bucket tables (bucket = -2), read by the postponed
// compaction only; a malformed value is reported by ParsePostponeOptions.
const (
	OptPostponeDefaultBucketNum      = "postpone.default-bucket-num"
	OptPostponeTargetRowNumPerBucket = "postpone.target-row-num-per-bucket"
	OptPostponeMergeOnRead           = "postpone.merge-on-read"
	OptWriteBufferSize               = "write-buffer-size"
)

// PostponeOptions decide how a postponed compaction assigns buckets.
type PostponeOptions struct {
	// DefaultBucketNum is postpone.default-bucket-num (default 1): the
	// bucket count of a partition compacted for the first time.
	DefaultBucketNum int
	// TargetRowNumPerBucket is postpone.target-row-num-per-bucket (Paimon
	// 2.0; 0 when unset): when set, a partition compacted for the first
	// time gets ceil(postponed rows / target) buckets instead.
	TargetRowNumPerBucket int64
	// MergeOnRead is postpone.merge-on-read (Paimon 2.0): batch reads
	// merge postponed rows in, which only an engine that shuffles them can.
	MergeOnRead bool
	// WriteBufferSize is write-buffer-size (default 256 mb): the memory a
	// Java writer buffers before it flushes a level-0 file.
	WriteBufferSize int64
}

// ParsePostponeOptions reads the postponed-bucket options of raw.
func ParsePostponeOptions(raw map[string]string) (PostponeOptions, error) {
	o := PostponeOptions{DefaultBucketNum: 1, WriteBufferSize: 256 << 20}
	var errs []error
	if v, ok := raw[OptPostponeDefaultBucketNum]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("option %s=%q: not a positive integer", OptPostponeDefaultBucketNum, v))
		}
		o.DefaultBucketNum = n
	}
	if v, ok := raw[OptPostponeTargetRowNumPerBucket]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			// Java refuses a non-positive target when it computes a count.
			errs = append(errs, fmt.Errorf("option %s=%q: not a positive integer", OptPostponeTargetRowNumPerBucket, v))
		}
		o.TargetRowNumPerBucket = n
	}
	if v, ok := raw[OptPostponeMergeOnRead]; ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			errs = append(errs, fmt.Errorf("option %s=%q: not a boolean", OptPostponeMergeOnRead, v))
		}
		o.MergeOnRead = b
	}
	if v, ok := raw[OptWriteBufferSize]; ok {
		n, err := ParseMemorySize(v)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("option %s=%q: not a positive memory size", OptWriteBufferSize, v))
		}
		o.WriteBufferSize = n
	}
	return o, errors.Join(errs...)
}

// BucketsFor is the bucket count Java gives a partition of a postponed
// table whose first postponed compaction sees rows postponed rows
// (PostponeUtils.determineBucketNum without a known count).
func (o PostponeOptions) BucketsFor(rows int64) (int32, error) {
	if o.TargetRowNumPerBucket > 0 {
		n := int64(1)
		if rows > 0 {
			n = (rows-1)/o.TargetRowNumPerBucket + 1
		}
		if n > 1<<31-1 {
			return 0, fmt.Errorf("%d postponed rows at %s=%d need %d buckets, more than Paimon allows", rows, OptPostponeTargetRowNumPerBucket, o.TargetRowNumPerBucket, n)
		}
		return int32(n), nil
	}
	return int32(o.DefaultBucketNum), nil
}
