package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

func run(ctx context.Context, args ...string) error {
	root := newRootCmd()
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

func TestTheBundledConfigIsValidAndWatchesTheExampleWarehouse(t *testing.T) {
	cfg, err := policy.LoadConfig("../../deploy/compactd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(cfg.WarehousePath(cfg.Warehouses[0]))
	want, _ := filepath.Abs("../../.cache/example-warehouse")
	if abs != want || cfg.Listen != "127.0.0.1:9464" || !cfg.Warehouses[0].Selects("shop.orders") {
		t.Fatalf("deploy/compactd.yaml: warehouse %s, listen %s", abs, cfg.Listen)
	}
	// Its http section says it shows the defaults.
	var defaults policy.HTTP
	defaults.WithDefaults()
	if cfg.HTTP != defaults {
		t.Fatalf("deploy/compactd.yaml http: %+v, the defaults are %+v", cfg.HTTP, defaults)
	}
}

func TestDaemonPolicyAndResumeCommandsOnTheExampleWarehouse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	if err := run(ctx, "example", wh, "--orders", "200", "--commits", "3"); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "compactd.yaml")
	os.WriteFile(conf, []byte("tick: 100ms\nwarehouses:\n  - path: wh\ndefaults:\n  compact.schedule: \"@every 1s\"\n"), 0o644)

	// policy set validates everything and persists next to the config.
	if err := run(ctx, "policy", "set", "shop.orders", "--config", conf, "compact.enabled=maybe", "nope=1"); err == nil ||
		!strings.Contains(err.Error(), "compact.enabled") || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("invalid set: %v", err)
	}
	if err := run(ctx, "policy", "set", "shop.orders", "--config", conf, "orphan.older-than=48h", "full-compaction.enabled=true"); err != nil {
		t.Fatal(err)
	}
	store, err := policy.LoadStore(filepath.Join(dir, "compactd-policies.yaml"))
	if err != nil || store.Overrides("shop.orders")["orphan.older-than"] != "48h" {
		t.Fatalf("store: %v %v", store, err)
	}
	if err := run(ctx, "policy", "show", "shop.orders", "--config", conf); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, "resume", "shop.orders", "--config", conf); err == nil || !strings.Contains(err.Error(), "not halted") {
		t.Fatalf("resume of a running table: %v", err)
	}

	// The daemon compacts the example table and stops cleanly.
	dctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(dctx, "daemon", "--config", conf, "--listen", "127.0.0.1:0") }()
	tb, err := table.Open(ctx, fileio.NewLocal(), wh, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := tb.LatestSnapshot(ctx)
		if err == nil && s.CommitKind == table.CommitCompact {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no COMPACT snapshot: %v", <-done)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(wh, sched.LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("lock left behind")
	}
}
