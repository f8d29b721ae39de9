package datafile

import (
	"encoding/hex"
	"fmt"
	"github.com/compactd/compactd/internal/avro"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/compactd/compactd/internal/javacompat"
	"github.com/compactd/compactd/table"
)

const (
	firstInstantSec = -62135596800 // 0001-01-01T00:00:00Z
	lastInstantSec  = 253402300799 // 9999-12-31T23:59:59Z
)

// tsInstants returns n random instants of years 0001-9999, half of them
// within two days of the epoch, all with nanosecond digits, plus edges.
func tsInstants(r *rand.Rand, n int) []time.Time {
	out := []time.Time{
		time.Unix(-1, 999_999_999), time.Unix(-1, 999_000_001), time.Unix(-1, 1), time.Unix(0, 0), time.Unix(0, 1),
		time.Unix(-86400, 1), time.Unix(-86401, 999_999_999), time.Unix(-86400, 0),
		time.Unix(firstInstantSec, 0), time.Unix(firstInstantSec, 1), time.Unix(lastInstantSec, 999_999_999),
	}
	for range n {
		var sec int64
		if r.IntN(2) == 0 {
			sec = r.Int64N(4*86400) - 2*86400
		} else {
			sec = firstInstantSec + r.Int64N(lastInstantSec-firstInstantSec+1)
		}
		out = append(out, time.Unix(sec, r.Int64N(1e9)))
	}
	for i := range out {
		out[i] = out[i].UTC()
	}
	return out
}

// atPrecision drops the digits TIMESTAMP(p) cannot hold, towards the past.
func atPrecision(tm time.Time, p int) time.Time {
	unit := time.Duration(1)
	for range 9 - p {
		unit *= 10
	}
	return tm.Truncate(unit)
}

// javaInt96 is the INT96 Java Paimon's ParquetRowDataWriter writes for an
// instant, derived from the calendar rather than from millisecond
// arithmetic: Java divides epoch milliseconds by the day towards zero, so an
// instant before 1970 that is not a midnight is counted from the next
// midnight, with negative nanoseconds.
func javaInt96(tm time.Time) string {
	midnight := time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, time.UTC)
	day := javacompat.FloorDiv(midnight.Unix(), 86400)
	nanos := int64(tm.Sub(midnight))
	if tm.Before(time.Unix(0, 0)) && tm.UnixMilli()%86400000 != 0 {
		day++
		nanos -= 86400 * 1e9
	}
	return hex.EncodeToString(int96Bytes(uint64(nanos), uint32(int32(day+julianEpochDay))))
}

func int96Bytes(nanos uint64, julian uint32) []byte {
	v := deprecated.Int96{uint32(nanos), uint32(nanos >> 32), julian}
	return parquet.Int96Value(v).Bytes()
}

