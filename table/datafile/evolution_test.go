package datafile

import (
	"context"
	"errors"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/cast"
)

func ts(millis int64, nanos int32) table.Timestamp {
	return table.Timestamp{Millis: millis, NanoOfMilli: nanos}
}

// TestReadingAnOldFileAppliesTheCasts writes a Parquet file under an old
// schema and reads it through types changed the way the paimon-cpp fixtures
// change them; an unparsable string fails the read as in Java.
func TestReadingAnOldFileAppliesTheCasts(t *testing.T) {
	old := table.RowType{
		{ID: 0, Name: "s", Type: mustType(t, "STRING")},
		{ID: 1, Name: "d", Type: mustType(t, "DOUBLE")},
		{ID: 2, Name: "ts", Type: mustType(t, "TIMESTAMP(3)")},
		{ID: 3, Name: "b", Type: mustType(t, "STRING")},
	}
	latest := table.RowType{
		{ID: 0, Name: "s", Type: mustType(t, "INT")},
		{ID: 1, Name: "d", Type: mustType(t, "INT")},
		{ID: 2, Name: "ts", Type: mustType(t, "BIGINT")},
		{ID: 3, Name: "b", Type: mustType(t, "BOOLEAN")},
	}
	write := func(rows ...table.Row) string {
		path := filepath.Join(t.TempDir(), "data-cast-0.parquet")
		w, err := NewRowWriter(context.Background(), fileio.NewLocal(), path, old, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	got := readAllRows(t, write(
		table.Row{"12", 1e10, ts(-1500, 0), "yes"},
		table.Row{nil, nil, nil, nil},
		table.Row{"-7.5", -2.9, ts(1700000000999, 0), "F"},
	), old, latest)
	want := []table.Row{
		{int32(12), int32(math.MaxInt32), int64(-1), true},
		{nil, nil, nil, nil},
		{int32(-7), int32(-2), int64(1700000000), false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	r, err := OpenRows(context.Background(), fileio.NewLocal(), write(table.Row{"x", 1.0, ts(0, 0), "t"}), old, latest)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); errors.Is(err, io.EOF) || !errors.Is(err, cast.ErrUnsupportedEvolution) {
		t.Fatalf("reading \"x\" as INT: %v, want an cast.ErrUnsupportedEvolution error", err)
	}
}
