package backoff

import (
	"testing"
	"time"
)

// The exponential part doubles from Base and stops at Max, also for
// attempt numbers that would overflow a shift.
func TestExpDoublesUpToTheCap(t *testing.T) {
	p := Policy{Base: 10 * time.Millisecond, Max: time.Second}
	for n, want := range []time.Duration{10, 20, 40, 80, 160, 320, 640, 1000, 1000} {
		if got := p.Exp(n); got != want*time.Millisecond {
			t.Errorf("Exp(%d) = %v, want %v", n, got, want*time.Millisecond)
		}
	}
	for _, n := range []int{-1, 0} {
		if got := p.Exp(n); got != 10*time.Millisecond {
			t.Errorf("Exp(%d) = %v, want the base", n, got)
		}
	}
	for _, n := range []int{31, 64, 1000, 1 << 40} {
		if got := p.Exp(n); got != time.Second {
			t.Errorf("Exp(%d) = %v, want the cap", n, got)
		}
	}
	uncapped := Policy{Base: time.Hour}
	if got := uncapped.Exp(1000); got <= 0 {
		t.Errorf("uncapped Exp(1000) = %v: overflowed", got)
	}
}

// Every delay lies in [d·(1−Below), d·(1+Above)], and the draws reach
// across that range (not all at one end).
func TestDelayStaysWithinItsJitterBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Policy
		lo   func(d time.Duration) time.Duration
		hi   func(d time.Duration) time.Duration
	}{
		{"none", Policy{Base: 5 * time.Second, Max: 5 * time.Minute},
			func(d time.Duration) time.Duration { return d }, func(d time.Duration) time.Duration { return d }},
		{"full", Policy{Base: 100 * time.Millisecond, Max: 10 * time.Second, Below: 1},
			func(time.Duration) time.Duration { return 0 }, func(d time.Duration) time.Duration { return d }},
		{"plus 20%", Policy{Base: 10 * time.Millisecond, Max: 10 * time.Second, Above: 0.2},
			func(d time.Duration) time.Duration { return d }, func(d time.Duration) time.Duration { return d + d/5 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for n := 0; n < 25; n++ {
				d := tc.p.Exp(n)
				lo, hi := tc.lo(d), tc.hi(d)
				minSeen, maxSeen := time.Duration(1<<63-1), time.Duration(-1)
				for range 2000 {
					got := tc.p.Delay(n)
					if got < lo || got > hi {
						t.Fatalf("Delay(%d) = %v, outside [%v, %v]", n, got, lo, hi)
					}
					minSeen, maxSeen = min(minSeen, got), max(maxSeen, got)
				}
				if width := hi - lo; width > 0 && (minSeen > lo+width/4 || maxSeen < hi-width/4) {
					t.Errorf("Delay(%d) drew only [%v, %v] of [%v, %v]", n, minSeen, maxSeen, lo, hi)
				}
			}
		})
	}
}
