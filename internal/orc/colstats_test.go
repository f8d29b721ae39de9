package orc

import (
	"bytes"
	"math"
	"math/big"
	"testing"
)

// TestDecimal64StatisticsEqualTheBigForm: DECIMAL(p <= 18) statistics kept
// as int64 (addDec64) encode exactly as the big.Int form does, per group,
// merged into a stripe and a file, also once the sum leaves int64.
func TestDecimal64StatisticsEqualTheBigForm(t *testing.T) {
	typ := &Type{Kind: Decimal, Precision: 18, Scale: 2}
	near := int64(999_999_999_999_999_999)
	for _, vals := range [][]int64{
		{5},
		{-3, 7, 0, 12, -12},
		{near, near, near, near, near, near, near, near, near, near, -near},
		{-near, -near, -near, -near, -near, -near, -near, -near, -near, -near},
		{math.MaxInt32, math.MinInt32},
	} {
		small, wide := newColStats(typ), newColStats(typ)
		for _, v := range vals {
			small.addDec64(v)
			wide.addDec(big.NewInt(v))
		}
		if !bytes.Equal(small.proto(), wide.proto()) {
			t.Fatalf("%v: group statistics differ:\n%x\n%x", vals, small.proto(), wide.proto())
		}
		ms, mw := newColStats(typ), newColStats(typ)
		ms.merge(small)
		ms.merge(small)
		mw.merge(wide)
		mw.merge(wide)
		if !bytes.Equal(ms.proto(), mw.proto()) {
			t.Fatalf("%v: merged statistics differ:\n%x\n%x", vals, ms.proto(), mw.proto())
		}
	}
}

// TestDictionaryDecidedOnTheFirstRowGroupAsJava: with more than one row
// group in a stripe, the string encoding is chosen on the first group's
// values, as Java's writer does at its first row index entry, and kept for
// the stripe: a column repetitive at first stays a dictionary even though
// the stripe as a whole is distinct, and one distinct at first stays
// direct even though the stripe as a whole repeats.
func TestDictionaryDecidedOnTheFirstRowGroupAsJava(t *testing.T) {
	schema := &TypeDesc{Kind: Struct, Fields: []string{"s"}, Children: []*TypeDesc{{Kind: String}}}
	for _, c := range []struct {
		name string
		val  func(i int) string
		dict bool
	}{
		{"repetitive first group", func(i int) string {
			if i < 1000 {
				return "x"
			}
			return "v" + string(rune('a'+i%26)) + string(rune(i))
		}, true},
		{"distinct first group", func(i int) string {
			if i < 1000 {
				return "u" + string(rune(i+100))
			}
			return "y"
		}, false},
	} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, schema, WriterOptions{RowIndexStride: 1000})
		if err != nil {
			t.Fatal(err)
		}
		const rows = 5000
		for i := 0; i < rows; i++ {
			if err := w.Write([]any{c.val(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.ReadStripe(0, nil)
		if err != nil {
			t.Fatal(err)
		}
		col := st.Columns[1]
		if got := col.dictIdx != nil; got != c.dict {
			t.Errorf("%s: dictionary %v, want %v", c.name, got, c.dict)
		}
		for i := 0; i < rows; i++ {
			if v, ok := col.Value(i).([]byte); !ok || string(v) != c.val(i) {
				t.Fatalf("%s: row %d = %v, want %q", c.name, i, col.Value(i), c.val(i))
			}
		}
	}
}
