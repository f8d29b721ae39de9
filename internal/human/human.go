// Package human writes numbers, sizes and durations the way people read
// them, for the CLI, the doctor and the status page alike (standard
// library only, so every layer may use it).
package human

import (
	"fmt"
	"strconv"
	"time"
)

// Duration writes d as 850ms, 12.5s, 42s, 4m 12s, 3h 4m, 2d 3h (its
// magnitude: a negative d reads as its absolute value).
func Duration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

// Relative is t against now: "3m 12s ago", "in 45s", "now".
func Relative(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d > -time.Second && d < time.Second:
		return "now"
	case d < 0:
		return Duration(d) + " ago"
	default:
		return "in " + Duration(d)
	}
}

// Bytes writes n in binary units: 512 B, 3.2 KiB, 1.5 GiB.
func Bytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= 1024
		if f < 1024 || u == "TiB" {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
		}
	}
	return "" // unreachable
}

// Count writes a count with a decimal suffix from ten thousand on: 9999,
// 15.0k, 2.5M, 1.2G.
func Count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}
