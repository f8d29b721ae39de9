package sched

import (
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/policy"
)

// A due compaction of a fixed-bucket table with more buckets than a unit
// covers is split into consecutive ranges, the last open-ended; every
// other job, and a table of few, dynamic or postponed buckets, is one
// whole-table unit.
func TestUnitsOfSplitsLargeFixedBucketTables(t *testing.T) {
	t.Parallel()
	eff := func(bucket string) *policy.Effective {
		return policy.Resolve("db.t", map[string]string{"bucket": bucket}, nil, nil)
	}
	us := unitsOf("/wh", "db.t", policy.Compact, eff("10"), 4)
	want := []compact.BucketRange{{From: 0, To: 4}, {From: 4, To: 8}, {From: 8, To: 0}}
	if len(us) != len(want) {
		t.Fatalf("10 buckets, 4 per unit: %v", us)
	}
	for i, u := range us {
		if u.Buckets == nil || *u.Buckets != want[i] || u.Kind != policy.Compact || u.Table != "db.t" || u.Warehouse != "/wh" {
			t.Fatalf("unit %d: %v, want buckets %v", i, u, want[i])
		}
	}
	if us := unitsOf("/wh", "db.t", policy.FullCompaction, eff("8"), 4); len(us) != 2 || *us[1].Buckets != (compact.BucketRange{From: 4}) {
		t.Fatalf("full compaction of 8 buckets: %v", us)
	}
	for _, c := range []struct {
		k      policy.Kind
		bucket string
	}{{policy.Expire, "16"}, {policy.Orphan, "16"}, {policy.Compact, "4"}, {policy.Compact, "-1"}, {policy.Compact, "-2"}} {
		if us := unitsOf("/wh", "db.t", c.k, eff(c.bucket), 4); len(us) != 1 || us[0].Buckets != nil {
			t.Errorf("%s of a bucket=%s table: %v, want one whole-table unit", c.k, c.bucket, us)
		}
	}
}
