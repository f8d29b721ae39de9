package expire_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactd/compactd/expire"
	"github.com/compactd/compactd/expire/expiretest"
	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/table"
	"github.com/compactd/compactd/table/reach"
)

// A bucket directory of a Java table moved elsewhere and linked back: the
// data files expiration would delete resolve outside the table, so it fails
// closed naming one, before deleting anything (the previous code deleted
// them through the link).
func TestExpireDoesNotDeleteThroughALinkedDirectory(t *testing.T) {
	ctx := context.Background()
	root := copyTable(t, "pk_09")
	outside := t.TempDir()
	if err := os.Rename(filepath.Join(root, "f1=10"), filepath.Join(outside, "f1=10")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "f1=10"), filepath.Join(root, "f1=10")); err != nil {
		t.Fatal(err)
	}
	now, _ := latestTime(t, root)
	tbl, err := table.OpenPath(ctx, fileio.NewLocal(), root)
	if err != nil {
		t.Fatal(err)
	}
	beforeTable, beforeOutside := expiretest.Tree(t, root), expiretest.Tree(t, outside)
	_, err = expire.Run(ctx, reach.TableSource(tbl), expireAll(now))
	var de *table.DamagedError
	if !errors.As(err, &de) || !strings.Contains(de.File, filepath.Join(root, "f1=10")) {
		t.Fatalf("want a DamagedError for a file under the linked %s, got %v", filepath.Join(root, "f1=10"), err)
	}
	if diff := expiretest.DiffTrees(beforeOutside, expiretest.Tree(t, outside)); diff != "" {
		t.Fatalf("files outside the table changed:\n%s", diff)
	}
	if diff := expiretest.DiffTrees(beforeTable, expiretest.Tree(t, root)); diff != "" {
		t.Fatalf("the table changed:\n%s", diff)
	}
}
