package datafile

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
)

func TestTruncateStats(t *testing.T) {
	cases := []struct {
		name             string
		min, max         any
		n                int
		wantMin, wantMax any
	}{
		{"short strings stay exact", "abc", "abd", 16, "abc", "abd"},
		{"long max is cut and its last code point incremented", "aaaa", "abcdef", 3, "aaa", "abd"},
		{"code points, not bytes, are counted", "日本語テキスト", "日本語テキスト", 2, "日本", "日\u672d"},
		{"an unincrementable tail is dropped", "a", "a\U0010FFFF\U0010FFFFzz", 3, "a", "b"},
		{"no incrementable code point makes both unknown", "\U0010FFFF", "\U0010FFFF\U0010FFFFx", 2, nil, nil},
		{"binary max increments the last byte below 0xff", []byte{1, 2, 3, 4}, []byte{1, 0xff, 0xff, 9}, 3, []byte{1, 2, 3}, []byte{2}},
		{"non-string values are untouched", int64(-3), int64(99), 1, int64(-3), int64(99)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mn, mx := truncateMinMax(c.min, c.max, c.n)
			if !reflect.DeepEqual(mn, c.wantMin) || !reflect.DeepEqual(mx, c.wantMax) {
				t.Fatalf("got %q %q, want %q %q", mn, mx, c.wantMin, c.wantMax)
			}
		})
	}
}

func TestStatsModesFromOptions(t *testing.T) {
	fields := table.RowType{
		{ID: 1073741823, Name: "_KEY_k", Type: mustType(t, "STRING NOT NULL")},
		{ID: SequenceNumberID, Name: SequenceNumberName, Type: mustType(t, "BIGINT NOT NULL")},
		{ID: ValueKindID, Name: ValueKindName, Type: mustType(t, "TINYINT NOT NULL")},
		{ID: 0, Name: "k", Type: mustType(t, "STRING NOT NULL")},
		{ID: 1, Name: "a", Type: mustType(t, "STRING")},
		{ID: 2, Name: "b", Type: mustType(t, "STRING")},
		{ID: 3, Name: "c", Type: mustType(t, "STRING")},
	}
	modes, err := statsModes(fields, map[string]string{
		"metadata.stats-mode":                 "full",
		"fields.a.stats-mode":                 "counts",
		"metadata.stats-keep-first-n-columns": "3",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"truncate128", "truncate128", "truncate128", "full", "counts", "full", "none"}
	for i, m := range modes {
		got := m.kind
		if m.kind == "truncate" {
			got += "128"
		}
		if got != want[i] {
			t.Errorf("column %s: mode %s, want %s", fields[i].Name, got, want[i])
		}
	}
	if _, err := statsModes(fields, map[string]string{"metadata.stats-mode": "truncate(x)"}); err == nil {
		t.Error("invalid mode accepted")
	}
}

func TestWriterStatsModesAndNaN(t *testing.T) {
	fields := table.RowType{
		{ID: 0, Name: "s", Type: mustType(t, "STRING")},
		{ID: 1, Name: "n", Type: mustType(t, "INT")},
		{ID: 2, Name: "f", Type: mustType(t, "DOUBLE")},
		{ID: 3, Name: "arr", Type: table.DataType{Root: table.TypeArray, Nullable: true, Element: ptr(mustType(t, "INT"))}},
	}
	path := filepath.Join(t.TempDir(), "data-s-0.parquet")
	w, err := NewRowWriter(context.Background(), fileio.NewLocal(), path, fields, map[string]string{"fields.n.stats-mode": "none"})
	if err != nil {
		t.Fatal(err)
	}
	rows := []table.Row{
		{"zzzzzzzzzzzzzzzzzzzz-long", int32(5), 1.5, []any{int32(1)}},
		{"b", nil, math.NaN(), nil},
		{nil, int32(-1), -2.0, []any{}},
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := st.ValueStats
	if s.Min[0] != "b" || s.Max[0] != "zzzzzzzzzzzzzzz{" || *s.NullCounts[0] != 1 {
		t.Errorf("string stats %q %q %v", s.Min[0], s.Max[0], *s.NullCounts[0])
	}
	if s.Min[1] != nil || s.Max[1] != nil || s.NullCounts[1] != nil {
		t.Errorf("none mode kept stats: %v %v %v", s.Min[1], s.Max[1], s.NullCounts[1])
	}
	if s.Min[2] != nil || s.Max[2] != nil || *s.NullCounts[2] != 0 {
		t.Errorf("a NaN must leave min/max unknown: %v %v", s.Min[2], s.Max[2])
	}
	if s.Min[3] != nil || s.NullCounts[3] != nil {
		t.Errorf("nested column stats must be unknown")
	}
	if !reflect.DeepEqual(st.ValueStatsCols, []string{"s", "n", "f", "arr"}) {
		t.Errorf("stats cols %v", st.ValueStatsCols)
	}
}
