package javacompat

// Dates, times and timestamps as Java prints them. Two Java families
// render them, and they differ outside years 0..9999 and in the fraction
// of TIME, so both are here under their Java names:
//
//   - java.time (LocalDate, LocalDateTime toString) over CivilFromDays,
//     the proleptic Gregorian calendar of LocalDate.ofEpochDay. Partition
//     directory names use them: LocalDateString, LocalDateTimeString, and
//     FormatSQLTime and FormatSQLTimestamp for the non-legacy names.
//   - Paimon's DateTimeUtils (formatDate, formatTimestampMillis,
//     formatTimestamp), which the CAST to STRING uses: Julian-day integer
//     arithmetic (julianToString) and four-digit years (FormatDate,
//     FormatTime, FormatTimestamp).
//
// FormatSQLTimestamp and FormatTimestamp print the same text for the years
// 0..9999 (TestSQLTimestampMatchesFormatTimestamp) and differ in how they
// print other years; each keeps the behaviour its callers were tested with.
//
// A Paimon timestamp is (epoch millis, nano-of-milli); the formatters take
// those two numbers so that they need nothing of package table.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

const (
	// JulianEpochDay is the Julian day number of 1970-01-01 (Java's
	// DateTimeUtils.EPOCH_JULIAN), also the epoch of INT96 timestamps.
	JulianEpochDay = 2440588
	millisPerDay   = 86400000
)

// CivilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (LocalDate.ofEpochDay).
//
// It is Howard Hinnant's civil_from_days, in integer arithmetic: going
// through time.Unix and its Year, Month and Day was a date computation
// each, on scan's per-value path (DATE and TIMESTAMP JSON).
// TestCivilFromDaysMatchesTime compares it with package time.
func CivilFromDays(days int64) (year int64, month, day int) {
	z := days + 719468
	era := FloorDiv(z, 146097)
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11], from March
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	y := yoe + era*400
	if m <= 2 {
		y++
	}
	return y, int(m), int(d)
}

// julianCivil is the date arithmetic of DateTimeUtils.julianToString, in
// Java's truncating integer division. It equals CivilFromDays from the
// year -4800 on (TestJulianCivilIsProlepticGregorian); before that Java's
// arithmetic gives other numbers, and FormatDate prints what Java prints.
func julianCivil(days int32) (year, month, day int) {
	j := int(days) + JulianEpochDay + 32044
	g := j / 146097
	dg := j % 146097
	c := (dg/36524 + 1) * 3 / 4
	dc := dg - c*36524
	b := dc / 1461
	db := dc % 1461
	a := (db/365 + 1) * 3 / 4
	da := db - a*365
	y := g*400 + c*100 + b*4 + a
	m := (da*5+308)/153 - 2
	d := da - (m+4)*153/5 + 122
	return y - 4800 + (m+2)/12, (m+2)%12 + 1, d + 1
}

// UnixDate is DateTimeUtils.ymdToUnixDate: the epoch day of a proleptic
// Gregorian date.
func UnixDate(y, m, d int) int32 {
	a := (14 - m) / 12
	yy := y + 4800 - a
	mm := m + 12*a - 3
	julian := d + (153*mm+2)/5 + 365*yy + yy/4 - yy/100 + yy/400 - 32045
	return int32(julian - JulianEpochDay)
}

// LocalDateString is LocalDate.toString of an epoch day: four digits of
// year at least, a sign before years below 0 and above 9999.
func LocalDateString(days int64) string {
	y, m, d := CivilFromDays(days)
	var ys string
	switch {
	case y < 0 && y > -1000:
		ys = fmt.Sprintf("-%04d", -y)
	case y >= 0 && y < 1000:
		ys = fmt.Sprintf("%04d", y)
	case y > 9999:
		ys = "+" + strconv.FormatInt(y, 10)
	default:
		ys = strconv.FormatInt(y, 10)
	}
	return fmt.Sprintf("%s-%02d-%02d", ys, m, d)
}

// dayNanos splits a Paimon timestamp into its epoch day and the
// nanoseconds within it, both floored.
func dayNanos(millis int64, nanoOfMilli int32) (day, nanoOfDay int64) {
	return FloorDiv(millis, millisPerDay), FloorMod(millis, millisPerDay)*1_000_000 + int64(nanoOfMilli)
}

