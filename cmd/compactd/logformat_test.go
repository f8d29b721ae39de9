package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Durations in the daemon's logs read as durations in both formats: the
// JSON handler alone would write 1500000000 for a backoff of 1.5s.
func TestLogsWriteDurationsHumanReadable(t *testing.T) {
	for format, want := range map[string]string{"json": `"backoff":"1.5s"`, "text": "backoff=1.5s"} {
		var buf bytes.Buffer
		h, err := newLogHandler(&buf, format, slog.LevelInfo)
		if err != nil {
			t.Fatal(err)
		}
		slog.New(h).Warn("job failed: retrying", "backoff", 1500*time.Millisecond, "grace", 30*time.Second)
		if out := buf.String(); !strings.Contains(out, want) || !strings.Contains(out, "30s") || strings.Contains(out, "1500000000") {
			t.Errorf("%s log %q: want %s and no nanoseconds", format, out, want)
		}
	}
	if _, err := newLogHandler(&bytes.Buffer{}, "xml", slog.LevelInfo); err == nil {
		t.Error("--log-format xml accepted")
	}
}
