package table

import (
	"github.com/compactd/compactd/table/manifest"
	"math"
	"math/big"
	"reflect"
	"testing"
)

func TestStatsCollectorKeepsExactMinMaxAndNullCounts(t *testing.T) {
	types := []DataType{
		{Root: TypeVarChar, Length: MaxLength, Nullable: true},
		{Root: TypeInt, Nullable: true},
		{Root: TypeDouble, Nullable: true},
		{Root: TypeVarBinary, Length: MaxLength, Nullable: true},
		{Root: TypeDecimal, Precision: 20, Scale: 2, Nullable: true},
		{Root: TypeTimestamp, Precision: 6, Nullable: true},
		{Root: TypeBoolean, Nullable: true},
	}
	ts := func(ms int64, ns int32) Timestamp { return Timestamp{Millis: ms, NanoOfMilli: ns} }
	d := func(v int64) Decimal { return Decimal{Unscaled: big.NewInt(v), Precision: 20, Scale: 2} }
	rows := []Row{
		{"b", int32(5), 1.0, []byte{0x80}, d(100), ts(5, 1), true},
		{"ä", nil, math.NaN(), []byte{0x7f, 0xff}, d(-3), ts(5, 0), false},
		{"a", int32(-7), math.Copysign(0, -1), nil, nil, ts(4, 999), nil},
		{nil, int32(9), 0.0, []byte{0x80, 0x00}, d(250), nil, true},
	}
	c := NewStatsCollector(types)
	for _, r := range rows {
		if err := c.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Result()
	if err != nil {
		t.Fatal(err)
	}
	mn, mx, err := DecodeSimpleStats(s, types)
	if err != nil {
		t.Fatal(err)
	}
	// Strings compare by UTF-8 bytes ("ä" = c3 a4 sorts after "b"); NaN is
	// the largest double and -0.0 sorts below 0.0, as in Java.
	wantMin := Row{"a", int32(-7), math.Copysign(0, -1), []byte{0x7f, 0xff}, d(-3), ts(4, 999), false}
	wantMax := Row{"ä", int32(9), math.NaN(), []byte{0x80, 0x00}, d(250), ts(5, 1), true}
	for i := range types {
		if !statsValueSame(mn[i], wantMin[i]) {
			t.Errorf("column %d min = %#v, want %#v", i, mn[i], wantMin[i])
		}
		if !statsValueSame(mx[i], wantMax[i]) {
			t.Errorf("column %d max = %#v, want %#v", i, mx[i], wantMax[i])
		}
	}
	var nulls []int64
	for _, n := range s.NullCounts {
		nulls = append(nulls, *n)
	}
	if !reflect.DeepEqual(nulls, []int64{1, 1, 0, 1, 1, 1, 1}) {
		t.Errorf("null counts %v", nulls)
	}
}

func statsValueSame(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && math.Float64bits(fa) == math.Float64bits(fb)
	}
	if da, ok := a.(Decimal); ok {
		db, ok := b.(Decimal)
		return ok && da.Unscaled.Cmp(db.Unscaled) == 0
	}
	return reflect.DeepEqual(a, b)
}

func TestStatsCollectorAllNullColumnHasNullMinMax(t *testing.T) {
	types := []DataType{{Root: TypeInt, Nullable: true}}
	c := NewStatsCollector(types)
	for i := 0; i < 3; i++ {
		if err := c.Add(Row{nil}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Result()
	if err != nil {
		t.Fatal(err)
	}
	mn, mx, err := DecodeSimpleStats(s, types)
	if err != nil {
		t.Fatal(err)
	}
	if mn[0] != nil || mx[0] != nil || *s.NullCounts[0] != 3 {
		t.Errorf("min %v max %v nulls %d", mn[0], mx[0], *s.NullCounts[0])
	}
}

func TestStatsCollectorRejectsMixedTypes(t *testing.T) {
	c := NewStatsCollector([]DataType{{Root: TypeInt, Nullable: true}})
	if err := c.Add(Row{int32(1)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(Row{"x"}); err == nil {
		t.Error("string accepted into an INT column")
	}
	if err := c.Add(Row{}); err == nil {
		t.Error("short row accepted")
	}
}

func TestEmptySimpleStatsIsJavasEmptyStats(t *testing.T) {
	e := manifest.EmptySimpleStats()
	if len(e.MinValues) != 12 || len(e.MaxValues) != 12 || e.NullCounts == nil || len(e.NullCounts) != 0 {
		t.Errorf("%+v", e)
	}
	mn, mx, err := DecodeSimpleStats(e, nil)
	if err != nil || len(mn) != 0 || len(mx) != 0 {
		t.Errorf("decode: %v %v %v", mn, mx, err)
	}
	if !e.Equal(manifest.EmptySimpleStats()) {
		t.Error("not equal to itself")
	}
	n := int64(1)
	other := manifest.SimpleStats{MinValues: e.MinValues, MaxValues: e.MaxValues, NullCounts: []*int64{&n}}
	if e.Equal(other) {
		t.Error("different null counts compare equal")
	}
	if _, err := NewSimpleStats([]DataType{{Root: TypeInt}}, Row{int32(1)}, Row{int32(2)}, nil); err == nil {
		t.Error("missing null counts accepted")
	}
}
