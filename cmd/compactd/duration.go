package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/compactd/compactd/table"
)

// parseUserDuration is the one duration grammar of compactd's flags: Go
// durations (90m, 1h30m) and Paimon's (7d, 36 h, 30 min), as table options
// are written.
func parseUserDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return 0, fmt.Errorf("duration %q needs a unit", s)
	}
	return table.ParseDuration(s)
}

// durationValue is a flag holding a duration in that grammar.
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := parseUserDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func (v durationValue) Type() string { return "duration" }

// newDuration makes a duration flag value with its default.
func newDuration(p *time.Duration, def time.Duration) durationValue {
	*p = def
	return durationValue{p}
}
