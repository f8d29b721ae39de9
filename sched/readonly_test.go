package sched_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

// A table whose manifests Java writes in a codec compactd has no encoder
// for (manifest.compression=bzip2) is read, but the daemon's compaction
// and expiration must not write it: the first job halts the table (a
// permanent error naming the option and the schema file) and the table
// stays byte for byte as it was.
func TestDaemonHaltsATableItCannotWriteAndLeavesItAlone(t *testing.T) {
	wh := t.TempDir()
	root := wh + "/pk_table_nested_type.db/pk_table_nested_type"
	expiretest.CopyDir(t, "../../shared/fixtures/paimon-cpp/parquet/pk_table_nested_type.db/pk_table_nested_type", root)
	expiretest.SetSchemaOption(t, root, 0, "manifest.compression", "bzip2")
	before := expiretest.Tree(t, root)
	cfg := config(t, wh, map[string]string{
		"compact.schedule": "@every 1s", "orphan.enabled": "false", "expire.schedule": "@every 1s",
		"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "snapshot.time-retained": "1ms",
		"compaction.min.file-num": "2",
	})
	sc, stop := start(t, cfg, sched.Options{})
	const name = "pk_table_nested_type.pk_table_nested_type"
	waitFor(t, "halt", 20*time.Second, func() bool { st, _ := tableStatus(sc, name); return st.Halted != "" })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	st, _ := tableStatus(sc, name)
	if !strings.Contains(st.Halted, "manifest.format=orc in "+root+"/schema/schema-0: ") || !strings.Contains(st.Halted, "manifest.compression=bzip2: ") {
		t.Fatalf("halted with %q", st.Halted)
	}
	var failures int
	for _, k := range []policy.Kind{policy.Compact, policy.Expire} {
		failures += st.Failures[k]
	}
	if failures != 1 {
		t.Fatalf("%d failures before the halt (%v), want the first one to halt", failures, st.Failures)
	}
	if after := expiretest.Tree(t, root); !slices.Equal(before, after) {
		t.Fatalf("table changed:\nbefore %v\nafter  %v", before, after)
	}
}
