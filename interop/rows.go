package interop

import (
	"encoding/json"
	"sort"
	"testing"
)

// CanonStrings renders rows as sorted JSON texts, so row sets compare
// regardless of order.
func CanonStrings(tb testing.TB, rows []Row) []string {
	tb.Helper()
	out := make([]string, len(rows))
	for i, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = string(b)
	}
	sort.Strings(out)
	return out
}

// DiffRows fails tb when two sorted row sets differ, showing the first
// rows missing from got and the first it has beyond want.
func DiffRows(tb testing.TB, what string, want, got []string) {
	tb.Helper()
	if len(want) == len(got) {
		same := true
		for i := range want {
			if want[i] != got[i] {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	wm := map[string]bool{}
	for _, w := range want {
		wm[w] = true
	}
	gm := map[string]bool{}
	for _, g := range got {
		gm[g] = true
	}
	var missing, extra []string
	for _, w := range want {
		if !gm[w] {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !wm[g] {
			extra = append(extra, g)
		}
	}
	tb.Errorf("%s: %d rows, want %d\nmissing (first 5): %v\nunexpected (first 5): %v", what, len(got), len(want), first(missing, 5), first(extra, 5))
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
