package table

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Partition expiration options, read only by partition expiry (spaces
// around numbers trimmed, as compactd always read them); a malformed value
// is reported by PartitionExpiration, not by ParseOptions.
const (
	OptPartitionExpirationTime          = "partition.expiration-time"
	OptPartitionExpirationCheckInterval = "partition.expiration-check-interval"
	OptPartitionExpirationStrategy      = "partition.expiration-strategy"
	OptPartitionExpirationMaxNum        = "partition.expiration-max-num"
	OptPartitionExpirationBatchSize     = "partition.expiration-batch-size"
	OptPartitionTimestampPattern        = "partition.timestamp-pattern"
	OptPartitionTimestampFormatter      = "partition.timestamp-formatter"
)

// Partition expiration strategies (partition.expiration-strategy).
const (
	PartitionStrategyValuesTime = "values-time"
	PartitionStrategyUpdateTime = "update-time"
)

// PartitionExpiration are a table's partition.* expiration options.
type PartitionExpiration struct {
	// ExpirationTime is partition.expiration-time; 0 disables expiration.
	ExpirationTime time.Duration
	// CheckInterval is partition.expiration-check-interval (default 1h):
	// how often a scheduler should run partition expiry. Paimon's writer
	// randomises its first check within one interval.
	CheckInterval time.Duration
	// Strategy is PartitionStrategyValuesTime (default) or
	// PartitionStrategyUpdateTime.
	Strategy string
	// TimestampPattern and TimestampFormatter are
	// partition.timestamp-pattern and partition.timestamp-formatter.
	TimestampPattern, TimestampFormatter string
	// MaxNum is partition.expiration-max-num (default 100): most partitions
	// dropped per run.
	MaxNum int
	// BatchSize is partition.expiration-batch-size (0 = one commit).
	BatchSize int
}

// PartitionExpiration returns the partition expiration options, or the
// first problem with them.
func (o *Options) PartitionExpiration() (PartitionExpiration, error) {
	return o.partitionExpiration, o.partitionErr
}

// ParsePartitionExpiration reads only the partition expiration options of
// raw (ParseOptions does it too, for a table's own options).
func ParsePartitionExpiration(raw map[string]string) (PartitionExpiration, error) {
	o := PartitionExpiration{CheckInterval: time.Hour, Strategy: PartitionStrategyValuesTime, MaxNum: 100}
	dur := func(key string, dst *time.Duration) error {
		if v, ok := raw[key]; ok {
			d, err := ParseDuration(v)
			if err != nil {
				return fmt.Errorf("option %s=%q: %w", key, v, err)
			}
			*dst = d
		}
		return nil
	}
	num := func(key string, dst *int) error {
		if v, ok := raw[key]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return fmt.Errorf("option %s=%q: not a non-negative integer", key, v)
			}
			*dst = n
		}
		return nil
	}
	if err := errors.Join(
		dur(OptPartitionExpirationTime, &o.ExpirationTime),
		dur(OptPartitionExpirationCheckInterval, &o.CheckInterval),
		num(OptPartitionExpirationMaxNum, &o.MaxNum),
		num(OptPartitionExpirationBatchSize, &o.BatchSize),
	); err != nil {
		return o, err
	}
	if v, ok := raw[OptPartitionExpirationStrategy]; ok {
		o.Strategy = strings.TrimSpace(v)
	}
	if o.Strategy != PartitionStrategyValuesTime && o.Strategy != PartitionStrategyUpdateTime {
		return o, fmt.Errorf("option %s=%q: want %s or %s", OptPartitionExpirationStrategy, o.Strategy, PartitionStrategyValuesTime, PartitionStrategyUpdateTime)
	}
	o.TimestampPattern = raw[OptPartitionTimestampPattern]
	o.TimestampFormatter = raw[OptPartitionTimestampFormatter]
	return o, nil
}
