package datafile

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/compactd/compactd/table"
)

// Stats are the min, max and null count of each column, the content of a
// SimpleStats record before BinaryRow encoding. A nil Min/Max element or a
// nil NullCounts element means unknown (Java writes null there too).
type Stats struct {
	Min        table.Row
	Max        table.Row
	NullCounts []*int64
}

// statsMode is a column's metadata.stats-mode.
type statsMode struct {
	kind     string // none, counts, truncate, full
	truncate int
}

func parseStatsMode(s string) (statsMode, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "none", "counts", "full":
		return statsMode{kind: s}, nil
	}
	if strings.HasPrefix(s, "truncate(") && strings.HasSuffix(s, ")") {
		n, err := strconv.Atoi(s[len("truncate(") : len(s)-1])
		if err == nil && n > 0 {
			return statsMode{kind: "truncate", truncate: n}, nil
		}
	}
	return statsMode{}, fmt.Errorf("invalid stats mode %q", s)
}

// statsModes resolves the collector of each column the way Java's
// StatsCollectorFactories does: fields.<name>.stats-mode, then truncate(128)
// for system columns, then none after metadata.stats-keep-first-n-columns
// user columns, then metadata.stats-mode (default truncate(16)).
func statsModes(fields table.RowType, options map[string]string) ([]statsMode, error) {
	def := "truncate(16)"
	if v, ok := options["metadata.stats-mode"]; ok {
		def = v
	}
	defMode, err := parseStatsMode(def)
	if err != nil {
		return nil, err
	}
	keepFirst := -1
	if v, ok := options["metadata.stats-keep-first-n-columns"]; ok {
		if keepFirst, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("invalid metadata.stats-keep-first-n-columns %q", v)
		}
	}
	out := make([]statsMode, len(fields))
	counted := 0 // columns that used up a keep-first-n slot, as Java counts them
	for i, f := range fields {
		if v, ok := options["fields."+f.Name+".stats-mode"]; ok {
			m, err := parseStatsMode(v)
			if err != nil {
				return nil, fmt.Errorf("fields.%s.stats-mode: %w", f.Name, err)
			}
			out[i] = m
			counted++
		} else if isSystemField(f.Name) {
			out[i] = statsMode{kind: "truncate", truncate: 128}
		} else {
			if keepFirst >= 0 && counted >= keepFirst {
				out[i] = statsMode{kind: "none"}
			} else {
				out[i] = defMode
			}
			counted++
		}
	}
	return out, nil
}

// colCollector gathers the stats of one top-level column from the written
// values.
type colCollector struct {
	typ      table.DataType
	mode     statsMode
	min, max any
	nulls    int64
	noMinMax bool // NaN seen or a type without min/max
}

func newCollector(t table.DataType, m statsMode) *colCollector {
	c := &colCollector{typ: t, mode: m}
	switch t.Root {
	case table.TypeArray, table.TypeMap, table.TypeMultiset, table.TypeRow, table.TypeVariant, table.TypeBlob, table.TypeVector,
		// Java takes Parquet files' stats from their footer
		// (ParquetSimpleStatsExtractor), which gives BINARY and VARBINARY
		// columns a null count but no min or max.
		table.TypeBinary, table.TypeVarBinary:
		c.noMinMax = true
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		// INT96 columns have no usable Parquet statistics; Java reports null.
		c.noMinMax = t.Precision > 6
	}
	return c
}

func (c *colCollector) add(v any) {
	if v == nil {
		c.nulls++
		return
	}
	if c.noMinMax || c.mode.kind == "none" || c.mode.kind == "counts" {
		return
	}
	switch x := v.(type) {
	case float32:
		if x != x {
			c.noMinMax = true
			return
		}
	case float64:
		if math.IsNaN(x) {
			c.noMinMax = true
			return
		}
	}
	if c.min == nil || compareValues(v, c.min) < 0 {
		c.min = own(v)
	}
	if c.max == nil || compareValues(v, c.max) > 0 {
		c.max = own(v)
	}
}

