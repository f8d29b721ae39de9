package orc

import (
	"bytes"
	"math/big"
	"strings"
)

// colStats is ORC's ColumnStatistics of one column over a row group, a
// stripe or the file, kept the way Java's ColumnStatisticsImpl keeps them
// so that Java's reader (predicate push-down) and Paimon's stats
// extraction read the same meaning.
type colStats struct {
	kind    Kind
	n       uint64 // non-null values
	hasNull bool
	some    bool // min/max set

	imin, imax, isum int64 // integers, DATE; also booleans' true count (isum)
	sumOK            bool
	fmin, fmax, fsum float64
	smin, smax       []byte // strings
	bsum             int64  // string and binary total length
	dmin, dmax, dsum *big.Int
	dscale           int
	// d64: DECIMAL(p <= 18) statistics kept in imin, imax and isum (dsum
	// once the sum leaves int64) until merge or proto needs the big form
	// (toBig): a big.Int per value was a third of writing such a column.
	d64              bool
	tmin, tmax       Time
	cmin, cmax, ctot uint64 // LIST, MAP children
}

func newColStats(t *Type) *colStats {
	return &colStats{kind: t.Kind, sumOK: true, dscale: t.Scale}
}

func (s *colStats) null() { s.hasNull = true }

func (s *colStats) addInt(v int64) {
	s.n++
	if !s.some {
		s.imin, s.imax, s.some = v, v, true
	} else {
		s.imin, s.imax = min(s.imin, v), max(s.imax, v)
	}
	if s.sumOK {
		x := s.isum + v
		if (v > 0 && x < s.isum) || (v < 0 && x > s.isum) {
			s.sumOK = false
		}
		s.isum = x
	}
}

func (s *colStats) addBool(v bool) {
	s.n++
	if v {
		s.isum++
	}
}

func (s *colStats) addFloat(v float64) {
	s.n++
	if !s.some {
		s.fmin, s.fmax, s.some = v, v, true
	} else {
		// Comparisons as Java's DoubleColumnStatisticsImpl makes them.
		if v < s.fmin {
			s.fmin = v
		}
		if v > s.fmax {
			s.fmax = v
		}
	}
	s.fsum += v
}

func (s *colStats) addBytes(v []byte) {
	s.n++
	s.bsum += int64(len(v))
	if s.kind == Binary {
		return
	}
	if !s.some {
		s.smin, s.smax, s.some = v, v, true
		return
	}
	// A value below the minimum cannot pass the maximum; most values
	// differ from both in the first byte, which settles it without a call.
	switch {
	case bytesLess(v, s.smin):
		s.smin = v
	case bytesLess(s.smax, v):
		s.smax = v
	}
}

// bytesLess orders a and b by unsigned bytes.
func bytesLess(a, b []byte) bool {
	if len(a) > 0 && len(b) > 0 && a[0] != b[0] {
		return a[0] < b[0]
	}
	return bytes.Compare(a, b) < 0
}

func (s *colStats) addDec(v *big.Int) {
	s.n++
	if !s.some {
		s.dmin, s.dmax, s.dsum, s.some = v, v, new(big.Int).Set(v), true
		return
	}
	if v.Cmp(s.dmin) < 0 {
		s.dmin = v
	}
	if v.Cmp(s.dmax) > 0 {
		s.dmax = v
	}
	if s.sumOK {
		s.dsum.Add(s.dsum, v)
	}
}

func (s *colStats) addDec64(v int64) {
	s.n++
	if !s.some {
		s.imin, s.imax, s.some, s.d64 = v, v, true, true
	} else {
		s.imin, s.imax = min(s.imin, v), max(s.imax, v)
	}
	if s.dsum != nil {
		s.dsum.Add(s.dsum, big.NewInt(v))
		return
	}
	x := s.isum + v
	if (v > 0 && x < s.isum) || (v < 0 && x > s.isum) {
		s.dsum = new(big.Int).Add(big.NewInt(s.isum), big.NewInt(v))
		return
	}
	s.isum = x
}

// toBig is s with int64-kept decimal statistics (addDec64) in the big
// form; s itself when there are none.
func (s *colStats) toBig() *colStats {
	if !s.d64 {
		return s
	}
	c := *s
	c.d64 = false
	c.dmin, c.dmax = big.NewInt(s.imin), big.NewInt(s.imax)
	if s.dsum != nil {
		c.dsum = new(big.Int).Set(s.dsum)
	} else {
		c.dsum = big.NewInt(s.isum)
	}
	return &c
}

func timeLess(a, b Time) bool { return a.Secs < b.Secs || (a.Secs == b.Secs && a.Nanos < b.Nanos) }

func (s *colStats) addTime(v Time) {
	s.n++
	if !s.some {
		s.tmin, s.tmax, s.some = v, v, true
		return
	}
	if timeLess(v, s.tmin) {
		s.tmin = v
	}
	if timeLess(s.tmax, v) {
		s.tmax = v
	}
}

func (s *colStats) addCollection(n uint64) {
	if !s.some {
		s.cmin, s.cmax, s.some = n, n, true
	} else {
		s.cmin, s.cmax = min(s.cmin, n), max(s.cmax, n)
	}
	s.ctot += n
	s.n++
}