// Every precision of TIMESTAMP and TIMESTAMP_LTZ: the Parquet value
// compactd writes is the one Java writes (epoch millis, epoch micros, or
// Java's INT96), and reading it, or any other valid encoding of the instant
// (floored INT96 as Spark writes it, INT64 micros/nanos), gives back the
// instant with a nano-of-milli in 0..999999.
func TestTimestampParquetValuesEveryPrecision(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	instants := tsInstants(r, 5000)
	nanosCol := parquet.Timestamp(parquet.Nanosecond).Type()
	microsCol := parquet.Timestamp(parquet.Microsecond).Type()
	for _, kind := range []string{"TIMESTAMP(%d)", "TIMESTAMP_LTZ(%d)"} {
		for p := 0; p <= 9; p++ {
			typ := mustType(t, fmt.Sprintf(kind, p))
			enc, err := leafEncoder(typ)
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := parquetLeaf(typ)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := leafDecoder(typ, leaf.Type())
			if err != nil {
				t.Fatal(err)
			}
			decNanos, err := leafDecoder(typ, nanosCol)
			if err != nil {
				t.Fatal(err)
			}
			decMicros, err := leafDecoder(typ, microsCol)
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range instants {
				tm := atPrecision(raw, p)
				ts := table.TimestampFromTime(tm)
				pv, err := enc(ts)
				if err != nil {
					t.Fatalf("%s %s: %v", typ, tm, err)
				}
				var want string
				switch {
				case p <= 3:
					want = hex.EncodeToString(parquet.Int64Value(tm.UnixMilli()).Bytes())
				case p <= 6:
					want = hex.EncodeToString(parquet.Int64Value(tm.UnixMicro()).Bytes())
				default:
					want = javaInt96(tm)
				}
				if got := hex.EncodeToString(pv.Bytes()); got != want {
					t.Fatalf("%s %s: writes %s, Java writes %s", typ, tm, got, want)
				}
				check := func(what string, v any, err error) {
					t.Helper()
					if err != nil {
						t.Fatalf("%s %s %s: %v", typ, tm, what, err)
					}
					if v != ts {
						t.Fatalf("%s %s: %s reads %+v, want %+v", typ, tm, what, v, ts)
					}
				}
				v, err := dec(pv)
				check("Java's encoding", v, err)
				if p > 6 {
					day, nod := ts.DayNanos() // Spark's INT96: floored
					v, err = dec(parquet.Int96Value(deprecated.Int96{uint32(nod), uint32(uint64(nod) >> 32), uint32(int32(day + julianEpochDay))}))
					check("floored INT96", v, err)
				}
				if p > 3 && p <= 6 {
					v, err = decMicros(parquet.Int64Value(tm.UnixMicro()))
					check("INT64 micros", v, err)
				}
				if tm.Year() > 1677 && tm.Year() < 2262 {
					v, err = decNanos(parquet.Int64Value(tm.UnixNano()))
					check("INT64 nanos", v, err)
				}
			}
		}
	}
}

// INT96 values as Java Paimon 1.4.2 wrote them into data files (seen in the
// files of e2e.TestPreEpochSubMillisecondTimestampKeysCompactLikeJava).
func TestInt96VectorsWrittenByJava(t *testing.T) {
	for _, c := range []struct{ instant, int96 string }{
		{"1969-12-31T23:59:59.999999999", "ffffffffffffffff8c3d2500"},
		{"0001-01-01T23:59:59.9999999", "9cffffffffffffff53441a00"},
		{"1970-01-01T00:00:00.000000001", "01000000000000008c3d2500"},
	} {
		tm, err := time.Parse("2006-01-02T15:04:05.999999999", c.instant)
		if err != nil {
			t.Fatal(err)
		}
		ts := table.TimestampFromTime(tm)
		b, _ := hex.DecodeString(c.int96)
		var v deprecated.Int96
		for i := range v {
			v[i] = uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24
		}
		if got := timestampFromInt96(v); got != ts {
			t.Errorf("%s: Java's %s reads as %+v, want %+v", c.instant, c.int96, got, ts)
		}
		if got := int96FromTimestamp(ts); got != v {
			t.Errorf("%s: writes %x, Java wrote %s", c.instant, parquet.Int96Value(got).Bytes(), c.int96)
		}
	}
}

