package javacompat

import (
	"math"
	"testing"
	"time"
)

func TestFloorDivAndMod(t *testing.T) {
	for _, c := range []struct{ a, b, q, m int64 }{
		{7, 2, 3, 1}, {-7, 2, -4, 1}, {7, -2, -4, -1}, {-7, -2, 3, -1}, {-1, 1000, -1, 999}, {-1000, 1000, -1, 0}, {0, 5, 0, 0},
	} {
		if q, m := FloorDiv(c.a, c.b), FloorMod(c.a, c.b); q != c.q || m != c.m {
			t.Errorf("FloorDiv/FloorMod(%d, %d) = %d, %d; want %d, %d", c.a, c.b, q, m, c.q, c.m)
		}
	}
}

// Expected texts are what Float.toString and Double.toString print on
// JDK 19+.
func TestFloatString(t *testing.T) {
	for _, c := range []struct {
		f    float64
		bits int
		want string
	}{
		{0, 64, "0.0"},
		{math.Copysign(0, -1), 64, "-0.0"},
		{math.NaN(), 64, "NaN"},
		{math.Inf(1), 32, "Infinity"},
		{math.Inf(-1), 64, "-Infinity"},
		{1, 64, "1.0"},
		{-1.5, 64, "-1.5"},
		{100, 64, "100.0"},
		{0.001, 64, "0.001"},
		{0.0001, 64, "1.0E-4"},
		{1234567, 64, "1234567.0"},
		{1e7, 64, "1.0E7"},
		{12345678.9, 64, "1.23456789E7"},
		{0.1, 64, "0.1"},
		{float64(float32(0.1)), 32, "0.1"},
		{float64(float32(3.4028235e38)), 32, "3.4028235E38"},
		{5e-324, 64, "4.9E-324"},
		{1.7976931348623157e308, 64, "1.7976931348623157E308"},
	} {
		if got := FloatString(c.f, c.bits); got != c.want {
			t.Errorf("FloatString(%v, %d) = %q, want %q", c.f, c.bits, got, c.want)
		}
	}
}

func TestTrimAndBlank(t *testing.T) {
	for _, c := range []struct {
		s, trimmed string
		blank      bool
	}{
		{"", "", true},
		{" \t\n", "", true},
		{"\x1c\x1f", "", true},
		{"\u2028\u3000", "\u2028\u3000", true}, // Java whitespace above ' ': trim keeps it
		{"\u00a0", "\u00a0", false},            // no-break space is not whitespace
		{"\u2007\u202f", "\u2007\u202f", false},
		{"\x00 a \x01", "a", false},
		{" a b ", "a b", false},
	} {
		if got := Trim(c.s); got != c.trimmed {
			t.Errorf("Trim(%q) = %q, want %q", c.s, got, c.trimmed)
		}
		if got := IsBlank(c.s); got != c.blank {
			t.Errorf("IsBlank(%q) = %v, want %v", c.s, got, c.blank)
		}
	}
}

