package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseUserDurationTakesGoAndPaimonForms(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"90m": 90 * time.Minute, "1h30m": 90 * time.Minute, "7d": 7 * 24 * time.Hour,
		"36h": 36 * time.Hour, "30 min": 30 * time.Minute, "1 d": 24 * time.Hour,
	} {
		if got, err := parseUserDuration(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"5", "", "7 parsecs", "-1d"} {
		if d, err := parseUserDuration(in); err == nil && d >= 0 {
			t.Errorf("%q parsed as %v, want an error", in, d)
		}
	}
}

// Every duration flag takes the same grammar (issue 18: `expire
// --time-retained 7d` and `orphan --older-than 1d` used to fail while
// `tag --time-retained 7d` worked).
func TestDurationFlagsShareOneGrammar(t *testing.T) {
	ctx := context.Background()
	wh := filepath.Join(t.TempDir(), "wh")
	oneRowTable(t, wh)
	for _, args := range [][]string{
		{"expire", wh, "db.t", "--time-retained", "7d", "--dry-run"},
		{"expire", wh, "db.t", "--time-retained", "36h", "--dry-run"},
		{"orphan", wh, "db.t", "--older-than", "1d", "--dry-run"},
		{"orphan", wh, "db.t", "--older-than", "90m", "--dry-run"},
	} {
		if err := run(ctx, args...); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	if err := run(ctx, "orphan", wh, "db.t", "--older-than", "5", "--dry-run"); err == nil || !strings.Contains(err.Error(), "needs a unit") {
		t.Errorf("--older-than 5: %v, want a unit error", err)
	}
}
