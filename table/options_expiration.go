package table

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// OptConsumerChangelogOnly is consumer.changelog-only, read only by
// snapshot expiration (as Go's strconv.ParseBool reads it, spaces trimmed,
// as compactd's expiration always did); a malformed value is reported by
// ExpirationErr.
const OptConsumerChangelogOnly = "consumer.changelog-only"

// expirationOnly are the typed options only snapshot expiration reads.
type expirationOnly struct {
	// ConsumerChangelogOnly is consumer.changelog-only: consumers then bound
	// only changelog expiry, not snapshot expiry.
	ConsumerChangelogOnly bool
}

func (o *Options) parseExpirationOnly(raw map[string]string) error {
	v, ok := raw[OptConsumerChangelogOnly]
	if !ok {
		return nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return fmt.Errorf("option %s=%q: %w", OptConsumerChangelogOnly, v, err)
	}
	o.ConsumerChangelogOnly = b
	return nil
}

// ExpirationErr reports a malformed expiration-only option and a snapshot
// retention Java refuses to expire with (see ValidateRetention).
func (o *Options) ExpirationErr() error {
	return errors.Join(o.expirationErr,
		ValidateRetention(o.SnapshotNumRetainedMin, o.SnapshotNumRetainedMax, o.SnapshotExpireLimit, o.SnapshotTimeRetained))
}

// ValidateRetention checks the invariants Java enforces before expiring
// snapshots: at least one snapshot retained, max not below min, a positive
// expire limit and a non-negative time retained.
func ValidateRetention(retainMin, retainMax, limit int, timeRetained time.Duration) error {
	if retainMin < 1 {
		return fmt.Errorf("snapshot.num-retained.min must be at least 1, got %d", retainMin)
	}
	if retainMax < retainMin {
		return fmt.Errorf("retainMax (%d) must not be less than retainMin (%d)", retainMax, retainMin)
	}
	if limit < 1 {
		return fmt.Errorf("snapshot.expire.limit must be at least 1, got %d", limit)
	}
	if timeRetained < 0 {
		return fmt.Errorf("snapshot.time-retained must not be negative, got %s", timeRetained)
	}
	return nil
}
