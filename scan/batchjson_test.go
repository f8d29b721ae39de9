package scan_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/scan"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/datafile"
	"github.com/compactd/compactd/table/manifest"
	"github.com/compactd/compactd/write"
)

// flatTypes is one column of every flat type, each decimal physical form
// (INT32, INT64, bytes) and each timestamp precision.
func flatTypes() table.RowType {
	ts := func(root table.TypeRoot, p int) table.DataType {
		return table.DataType{Root: root, Precision: p, Nullable: true}
	}
	types := []table.DataType{
		{Root: table.TypeBoolean, Nullable: true},
		{Root: table.TypeTinyInt, Nullable: true},
		{Root: table.TypeSmallInt, Nullable: true},
		{Root: table.TypeInt, Nullable: true},
		{Root: table.TypeBigInt, Nullable: true},
		{Root: table.TypeFloat, Nullable: true},
		{Root: table.TypeDouble, Nullable: true},
		{Root: table.TypeChar, Length: 5, Nullable: true},
		{Root: table.TypeVarChar, Length: table.MaxLength, Nullable: true},
		{Root: table.TypeBinary, Length: 4, Nullable: true},
		{Root: table.TypeVarBinary, Length: table.MaxLength, Nullable: true},
		{Root: table.TypeDecimal, Precision: 5, Scale: 2, Nullable: true},
		{Root: table.TypeDecimal, Precision: 9, Scale: 0, Nullable: true},
		{Root: table.TypeDecimal, Precision: 18, Scale: 6, Nullable: true},
		{Root: table.TypeDecimal, Precision: 30, Scale: 4, Nullable: true},
		{Root: table.TypeDate, Nullable: true},
		{Root: table.TypeTime, Nullable: true},
		ts(table.TypeTimestamp, 3), ts(table.TypeTimestamp, 6), ts(table.TypeTimestamp, 9),
		ts(table.TypeTimestampLTZ, 3), ts(table.TypeTimestampLTZ, 6), ts(table.TypeTimestampLTZ, 9),
	}
	f := table.RowType{{ID: 0, Name: "k", Type: table.DataType{Root: table.TypeBigInt}}}
	for i, typ := range types {
		// Names needing escapes take AppendJSON's quoting path.
		name := fmt.Sprintf("c%02d", i)
		if i%7 == 3 {
			name += "\"é<"
		}
		f = append(f, table.DataField{ID: i + 1, Name: name, Type: typ})
	}
	return f
}

