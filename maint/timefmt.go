package maint

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// errParse is a DateTimeParseException: the partition is not expirable.
var errParse = errors.New("cannot parse partition time")

// TimeExtractor is Paimon's PartitionTimeExtractor: it turns partition
// values into a wall-clock time using partition.timestamp-pattern (how the
// values are joined, "$key" substituted; default the first value) and
// partition.timestamp-formatter (a java.time pattern; default
// "yyyy-MM-dd[ HH:mm:ss[.S…]]" parsed leniently).
type TimeExtractor struct {
	Pattern   string // "" = the first partition value
	Formatter string // "" = Paimon's default formats
	fmt       *javaFormat
}

// NewTimeExtractor compiles formatter; only numeric fields (y M d H m s S)
// and literals are supported, which covers date/time partition layouts.
func NewTimeExtractor(pattern, formatter string) (*TimeExtractor, error) {
	e := &TimeExtractor{Pattern: pattern, Formatter: formatter}
	if formatter != "" {
		f, err := compileJavaFormat(formatter)
		if err != nil {
			return nil, fmt.Errorf("partition.timestamp-formatter %q: %w", formatter, err)
		}
		e.fmt = f
	}
	return e, nil
}

// Extract returns the partition's time (a wall clock in a UTC time.Time).
// A nil value used by the pattern, or a string that does not parse, is an
// error: Paimon never expires such a partition.
func (e *TimeExtractor) Extract(keys []string, values []*string) (time.Time, error) {
	var s string
	if e.Pattern == "" {
		if len(values) == 0 || values[0] == nil {
			return time.Time{}, fmt.Errorf("%w: null value", errParse)
		}
		s = *values[0]
	} else {
		var err error
		if s, err = substitutePattern(e.Pattern, keys, values); err != nil {
			return time.Time{}, err
		}
	}
	if e.fmt == nil {
		return parseDefaultPartitionTime(s)
	}
	return e.fmt.parse(s)
}

// substitutePattern replaces $key by the key's value, preferring longer keys
// ($dt must not match inside $dt1), as PartitionTimeExtractor.replacePattern
// does since apache/paimon#9136 (releases up to 2.0 replaced in key order).
func substitutePattern(pattern string, keys []string, values []*string) (string, error) {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	// Stable by descending length, like Java's List.sort.
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && len(keys[idx[j]]) > len(keys[idx[j-1]]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	var b strings.Builder
	for i := 0; i < len(pattern); {
		if pattern[i] == '$' && i+1 < len(pattern) {
			matched := false
			for _, k := range idx {
				key := keys[k]
				if strings.HasPrefix(pattern[i+1:], key) {
					if values[k] == nil {
						return "", fmt.Errorf("%w: null value of %s", errParse, key)
					}
					b.WriteString(*values[k])
					i += 1 + len(key)
					matched = true
					break
				}
			}
			if matched {
				continue
			}
		}
		b.WriteByte(pattern[i])
		i++
	}
	return b.String(), nil
}

// parseDefaultPartitionTime is PartitionTimeExtractor.toLocalDateTimeDefault:
// y(1-10)-M(1-2)-d(1-2), optionally " H:m:s" (1-2 digits each) and a
// fraction of 1-9 digits, resolved LENIENTly (out-of-range fields roll over).
func parseDefaultPartitionTime(s string) (time.Time, error) {
	p := &scanner{s: s}
	y, ok1 := p.digits(1, 10)
	ok2 := p.lit("-")
	mo, ok3 := p.digits(1, 2)
	ok4 := p.lit("-")
	d, ok5 := p.digits(1, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return time.Time{}, fmt.Errorf("%w: %q", errParse, s)
	}
	var h, mi, sec, nano int64
	if !p.done() {
		ok := p.lit(" ")
		var okH, okM, okS bool
		h, okH = p.digits(1, 2)
		ok = ok && okH && p.lit(":")
		mi, okM = p.digits(1, 2)
		ok = ok && okM && p.lit(":")
		sec, okS = p.digits(1, 2)
		ok = ok && okS
		if ok && !p.done() && p.lit(".") {
			start := p.i
			f, okF := p.digits(1, 9)
			if !okF {
				return time.Time{}, fmt.Errorf("%w: %q", errParse, s)
			}
			for n := p.i - start; n < 9; n++ {
				f *= 10
			}
			nano = f
		}
		if !ok {
			return time.Time{}, fmt.Errorf("%w: %q", errParse, s)
		}
	}
	if !p.done() {
		return time.Time{}, fmt.Errorf("%w: %q", errParse, s)
	}
	// LENIENT: LocalDate.of(y,1,1).plusMonths(M-1).plusDays(d-1) and the
	// time added as a duration, which is what time.Date's normalisation does.
	return time.Date(int(y), time.Month(mo), int(d), int(h), int(mi), int(sec), int(nano), time.UTC), nil
}

type scanner struct {
	s string
	i int
}

func (p *scanner) done() bool { return p.i >= len(p.s) }

func (p *scanner) lit(l string) bool {
	if strings.HasPrefix(p.s[p.i:], l) {
		p.i += len(l)
		return true
	}
	return false
}

// digits reads between lo and hi ASCII digits.
func (p *scanner) digits(lo, hi int) (int64, bool) {
	var n int64
	j := p.i
	for j < len(p.s) && j-p.i < hi && p.s[j] >= '0' && p.s[j] <= '9' {
		n = n*10 + int64(p.s[j]-'0')
		j++
	}
	if j-p.i < lo {
		return 0, false
	}
	p.i = j
	return n, true
}

// javaFormat is a compiled java.time DateTimeFormatter.ofPattern of numeric
// fields, parsed with the SMART resolver.
type javaFormat struct {
	items []fmtItem
	has   map[byte]bool
}

type fmtItem struct {
	letter byte // 0 for a literal
	count  int
	lit    string
}

func compileJavaFormat(pattern string) (*javaFormat, error) {
	f := &javaFormat{has: map[byte]bool{}}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			j := i + 1
			var b strings.Builder
			for {
				if j >= len(pattern) {
					return nil, errors.New("unterminated quote")
				}
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(pattern[j])
				j++
			}
			lit := b.String()
			if j == i+1 {
				lit = "'"
			}
			f.items = append(f.items, fmtItem{lit: lit})
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			n := j - i
			switch c {
			case 'y', 'u':
				if n == 2 {
					return nil, errors.New("two-digit years are not supported")
				}
				c = 'y'
			case 'M', 'd', 'H', 'm', 's':
				if n > 2 {
					return nil, fmt.Errorf("pattern letter %c×%d (text fields) is not supported", c, n)
				}
			case 'S':
			default:
				return nil, fmt.Errorf("pattern letter %c is not supported", c)
			}
			if f.has[c] {
				return nil, fmt.Errorf("pattern letter %c appears twice", c)
			}
			f.has[c] = true
			f.items = append(f.items, fmtItem{letter: c, count: n})
			i = j
		case c == '[' || c == ']' || c == '{' || c == '}' || c == '#':
			return nil, fmt.Errorf("pattern character %c is not supported", c)
		default:
			f.items = append(f.items, fmtItem{lit: string(c)})
			i++
		}
	}
	if !f.has['y'] || !f.has['M'] || !f.has['d'] {
		return nil, errors.New("a date needs y, M and d")
	}
	return f, nil
}

