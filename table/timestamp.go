package table

import (
	"time"

	"github.com/compactd/compactd/internal/javacompat"
)

// Splitting instants. A Paimon Timestamp is epoch milliseconds plus a
// nano-of-millisecond in 0..999999, also before 1970: the last nanosecond of
// 1969 is {Millis: -1, NanoOfMilli: 999999}. Every conversion from a count
// of smaller units (micros, nanos, INT96 nanos of day) must therefore divide
// with floor division; Go's / and % truncate towards zero and would give a
// negative nano part. These helpers, over javacompat.FloorDiv and
// FloorMod, are the only place compactd splits instants; use them rather
// than / and %.

const (
	// MillisPerDay is the number of milliseconds in a day.
	MillisPerDay = 86_400_000
	// NanosPerMilli is the number of nanoseconds in a millisecond.
	NanosPerMilli = 1_000_000
)

// TimestampFromMicros splits epoch microseconds (Java's Timestamp.fromMicros).
func TimestampFromMicros(us int64) Timestamp {
	return Timestamp{Millis: javacompat.FloorDiv(us, 1000), NanoOfMilli: int32(javacompat.FloorMod(us, 1000) * 1000)}
}

// TimestampFromNanos splits epoch nanoseconds (an int64 of nanoseconds only
// covers 1677-09-21 to 2262-04-11).
func TimestampFromNanos(ns int64) Timestamp {
	return Timestamp{Millis: javacompat.FloorDiv(ns, NanosPerMilli), NanoOfMilli: int32(javacompat.FloorMod(ns, NanosPerMilli))}
}

// TimestampFromDayNanos is the timestamp nanosOfDay nanoseconds after the
// start of epoch day day. nanosOfDay may be negative or exceed a day: Java
// writes INT96 timestamps before 1970 with a day and nanoseconds both
// rounded towards zero (1969-12-31T23:59:59.999999999 is day 0 and -1 ns).
func TimestampFromDayNanos(day, nanosOfDay int64) Timestamp {
	return Timestamp{
		Millis:      day*MillisPerDay + javacompat.FloorDiv(nanosOfDay, NanosPerMilli),
		NanoOfMilli: int32(javacompat.FloorMod(nanosOfDay, NanosPerMilli)),
	}
}

// TimestampFromTime is the timestamp of t's instant (its wall clock in UTC),
// for every year time.Time holds.
func TimestampFromTime(t time.Time) Timestamp {
	ns := int64(t.Nanosecond()) // 0..999999999 whatever the sign of Unix()
	return Timestamp{Millis: t.Unix()*1000 + ns/NanosPerMilli, NanoOfMilli: int32(ns % NanosPerMilli)}
}

// Micros is the timestamp in epoch microseconds, the nanoseconds below a
// microsecond dropped towards the past (Java's Timestamp.toMicros).
func (ts Timestamp) Micros() int64 { return ts.Millis*1000 + int64(ts.NanoOfMilli/1000) }

// DayNanos is the epoch day and the nanoseconds within it, both floored:
// 0 <= nanosOfDay < 86400 s.
func (ts Timestamp) DayNanos() (day, nanosOfDay int64) {
	day = javacompat.FloorDiv(ts.Millis, MillisPerDay)
	return day, javacompat.FloorMod(ts.Millis, MillisPerDay)*NanosPerMilli + int64(ts.NanoOfMilli)
}

// Time is the instant as a time.Time in UTC.
func (ts Timestamp) Time() time.Time {
	return time.Unix(javacompat.FloorDiv(ts.Millis, 1000), javacompat.FloorMod(ts.Millis, 1000)*NanosPerMilli+int64(ts.NanoOfMilli)).UTC()
}
