package sched

import (
	"testing"
	"time"
)

// The page writes durations, times and sizes the way people read them,
// never Go's 1m23.456789s or raw byte counts.
func TestTheStatusPageWritesDurationsAndSizesForPeople(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		got, want string
	}{
		{humanDuration(850 * time.Millisecond), "850ms"},
		{humanDuration(2345 * time.Millisecond), "2.3s"},
		{humanDuration(42 * time.Second), "42s"},
		{humanDuration(4*time.Minute + 12*time.Second + 300*time.Millisecond), "4m 12s"},
		{humanDuration(3*time.Hour + 4*time.Minute + 59*time.Second), "3h 4m"},
		{humanDuration(51 * time.Hour), "2d 3h"},
		{relative(now.Add(-90*time.Second), now), "1m 30s ago"},
		{relative(now.Add(45*time.Second), now), "in 45s"},
		{relative(now.Add(300*time.Millisecond), now), "now"},
		{humanBytes(512), "512 B"},
		{humanBytes(3 * 1024), "3.0 KiB"},
		{humanBytes(1536 * 1024 * 1024), "1.5 GiB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
