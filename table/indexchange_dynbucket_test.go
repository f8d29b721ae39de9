package table

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table/manifest"
)

// Deletion-vector changes are combined per bucket (Java's BucketedCombiner)
// for fixed-bucket and HASH_DYNAMIC (bucket=-1, primary key holding every
// partition key) tables alike; the others are refused before anything is
// written: unaware-bucket append tables (Java combines their vectors per
// file) and cross-partition-update tables (KEY_DYNAMIC).
func TestIndexChangesOfDynamicBucketTables(t *testing.T) {
	fields := RowType{
		{ID: 0, Name: "k", Type: DataType{Root: TypeBigInt}},
		{ID: 1, Name: "p", Type: DataType{Root: TypeVarChar, Length: MaxLength}},
	}
	change := []IndexChange{{Partition: EmptyBinaryRow(), Bucket: 3, IndexType: manifest.IndexTypeDeletionVectors}}
	for _, c := range []struct {
		name              string
		partition, pk     []string
		bucket            string
		refused           string
		crossPartitionUpd bool
	}{
		{name: "fixed", partition: []string{"p"}, pk: []string{"k", "p"}, bucket: "2"},
		{name: "dynamic partitioned", partition: []string{"p"}, pk: []string{"k", "p"}, bucket: "-1"},
		{name: "dynamic unpartitioned", pk: []string{"k"}, bucket: "-1"},
		{name: "cross-partition", partition: []string{"p"}, pk: []string{"k"}, bucket: "-1", refused: "bucket=-1", crossPartitionUpd: true},
		{name: "unaware append", partition: []string{"p"}, bucket: "-1", refused: "bucket=-1"},
		// The real buckets of a postponed table (its bucket-postpone has no index files).
		{name: "postponed", partition: []string{"p"}, pk: []string{"k", "p"}, bucket: "-2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewTableSchema(0, fields, 1, c.partition, c.pk, map[string]string{"bucket": c.bucket}, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.CrossPartitionUpdate(); got != c.crossPartitionUpd {
				t.Fatalf("CrossPartitionUpdate = %v", got)
			}
			data, err := s.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, SchemaDir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, SchemaDir, SchemaFileName(0)), data, 0o644); err != nil {
				t.Fatal(err)
			}
			tb, err := OpenPath(context.Background(), fileio.NewLocal(), dir)
			if err != nil {
				t.Fatal(err)
			}
			err = tb.validateIndexChanges(change)
			switch {
			case c.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
				t.Fatalf("want a refusal naming %s, got %v", c.refused, err)
			}
		})
	}
}