// own copies byte slices, which a caller might reuse after Write.
func own(v any) any {
	if b, ok := v.([]byte); ok {
		return bytes.Clone(b)
	}
	return v
}

// result returns min, max and null count after the column's stats mode.
func (c *colCollector) result() (min, max any, nulls *int64) {
	composite := c.typ.IsComposite()
	switch c.mode.kind {
	case "none":
		return nil, nil, nil
	case "counts":
		if composite {
			return nil, nil, nil
		}
		n := c.nulls
		return nil, nil, &n
	}
	if composite {
		return nil, nil, nil
	}
	n := c.nulls
	if c.noMinMax {
		return nil, nil, &n
	}
	min, max = c.min, c.max
	if c.mode.kind == "truncate" {
		min, max = truncateMinMax(min, max, c.mode.truncate)
	}
	return min, max, &n
}

// truncateMinMax implements truncate(n): strings keep n code points, binary
// n bytes; the max is rounded up by incrementing the last position that can
// be incremented. When no position can, both become unknown.
func truncateMinMax(min, max any, n int) (any, any) {
	switch mn := min.(type) {
	case string:
		mx := max.(string)
		if utf8.RuneCountInString(mn) > n {
			mn = firstRunes(mn, n)
		}
		if utf8.RuneCountInString(mx) > n {
			r := []rune(firstRunes(mx, n))
			ok := false
			for i := len(r) - 1; i >= 0; i-- {
				if next, can := nextRune(r[i]); can {
					r[i] = next
					r = r[:i+1]
					ok = true
					break
				}
			}
			if !ok {
				return nil, nil
			}
			return mn, string(r)
		}
		return mn, mx
	case []byte:
		mx := max.([]byte)
		if len(mn) > n {
			mn = mn[:n]
		}
		if len(mx) > n {
			b := bytes.Clone(mx[:n])
			for i := len(b) - 1; i >= 0; i-- {
				if b[i] != 0xff {
					b[i]++
					return mn, b[:i+1]
				}
			}
			return nil, nil
		}
		return mn, mx
	}
	return min, max
}

func firstRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// nextRune is the code point after r, skipping surrogates; false at the end
// of the Unicode range.
func nextRune(r rune) (rune, bool) {
	r++
	if r >= 0xD800 && r <= 0xDFFF {
		r = 0xE000
	}
	if r > utf8.MaxRune {
		return 0, false
	}
	return r, true
}

// compareValues orders two non-null values of the same atomic type in
// Paimon's natural order (unsigned bytes for strings and binary).
func compareValues(a, b any) int {
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case int8:
		return cmpOrdered(x, b.(int8))
	case int16:
		return cmpOrdered(x, b.(int16))
	case int32:
		return cmpOrdered(x, b.(int32))
	case int64:
		return cmpOrdered(x, b.(int64))
	case float32:
		return cmpOrdered(x, b.(float32))
	case float64:
		return cmpOrdered(x, b.(float64))
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case table.Decimal:
		y := b.(table.Decimal)
		if x.Scale == y.Scale {
			return x.Unscaled.Cmp(y.Unscaled)
		}
		// Different scales only arise from mixed inputs; compare exactly.
		l := new(bigRat).SetFrac(x.Unscaled, pow10(x.Scale))
		r := new(bigRat).SetFrac(y.Unscaled, pow10(y.Scale))
		return l.Cmp(r)
	case table.Timestamp:
		y := b.(table.Timestamp)
		if c := cmpOrdered(x.Millis, y.Millis); c != 0 {
			return c
		}
		return cmpOrdered(x.NanoOfMilli, y.NanoOfMilli)
	}
	return 0
}

func cmpOrdered[T int8 | int16 | int32 | int64 | float32 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type bigRat = big.Rat

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }
