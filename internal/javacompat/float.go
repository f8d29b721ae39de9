package javacompat

import (
	"math"
	"strconv"
	"strings"
)

// FloatString formats as Float.toString (bits 32) and Double.toString (bits
// 64): plain notation with at least one fraction digit for
// 10^-3 <= |f| < 10^7, otherwise d.dddE±n. Digits are the shortest that
// round-trip, as JDK 19+ prints them (older JDKs print a few values with
// more digits).
func FloatString(f float64, bits int) string {
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