// LocalDateTimeString is LocalDateTime.toString of a Paimon timestamp
// (what Paimon's Timestamp.toString returns): seconds only when non-zero,
// the fraction in groups of three digits.
func LocalDateTimeString(millis int64, nanoOfMilli int32) string {
	days, nanoOfDay := dayNanos(millis, nanoOfMilli)
	h := nanoOfDay / 3_600_000_000_000
	mi := nanoOfDay / 60_000_000_000 % 60
	s := nanoOfDay / 1_000_000_000 % 60
	nano := nanoOfDay % 1_000_000_000
	out := fmt.Sprintf("%sT%02d:%02d", LocalDateString(days), h, mi)
	if s > 0 || nano > 0 {
		out += fmt.Sprintf(":%02d", s)
		switch {
		case nano == 0:
		case nano%1_000_000 == 0:
			out += fmt.Sprintf(".%03d", nano/1_000_000)
		case nano%1000 == 0:
			out += fmt.Sprintf(".%06d", nano/1000)
		default:
			out += fmt.Sprintf(".%09d", nano)
		}
	}
	return out
}

// FormatSQLTimestamp is DateTimeUtils.formatTimestamp(ts, precision) as
// partition names use it: yyyy-MM-dd HH:mm:ss (the date as LocalDateString
// prints it), then the nine-digit fraction with trailing zeros removed
// while longer than precision.
func FormatSQLTimestamp(millis int64, nanoOfMilli int32, precision int) string {
	days, nanoOfDay := dayNanos(millis, nanoOfMilli)
	out := fmt.Sprintf("%s %02d:%02d:%02d", LocalDateString(days),
		nanoOfDay/3_600_000_000_000, nanoOfDay/60_000_000_000%60, nanoOfDay/1_000_000_000%60)
	return out + trimmedFraction(fmt.Sprintf("%09d", nanoOfDay%1_000_000_000), precision)
}

// FormatSQLTime renders TIME(p) millis of day as HH:mm:ss[.fff], the
// three-digit fraction with trailing zeros removed while longer than
// precision.
func FormatSQLTime(ms int32, precision int) string {
	m := int64(ms)
	out := fmt.Sprintf("%02d:%02d:%02d", m/3_600_000, m/60_000%60, m/1000%60)
	return out + trimmedFraction(fmt.Sprintf("%03d", m%1000), min(precision, 3))
}

// trimmedFraction drops trailing zeros from frac while it is longer than
// precision and returns it after a '.', or "" when nothing is left.
func trimmedFraction(frac string, precision int) string {
	for len(frac) > precision && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	if frac == "" {
		return ""
	}
	return "." + frac
}

// digitsN appends the last n decimal digits of i as Java's int2/int4 do.
func digitsN(sb *strings.Builder, i, n int) {
	for k := n - 1; k >= 0; k-- {
		sb.WriteRune(rune('0' + (i/int(math.Pow10(k)))%10))
	}
}

// FormatDate is DateTimeUtils.formatDate: yyyy-MM-dd of an epoch day, the
// year's last four digits.
func FormatDate(days int32) string {
	var sb strings.Builder
	y, m, d := julianCivil(days)
	digitsN(&sb, y, 4)
	sb.WriteByte('-')
	digitsN(&sb, m, 2)
	sb.WriteByte('-')
	digitsN(&sb, d, 2)
	return sb.String()
}

// FormatTime is DateTimeUtils.formatTimestampMillis of a TIME: HH:mm:ss
// and, for a positive precision, the milliseconds up to the precision,
// stopping after the last non-zero digit but keeping at least one.
func FormatTime(t int32, p int) string {
	time := int(t)
	for time < 0 {
		time += millisPerDay
	}
	var sb strings.Builder
	digitsN(&sb, time/3600000, 2)
	sb.WriteByte(':')
	digitsN(&sb, time%3600000/60000, 2)
	sb.WriteByte(':')
	digitsN(&sb, time%60000/1000, 2)
	if p > 0 {
		sb.WriteByte('.')
		ms := time % 1000
		for p > 0 {
			sb.WriteByte(byte('0' + ms/100))
			ms = ms % 100 * 10
			if ms == 0 {
				break
			}
			p--
		}
	}
	return sb.String()
}

// FormatTimestamp is DateTimeUtils.formatTimestamp of a Paimon timestamp:
// yyyy-MM-dd HH:mm:ss (the date as FormatDate prints it) and the nine-digit
// fraction with trailing zeros dropped down to the precision.
func FormatTimestamp(millis int64, nanoOfMilli int32, p int) string {
	day := FloorDiv(millis, millisPerDay)
	ms := FloorMod(millis, millisPerDay)
	var sb strings.Builder
	sb.WriteString(FormatDate(int32(day)))
	sb.WriteByte(' ')
	digitsN(&sb, int(ms/3600000), 2)
	sb.WriteByte(':')
	digitsN(&sb, int(ms%3600000/60000), 2)
	sb.WriteByte(':')
	digitsN(&sb, int(ms%60000/1000), 2)
	sb.WriteString(trimmedFraction(fmt.Sprintf("%09d", ms%1000*1000000+int64(nanoOfMilli)), p))
	return sb.String()
}
