package maint

import (
	"time"
)

// WallClock is Java's LocalDateTime.now() for t: the wall-clock fields of t
// in the process's local zone, held in a UTC time.Time. Paimon compares tag
// creation times and partition times as zone-less wall clocks, so compactd
// must do the same to agree with a JVM on the same host. (JDK 17 on Linux
// gives LocalDateTime.now() nanosecond digits, so none are dropped.)
func WallClock(t time.Time) time.Time {
	l := t.In(time.Local)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}