// flatValue is a value of t: edge values first (by edge), then random
// ones; nil about one time in eight.
func flatValue(t table.DataType, rng *rand.Rand, edge int) any {
	if rng.IntN(8) == 0 {
		return nil
	}
	pick := func(edges ...any) any {
		if edge < len(edges) {
			return edges[edge]
		}
		return nil
	}
	dec := func(u *big.Int) table.Decimal {
		return table.Decimal{Unscaled: u, Precision: t.Precision, Scale: t.Scale}
	}
	bigDec := func(max int64) table.Decimal { return dec(big.NewInt(rng.Int64N(2*max+1) - max)) }
	var v any
	switch t.Root {
	case table.TypeBoolean:
		v = rng.IntN(2) == 0
	case table.TypeTinyInt:
		if v = pick(int8(math.MinInt8), int8(math.MaxInt8), int8(0), int8(-1)); v == nil {
			v = int8(rng.IntN(256) - 128)
		}
	case table.TypeSmallInt:
		if v = pick(int16(math.MinInt16), int16(math.MaxInt16)); v == nil {
			v = int16(rng.IntN(65536) - 32768)
		}
	case table.TypeInt:
		if v = pick(int32(math.MinInt32), int32(math.MaxInt32)); v == nil {
			v = int32(rng.Uint32())
		}
	case table.TypeBigInt:
		if v = pick(int64(math.MinInt64), int64(math.MaxInt64)); v == nil {
			v = int64(rng.Uint64())
		}
	case table.TypeFloat:
		if v = pick(float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(0), float32(1e20), float32(-0.1), float32(math.SmallestNonzeroFloat32), float32(math.MaxFloat32)); v == nil {
			v = float32(rng.NormFloat64() * 1000)
		}
	case table.TypeDouble:
		if v = pick(math.NaN(), math.Inf(1), math.Inf(-1), 0.0, 1e21, 123.0, -0.1, math.SmallestNonzeroFloat64, math.MaxFloat64); v == nil {
			v = rng.NormFloat64() * 1e6
		}
	case table.TypeChar:
		v = fmt.Sprintf("%05d", rng.IntN(100000))
	case table.TypeVarChar:
		if v = pick("", "quote\" back\\slash", "tab\tnl\n\x01\x7f", "<a>&b", "héllo 世界 😀", "\u2028\u2029", string([]byte{0xff, 0xfe, 'x'})); v == nil {
			v = fmt.Sprintf("s%d", rng.IntN(1000))
		}
	case table.TypeBinary:
		v = []byte{byte(rng.IntN(256)), 0, 0xff, byte(rng.IntN(256))}
	case table.TypeVarBinary:
		if v = pick([]byte{}, []byte{0xfb, 0xff}, []byte("abc")); v == nil {
			v = []byte(fmt.Sprint(rng.IntN(1e6)))
		}
	case table.TypeDecimal:
		max := new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Precision)), nil), big.NewInt(1))
		if v = pick(dec(max), dec(new(big.Int).Neg(max)), dec(big.NewInt(0)), dec(big.NewInt(-1)), dec(big.NewInt(7)), dec(big.NewInt(-12345))); v != nil {
			break
		}
		if t.Precision <= 18 {
			v = bigDec(max.Int64())
			break
		}
		u := new(big.Int).Mul(big.NewInt(rng.Int64N(1e17)), big.NewInt(1e12))
		u.Add(u, big.NewInt(rng.Int64N(1e12)))
		if rng.IntN(2) == 0 {
			u.Neg(u)
		}
		v = dec(u)
	case table.TypeDate:
		if v = pick(int32(0), int32(-1), int32(-719162), int32(2932896), int32(-25567)); v == nil {
			v = rng.Int32N(40000) - 20000
		}
	case table.TypeTime:
		if v = pick(int32(0), int32(86399999), int32(1), int32(3600000)); v == nil {
			v = rng.Int32N(86400000)
		}
	case table.TypeTimestamp, table.TypeTimestampLTZ:
		// 1900 to 2200: in range of epoch nanoseconds; before 1970 too.
		const lo, hi = -2208988800000, 7258118400000
		ts, ok := pick(table.Timestamp{}, table.Timestamp{Millis: -1}, table.Timestamp{Millis: -1, NanoOfMilli: 999999}, table.Timestamp{Millis: lo, NanoOfMilli: 1}).(table.Timestamp)
		if !ok {
			ts = table.Timestamp{Millis: lo + rng.Int64N(hi-lo), NanoOfMilli: rng.Int32N(1000000)}
		}
		// No digits beyond the type's precision: the record and batch
		// paths of ORC files disagree on such values, which Paimon does
		// not write.
		switch {
		case t.Precision <= 3:
			ts.NanoOfMilli = 0
		case t.Precision <= 6:
			ts.NanoOfMilli -= ts.NanoOfMilli % 1000
		}
		v = ts
	}
	return v
}

// flatRow is a row of flatTypes with key k.
func flatRow(fields table.RowType, k int64, rng *rand.Rand, edge int) table.Row {
	row := table.Row{k}
	for _, f := range fields[1:] {
		row = append(row, flatValue(f.Type, rng, edge))
	}
	return row
}

