package orc_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/internal/orc"
	"github.com/compactd/compactd/interop"
)

// javaJSON renders a written value the way the orc-read-rows verb renders
// Java's read of it (after interop.Normalize).
func javaJSON(t *orc.TypeDesc, v any) any {
	if v == nil {
		return nil
	}
	switch t.Kind {
	case orc.Boolean, orc.Byte, orc.Short, orc.Int, orc.Long:
		return v
	case orc.Date:
		return time.Unix(v.(int64)*86400, 0).UTC().Format("2006-01-02")
	case orc.Float, orc.Double:
		return v
	case orc.String, orc.Varchar, orc.Char:
		return string(v.([]byte))
	case orc.Binary:
		return base64.StdEncoding.EncodeToString(v.([]byte))
	case orc.Decimal:
		d := v.(orc.Dec)
		return new(big.Rat).SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)).FloatString(d.Scale)
	case orc.Timestamp, orc.TimestampInstant:
		x := v.(orc.Time)
		return time.Unix(x.Secs, int64(x.Nanos)).UTC().Format("2006-01-02T15:04:05.000000000")
	case orc.List:
		out := []any{}
		for _, e := range v.([]any) {
			out = append(out, javaJSON(t.Children[0], e))
		}
		return out
	case orc.Map:
		out := []any{}
		for _, kv := range v.([]orc.KV) {
			out = append(out, []any{javaJSON(t.Children[0], kv.Key), javaJSON(t.Children[1], kv.Value)})
		}
		return out
	case orc.Struct:
		out := map[string]any{}
		for k, c := range t.Children {
			out[t.Fields[k]] = javaJSON(c, v.([]any)[k])
		}
		return out
	}
	panic(t.Kind)
}

// TestJavaReadsWriterOutput writes files of every type with every codec,
// direct and dictionary strings, several stripes and row groups, and has
// Java's ORC library (the copy Paimon bundles) read them: every row must
// be what was written, every row group must be reachable through its row
// index positions (seekToRow), and the footer statistics must be the
// data's.
func TestJavaReadsWriterOutput(t *testing.T) {
	t.Parallel()
	j := interop.Java(t)
	schema := orc.TestSchema()
	one := 1.0
	zero := 0.0
	cases := []struct {
		name string
		opts orc.WriterOptions
		n    int
		mode int
	}{
		{"none", orc.WriterOptions{Compression: orc.CompressionNone, RowIndexStride: 100}, 1200, 0},
		{"zlib-stripes", orc.WriterOptions{Compression: orc.CompressionZlib, StripeSize: 30000, RowIndexStride: 64}, 1500, 0},
		{"snappy-monotone", orc.WriterOptions{Compression: orc.CompressionSnappy, BlockSize: 1000, RowIndexStride: 250}, 3000, 1},
		{"lz4", orc.WriterOptions{Compression: orc.CompressionLZ4, RowIndexStride: 500}, 1100, 0},
		{"zstd-dict", orc.WriterOptions{Compression: orc.CompressionZstd, CompressionLevel: 3, DictionaryKeyRatio: &one, RowIndexStride: 300}, 2000, 1},
		{"zstd-direct", orc.WriterOptions{Compression: orc.CompressionZstd, DictionaryKeyRatio: &zero, BlockSize: 4096, RowIndexStride: 333}, 2000, 0},
	}
	dir := t.TempDir()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := orc.GenRows(uint64(100+i), schema, tc.n, tc.mode)
			b := orc.WriteFileTB(t, schema, tc.opts, data)
			path := filepath.Join(dir, tc.name+".orc")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			javaCheck(t, j, path, schema, data, tc.opts.RowIndexStride, tc.name == "zlib-stripes")
		})
	}
}

