// Package backoff computes retry delays: exponential growth from a base,
// a cap, and optional jitter. It is the one backoff formula of compactd,
// used by the commit loop (table), the S3 store (fileio) and the
// scheduler's retry of failed jobs (sched); it imports nothing of compactd,
// so every layer may use it.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Policy describes a backoff. The delay before retry n (0-based) is
// d(n) = min(Base·2ⁿ, Max), then spread by jitter: a uniformly random
// duration in [d(n)·(1−Below), d(n)·(1+Above)].
//
//   - Below = 1, Above = 0 is "full jitter" (uniform in [0, d(n)]): racing
//     clients spread out instead of retrying in lockstep.
//   - Below = 0, Above = 0.2 waits at least d(n) and at most 20% more.
//   - Below = Above = 0 is the plain exponential delay, no randomness.
//
// The jitter is applied after the cap, so with Above > 0 the longest delay
// is Max·(1+Above).
type Policy struct {
	Base  time.Duration // d(0), the delay before the first retry; must be > 0
	Max   time.Duration // cap on the exponential part; ≤ 0 means no cap
	Below float64       // fraction of d(n) the jitter may take off, in [0, 1]
	Above float64       // fraction of d(n) the jitter may add, ≥ 0
}

// maxShift bounds the doubling so that Base·2ⁿ cannot overflow for any
// sensible base (2⁶² ns is 146 years; we stop far below).
const maxShift = 30

// Delay returns the delay before retry n (0-based; a negative n counts as
// 0).
func (p Policy) Delay(n int) time.Duration {
	d := p.Exp(n)
	lo := d - time.Duration(float64(d)*clamp(p.Below, 0, 1))
	hi := d + time.Duration(float64(d)*max(p.Above, 0))
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rand.Int64N(int64(hi-lo)+1))
}

// Exp returns d(n) = min(Base·2ⁿ, Max) without jitter.
func (p Policy) Exp(n int) time.Duration {
	n = clamp(n, 0, maxShift)
	d := p.Base << n
	if d < p.Base || d>>n != p.Base { // overflow
		d = time.Duration(1<<63 - 1)
	}
	if p.Max > 0 && d > p.Max {
		d = p.Max
	}
	return d
}

func clamp[T int | float64](v, lo, hi T) T { return min(max(v, lo), hi) }
