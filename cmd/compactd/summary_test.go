package main

import (
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
)

// An upgrade-only compaction says what it did instead of "files 0 -> 0"
// (issue 18), and counts read as English.
func TestSummaryLine(t *testing.T) {
	for _, c := range []struct {
		sum        compact.Summary
		want, dont string
	}{
		{compact.Summary{Table: "db.t", Snapshot: 7, Buckets: 1, FilesUpgraded: 1, Duration: time.Second},
			"db.t: committed snapshot 7 (COMPACT): 1 bucket, 1 file moved up a level without rewriting, 1.00s", "files 0 -> 0"},
		{compact.Summary{Table: "db.t", Snapshot: 8, Buckets: 2, FilesIn: 5, FilesOut: 2, RowsIn: 10, RowsOut: 4, BytesIn: 100, BytesOut: 40, FilesUpgraded: 2},
			"2 buckets, files 5 -> 2, rows 10 -> 4, bytes 100 -> 40, 2 files moved up a level without rewriting", ""},
	} {
		got := summaryLine(&c.sum)
		if !strings.Contains(got, c.want) || (c.dont != "" && strings.Contains(got, c.dont)) {
			t.Errorf("summaryLine = %q, want %q", got, c.want)
		}
	}
}
