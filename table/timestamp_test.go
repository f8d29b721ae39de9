package table

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/compactd/compactd/internal/javacompat"
)

const (
	firstInstantSec = -62135596800 // 0001-01-01T00:00:00Z
	lastInstantSec  = 253402300799 // 9999-12-31T23:59:59Z
)

// randomInstants returns n instants between 0001 and 9999, half of them
// within two days of the epoch, every one with nanosecond digits, plus the
// instants next to the epoch and to midnights where truncating division
// goes wrong.
func randomInstants(r *rand.Rand, n int) []time.Time {
	out := []time.Time{
		time.Unix(-1, 999_999_999), time.Unix(-1, 999_000_001), time.Unix(-1, 1), time.Unix(0, 0),
		time.Unix(0, 1), time.Unix(-86400, 1), time.Unix(-86401, 999_999_999),
		time.Unix(firstInstantSec, 0), time.Unix(firstInstantSec, 1), time.Unix(lastInstantSec, 999_999_999),
	}
	for range n {
		var sec int64
		if r.IntN(2) == 0 {
			sec = r.Int64N(4*86400) - 2*86400
		} else {
			sec = firstInstantSec + r.Int64N(lastInstantSec-firstInstantSec+1)
		}
		out = append(out, time.Unix(sec, r.Int64N(1e9)))
	}
	for i := range out {
		out[i] = out[i].UTC()
	}
	return out
}

// truncated drops the digits TIMESTAMP(p) cannot hold, towards the past.
func truncated(tm time.Time, p int) time.Time {
	unit := time.Duration(1)
	for range 9 - p {
		unit *= 10
	}
	return tm.Truncate(unit) // Truncate is towards the zero time, year 1: the past
}

func testSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return seed
}

// The instant splits agree with Go's time package (an independent
// implementation of the proleptic Gregorian calendar and of floor division)
// on random instants of years 0001-9999, before and after 1970.
func TestTimestampSplitsAgreeWithTimePackage(t *testing.T) {
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 1))
	for _, tm := range randomInstants(r, 20000) {
		ts := TimestampFromTime(tm)
		if ts.NanoOfMilli < 0 || ts.NanoOfMilli > 999_999 {
			t.Fatalf("%s: nano-of-milli %d", tm, ts.NanoOfMilli)
		}
		if ts.Millis != tm.UnixMilli() || int64(ts.NanoOfMilli) != int64(tm.Nanosecond())%1_000_000 {
			t.Fatalf("%s: %+v, want millis %d", tm, ts, tm.UnixMilli())
		}
		if !ts.Time().Equal(tm) {
			t.Fatalf("%+v: Time() %s, want %s", ts, ts.Time(), tm)
		}
		day, nod := ts.DayNanos()
		midnight := time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, time.UTC)
		if day != javacompat.FloorDiv(midnight.Unix(), 86400) || nod != int64(tm.Sub(midnight)) {
			t.Fatalf("%s: DayNanos %d %d", tm, day, nod)
		}
		if got := TimestampFromDayNanos(day, nod); got != ts {
			t.Fatalf("%s: from floored day/nanos %+v, want %+v", tm, got, ts)
		}
		// Java's INT96 split: day and millisecond of day towards zero.
		jDay, jNod := ts.Millis/MillisPerDay, ts.Millis%MillisPerDay*NanosPerMilli+int64(ts.NanoOfMilli)
		if got := TimestampFromDayNanos(jDay, jNod); got != ts {
			t.Fatalf("%s: from Java's day %d and nanos %d: %+v, want %+v", tm, jDay, jNod, got, ts)
		}
		us := truncated(tm, 6)
		if got := TimestampFromMicros(us.UnixMicro()); got != TimestampFromTime(us) {
			t.Fatalf("%s: from micros %d: %+v", us, us.UnixMicro(), got)
		}
		if got := TimestampFromTime(us).Micros(); got != us.UnixMicro() {
			t.Fatalf("%s: Micros %d, want %d", us, got, us.UnixMicro())
		}
		if got := ts.Micros(); got != truncated(tm, 6).UnixMicro() {
			t.Fatalf("%s: Micros %d drops the nanoseconds towards the past, want %d", tm, got, truncated(tm, 6).UnixMicro())
		}
		if tm.Year() > 1677 && tm.Year() < 2262 {
			if got := TimestampFromNanos(tm.UnixNano()); got != ts {
				t.Fatalf("%s: from nanos %d: %+v", tm, tm.UnixNano(), got)
			}
		}
	}
}

// Timestamps of every precision and both kinds survive a BinaryRow (compact
// millis up to precision 3, millis + nano-of-milli above) and compare in
// the order of their instants.
func TestTimestampBinaryRowRoundTripEveryPrecision(t *testing.T) {
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 2))
	instants := randomInstants(r, 2000)
	for _, kind := range []string{"TIMESTAMP(%d)", "TIMESTAMP_LTZ(%d)"} {
		for p := 0; p <= 9; p++ {
			typ, err := ParseAtomicType(fmt.Sprintf(kind, p))
			if err != nil {
				t.Fatal(err)
			}
			types := []DataType{typ, typ}
			for i, tm := range instants {
				a := TimestampFromTime(truncated(tm, p))
				other := instants[(i+1)%len(instants)]
				b := TimestampFromTime(truncated(other, p))
				row := Row{a, b}
				enc, err := EncodeBinaryRow(types, row)
				if err != nil {
					t.Fatalf("%s %s: %v", typ, tm, err)
				}
				dec, err := DecodeBinaryRow(types, enc)
				if err != nil {
					t.Fatalf("%s %s: %v", typ, tm, err)
				}
				if !reflect.DeepEqual(dec, row) {
					t.Fatalf("%s: %+v decodes as %+v", typ, row, dec)
				}
				if got, want := sign(CompareValues(typ, a, b)), truncated(tm, p).Compare(truncated(other, p)); got != want {
					t.Fatalf("%s: compare %s with %s = %d, want %d", typ, tm, other, got, want)
				}
			}
		}
	}
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}
