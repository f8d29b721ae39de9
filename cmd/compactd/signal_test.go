package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compactd/compactd/fileio"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// TestDaemonStopsCleanlyOnSIGTERM runs the real binary: the daemon compacts
// the example table, then a SIGTERM makes it exit 0, release its warehouse
// lock and leave a table that scans.
func TestDaemonStopsCleanlyOnSIGTERM(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bin := compactdBinary(t)
	wh := filepath.Join(dir, "wh")
	if out, err := exec.Command(bin, "example", wh, "--orders", "300", "--commits", "4").CombinedOutput(); err != nil {
		t.Fatalf("example: %v\n%s", err, out)
	}
	conf := filepath.Join(dir, "compactd.yaml")
	if err := os.WriteFile(conf, []byte("tick: 100ms\ngrace-period: 10s\nwarehouses:\n  - path: wh\ndefaults:\n  compact.schedule: \"@every 1s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "daemon", "--config", conf, "--listen", "127.0.0.1:0")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb, err := table.Open(ctx, fileio.NewLocal(), wh, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := tb.LatestSnapshot(ctx)
		if err == nil && s.CommitKind == table.CommitCompact {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the daemon made no COMPACT snapshot")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("daemon exited with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("daemon did not stop within its grace period after SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(wh, sched.LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("warehouse lock left behind: %v", err)
	}
	if out, err := exec.Command(bin, "scan", wh, "shop.orders").Output(); err != nil || len(out) == 0 {
		t.Fatalf("scan after shutdown: %v (%d bytes)", err, len(out))
	}
}

// The daemon command labels compactd_build_info with the build `compactd
// version` reports, and counts a SIGHUP whose config does not load as a
// failed reload (then one that loads as a success).
func TestDaemonExportsItsBuildAndCountsSIGHUPReloads(t *testing.T) {
	dir := t.TempDir()
	bin := compactdBinary(t)
	wh := filepath.Join(dir, "wh")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	conf := filepath.Join(dir, "compactd.yaml")
	good := []byte("tick: 100ms\nwarehouses:\n  - path: wh\n")
	if err := os.WriteFile(conf, good, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "daemon", "--config", conf, "--listen", addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	metrics := func() string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitUntil := func(what string, cond func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			m := metrics()
			if cond(m) {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; /metrics:\n%s", what, m)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var b buildInfo
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`compactd_build_info{commit=%q,goversion=%q,version=%q} 1`, b.Commit, b.GoVersion, b.Version)
	waitUntil(info, func(m string) bool { return strings.Contains(m, info) })

	if err := os.WriteFile(conf, []byte("warehouses: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	waitUntil("a failed reload", func(m string) bool {
		return strings.Contains(m, `compactd_config_reloads_total{file="config",outcome="failure"} 1`)
	})
	if err := os.WriteFile(conf, good, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	waitUntil("a reload", func(m string) bool {
		return strings.Contains(m, `compactd_config_reloads_total{file="config",outcome="success"} 1`)
	})
}
