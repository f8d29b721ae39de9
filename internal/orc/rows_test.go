package orc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// rowsConfigs are the chunk sizes (rows per Next) and read windows
// (bytes; 0: the stripe read whole) the streaming reader is checked with:
// one row at a time with a window smaller than a chunk header, runs and
// compression chunks split at odd places, and whole stripes.
var rowsConfigs = []struct{ n, window int }{{1, 2}, {7, 0}, {333, 100}, {1 << 30, 64 << 10}}

// checkStripeRows decodes stripe s of f with StripeRows, n rows per Next,
// and compares every value with st, the stripe as ReadStripe decodes it
// (nil: only decodes, for a stripe ReadStripe refused).
func checkStripeRows(f *File, s int, st *Stripe, n, window int) error {
	sr, err := f.OpenStripeRows(s, nil, window)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	root := f.Types[0]
	row := 0
	for {
		ch, err := sr.Next(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("rows %d..: %w", row, err)
		}
		if st == nil {
			for k := range root.Subtypes {
				for r := 0; r < ch.NumRows; r++ {
					ch.Columns[root.Subtypes[k]].Value(r)
				}
			}
			row += ch.NumRows
			continue
		}
		if ch.WriterTimezone != st.WriterTimezone {
			return fmt.Errorf("zone %q, want %q", ch.WriterTimezone, st.WriterTimezone)
		}
		for r := 0; r < ch.NumRows; r++ {
			for k, id := range root.Subtypes {
				got, want := ch.Columns[id].Value(r), st.Columns[id].Value(row+r)
				if !equalValue(got, want) {
					return fmt.Errorf("row %d column %s: %v, want %v", row+r, root.FieldNames[k], got, want)
				}
			}
		}
		row += ch.NumRows
	}
	if st != nil && (row != st.NumRows || sr.Left() != 0) {
		return fmt.Errorf("%d rows, want %d", row, st.NumRows)
	}
	return nil
}

// checkAllStripeRows runs checkStripeRows with every rowsConfigs entry.
func checkAllStripeRows(f *File, s int, st *Stripe) error { return checkStripeRowsWith(f, s, st, -1) }

// checkStripeRowsWith runs checkStripeRows with rowsConfigs[config] (-1:
// every entry).
func checkStripeRowsWith(f *File, s int, st *Stripe, config int) error {
	for i, c := range rowsConfigs {
		if config >= 0 && i != config {
			continue
		}
		if config < 0 && i == 0 && f.Stripes[s].NumRows > 2000 {
			continue // one row at a time: slow, and the other sizes cover it
		}
		n := c.n
		if rows := int(f.Stripes[s].NumRows); rows > 20000 {
			// A forged row count of millions can decode from a few RLE
			// runs: bound the calls so a fuzz input takes no minutes.
			n = max(n, rows/16)
		}
		if err := checkStripeRows(f, s, st, n, c.window); err != nil {
			return fmt.Errorf("stripe %d, %d rows at a time, window %d: %w", s, c.n, c.window, err)
		}
	}
	return nil
}

// Many stripes and row groups, every type, nulls, dictionary and direct
// strings and every codec, with compression blocks small enough that runs
// cross chunks: StripeRows gives what ReadStripe gives (rows() checks
// every stripe with checkAllStripeRows).
func TestStripeRowsMatchReadStripe(t *testing.T) {
	t.Parallel()
	schema := testSchema()
	for i, opts := range []WriterOptions{
		{Compression: CompressionNone, StripeSize: 15000, RowIndexStride: 1000},
		{Compression: CompressionZstd, BlockSize: 1000, StripeSize: 25000, DictionaryKeyRatio: ptr(1.0)},
		{Compression: CompressionZstd, BlockSize: 777, DictionaryKeyRatio: ptr(0.0)},
		{Compression: CompressionZlib, BlockSize: 2048},
		{Compression: CompressionSnappy, BlockSize: 1500},
		{Compression: CompressionLZ4, BlockSize: 3000, StripeSize: 20000},
	} {
		for mode := 0; mode < 3; mode++ {
			data := genRows(uint64(10*i+mode), schema, 1200, mode)
			b := writeFile(t, schema, opts, data)
			f, err := Open(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			got := rows(t, f)
			for r := range data {
				for k := range data[r] {
					if want := normalize(data[r][k]); !equalValue(want, got[r][k]) {
						t.Fatalf("%s mode %d row %d column %s: got %#v, want %#v", opts.Compression, mode, r, schema.Fields[k], got[r][k], want)
					}
				}
			}
		}
	}
}

// A column selection decodes only the selected columns.
func TestStripeRowsSelection(t *testing.T) {
	schema := testSchema()
	b := writeFile(t, schema, WriterOptions{Compression: CompressionZstd}, genRows(3, schema, 100, 0))
	f, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	sr, err := f.OpenStripeRows(0, func(k int) bool { return k == 7 }, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sr.Next(50)
	if err != nil {
		t.Fatal(err)
	}
	for k, id := range f.Types[0].Subtypes {
		if (st.Columns[id] != nil) != (k == 7) {
			t.Fatalf("column %d decoded: %v", k, st.Columns[id] != nil)
		}
	}
}
