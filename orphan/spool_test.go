package orphan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// A spilled spool reads back every candidate as added, in order, as often
// as asked: paths with any byte, negative and zero sizes, times in UTC, in
// a fixed zone and in Local keep their instant and offset, so the report
// encodes them alike (a fixed zone's name is not kept; JSON has none).
func TestSpoolSpillsAndReadsBackInOrder(t *testing.T) {
	defer SetSpillAfter(10, deleteBatch)()
	zones := []*time.Location{time.UTC, time.FixedZone("X", 5*3600+1800), time.Local}
	var want []File
	s := newSpool()
	defer s.close()
	for i := range 500 {
		p := fmt.Sprintf("/t/p=%d\n\x00é/bucket-0/data-%d.parquet", i%7, i)
		f := File{Path: p, Name: baseName(p), Size: int64(i*1000 - 7),
			ModTime: time.Date(2026, 1, 1, 0, 0, i, i*1001, zones[i%len(zones)])}
		want = append(want, f)
		if err := s.add(f); err != nil {
			t.Fatal(err)
		}
	}
	if !s.spilled() || s.Len() != len(want) {
		t.Fatalf("spilled %v, Len %d, want a spill file and %d", s.spilled(), s.Len(), len(want))
	}
	for range 2 {
		var got []File
		if err := s.each(func(f File) error { got = append(got, f); return nil }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(jsonOf(t, got), jsonOf(t, want)) {
			t.Fatalf("read back %d candidates, not the %d added in order", len(got), len(want))
		}
	}
	r := s.refs()
	r.mark(want[3].Name)
	r.mark("data-not-a-candidate.parquet")
	if !r.referenced(want[3].Name) || r.referenced(want[4].Name) || r.count() != 1 {
		t.Fatalf("refs: marked %d, want exactly %s", r.count(), want[3].Name)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
