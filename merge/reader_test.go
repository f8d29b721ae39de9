package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/compactd/compactd/table"
)

var intKey = []table.DataType{tIntNN}

func TestReaderEmitsEachKeyOnceInKeyOrder(t *testing.T) {
	rt := schema("v", tString)
	e, err := NewEngine(nil, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	runs := []Iterator{
		FromSlice([]table.KeyValue{rec("+I", 1, 1, "r0"), rec("+I", 2, 4, "r0"), rec("+I", 3, 9, "r0")}),
		FromSlice([]table.KeyValue{rec("+I", 10, 2, "r1"), rec("+I", 11, 4, "r1")}),
		FromSlice(nil),
		FromSlice([]table.KeyValue{rec("+I", 5, -3, "r3"), rec("+I", 6, 9, "r3"), rec("+I", 7, 12, "r3")}),
	}
	got, err := Collect(e.NewReader(context.Background(), runs, false))
	if err != nil {
		t.Fatal(err)
	}
	if want := "+I5(-3,r3) +I1(1,r0) +I10(2,r1) +I11(4,r1) +I6(9,r3) +I7(12,r3)"; fmtKVs(got) != want {
		t.Fatalf("got  %s\nwant %s", fmtKVs(got), want)
	}
}

func TestReaderDropDeleteDropsRetractedResultsOnly(t *testing.T) {
	rt := schema("v", tString)
	e, _ := NewEngine(nil, rt, []string{"k"})
	mk := func() []Iterator {
		return []Iterator{
			FromSlice([]table.KeyValue{rec("+I", 1, 1, "a"), rec("+I", 2, 2, "b"), rec("-U", 3, 3, "c")}),
			FromSlice([]table.KeyValue{rec("-D", 4, 1, "a")}),
		}
	}
	kept, _ := Collect(e.NewReader(context.Background(), mk(), false))
	dropped, _ := Collect(e.NewReader(context.Background(), mk(), true))
	if got, want := fmtKVs(kept), "-D4(1,a) +I2(2,b) -U3(3,c)"; got != want {
		t.Fatalf("without drop: %s, want %s", got, want)
	}
	if got, want := fmtKVs(dropped), "+I2(2,b)"; got != want {
		t.Fatalf("with drop: %s, want %s", got, want)
	}
}

func TestReaderBreaksFullTiesByRunOrder(t *testing.T) {
	rt := schema("v", tString)
	e, _ := NewEngine(nil, rt, []string{"k"})
	runs := []Iterator{FromSlice([]table.KeyValue{rec("+I", 7, 1, "first run")}), FromSlice([]table.KeyValue{rec("+I", 7, 1, "second run")})}
	got, _ := Collect(e.NewReader(context.Background(), runs, false))
	if want := "+I7(1,second run)"; fmtKVs(got) != want {
		t.Fatalf("got %s, want %s (a later run counts as newer on a full tie)", fmtKVs(got), want)
	}
}

func TestReaderLookupMergesLevelZeroAndOnlyTheLowestHigherLevel(t *testing.T) {
	rt := schema("v", tInt)
	e, err := NewEngine(map[string]string{"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}, rt, []string{"k"})
	if err != nil {
		t.Fatal(err)
	}
	mk := func() []Iterator {
		return []Iterator{
			WithLevel(FromSlice([]table.KeyValue{rec("+I", 1, 1, int32(100)), rec("+I", 1, 2, int32(100))}), 3),
			WithLevel(FromSlice([]table.KeyValue{rec("+I", 2, 1, int32(10))}), 1),
			WithLevel(FromSlice([]table.KeyValue{rec("+I", 3, 1, int32(1))}), 0),
			Concat(WithLevel(FromSlice([]table.KeyValue{rec("+I", 4, 1, int32(2)), rec("-U", 5, 3, int32(7))}), 0)),
		}
	}
	cases := []struct {
		name string
		opts Options
		want string
	}{
		// Key 1: level-1 10 + level-0 1 + 2; the level-3 100 is already inside
		// the level-1 record. Key 3: a lone -U passes the reducer unchanged.
		{"lookup with the reducer", e.LookupOptions(false, false), "+I4(1,13) +I1(2,100) -U5(3,7)"},
		// Without the reducer the lone -U goes through sum's retract: +I(-7).
		{"lookup without the reducer", e.LookupOptions(false, true), "+I4(1,13) +I1(2,100) +I5(3,-7)"},
		{"plain merge uses every level", e.ReaderOptions(false), "+I4(1,113) +I1(2,100) -U5(3,7)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Collect(NewReader(context.Background(), mk(), e.NewFunction(), c.opts))
			if err != nil {
				t.Fatal(err)
			}
			if fmtKVs(got) != c.want {
				t.Fatalf("got %s, want %s", fmtKVs(got), c.want)
			}
		})
	}
	fr, _ := NewEngine(map[string]string{"merge-engine": "first-row"}, rt, []string{"k"})
	if fr.LookupOptions(true, true).Lookup {
		t.Fatal("first-row must not get the LookupMergeFunction filter (Paimon does not wrap it)")
	}
}

type failingIter struct {
	n      int
	closed *int
}

func (f *failingIter) Next() (table.KeyValue, error) {
	if f.n == 0 {
		return table.KeyValue{}, errors.New("disk on fire")
	}
	f.n--
	return rec("+I", int64(f.n), int32(10-f.n)), nil
}

func (f *failingIter) Close() error { *f.closed++; return nil }

func TestReaderReportsRunErrorsAndClosesEveryRun(t *testing.T) {
	rt := schema()
	e, _ := NewEngine(nil, rt, []string{"k"})
	closed := 0
	r := e.NewReader(context.Background(), []Iterator{
		&failingIter{n: 2, closed: &closed},
		Concat(&failingIter{n: 5, closed: &closed}, &failingIter{n: 5, closed: &closed}),
	}, false)
	_, err := Collect(r)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), "sorted run 0") {
		t.Fatalf("error = %v, want the run's error with its run number", err)
	}
	if closed != 3 {
		t.Fatalf("closed %d iterators, want 3", closed)
	}
	if _, err := r.Next(); err == nil {
		t.Fatal("Next after an error and Close succeeded")
	}
}

func TestReaderHonoursContextCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e, _ := NewEngine(map[string]string{"ignore-delete": "true"}, schema(), []string{"k"})
	// Every key merges to nothing, so the reader loops internally.
	var kvs []table.KeyValue
	for i := 0; i < 5000; i++ {
		kvs = append(kvs, rec("-D", 1, int32(i)))
	}
	r := e.NewReader(ctx, []Iterator{FromSlice(kvs), FromSlice(kvs)}, true)
	if _, err := r.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}

	// Cancelled while every key yields a row: the reader stops within 1024 keys.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	var adds []table.KeyValue
	for i := 0; i < 5000; i++ {
		adds = append(adds, rec("+I", 1, int32(i)))
	}
	r2 := e.NewReader(ctx2, []Iterator{FromSlice(adds)}, true)
	if _, err := r2.Next(); err != nil {
		t.Fatal(err)
	}
	cancel2()
	for i := 0; ; i++ {
		_, err := r2.Next()
		if errors.Is(err, context.Canceled) {
			break
		}
		if err != nil || i > 1024 {
			t.Fatalf("after %d more rows: error = %v, want context.Canceled within 1024 rows", i, err)
		}
	}
}

func TestConcatChainsAndClosesParts(t *testing.T) {
	closed := 0
	c := Concat(FromSlice([]table.KeyValue{rec("+I", 1, 1)}), FromSlice(nil), &failingIter{n: 1, closed: &closed}, &failingIter{n: 1, closed: &closed})
	var keys []any
	for {
		kv, err := c.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				t.Fatal("reached EOF instead of the third part's error")
			}
			break
		}
		keys = append(keys, kv.Key[0])
	}
	if fmt.Sprint(keys) != "[1 10]" {
		t.Fatalf("keys %v, want [1 10]", keys)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if closed != 2 {
		t.Fatalf("closed %d failing parts, want 2", closed)
	}
}

type file struct {
	name     string
	min, max int32
}

func TestIntervalPartition(t *testing.T) {
	bounds := func(f file) (table.Row, table.Row) { return table.Row{f.min}, table.Row{f.max} }
	show := func(sections [][][]file) string {
		var s []string
		for _, sec := range sections {
			var runs []string
			for _, run := range sec {
				var names []string
				for _, f := range run {
					names = append(names, f.name)
				}
				runs = append(runs, strings.Join(names, " "))
			}
			s = append(s, "["+strings.Join(runs, " | ")+"]")
		}
		return strings.Join(s, " ")
	}
	cases := []struct {
		name  string
		files []file
		want  string
	}{
		{"no files give no sections", nil, ""},
		{"disjoint files are separate sections of one run each",
			[]file{{"b", 5, 6}, {"a", 1, 2}}, "[a] [b]"},
		{"touching ranges overlap (the bound is inclusive)",
			[]file{{"a", 1, 5}, {"b", 5, 6}}, "[a | b]"},
		{"a file fits after the run whose last max key is smallest",
			[]file{{"A", 1, 2}, {"B", 3, 4}, {"C", 1, 5}, {"D", 6, 6}}, "[A B | C] [D]"},
		{"a wide file keeps later files in its section",
			[]file{{"w", 0, 100}, {"x", 10, 20}, {"y", 30, 40}, {"z", 200, 300}}, "[x y | w] [z]"},
		{"equal ranges each need a run, listed in Java PriorityQueue array order",
			[]file{{"p", 1, 3}, {"q", 1, 3}, {"r", 1, 3}}, "[p | r | q]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := show(IntervalPartition(c.files, intKey, bounds)); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}
