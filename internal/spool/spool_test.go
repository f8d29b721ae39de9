package spool

import (
	"errors"
	"slices"
	"testing"
)

func strings(after int) *List[string] {
	return New(after, "test values",
		func(dst []byte, s string) ([]byte, error) { return append(dst, s...), nil },
		func(rec []byte) (string, error) { return string(rec), nil })
}

// TestListReadsBackInOrderInMemoryAndSpilled: the same values, any bytes
// included, come back in order whether they stayed in memory or spilled,
// and as often as asked.
func TestListReadsBackInOrderInMemoryAndSpilled(t *testing.T) {
	want := []string{"a", "", "b\x00\xff", "a", "long/" + string(make([]byte, 5000))}
	for _, after := range []int{0, 2, 100} {
		l := strings(after)
		for _, v := range want {
			if err := l.Add(v); err != nil {
				t.Fatal(err)
			}
		}
		if l.Spilled() != (after < len(want)) || l.Len() != len(want) {
			t.Fatalf("after %d: spilled %v, Len %d", after, l.Spilled(), l.Len())
		}
		for range 2 {
			var got []string
			if err := l.Each(func(s string) error { got = append(got, s); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("after %d: read back %q", after, got)
			}
		}
		stop := errors.New("stop")
		if err := l.Each(func(string) error { return stop }); !errors.Is(err, stop) {
			t.Fatalf("after %d: Each returned %v, want fn's error", after, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
