package table

// The statistics of files and partitions: building and decoding the
// BinaryRows of a manifest.SimpleStats needs the column types.

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/big"

	"github.com/compactd/compactd/table/manifest"
)

// NewSimpleStats encodes min/max rows of the given column types. nullCounts
// must have one element per column.
func NewSimpleStats(types []DataType, minValues, maxValues Row, nullCounts []*int64) (manifest.SimpleStats, error) {
	if len(nullCounts) != len(types) {
		return manifest.SimpleStats{}, fmt.Errorf("simple stats: %d null counts for %d columns", len(nullCounts), len(types))
	}
	mn, err := EncodeBinaryRow(types, minValues)
	if err != nil {
		return manifest.SimpleStats{}, fmt.Errorf("simple stats min: %w", err)
	}
	mx, err := EncodeBinaryRow(types, maxValues)
	if err != nil {
		return manifest.SimpleStats{}, fmt.Errorf("simple stats max: %w", err)
	}
	nc := make([]*int64, len(nullCounts))
	copy(nc, nullCounts)
	return manifest.SimpleStats{MinValues: mn, MaxValues: mx, NullCounts: nc}, nil
}

// DecodeSimpleStats returns the min and max rows of s for the given column
// types.
func DecodeSimpleStats(s manifest.SimpleStats, types []DataType) (minValues, maxValues Row, err error) {
	minValues, err = DecodeBinaryRow(types, s.MinValues)
	if err != nil {
		return nil, nil, fmt.Errorf("simple stats min: %w", err)
	}
	maxValues, err = DecodeBinaryRow(types, s.MaxValues)
	if err != nil {
		return nil, nil, fmt.Errorf("simple stats max: %w", err)
	}
	if len(s.NullCounts) != len(types) {
		return nil, nil, fmt.Errorf("simple stats: %d null counts for %d columns", len(s.NullCounts), len(types))
	}
	return minValues, maxValues, nil
}

// StatsCollector computes "full" statistics (exact min, max and null count
// per column) the way Java's FullSimpleColStatsCollector does; Java uses it
// for partition stats in manifest lists.
type StatsCollector struct {
	types      []DataType
	min, max   Row
	nullCounts []int64
}

// NewStatsCollector starts collecting stats over rows of the given types.
func NewStatsCollector(types []DataType) *StatsCollector {
	return &StatsCollector{
		types:      types,
		min:        make(Row, len(types)),
		max:        make(Row, len(types)),
		nullCounts: make([]int64, len(types)),
	}
}

// Add folds one row into the stats.
func (c *StatsCollector) Add(row Row) error {
	if len(row) != len(c.types) {
		return fmt.Errorf("stats collector: row of %d values for %d columns", len(row), len(c.types))
	}
	for i, v := range row {
		if v == nil {
			c.nullCounts[i]++
			continue
		}
		if c.min[i] == nil {
			c.min[i], c.max[i] = v, v
			continue
		}
		lo, err := statsCompare(v, c.min[i])
		if err != nil {
			return fmt.Errorf("stats collector: column %d: %w", i, err)
		}
		if lo < 0 {
			c.min[i] = v
		}
		hi, err := statsCompare(v, c.max[i])
		if err != nil {
			return fmt.Errorf("stats collector: column %d: %w", i, err)
		}
		if hi > 0 {
			c.max[i] = v
		}
	}
	return nil
}

// AddBinaryRow decodes a serialized BinaryRow and folds it into the stats.
func (c *StatsCollector) AddBinaryRow(serialized []byte) error {
	row, err := DecodeBinaryRow(c.types, serialized)
	if err != nil {
		return fmt.Errorf("stats collector: %w", err)
	}
	return c.Add(row)
}

// Result encodes the collected stats.
func (c *StatsCollector) Result() (manifest.SimpleStats, error) {
	nc := make([]*int64, len(c.nullCounts))
	for i := range c.nullCounts {
		n := c.nullCounts[i]
		nc[i] = &n
	}
	return NewSimpleStats(c.types, c.min, c.max, nc)
}

// statsCompare orders two non-null values of the same atomic type as
// Java's Comparable implementations do (Float.compare semantics for floating
// point, unsigned byte order for strings and binaries).
func statsCompare(a, b any) (int, error) {
	switch x := a.(type) {
	case bool:
		y, ok := b.(bool)
		if !ok {
			break
		}
		switch {
		case x == y:
			return 0, nil
		case !x:
			return -1, nil
		}
		return 1, nil
	case int8:
		if y, ok := b.(int8); ok {
			return cmp.Compare(x, y), nil
		}
	case int16:
		if y, ok := b.(int16); ok {
			return cmp.Compare(x, y), nil
		}
	case int32:
		if y, ok := b.(int32); ok {
			return cmp.Compare(x, y), nil
		}
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y), nil
		}
	case float32:
		if y, ok := b.(float32); ok {
			return statsFloatCompare(float64(x), float64(y)), nil
		}
	case float64:
		if y, ok := b.(float64); ok {
			return statsFloatCompare(x, y), nil
		}
	case string:
		if y, ok := b.(string); ok {
			return cmp.Compare(x, y), nil
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	case Decimal:
		if y, ok := b.(Decimal); ok && x.Unscaled != nil && y.Unscaled != nil {
			if x.Scale == y.Scale {
				return x.Unscaled.Cmp(y.Unscaled), nil
			}
			return statsDecimalRat(x).Cmp(statsDecimalRat(y)), nil
		}
	case Timestamp:
		if y, ok := b.(Timestamp); ok {
			if c := cmp.Compare(x.Millis, y.Millis); c != 0 {
				return c, nil
			}
			return cmp.Compare(x.NanoOfMilli, y.NanoOfMilli), nil
		}
	}
	return 0, fmt.Errorf("cannot compare %T with %T", a, b)
}

// statsFloatCompare is Java's Double.compare: -0.0 < 0.0 and NaN is the
// largest value, equal to itself.
func statsFloatCompare(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	// Equal numerically; only the sign of zero can differ.
	return cmp.Compare(statsBoolInt(!math.Signbit(x)), statsBoolInt(!math.Signbit(y)))
}

func statsBoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func statsDecimalRat(d Decimal) *big.Rat {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(d.Scale, 0))), nil)
	return new(big.Rat).SetFrac(d.Unscaled, den)
}
