package table

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Tag is a tag/tag-<name> file: a snapshot plus the tag's creation time and
// retention. Files reachable from a tag must outlive snapshot expiration.
type Tag struct {
	Name string // from the file name
	Snapshot
	// CreateTime is Java's LocalDateTime (wall clock, no zone), held as a
	// time.Time in UTC; nil when absent.
	CreateTime *time.Time
	// TimeRetained is the tag's TTL; nil when absent.
	TimeRetained *time.Duration
}

const (
	tkCreateTime   = "tagCreateTime"
	tkTimeRetained = "tagTimeRetained"
)

// ParseTag parses a tag file. Jackson's JavaTimeModule writes the creation
// time as [year, month, day, hour, minute(, second(, nano))] and the
// retention as decimal seconds (5.000000000); ISO strings are accepted too.
func ParseTag(name string, data []byte) (*Tag, error) {
	root, err := parseOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("parse tag JSON: %w", err)
	}
	t := &Tag{Name: name}
	if err := t.Snapshot.fromNode(root, map[string]bool{tkCreateTime: true, tkTimeRetained: true}); err != nil {
		return nil, fmt.Errorf("tag %s: %w", name, err)
	}
	if v, ok := root.get(tkCreateTime); ok && v.kind != jNull {
		ct, err := parseLocalDateTime(v)
		if err != nil {
			return nil, fmt.Errorf("tag %s: %q: %w", name, tkCreateTime, err)
		}
		t.CreateTime = &ct
	}
	if v, ok := root.get(tkTimeRetained); ok && v.kind != jNull {
		d, err := parseJavaDuration(v)
		if err != nil {
			return nil, fmt.Errorf("tag %s: %q: %w", name, tkTimeRetained, err)
		}
		t.TimeRetained = &d
	}
	return t, nil
}

// MarshalJSON writes the tag as Java does: the snapshot keys, then
// tagCreateTime and tagTimeRetained when set. (A value receiver, so it
// shadows the embedded Snapshot's method for Tag values too.)
func (t Tag) MarshalJSON() ([]byte, error) {
	n := t.Snapshot.toNode()
	if t.CreateTime != nil {
		c := t.CreateTime.UTC()
		a := jnode{kind: jArray}
		for _, x := range []int{c.Year(), int(c.Month()), c.Day(), c.Hour(), c.Minute()} {
			a.vals = append(a.vals, jInt(int64(x)))
		}
		if c.Second() > 0 || c.Nanosecond() > 0 {
			a.vals = append(a.vals, jInt(int64(c.Second())))
			if c.Nanosecond() > 0 {
				a.vals = append(a.vals, jInt(int64(c.Nanosecond())))
			}
		}
		n.add(tkCreateTime, a)
	}
	if t.TimeRetained != nil {
		n.add(tkTimeRetained, jRaw(javaDurationSeconds(*t.TimeRetained)))
	}
	return renderJackson(n), nil
}

// UnmarshalJSON parses a tag file body, keeping t.Name.
func (t *Tag) UnmarshalJSON(data []byte) error {
	p, err := ParseTag(t.Name, data)
	if err != nil {
		return err
	}
	*t = *p
	return nil
}

func parseLocalDateTime(v jnode) (time.Time, error) {
	switch v.kind {
	case jArray:
		if len(v.vals) < 5 || len(v.vals) > 7 {
			return time.Time{}, fmt.Errorf("expected 5 to 7 numbers, got %d", len(v.vals))
		}
		var parts [7]int64
		for i, e := range v.vals {
			n, err := e.asInt64(tkCreateTime)
			if err != nil {
				return time.Time{}, err
			}
			parts[i] = n
		}
		if parts[1] < 1 || parts[1] > 12 || parts[2] < 1 || parts[2] > 31 || parts[3] > 23 || parts[4] > 59 ||
			parts[5] > 59 || parts[6] > 999_999_999 || parts[3] < 0 || parts[4] < 0 || parts[5] < 0 || parts[6] < 0 {
			return time.Time{}, fmt.Errorf("invalid date-time %v", parts)
		}
		return time.Date(int(parts[0]), time.Month(parts[1]), int(parts[2]), int(parts[3]), int(parts[4]),
			int(parts[5]), int(parts[6]), time.UTC), nil
	case jString:
		for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
			if t, err := time.ParseInLocation(layout, v.str, time.UTC); err == nil {
				return t, nil
			}
		}
		return time.Time{}, fmt.Errorf("invalid date-time %q", v.str)
	}
	return time.Time{}, fmt.Errorf("expected an array or string, got %s", v.kindName())
}

// parseJavaDuration reads Jackson's Duration: decimal seconds.
func parseJavaDuration(v jnode) (time.Duration, error) {
	var lit string
	switch v.kind {
	case jNumber:
		lit = v.str
	case jString:
		lit = strings.TrimSpace(v.str)
	default:
		return 0, fmt.Errorf("expected a number, got %s", v.kindName())
	}
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		return 0, fmt.Errorf("invalid duration %q", lit)
	}
	r.Mul(r, big.NewRat(int64(time.Second), 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("duration %q out of range", lit)
	}
	return time.Duration(r.Num().Int64()), nil
}

// javaDurationSeconds is Jackson's rendering of a Duration: seconds with a
// nine-digit fraction.
func javaDurationSeconds(d time.Duration) string {
	sign := ""
	n := int64(d)
	if n < 0 {
		sign = "-"
		n = -n
	}
	return fmt.Sprintf("%s%d.%09d", sign, n/int64(time.Second), n%int64(time.Second))
}
