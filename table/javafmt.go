package table

// Java's text forms of values, byte for byte: Float/Double.toString
// (JavaFloatString), LocalDate and LocalDateTime.toString, and Paimon's
// DateTimeUtils timestamp and time formatting, over proleptic Gregorian
// civil dates. Partition directory names use them (partition_value.go);
// table/datafile's string casts use JavaFloatString.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// JavaFloatString formats as Float.toString/Double.toString: plain notation
// with at least one fraction digit for 10^-3 <= |f| < 10^7, otherwise
// d.dddE±n. Digits are the shortest that round-trip, as JDK 19+ prints
// them (older JDKs print a few values with more digits).
func JavaFloatString(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, bits)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	if e >= -3 && e < 7 {
		var intPart, frac string
		if e >= 0 {
			for len(digits) < e+1 {
				digits += "0"
			}
			intPart, frac = digits[:e+1], digits[e+1:]
		} else {
			intPart, frac = "0", strings.Repeat("0", -e-1)+digits
		}
		if frac == "" {
			frac = "0"
		}
		return sign + intPart + "." + frac
	}
	if len(digits) == 1 {
		// Scientific notation shows two digits at least, and Java picks
		// the two-digit decimal nearest the value: Double.MIN_VALUE is
		// 4.9E-324, not 5.0E-324.
		mant, exp, _ = strings.Cut(strings.TrimPrefix(strconv.FormatFloat(f, 'e', 1, bits), "-"), "e")
		e, _ = strconv.Atoi(exp)
		digits = strings.Replace(mant, ".", "", 1)
	}
	return sign + digits[:1] + "." + digits[1:] + "E" + strconv.Itoa(e)
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date.
func civil(days int64) (year int64, month, day int) {
	t := time.Unix(days*86400, 0).UTC()
	return int64(t.Year()), int(t.Month()), t.Day()
}

// formatLocalDate is Java LocalDate.toString.
func formatLocalDate(days int64) string {
	y, m, d := civil(days)
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

// localDateTimeString is Java LocalDateTime.toString of a Paimon timestamp
// (what Timestamp.toString returns): seconds only when non-zero, fraction
// in groups of three digits.
func localDateTimeString(ts Timestamp) string {
	days, nanoOfDay := ts.DayNanos()
	h := nanoOfDay / 3_600_000_000_000
	mi := nanoOfDay / 60_000_000_000 % 60
	s := nanoOfDay / 1_000_000_000 % 60
	nano := nanoOfDay % 1_000_000_000
	out := fmt.Sprintf("%sT%02d:%02d", formatLocalDate(days), h, mi)
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

// formatSQLTimestamp is Paimon's DateTimeUtils.formatTimestamp(ts,
// precision): yyyy-MM-dd HH:mm:ss, then the nine-digit fraction with
// trailing zeros removed while longer than precision.
func formatSQLTimestamp(ts Timestamp, precision int) string {
	days, nanoOfDay := ts.DayNanos()
	out := fmt.Sprintf("%s %02d:%02d:%02d", formatLocalDate(days),
		nanoOfDay/3_600_000_000_000, nanoOfDay/60_000_000_000%60, nanoOfDay/1_000_000_000%60)
	return out + trimmedFraction(fmt.Sprintf("%09d", nanoOfDay%1_000_000_000), precision)
}

// formatSQLTime renders TIME(p) millis of day as HH:mm:ss[.fff].
func formatSQLTime(ms int32, precision int) string {
	m := int64(ms)
	out := fmt.Sprintf("%02d:%02d:%02d", m/3_600_000, m/60_000%60, m/1000%60)
	return out + trimmedFraction(fmt.Sprintf("%03d", m%1000), min(precision, 3))
}

func trimmedFraction(frac string, precision int) string {
	for len(frac) > precision && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	if frac == "" {
		return ""
	}
	return "." + frac
}
