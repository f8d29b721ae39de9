package orc

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// runSchema has a column of every type the Put*s methods take.
func runSchema() *TypeDesc {
	s := &TypeDesc{Kind: Struct}
	add := func(name string, t *TypeDesc) {
		s.Fields = append(s.Fields, name)
		s.Children = append(s.Children, t)
	}
	add("by", &TypeDesc{Kind: Byte})
	add("sh", &TypeDesc{Kind: Short})
	add("in", &TypeDesc{Kind: Int})
	add("lo", &TypeDesc{Kind: Long})
	add("da", &TypeDesc{Kind: Date})
	add("bo", &TypeDesc{Kind: Boolean})
	add("fl", &TypeDesc{Kind: Float})
	add("do", &TypeDesc{Kind: Double})
	add("st", &TypeDesc{Kind: String})
	add("bi", &TypeDesc{Kind: Binary})
	add("d9", &TypeDesc{Kind: Decimal, Precision: 9, Scale: 2})
	add("d18", &TypeDesc{Kind: Decimal, Precision: 18, Scale: 4})
	add("d30", &TypeDesc{Kind: Decimal, Precision: 30, Scale: 3})
	add("tms", &TypeDesc{Kind: Timestamp})
	add("tus", &TypeDesc{Kind: TimestampInstant})
	return s
}

