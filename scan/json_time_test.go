package scan

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/compactd/compactd/table"
)

// appendDate and appendTimestamp write what formatting through time.Time
// wrote before appendUTC: every day from year -220 to 10200 (both sides of
// the four-digit range, leap years, century rules), and timestamps at day
// and year edges, before 1970, with nanoseconds in and out of range.
func TestAppendUTCMatchesTime(t *testing.T) {
	t.Parallel()
	quote := func(s string) []byte { return []byte(`"` + s + `"`) }
	var got []byte
	for days := int32(-800000); days <= 3000000; days++ {
		got = appendDate(got[:0], days)
		if want := quote(time.Unix(int64(days)*86400, 0).UTC().Format("2006-01-02")); !bytes.Equal(got, want) {
			t.Fatalf("day %d: got %s, want %s", days, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(19, 9))
	millis := []int64{0, -1, 1, 86399999, 86400000, -86400000, -86400001, -62135596800000, -62135596800001, 253402300799999, 253402300800000, math.MinInt64 / 4, math.MaxInt64 / 4}
	for range 200000 {
		millis = append(millis, rng.Int64N(2*253402300800000)-253402300800000)
	}
	nanos := []int32{0, 1, 999999, -1, 1000000, 2000000}
	for _, ms := range millis {
		for _, n := range append(nanos, rng.Int32N(1000000)) {
			ts := table.Timestamp{Millis: ms, NanoOfMilli: n}
			got = appendTimestamp(got[:0], ts)
			if want := quote(ts.Time().Format("2006-01-02T15:04:05.000000000")); !bytes.Equal(got, want) {
				t.Fatalf("%+v: got %s, want %s", ts, got, want)
			}
		}
	}
}