// Key-value files keyed by timestamps of every precision and both kinds,
// with instants of years 0001-9999: what is written reads back through the
// record and the batch path, and min/max keys and statistics are the
// extreme instants (none for INT96 columns, as Java).
func TestTimestampKeyValueFilesEveryPrecision(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	dir := t.TempDir()
	for _, kind := range []string{"TIMESTAMP(%d)", "TIMESTAMP_LTZ(%d)"} {
		for p := 0; p <= 9; p++ {
			typ := fmt.Sprintf(kind, p)
			fields := table.RowType{
				{ID: 0, Name: "k", Type: mustType(t, typ+" NOT NULL")},
				{ID: 1, Name: "w", Type: mustType(t, typ)},
			}
			s := Schema{Fields: fields, KeyNames: []string{"k"}}
			seen := map[table.Timestamp]bool{}
			var keys []table.Timestamp
			for _, tm := range tsInstants(r, 400) {
				ts := table.TimestampFromTime(atPrecision(tm, p))
				if !seen[ts] {
					seen[ts] = true
					keys = append(keys, ts)
				}
			}
			slices.SortFunc(keys, func(a, b table.Timestamp) int { return table.CompareValues(fields[0].Type, a, b) })
			var recs []table.KeyValue
			for i, k := range keys {
				var w any = keys[len(keys)-1-i]
				if i%7 == 0 {
					w = nil
				}
				recs = append(recs, table.KeyValue{Key: table.Row{k}, Seq: int64(i), Kind: table.RowKindInsert, Value: table.Row{k, w}})
			}
			for _, batches := range []bool{false, true} {
				path := filepath.Join(dir, fmt.Sprintf("data-%s-%v.parquet", typ, batches))
				var st *FileStats
				if batches {
					st = writeKVBatches(t, r, path, s, nil, recs, true)
				} else {
					st = writeKVRows(t, path, s, nil, recs)
				}
				if got := readAllKV(t, path, s, s); !reflect.DeepEqual(got, recs) {
					t.Fatalf("%s (batch write %v): record path reads back %d records differing from the %d written", typ, batches, len(got), len(recs))
				}
				codec, err := NewKVCodec(s)
				if err != nil {
					t.Fatal(err)
				}
				got, err := readKVBatches(t, r, path, s, s, codec)
				if err != nil {
					t.Fatalf("%s: batch read: %v", typ, err)
				}
				if !reflect.DeepEqual(got, recs) {
					t.Fatalf("%s (batch write %v): batch path reads back records differing from those written", typ, batches)
				}
				lo, hi := table.Row{keys[0]}, table.Row{keys[len(keys)-1]}
				if !reflect.DeepEqual(st.MinKey, lo) || !reflect.DeepEqual(st.MaxKey, hi) {
					t.Errorf("%s: min/max key %v %v, want %v %v", typ, st.MinKey, st.MaxKey, lo, hi)
				}
				wantLo, wantHi := lo, hi
				if p > 6 {
					wantLo, wantHi = table.Row{nil}, table.Row{nil}
				}
				if !reflect.DeepEqual(st.KeyStats.Min, wantLo) || !reflect.DeepEqual(st.KeyStats.Max, wantHi) {
					t.Errorf("%s: key stats %v %v, want %v %v", typ, st.KeyStats.Min, st.KeyStats.Max, wantLo, wantHi)
				}
			}
		}
	}
}

// Avro timestamps arrive as longs of millis or micros (by logical type);
// years outside 1677-2262 do not fit int64 nanoseconds, which must not be
// on the way.
func TestAvroTimestampsOfEveryYear(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	for _, typ := range []string{"TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(6)"} {
		dt := mustType(t, typ)
		logical, unit := "timestamp-millis", int64(1000)
		if dt.Precision > 3 {
			logical, unit = "timestamp-micros", 1000000
		}
		if dt.Root == table.TypeTimestampLTZ {
			logical = "local-" + logical
		}
		s, err := avro.ParseSchema([]byte(`{"type":"long","logicalType":"` + logical + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, tm := range tsInstants(r, 2000) {
			tm = atPrecision(tm, dt.Precision)
			raw := tm.Unix()*unit + int64(tm.Nanosecond())/(1000000000/unit)
			v, err := fromAvro(raw, s, dt)
			if err != nil {
				t.Fatalf("%s %s: %v", typ, tm, err)
			}
			if want := table.TimestampFromTime(tm); v != want || !want.Time().Equal(tm) {
				t.Fatalf("%s %s: reads %+v, want %+v", typ, tm, v, want)
			}
		}
	}
	ds, err := avro.ParseSchema([]byte(`{"type":"int","logicalType":"date"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, day := range []int64{-719162, -1, 0, 2932896} { // 0001-01-01 .. 9999-12-31
		v, err := fromAvro(int32(day), ds, mustType(t, "DATE"))
		if err != nil || v != int32(day) {
			t.Errorf("DATE of day %d reads %v, %v", day, v, err)
		}
	}
}
