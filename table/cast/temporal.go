package cast

// DATE, TIME and TIMESTAMP casts: precision truncation and the parsing of
// date, time and timestamp strings as DateTimeUtils parses them. The
// civil-date arithmetic and the text forms DateTimeUtils prints are in
// internal/javacompat.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/compactd/compactd/internal/javacompat"
	"github.com/compactd/compactd/table"
)

// truncateTimestamp is DateTimeUtils.truncate (Paimon master): when the
// fraction of a second has more significant digits than the precision, the
// epoch milliseconds (precision <= 3) or the nanoseconds of the millisecond
// lose their last digits, by Java's division towards zero.
func truncateTimestamp(ts table.Timestamp, p int) table.Timestamp {
	nano := javacompat.FloorMod(ts.Millis, 1000)*1000000 + int64(ts.NanoOfMilli)
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
		n, ok := javaParseInt(javacompat.Trim(p))
		if !ok {
			return nil, valueErr("cannot parse %q as DATE", str)
		}
		ymd[i] = n
	}
	y, m, d := ymd[0], ymd[1], ymd[2]
	if !legalDate(y, m, d) {
		return nil, valueErr("cannot parse %q as DATE", str)
	}
	return javacompat.UnixDate(y, m, d), nil
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
		return javaParseInt(javacompat.Trim(v[begin:end]))
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
				milli = parseFraction(javacompat.Trim(v[dot+1 : end]))
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
	days := int64(javacompat.UnixDate(year, month, day))
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
	millis := days*table.MillisPerDay + int64(hour)*3600000 + int64(minute)*60000 + int64(second)*1000 + int64(nano/1000000)
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
