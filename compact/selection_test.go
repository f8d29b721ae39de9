package compact_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
)

// A partition or bucket selection that names nothing is an error, not
// "nothing to compact" (issue 18): --partition garbage, an unknown
// partition key, a partition the table does not have, --bucket 7 on a
// 2-bucket table.
func TestSelectionsThatMatchNothingAreErrors(t *testing.T) {
	tb := newTable(t, map[string]string{"bucket": "2", "write-only": "true"})
	writeRandom(t, tb, rand.New(rand.NewPCG(3, 4)), "w", 3, 30, 30, false)
	seven, one := 7, 1
	for _, c := range []struct {
		o    compact.Options
		want string
	}{
		{compact.Options{Partition: "garbage"}, "want key=value"},
		{compact.Options{Partition: "dt=p1"}, "dt is not a partition key"},
		{compact.Options{Partition: "p=p9"}, "has no partition p=p9"},
		{compact.Options{Bucket: &seven}, "has no bucket 7"},
	} {
		_, _, _, err := compact.PlanTable(context.Background(), reopen(t, tb), c.o, time.Now())
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), reopen(t, tb).FullName()) {
			t.Errorf("%+v: %v, want an error naming the table and %q", c.o, err, c.want)
		}
		if _, err := compact.Run(context.Background(), reopen(t, tb), c.o); err == nil {
			t.Errorf("%+v: Run did not fail", c.o)
		}
	}
	for _, o := range []compact.Options{{Partition: "p=p1"}, {Bucket: &one}, {Partition: "p=p2", Bucket: &one}} {
		if _, _, _, err := compact.PlanTable(context.Background(), reopen(t, tb), o, time.Now()); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
