package datafile

// DATE, TIME and TIMESTAMP casts: precision truncation, Paimon's civil-date
// arithmetic, the text forms DateTimeUtils prints, and the parsing of date,
// time and timestamp strings as DateTimeUtils parses them.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/compactd/compactd/table"
)

// truncateTimestamp is DateTimeUtils.truncate (Paimon master): when the
// fraction of a second has more significant digits than the precision, the
// epoch milliseconds (precision <= 3) or the nanoseconds of the millisecond
// lose their last digits, by Java's division towards zero.
func truncateTimestamp(ts table.Timestamp, p int) table.Timestamp {
	nano := table.FloorMod(ts.Millis, 1000)*1000000 + int64(ts.NanoOfMilli)
	frac := strings.TrimRight(fmt.Sprintf("%09d", nano), "0")
	if len(frac) <= p {
		return ts
	}
	if p <= 3 {
		m := int64(math.Pow10(3 - p))
		return table.Timestamp{Millis: ts.Millis / m * m}
	}
	m := int32(math.Pow10(9 - p))
	return table.Timestamp{Millis: ts.Millis, NanoOfMilli: ts.NanoOfMilli / m * m}
}

// civil is Paimon's julian-day arithmetic (DateTimeUtils.julianToString).
func civil(days int32) (year, month, day int) {
	j := int(days) + julianEpochDay + 32044
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

func unixDate(y, m, d int) int32 {
	a := (14 - m) / 12
	yy := y + 4800 - a
	mm := m + 12*a - 3
	julian := d + (153*mm+2)/5 + 365*yy + yy/4 - yy/100 + yy/400 - 32045
	return int32(julian - julianEpochDay)
}

// digitsN appends the last n decimal digits of i as Java's int2/int4 do.
func digitsN(sb *strings.Builder, i, n int) {
	for k := n - 1; k >= 0; k-- {
		sb.WriteRune(rune('0' + (i/int(math.Pow10(k)))%10))
	}
}

func formatDate(days int32) string {
	var sb strings.Builder
	y, m, d := civil(days)
	digitsN(&sb, y, 4)
	sb.WriteByte('-')
	digitsN(&sb, m, 2)
	sb.WriteByte('-')
	digitsN(&sb, d, 2)
	return sb.String()
}

// formatTime is DateTimeUtils.formatTimestampMillis: HH:mm:ss and, for a
// positive precision, the milliseconds up to the precision, stopping after
// the last non-zero digit but keeping at least one.
func formatTime(t int32, p int) string {
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

// formatTimestamp is DateTimeUtils.formatTimestamp: yyyy-MM-dd HH:mm:ss and
// the nine-digit fraction with trailing zeros dropped down to the precision.
func formatTimestamp(ts table.Timestamp, p int) string {
	day := table.FloorDiv(ts.Millis, millisPerDay)
	ms := table.FloorMod(ts.Millis, millisPerDay)
	var sb strings.Builder
	sb.WriteString(formatDate(int32(day)))
	sb.WriteByte(' ')
	digitsN(&sb, int(ms/3600000), 2)
	sb.WriteByte(':')
	digitsN(&sb, int(ms%3600000/60000), 2)
	sb.WriteByte(':')
	digitsN(&sb, int(ms%60000/1000), 2)
	frac := fmt.Sprintf("%09d", ms%1000*1000000+int64(ts.NanoOfMilli))
	for len(frac) > p && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	if frac != "" {
		sb.WriteByte('.')
		sb.WriteString(frac)
	}
	return sb.String()
}

// isJavaNumeric is StringUtils.isNumeric: an optional '-' and at least one
// (Unicode) digit.
func isJavaNumeric(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// javaTrim is String.trim: characters <= ' ' at both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// javaParseInt is Integer.parseInt after Paimon's isInteger check (ASCII
// digits only).
func javaParseInt(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int(n), err == nil
}

// stringToDate is BinaryStringUtils.toDate: a numeric string is the day
// number (toInt); otherwise DateTimeUtils.parseDate: text after the first
// space is ignored, then y, y-m or y-m-d with each part trimmed, and the
// date must exist in years 0..9999.
func stringToDate(str string) (any, error) {
	if isJavaNumeric(str) {
		n, ok := parseJavaIntegral(str, 32)
		if !ok {
			return nil, valueErr("cannot parse %q as DATE", str)
		}
		return int32(n), nil
	}
	s := str
	if ws := strings.IndexByte(s, ' '); ws > 0 {
		s = s[:ws]
	}
	parts := strings.SplitN(s, "-", 3)
	ymd := []int{0, 1, 1}
	for i, p := range parts {
		n, ok := javaParseInt(javaTrim(p))
		if !ok {
			return nil, valueErr("cannot parse %q as DATE", str)
		}
		ymd[i] = n
	}
	y, m, d := ymd[0], ymd[1], ymd[2]
	if !legalDate(y, m, d) {
		return nil, valueErr("cannot parse %q as DATE", str)
	}
	return unixDate(y, m, d), nil
}

func legalDate(y, m, d int) bool {
	if y < 0 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31 {
		return false
	}
	leap := y%400 == 0 || y%4 == 0 && y%100 != 0
	if m == 2 && d > 28 && !(leap && d == 29) {
		return false
	}
	if d == 31 {
		switch m {
		case 1, 3, 5, 7, 8, 10, 12:
			return true
		}
		return false
	}
	return true
}

// stringToTime is BinaryStringUtils.toTime: a numeric string is the
// milliseconds of the day (toInt); otherwise DateTimeUtils.parseTime:
// h[:m[:s[.fff]]] with an optional zone suffix introduced by the first '-'
// (or else '+') whose hours and minutes are added with the opposite sign of
// '-' and the same sign of '+', in wrapping int arithmetic.
func stringToTime(str string) (any, error) {
	if isJavaNumeric(str) {
		n, ok := parseJavaIntegral(str, 32)
		if !ok {
			return nil, valueErr("cannot parse %q as TIME", str)
		}
		return int32(n), nil
	}
	bad := func() (any, error) { return nil, valueErr("cannot parse %q as TIME", str) }
	v := str
	// sub is String.substring(begin, end) followed by trim and the integer
	// parse; an impossible range throws in Java.
	sub := func(begin, end int) (int, bool) {
		if begin < 0 || end > len(v) || begin > end {
			return 0, false
		}
		return javaParseInt(javaTrim(v[begin:end]))
	}
	colon1 := strings.IndexByte(v, ':')
	operator, end := -1, len(v)
	tz := strings.IndexByte(v, '-')
	if tz < 0 {
		tz = strings.IndexByte(v, '+')
		operator = 1
	}
	var tzHour, tzMinute, hour, minute, second, milli int
	var ok bool
	if tz >= 0 {
		end = tz
		colon3 := indexFrom(v, ':', tz)
		if colon3 < 0 {
			if tzHour, ok = sub(tz+1, len(v)); !ok {
				return bad()
			}
		} else {
			if tzHour, ok = sub(tz+1, colon3); !ok {
				return bad()
			}
			if tzMinute, ok = sub(colon3+1, len(v)); !ok {
				return bad()
			}
		}
	}
	if colon1 < 0 {
		if hour, ok = sub(0, end); !ok {
			return bad()
		}
	} else {
		if hour, ok = sub(0, colon1); !ok {
			return bad()
		}
		colon2 := indexFrom(v, ':', colon1+1)
		if colon2 < 0 {
			if minute, ok = sub(colon1+1, end); !ok {
				return bad()
			}
		} else {
			if minute, ok = sub(colon1+1, colon2); !ok {
				return bad()
			}
			dot := indexFrom(v, '.', colon2)
			if dot < 0 {
				if second, ok = sub(colon2+1, end); !ok {
					return bad()
				}
			} else {
				if second, ok = sub(colon2+1, dot); !ok {
					return bad()
				}
				if dot+1 > end {
					return bad()
				}
				milli = parseFraction(javaTrim(v[dot+1 : end]))
			}
		}
	}
	h := int32(hour) + int32(operator)*int32(tzHour)
	m := int32(minute) + int32(operator)*int32(tzMinute)
	return h*3600000 + m*60000 + int32(second)*1000 + int32(milli), nil
}

func indexFrom(s string, c byte, from int) int {
	if from > len(s) {
		return -1
	}
	i := strings.IndexByte(s[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

// parseFraction is DateTimeUtils.parseFraction: the first three characters
// as milliseconds (a non-digit counts 0), rounded up when the fourth is >= '5'.
func parseFraction(v string) int {
	mult, r := 100, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		x := 0
		if c >= '0' && c <= '9' {
			x = int(c - '0')
		}
		r += mult * x
		if mult < 10 {
			if i+1 < len(v) && v[i+1] >= '5' {
				r++
			}
			break
		}
		mult /= 10
	}
	return r
}

// stringToTimestamp is BinaryStringUtils.toTimestamp. For TIMESTAMP a
// numeric string is an epoch count in the unit of the precision (0, 3, 6 or
// 9; other precisions throw); everything else, and every TIMESTAMP_LTZ
// string, is parsed by DateTimeUtils.parseTimestampData.
func stringToTimestamp(s string, p int, ltz bool) (any, error) {
	if !ltz && isJavaNumeric(s) {
		n, ok := parseJavaIntegral(s, 64)
		if !ok {
			return nil, valueErr("cannot parse %q as TIMESTAMP", s)
		}
		switch p {
		case 0:
			return table.Timestamp{Millis: n * 1000}, nil
		case 3:
			return table.Timestamp{Millis: n}, nil
		case 6:
			return table.TimestampFromMicros(n), nil
		case 9:
			return table.TimestampFromNanos(n), nil
		}
		return nil, valueErr("cannot cast %q to TIMESTAMP(%d): unsupported precision", s, p)
	}
	ts, ok := parseTimestampText(s, p)
	if !ok {
		return nil, valueErr("cannot parse %q as TIMESTAMP", s)
	}
	return ts, nil
}

// parseTimestampText parses with Paimon's DEFAULT_TIMESTAMP_FORMATTER,
// "yyyy-[MM][M]-[dd][d]" and optionally " [HH][H]:[mm][m]:[ss][s]" with a
// fraction of up to nine digits, resolved SMART (a day past the month's end
// clamps to its last day; 24:00:00 is the next midnight) with a missing time
// of 0, then the nanoseconds floored to the precision. Years need exactly four digits (Java also takes a '+' and more
// digits; not supported).
func parseTimestampText(s string, p int) (table.Timestamp, bool) {
	pos := 0
	digits := func(max int) (int, int) {
		n := 0
		for n < max && pos+n < len(s) && s[pos+n] >= '0' && s[pos+n] <= '9' {
			n++
		}
		v, _ := strconv.Atoi(s[pos : pos+n])
		pos += n
		return v, n
	}
	// num reads a field written [XX][X]: two digits and then, greedily,
	// more digits that must repeat the value (Java parses the field twice
	// and rejects a conflict), or one digit alone. -1 when absent, -2 on
	// a conflict.
	num := func() int {
		v, n := digits(2)
		if n == 0 {
			return -1
		}
		if n == 2 {
			if w, m := digits(18); m > 0 && w != v {
				return -2
			}
		}
		return v
	}
	lit := func(c byte) bool {
		if pos < len(s) && s[pos] == c {
			pos++
			return true
		}
		return false
	}
	if len(s) < 4 {
		return table.Timestamp{}, false
	}
	year, err := strconv.Atoi(s[:4])
	if err != nil || strings.ContainsAny(s[:4], "+-") || year < 1 {
		return table.Timestamp{}, false
	}
	pos = 4
	if !lit('-') {
		return table.Timestamp{}, false
	}
	month := num()
	if month < 0 || !lit('-') {
		return table.Timestamp{}, false
	}
	day := num()
	if day < 0 {
		return table.Timestamp{}, false
	}
	var hour, minute, second, nano int
	if rest := pos; lit(' ') {
		// A missing time field is 0.
		hour = num()
		ok := hour != -2 && lit(':')
		minute = num()
		ok = ok && minute != -2 && lit(':')
		second = num()
		ok = ok && second != -2
		hour, minute, second = max(hour, 0), max(minute, 0), max(second, 0)
		if ok && lit('.') {
			start := pos
			for pos < len(s) && pos-start < 9 && s[pos] >= '0' && s[pos] <= '9' {
				pos++
			}
			f := s[start:pos] + strings.Repeat("0", 9-(pos-start))
			nano, _ = strconv.Atoi(f)
		}
		if !ok {
			pos = rest
		}
	}
	if pos != len(s) {
		return table.Timestamp{}, false
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 59 {
		return table.Timestamp{}, false
	}
	day = min(day, daysIn(year, month))
	days := int64(unixDate(year, month, day))
	if hour == 24 {
		if minute != 0 || second != 0 || nano != 0 {
			return table.Timestamp{}, false
		}
		hour, days = 0, days+1
	}
	if p == 0 {
		nano = 0
	} else if p < 9 {
		m := int(math.Pow10(9 - p))
		nano = nano / m * m
	}
	millis := days*millisPerDay + int64(hour)*3600000 + int64(minute)*60000 + int64(second)*1000 + int64(nano/1000000)
	return table.Timestamp{Millis: millis, NanoOfMilli: int32(nano % 1000000)}, true
}

func daysIn(y, m int) int {
	switch m {
	case 4, 6, 9, 11:
		return 30
	case 2:
		if y%400 == 0 || y%4 == 0 && y%100 != 0 {
			return 29
		}
		return 28
	}
	return 31
}