func (s *colStats) merge(o *colStats) {
	s.hasNull = s.hasNull || o.hasNull
	if o.n == 0 {
		return
	}
	first := !s.some
	s.n += o.n
	switch s.kind {
	case Boolean:
		s.isum += o.isum
	case Byte, Short, Int, Long, Date:
		if !o.some {
			return
		}
		if first {
			s.imin, s.imax, s.isum, s.sumOK, s.some = o.imin, o.imax, o.isum, o.sumOK, true
			return
		}
		s.imin, s.imax = min(s.imin, o.imin), max(s.imax, o.imax)
		if s.sumOK && o.sumOK {
			x := s.isum + o.isum
			if (o.isum > 0 && x < s.isum) || (o.isum < 0 && x > s.isum) {
				s.sumOK = false
			}
			s.isum = x
		} else {
			s.sumOK = false
		}
	case Float, Double:
		if first {
			s.fmin, s.fmax, s.some = o.fmin, o.fmax, true
		} else {
			if o.fmin < s.fmin {
				s.fmin = o.fmin
			}
			if o.fmax > s.fmax {
				s.fmax = o.fmax
			}
		}
		s.fsum += o.fsum
	case String, Varchar, Char, Binary:
		s.bsum += o.bsum
		if !o.some {
			return
		}
		if first {
			s.smin, s.smax, s.some = o.smin, o.smax, true
			return
		}
		if bytes.Compare(o.smin, s.smin) < 0 {
			s.smin = o.smin
		}
		if bytes.Compare(o.smax, s.smax) > 0 {
			s.smax = o.smax
		}
	case Decimal:
		o = o.toBig()
		if first {
			s.dmin, s.dmax, s.dsum, s.sumOK, s.some = o.dmin, o.dmax, new(big.Int).Set(o.dsum), o.sumOK, true
			return
		}
		if o.dmin.Cmp(s.dmin) < 0 {
			s.dmin = o.dmin
		}
		if o.dmax.Cmp(s.dmax) > 0 {
			s.dmax = o.dmax
		}
		s.sumOK = s.sumOK && o.sumOK
		if s.sumOK {
			s.dsum.Add(s.dsum, o.dsum)
		}
	case Timestamp, TimestampInstant:
		if first {
			s.tmin, s.tmax, s.some = o.tmin, o.tmax, true
			return
		}
		if timeLess(o.tmin, s.tmin) {
			s.tmin = o.tmin
		}
		if timeLess(s.tmax, o.tmax) {
			s.tmax = o.tmax
		}
	case List, Map:
		if first {
			s.cmin, s.cmax, s.some = o.cmin, o.cmax, true
		} else {
			s.cmin, s.cmax = min(s.cmin, o.cmin), max(s.cmax, o.cmax)
		}
		s.ctot += o.ctot
	}
}

// maxStatString is Java's limit on a string min/max it stores whole
// (orc's StringStatisticsImpl.MAX_BYTES_RECORDED); longer ones are left
// out, which readers take as "unknown".
const maxStatString = 1024

// decString renders an unscaled value at scale the way HiveDecimal does:
// plain digits, trailing fraction zeros dropped.
func decString(v *big.Int, scale int) string {
	s := new(big.Int).Abs(v).String()
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if v.Sign() < 0 {
		s = "-" + s
	}
	return s
}

func (s *colStats) proto() pb {
	s = s.toBig()
	var b pb
	b = b.uint(1, s.n)
	switch s.kind {
	case Boolean:
		b = b.bytes(5, pb(nil).packed(1, []uint64{uint64(s.isum)}))
	case Byte, Short, Int, Long:
		var m pb
		if s.some {
			m = m.sint(1, s.imin).sint(2, s.imax)
			if s.sumOK {
				m = m.sint(3, s.isum)
			}
		}
		b = b.bytes(2, m)
	case Date:
		var m pb
		if s.some {
			m = m.sint(1, s.imin).sint(2, s.imax)
		}
		b = b.bytes(7, m)
	case Float, Double:
		var m pb
		if s.some {
			m = m.double(1, s.fmin).double(2, s.fmax).double(3, s.fsum)
		}
		b = b.bytes(3, m)
	case String, Varchar, Char:
		var m pb
		if s.some && len(s.smin) <= maxStatString && len(s.smax) <= maxStatString {
			m = m.bytes(1, s.smin).bytes(2, s.smax)
		}
		m = m.sint(3, s.bsum)
		b = b.bytes(4, m)
	case Binary:
		b = b.bytes(8, pb(nil).sint(1, s.bsum))
	case Decimal:
		var m pb
		if s.some {
			m = m.str(1, decString(s.dmin, s.dscale)).str(2, decString(s.dmax, s.dscale))
			if s.sumOK && len(new(big.Int).Abs(s.dsum).String()) <= 38 {
				m = m.str(3, decString(s.dsum, s.dscale))
			}
		}
		b = b.bytes(6, m)
	case Timestamp, TimestampInstant:
		var m pb
		if s.some {
			// Milliseconds (UTC: this writer's zone is UTC), and the
			// nanoseconds below the millisecond plus one; both always, as
			// Java's reader takes an absent maximum's as 999999.
			m = m.sint(3, floorMillis(s.tmin)).sint(4, floorMillis(s.tmax))
			m = m.uint(5, uint64(s.tmin.Nanos%1e6+1)).uint(6, uint64(s.tmax.Nanos%1e6+1))
		}
		b = b.bytes(9, m)
	case List, Map:
		var m pb
		if s.some {
			m = m.uint(1, s.cmin).uint(2, s.cmax).uint(3, s.ctot)
		}
		b = b.bytes(12, m)
	}
	return b.bool(10, s.hasNull)
}

func floorMillis(t Time) int64 { return t.Secs*1000 + int64(t.Nanos/1e6) }