// width is the fixed width of a numeric item, 0 when variable.
func (it fmtItem) width() int {
	switch it.letter {
	case 0:
		return 0
	case 'y':
		// yyyy and longer are EXCEEDS_PAD: more digits than the count need a
		// sign, so an unsigned year has exactly count digits. y and yyy take
		// 1 (3) to 19 digits.
		if it.count >= 4 {
			return it.count
		}
		return 0
	case 'S':
		return it.count
	}
	if it.count == 2 {
		return 2
	}
	return 0
}

func (f *javaFormat) parse(s string) (time.Time, error) {
	p := &scanner{s: s}
	vals := map[byte]int64{}
	for k, it := range f.items {
		if it.letter == 0 {
			if !p.lit(it.lit) {
				return time.Time{}, fmt.Errorf("%w: %q", errParse, s)
			}
			continue
		}
		lo, hi := 1, 19
		if w := it.width(); w > 0 {
			lo, hi = w, w
		} else if it.letter == 'y' {
			lo = it.count
		}
		if it.width() == 0 {
			// Adjacent value parsing: a variable-width field leaves room for
			// the fixed-width numeric fields that directly follow it.
			reserve := 0
			for _, nx := range f.items[k+1:] {
				if nx.letter == 0 || nx.width() == 0 {
					break
				}
				reserve += nx.width()
			}
			avail := 0
			for j := p.i; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
				avail++
			}
			if reserve > 0 {
				hi = min(hi, avail-reserve)
			}
		}
		v, ok := p.digits(lo, hi)
		if !ok {
			return time.Time{}, fmt.Errorf("%w: %q", errParse, s)
		}
		vals[it.letter] = v
	}
	if !p.done() {
		return time.Time{}, fmt.Errorf("%w: %q", errParse, s)
	}
	y, mo, d := vals['y'], vals['M'], vals['d']
	h, mi, sec := vals['H'], vals['m'], vals['s']
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, fmt.Errorf("%w: %q out of range", errParse, s)
	}
	// SMART resolution clamps a day past the month's end to its last day.
	last := time.Date(int(y), time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	d = min(d, int64(last))
	var nano int64
	if it, ok := f.items[f.index('S')], f.has['S']; ok {
		nano = vals['S']
		for n := it.count; n < 9; n++ {
			nano *= 10
		}
		for n := it.count; n > 9; n-- {
			nano /= 10
		}
	}
	return time.Date(int(y), time.Month(mo), int(d), int(h), int(mi), int(sec), int(nano), time.UTC), nil
}

func (f *javaFormat) index(letter byte) int {
	for i, it := range f.items {
		if it.letter == letter {
			return i
		}
	}
	return 0
}
