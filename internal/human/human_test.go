package human

import (
	"testing"
	"time"
)

// Durations, times and sizes read the way people read them, never Go's
// 1m23.456789s or raw byte counts (the status page, the doctor, progress).
func TestDurationsTimesSizesAndCountsForPeople(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		got, want string
	}{
		{Duration(850 * time.Millisecond), "850ms"},
		{Duration(2345 * time.Millisecond), "2.3s"},
		{Duration(42 * time.Second), "42s"},
		{Duration(4*time.Minute + 12*time.Second + 300*time.Millisecond), "4m 12s"},
		{Duration(3*time.Hour + 4*time.Minute + 59*time.Second), "3h 4m"},
		{Duration(51 * time.Hour), "2d 3h"},
		{Relative(now.Add(-90*time.Second), now), "1m 30s ago"},
		{Relative(now.Add(45*time.Second), now), "in 45s"},
		{Relative(now.Add(300*time.Millisecond), now), "now"},
		{Bytes(512), "512 B"},
		{Bytes(3 * 1024), "3.0 KiB"},
		{Bytes(1536 * 1024 * 1024), "1.5 GiB"},
		{Count(9999), "9999"},
		{Count(15000), "15.0k"},
		{Count(2_500_000), "2.5M"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
