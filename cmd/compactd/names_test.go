package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeState records every entry below root (path, kind, size, mtime, content
// hash) so a test can tell that nothing was written, deleted or touched.
func treeState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		state := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			state += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		out[rel] = state
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, s := range after {
		if before[p] != s {
			t.Errorf("%s: %s changed or appeared (%q -> %q)", what, p, before[p], s)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s: %s disappeared", what, p)
		}
	}
}

// A table name is a name, not a path: the traversal of issue 12 (a name
// that walks from the warehouse into another table's directory), a
// directory typed instead of a name, and a symlinked table directory leading
// out of the warehouse are all refused before anything is written, and the
// table they lead to stays untouched.
func TestCompactRefusesTableNamesThatLeadOutOfTheWarehouse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := run(ctx, "example", victim, "--orders", "50", "--commits", "2"); err != nil {
		t.Fatal(err)
	}
	wh := filepath.Join(dir, "wh")
	// The directories the traversal climbs through exist, so the operating
	// system would resolve it to the victim.
	if err := os.MkdirAll(filepath.Join(wh, "db.db", "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(victim, "shop.db", "orders"), filepath.Join(wh, "db.db", "link")); err != nil {
		t.Fatal(err)
	}
	victimBefore, whBefore := treeState(t, victim), treeState(t, wh)
	for _, c := range []struct{ name, want string }{
		{"db.t/../../../victim/shop.db/orders", `contains '/'`},
		{"db.t/../../../victim/t", `contains '/'`},
		{"shop.db/orders", "did you mean shop.orders?"},
		{"db.link", "outside"},
	} {
		for _, args := range [][]string{
			{"compact", wh, c.name, "--full"},
			{"expire", wh, c.name, "--retain-max", "1", "--retain-min", "1", "--time-retained", "1ms"},
			{"orphan", wh, c.name, "--older-than", "1ms", "--force"},
		} {
			err := run(ctx, args...)
			if err == nil {
				t.Errorf("%v: accepted", args)
				continue
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %v; want an error saying %s", args, err, c.want)
			}
		}
	}
	sameTree(t, "victim", victimBefore, treeState(t, victim))
	sameTree(t, "warehouse", whBefore, treeState(t, wh))
}