// Rows encoded straight from a batch's vectors are AppendJSON's text of
// the rows the codec decodes from it, byte for byte, for every flat type
// and edge value.
func TestBatchJSONMatchesAppendJSON(t *testing.T) {
	t.Parallel()
	fields := flatTypes()
	codec, err := datafile.NewCodec(fields)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(19, 6))
	b := codec.NewBatch()
	for i := range 2000 {
		row := flatRow(fields, int64(i), rng, i/8)
		if i%50 == 0 {
			for j := 1; j < len(row); j++ {
				row[j] = nil
			}
		}
		if err := codec.AppendRow(b, row); err != nil {
			t.Fatalf("row %d %v: %v", i, row, err)
		}
	}
	for i := range b.N {
		row, err := codec.RowAt(b, i)
		if err != nil {
			t.Fatal(err)
		}
		want, err := scan.AppendJSON(nil, fields, row)
		if err != nil {
			t.Fatal(err)
		}
		got, err := scan.BatchRowJSON(fields, codec, b, i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("row %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// EachJSON writes the lines that Each's rows give through AppendJSON, on
// ORC and Parquet tables of every flat type, primary-key (merged over
// several commits, with deletes) and append, and the record path agrees.
func TestEachJSONMatchesEach(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"parquet", "orc"} {
		for _, pk := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s pk=%v", format, pk), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				fields := flatTypes()
				opts := map[string]string{"bucket": "1", "file.format": format}
				var keys []string
				if pk {
					keys = []string{"k"}
				} else {
					opts["bucket"] = "-1"
				}
				s, err := table.NewTableSchema(0, fields, 1, nil, keys, opts, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				tb, err := write.CreateTable(ctx, fileio.NewLocal(), t.TempDir(), "db", "t", s)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(19, 8))
				const runs, n = 3, 1500
				for run := range runs {
					var w interface {
						Write(table.RowKind, table.Row) error
						Commit(context.Context) (*table.Snapshot, error)
					}
					if !pk {
						w = &appendCommit{t: tb, r: write.NewAppendRoller(ctx, tb, table.EmptyBinaryRow(), 0, int64(run*n), manifest.FileSourceAppend)}
					} else if w, err = write.NewWriter(ctx, tb, fmt.Sprint("w", run)); err != nil {
						t.Fatal(err)
					}
					seen := map[int64]bool{}
					for i := range n {
						k := rng.Int64N(2 * n)
						if pk && seen[k] {
							continue
						}
						seen[k] = true
						kind := table.RowKindInsert
						if pk && rng.IntN(10) == 0 {
							kind = table.RowKindDelete
						}
						if err := w.Write(kind, flatRow(fields, k, rng, i/4)); err != nil {
							t.Fatal(err)
						}
					}
					if _, err := w.Commit(ctx); err != nil {
						t.Fatal(err)
					}
				}
				open := func(recordPath bool) *scan.Scanner {
					sc, err := scan.New(ctx, reopen(t, tb), nil)
					if err != nil {
						t.Fatal(err)
					}
					if recordPath {
						scan.ForceRecordPath(sc)
					} else if !scan.BatchPath(sc) {
						t.Fatal("the scan does not take the batch path")
					}
					return sc
				}
				viaRows := func(sc *scan.Scanner) []byte {
					var out []byte
					if err := sc.Each(ctx, func(r table.Row) error {
						var err error
						out, err = scan.AppendJSON(out, sc.ReadType(), r)
						out = append(out, '\n')
						return err
					}); err != nil {
						t.Fatal(err)
					}
					return out
				}
				viaLines := func(sc *scan.Scanner) []byte {
					var out []byte
					if err := sc.EachJSON(ctx, func(line []byte) error {
						out = append(out, line...)
						out = append(out, '\n')
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					return out
				}
				want := viaRows(open(false))
				if lines := bytes.Count(want, []byte("\n")); lines < n {
					t.Fatalf("only %d rows", lines)
				}
				for name, got := range map[string][]byte{
					"EachJSON":              viaLines(open(false)),
					"EachJSON, record path": viaLines(open(true)),
					"Each, record path":     viaRows(open(true)),
				} {
					if !bytes.Equal(got, want) {
						gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
						for i := range min(len(gl), len(wl)) {
							if !bytes.Equal(gl[i], wl[i]) {
								t.Fatalf("%s line %d:\n got %s\nwant %s", name, i, gl[i], wl[i])
							}
						}
						t.Fatalf("%s: %d lines, want %d", name, len(gl), len(wl))
					}
				}
			})
		}
	}
}