// checkStats compares Java's view of the footer statistics of the
// top-level columns with the written data.
func checkStats(t *testing.T, schema *orc.TypeDesc, data [][]any, cols []map[string]any) {
	t.Helper()
	id := 1
	for k, c := range schema.Children {
		var n int
		var hasNull bool
		var lo, hi any
		trues := 0
		for _, row := range data {
			v := row[k]
			if v == nil {
				hasNull = true
				continue
			}
			n++
			var key any
			switch c.Kind {
			case orc.Boolean:
				if v.(bool) {
					trues++
				}
			case orc.Long, orc.Int:
				key = v.(int64)
			case orc.String:
				key = string(v.([]byte))
			case orc.Date:
				key = v.(int64)
			case orc.Decimal:
				d := v.(orc.Dec)
				key = new(big.Rat).SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
			case orc.Timestamp, orc.TimestampInstant:
				key = v.(orc.Time)
			}
			if key != nil {
				if lo == nil || less(key, lo) {
					lo = key
				}
				if hi == nil || less(hi, key) {
					hi = key
				}
			}
		}
		got := cols[id]
		if got["n"] != float64(n) || got["has_null"] != hasNull {
			t.Fatalf("column %s: Java's stats %v, want %d values, nulls %v", schema.Fields[k], got, n, hasNull)
		}
		switch c.Kind {
		case orc.Boolean:
			if got["true_count"] != float64(trues) {
				t.Fatalf("column %s: Java's stats %v, want %d true", schema.Fields[k], got, trues)
			}
		case orc.Decimal:
			var a, b big.Rat
			a.SetString(fmt.Sprint(got["min"]))
			b.SetString(fmt.Sprint(got["max"]))
			if a.Cmp(lo.(*big.Rat)) != 0 || b.Cmp(hi.(*big.Rat)) != 0 {
				t.Fatalf("column %s: Java's stats %v, want min %v max %v", schema.Fields[k], got, lo, hi)
			}
		case orc.Timestamp, orc.TimestampInstant:
			// Statistics keep milliseconds (and the nanoseconds below them).
			ts := func(x orc.Time) string { return fmt.Sprintf("%d.%09d", x.Secs, x.Nanos) }
			if got["min"] != ts(lo.(orc.Time)) || got["max"] != ts(hi.(orc.Time)) {
				t.Fatalf("column %s: Java's stats %v, want min %v max %v", schema.Fields[k], got, ts(lo.(orc.Time)), ts(hi.(orc.Time)))
			}
		case orc.Long, orc.Int, orc.String, orc.Date:
			if got["min"] != fmt.Sprint(lo) || got["max"] != fmt.Sprint(hi) {
				t.Fatalf("column %s: Java's stats %v, want min %v max %v", schema.Fields[k], got, lo, hi)
			}
		}
		id += countTypes(c)
	}
}

func less(a, b any) bool {
	switch x := a.(type) {
	case int64:
		return x < b.(int64)
	case string:
		return x < b.(string)
	case *big.Rat:
		return x.Cmp(b.(*big.Rat)) < 0
	case orc.Time:
		y := b.(orc.Time)
		return x.Secs < y.Secs || (x.Secs == y.Secs && x.Nanos < y.Nanos)
	}
	return false
}

func countTypes(t *orc.TypeDesc) int {
	n := 1
	for _, c := range t.Children {
		n += countTypes(c)
	}
	return n
}

// javaCheck has Java read the file at path (orc-read-rows with the row
// index checks) and compares every row and the footer statistics with
// data.
func javaCheck(t *testing.T, j *interop.JavaOracle, path string, schema *orc.TypeDesc, data [][]any, stride int, manyStripes bool) {
	t.Helper()
	out, err := j.Run(t.Context(), nil, "orc-read-rows", "--file", path, "--seek-check", "true")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	rows, err := interop.ParseRows([]byte(strings.Join(lines[:len(lines)-1], "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(data) {
		t.Fatalf("Java read %d rows, wrote %d", len(rows), len(data))
	}
	for r := range data {
		for k, c := range schema.Children {
			want := interop.Normalize(javaJSON(c, data[r][k]))
			got := rows[r][schema.Fields[k]]
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("row %d column %s: Java read %#v, wrote %#v", r, schema.Fields[k], got, want)
			}
		}
	}
	var st struct {
		Stats struct {
			Columns     []map[string]any `json:"columns"`
			Stripes     int              `json:"stripes"`
			StripeStats int              `json:"stripe_stats"`
			Compression string           `json:"compression"`
			Stride      int              `json:"row_index_stride"`
			PaimonIDs   []any            `json:"paimon_ids"`
		} `json:"__orc_stats"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &st); err != nil {
		t.Fatal(err)
	}
	s := st.Stats
	if s.Stripes != s.StripeStats || s.Stride != stride || s.PaimonIDs[4] != "4" {
		t.Fatalf("stats line: %s", lines[len(lines)-1])
	}
	if manyStripes && s.Stripes < 3 {
		t.Fatalf("%d stripes, want several", s.Stripes)
	}
	checkStats(t, schema, data, s.Columns)
}

// TestJavaReadsWriterOutputInAnotherZone: Java's reader in a zone other
// than UTC (America/New_York, with DST) reads the same TIMESTAMP
// wall-clock and TIMESTAMP_INSTANT instants: the writer stores UTC as its
// zone, and Java converts TIMESTAMP from the writer's zone to its own.
func TestJavaReadsWriterOutputInAnotherZone(t *testing.T) {
	// Not parallel: the JVM's zone comes from the environment.
	t.Setenv("JAVA_TOOL_OPTIONS", "-Duser.timezone=America/New_York")
	j := interop.Java(t)
	schema := orc.TestSchema()
	data := orc.GenRows(7, schema, 1500, 0)
	path := filepath.Join(t.TempDir(), "zone.orc")
	if err := os.WriteFile(path, orc.WriteFileTB(t, schema, orc.WriterOptions{Compression: orc.CompressionZstd, RowIndexStride: 1000}, data), 0o644); err != nil {
		t.Fatal(err)
	}
	javaCheck(t, j, path, schema, data, 1000, false)
}