func TestDateAndTimeText(t *testing.T) {
	const day = int64(86_400_000)
	for _, c := range []struct{ name, got, want string }{
		{"LocalDateString epoch", LocalDateString(0), "1970-01-01"},
		{"LocalDateString before 1970", LocalDateString(-1), "1969-12-31"},
		{"LocalDateString year 1", LocalDateString(-719162), "0001-01-01"},
		{"LocalDateString year 10000", LocalDateString(2932897), "+10000-01-01"},
		{"LocalDateTimeString minutes only", LocalDateTimeString(0, 0), "1970-01-01T00:00"},
		{"LocalDateTimeString millis", LocalDateTimeString(1500, 0), "1970-01-01T00:00:01.500"},
		{"LocalDateTimeString micros", LocalDateTimeString(-1, 999000), "1969-12-31T23:59:59.999999"},
		{"LocalDateTimeString nanos", LocalDateTimeString(0, 1), "1970-01-01T00:00:00.000000001"},
		{"FormatSQLTimestamp p0", FormatSQLTimestamp(day+1000, 0, 0), "1970-01-02 00:00:01"},
		{"FormatSQLTimestamp p3 keeps digits", FormatSQLTimestamp(1500, 0, 3), "1970-01-01 00:00:01.500"},
		{"FormatSQLTimestamp p9 before 1970", FormatSQLTimestamp(-1, 999999, 9), "1969-12-31 23:59:59.999999999"},
		{"FormatSQLTime p0", FormatSQLTime(3_723_000, 0), "01:02:03"},
		{"FormatSQLTime p3", FormatSQLTime(3_723_400, 3), "01:02:03.400"},
		{"FormatSQLTime p1 trims", FormatSQLTime(3_723_400, 1), "01:02:03.4"},
		{"FormatDate epoch", FormatDate(0), "1970-01-01"},
		{"FormatDate before 1970", FormatDate(-1), "1969-12-31"},
		{"FormatDate year 10000 keeps four digits", FormatDate(2932897), "0000-01-01"},
		{"FormatTime p0", FormatTime(3_723_400, 0), "01:02:03"},
		{"FormatTime p3 stops after the last non-zero digit", FormatTime(3_723_400, 3), "01:02:03.4"},
		{"FormatTime p3 keeps one zero", FormatTime(3_723_000, 3), "01:02:03.0"},
		{"FormatTime negative wraps", FormatTime(-1, 3), "23:59:59.999"},
		{"FormatTimestamp p0", FormatTimestamp(day+1000, 0, 0), "1970-01-02 00:00:01"},
		{"FormatTimestamp p3", FormatTimestamp(1500, 0, 3), "1970-01-01 00:00:01.500"},
		{"FormatTimestamp p9 before 1970", FormatTimestamp(-1, 999999, 9), "1969-12-31 23:59:59.999999999"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

// DateTimeUtils' Julian arithmetic is the proleptic Gregorian calendar of
// LocalDate from the year -4800 on, and UnixDate inverts it.
func TestJulianCivilIsProlepticGregorian(t *testing.T) {
	const first, last = -2_472_632, 2_932_896 // -4800-03-01 .. 9999-12-31
	for d := int64(first); d <= last; d += 97 {
		y, m, dd := julianCivil(int32(d))
		gy, gm, gd := CivilFromDays(d)
		if int64(y) != gy || m != gm || dd != gd {
			t.Fatalf("day %d: julian %d-%d-%d, proleptic %d-%d-%d", d, y, m, dd, gy, gm, gd)
		}
		if back := UnixDate(y, m, dd); int64(back) != d {
			t.Fatalf("UnixDate(%d, %d, %d) = %d, want %d", y, m, dd, back, d)
		}
	}
}

// The partition form of a timestamp and the CAST form agree in the years
// 0..9999.
func TestSQLTimestampMatchesFormatTimestamp(t *testing.T) {
	const firstMillis, lastMillis = -62_167_219_200_000, 253_402_300_799_999 // 0000-01-01 .. 9999-12-31
	step := int64(lastMillis-firstMillis) / 20011
	for ms := int64(firstMillis); ms <= lastMillis; ms += step {
		for p := 0; p <= 9; p++ {
			nano := int32(FloorMod(ms*7919, 1_000_000))
			if a, b := FormatSQLTimestamp(ms, nano, p), FormatTimestamp(ms, nano, p); a != b {
				t.Fatalf("millis %d nano %d p %d: FormatSQLTimestamp %q, FormatTimestamp %q", ms, nano, p, a, b)
			}
		}
	}
}

func TestCivilFromDaysMatchesTime(t *testing.T) {
	for d := int64(-3_000_000); d <= 3_000_000; d += 7 {
		tm := time.Unix(d*86400, 0).UTC()
		y, m, dd := CivilFromDays(d)
		if y != int64(tm.Year()) || m != int(tm.Month()) || dd != tm.Day() {
			t.Fatalf("day %d: %d-%d-%d, time says %s", d, y, m, dd, tm.Format("2006-01-02"))
		}
	}
}
