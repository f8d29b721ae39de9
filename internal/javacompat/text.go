package javacompat

import (
	"strings"
	"unicode"
)

// Trim is String.trim: the characters <= ' ' removed at both ends.
func Trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// IsWhitespace is Character.isWhitespace: the space separators other than
// the non-breaking ones, line and paragraph separators, and the ASCII
// controls \t \n \v \f \r and 0x1C..0x1F.
func IsWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f:
		return true
	case 0x00a0, 0x2007, 0x202f: // non-breaking spaces are not whitespace in Java
		return false
	}
	return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

// IsBlank is StringUtils.isBlank (and isNullOrWhitespaceOnly): empty or
// only characters for which Character.isWhitespace holds.
func IsBlank(s string) bool {
	for _, r := range s {
		if !IsWhitespace(r) {
			return false
		}
	}
	return true
}
