package compact_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/write"
)

// withSchema commits schema-<id+1> of tb with the given primary keys and
// options (the columns and partition keys stay) and reopens the table: the
// schema Java writes for such a table (compactd's writer only writes
// fixed-bucket tables, so the data comes from a fixed-bucket schema-0).
func withSchema(t *testing.T, tb *table.Table, primaryKeys []string, set map[string]string) *table.Table {
	t.Helper()
	s := tb.Schema()
	opts := map[string]string{}
	for k, v := range s.Options {
		opts[k] = v
	}
	for k, v := range set {
		opts[k] = v
	}
	s1, err := table.NewTableSchema(s.ID+1, s.Fields, s.HighestFieldID, s.PartitionKeys, primaryKeys, opts, nil, s.TimeMillis)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s1.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tb.Path(), "schema", table.SchemaFileName(s1.ID)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return reopen(t, tb)
}

// A dynamic-bucket table whose primary key lacks a partition key is a
// cross-partition-update table: Java routes its keys through a global
// index (KEY_DYNAMIC), which compactd does not maintain. It is refused by
// Supported (the daemon's check) and by Run, naming the table and why,
// before anything is read or written. The same keys with the partition in
// the primary key (HASH_DYNAMIC) and the dynamic-bucket.* options Java's
// writers read are accepted.
func TestCrossPartitionUpdateTableIsRefusedAndLeftAsIs(t *testing.T) {
	ctx := context.Background()
	tb := newTable(t, map[string]string{})
	writeRandom(t, tb, rand.New(rand.NewPCG(3, 4)), "w", 3, 20, 15, true)
	cross := withSchema(t, tb, []string{"k"}, map[string]string{"bucket": "-1"})
	if !cross.Schema().CrossPartitionUpdate() {
		t.Fatal("primary key (k) with partition key p is not a cross-partition-update schema")
	}
	before := dirState(t, cross.Path())
	for what, err := range map[string]error{
		"Supported": compact.Supported(cross, nil),
		"Run":       func() error { _, err := compact.Run(ctx, reopen(t, cross), compact.Options{Full: true}); return err }(),
	} {
		if err == nil || !strings.Contains(err.Error(), cross.FullName()) || !strings.Contains(err.Error(), "cross-partition-update") || !strings.Contains(err.Error(), "bucket=-1") {
			t.Errorf("%s: want a refusal naming %s, bucket=-1 and cross-partition-update, got %v", what, cross.FullName(), err)
		}
	}
	after := dirState(t, cross.Path())
	for p, s := range after {
		if before[p] != s {
			t.Errorf("%s was written", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s was deleted", p)
		}
	}

	hash := withSchema(t, cross, []string{"k", "p"}, map[string]string{
		"dynamic-bucket.target-row-num":       "100",
		"dynamic-bucket.initial-buckets":      "2",
		"dynamic-bucket.max-buckets":          "8",
		"dynamic-bucket.assigner-parallelism": "2",
	})
	if hash.Schema().CrossPartitionUpdate() {
		t.Fatal("primary key (k, p) is cross-partition")
	}
	if err := compact.Supported(hash, nil); err != nil {
		t.Fatalf("dynamic-bucket table with the partition in its primary key: %v", err)
	}
	// An unpartitioned table is never cross-partition.
	if err := compact.Supported(withSchema(t, newTableNoPartition(t), []string{"k"}, map[string]string{"bucket": "-1"}), nil); err != nil {
		t.Fatalf("unpartitioned dynamic-bucket table: %v", err)
	}
}

// newTableNoPartition creates db.t with columns k BIGINT (primary key) and
// v STRING, bucket=1.
func newTableNoPartition(t *testing.T) *table.Table {
	t.Helper()
	fields := table.RowType{{ID: 0, Name: "k", Type: bigint(false)}, {ID: 1, Name: "v", Type: str(true)}}
	s, err := table.NewTableSchema(0, fields, 1, nil, []string{"k"}, map[string]string{"bucket": "1"}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := write.CreateTable(context.Background(), fileio.NewLocal(), t.TempDir(), "db", "t", s)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}