// TestColumnRunsWriteTheRowsFile: the same rows written a column at a
// time, in runs that do not line up with the row groups, give the same
// bytes as written row by row.
func TestColumnRunsWriteTheRowsFile(t *testing.T) {
	const rows = 2345
	rng := rand.New(rand.NewPCG(3, 4))
	null := make([][]bool, 15)
	for c := range null {
		null[c] = make([]bool, rows)
		for i := range null[c] {
			// Column 0 gets its first null late (PRESENT back-filled).
			null[c][i] = rng.IntN(10) == 0 && (c != 0 || i > 1500)
		}
	}
	i32 := func(lo, hi int32) []int32 {
		v := make([]int32, rows)
		for i := range v {
			v[i] = int32(int64(lo) + rng.Int64N(int64(hi)-int64(lo)))
		}
		return v
	}
	i64 := func() []int64 {
		v := make([]int64, rows)
		for i := range v {
			v[i] = rng.Int64N(1<<40) - 1<<39
		}
		return v
	}
	by, sh, in, da := i32(-128, 127), i32(-32768, 32767), i32(-1<<31, 1<<31-1), i32(-20000, 40000)
	lo, d18, d30, tms, tus := i64(), i64(), i64(), i64(), i64()
	d9 := i32(-999999999, 999999999)
	bo := make([]bool, rows)
	fl := make([]float32, rows)
	do := make([]float64, rows)
	var data []byte
	offs := []uint32{0}
	for i := range rows {
		bo[i] = rng.IntN(2) == 0
		fl[i] = rng.Float32()*200 - 100
		do[i] = rng.NormFloat64()
		data = append(data, strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(5))...)
		offs = append(offs, uint32(len(data)))
	}
	// With a row index (runs stop at its groups' ends) and without one
	// (orc.row.index.stride=0: one group per stripe).
	for _, stride := range []int{500, -1} {
		opts := WriterOptions{Compression: CompressionZstd, RowIndexStride: stride}

		var want bytes.Buffer
		w, err := NewWriter(&want, runSchema(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			ts := func(x, per int64) Time {
				s, f := x/per, x%per
				if f < 0 {
					s, f = s-1, f+per
				}
				return Time{Secs: s, Nanos: int32(f * (1e9 / per))}
			}
			row := []any{int64(by[i]), int64(sh[i]), int64(in[i]), lo[i], int64(da[i]), bo[i], float64(fl[i]), do[i],
				string(data[offs[i]:offs[i+1]]), data[offs[i]:offs[i+1]],
				Dec{Unscaled: big.NewInt(int64(d9[i])), Scale: 2}, Dec{Unscaled: big.NewInt(d18[i]), Scale: 4},
				Dec{Unscaled: big.NewInt(d30[i]), Scale: 3}, ts(tms[i], 1000), ts(tus[i], 1e6)}
			for c := range row {
				if null[c][i] {
					row[c] = nil
				}
			}
			if err := w.Write(row); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}

		var got bytes.Buffer
		w, err = NewWriter(&got, runSchema(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < rows; {
			n, err := w.BeginRows(min(rows-i, 1+rng.IntN(300)))
			if err != nil {
				t.Fatal(err)
			}
			nl := func(c int) []bool { return null[c][i:] }
			for _, err := range []error{
				w.PutInt32s(0, n, by[i:], nl(0)),
				w.PutInt32s(1, n, sh[i:], nl(1)),
				w.PutInt32s(2, n, in[i:], nl(2)),
				w.PutInts(3, n, lo[i:], nl(3)),
				w.PutInt32s(4, n, da[i:], nl(4)),
				w.PutBools(5, n, bo[i:], nl(5)),
				w.PutFloat32s(6, n, fl[i:], nl(6)),
				w.PutFloat64s(7, n, do[i:], nl(7)),
				w.PutByteArrays(8, n, data, offs[i:i+n+1], nl(8)),
				w.PutByteArrays(9, n, data, offs[i:i+n+1], nl(9)),
				w.PutDecimal32s(10, n, d9[i:], nl(10)),
				w.PutDecimal64s(11, n, d18[i:], nl(11)),
				w.PutDecimal64s(12, n, d30[i:], nl(12)),
				w.PutTimestamps(13, n, tms[i:], 1000, nl(13)),
				w.PutTimestamps(14, n, tus[i:], 1e6, nl(14)),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := w.EndRows(n); err != nil {
				t.Fatal(err)
			}
			i += n
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("row index stride %d: column runs wrote %d bytes unlike the rows' %d", stride, got.Len(), want.Len())
		}
	}
}

func TestColumnRunsStopAtRowGroupEnds(t *testing.T) {
	w, err := NewWriter(&bytes.Buffer{}, runSchema(), WriterOptions{RowIndexStride: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{100, 100, 30} {
		n, err := w.BeginRows(230 - int(w.Rows()))
		if err != nil || n != want {
			t.Fatalf("BeginRows at row %d = %d, %v; want %d", w.Rows(), n, err, want)
		}
		for k := range runSchema().Children {
			w.PutNull(k) // one value per column is enough to keep them level
		}
		_ = w.EndRows(n)
	}
}

func TestColumnRunsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(w *Writer, n int) error
		want string
	}{
		{"byte out of range", func(w *Writer, n int) error { return w.PutInt32s(0, n, []int32{1, 200}, nil) }, "out of range"},
		{"short slice", func(w *Writer, n int) error { return w.PutInts(3, n, []int64{1}, nil) }, "1 values for a run of 2"},
		{"short nulls", func(w *Writer, n int) error { return w.PutInts(3, n, []int64{1, 2}, []bool{false}) }, "run of 2"},
		{"wrong kind", func(w *Writer, n int) error { return w.PutFloat64s(3, n, []float64{1, 2}, nil) }, "floats for a bigint"},
		{"decimal too wide", func(w *Writer, n int) error { return w.PutDecimal32s(10, n, []int32{1, 1e9}, nil) }, "does not fit"},
		{"offsets past the data", func(w *Writer, n int) error { return w.PutByteArrays(8, n, []byte("ab"), []uint32{0, 1, 3}, nil) }, "past 2 bytes"},
		{"timestamp unit", func(w *Writer, n int) error { return w.PutTimestamps(13, n, []int64{1, 2}, 7, nil) }, "units of 1/7"},
		{"no such field", func(w *Writer, n int) error { return w.PutInts(99, n, []int64{1, 2}, nil) }, "field 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := NewWriter(&bytes.Buffer{}, runSchema(), WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n, err := w.BeginRows(2)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.put(w, n); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestBoolEncoderAddAllIsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		vs := make([]bool, rng.IntN(40))
		for i := range vs {
			vs[i] = rng.IntN(3) == 0
		}
		lead := rng.IntN(9)
		var a, b boolEncoder
		for range lead {
			a.add(true)
			b.add(true)
		}
		for _, v := range vs {
			a.add(v)
		}
		b.addAll(vs)
		if x, y := a.finish(), b.finish(); !bytes.Equal(x, y) {
			t.Fatalf("%d leading bits then %v: addAll gives %x, add %x", lead, vs, y, x)
		}
	}
}
