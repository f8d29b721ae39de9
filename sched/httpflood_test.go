package sched_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
)

// floodChildEnv makes the test binary run a daemon instead of the tests
// (TestMain): the daemon of TestAFloodOfIdleHTTPConnectionsLeavesTheDaemonWorking,
// run in its own process so that its descriptor limit can be set low
// without touching the test process, which holds the flooding side.
const floodChildEnv = "COMPACTD_TEST_FLOOD_DAEMON"

// floodChildNoFile is the daemon's RLIMIT_NOFILE: far fewer descriptors
// than the flood has connections.
const floodChildNoFile = 256

func TestMain(m *testing.M) {
	if cfg := os.Getenv(floodChildEnv); cfg != "" {
		os.Exit(floodDaemon(cfg))
	}
	os.Exit(m.Run())
}

// floodDaemon runs the daemon of config file cfg as `compactd daemon` does,
// with RLIMIT_NOFILE lowered, listening on a free loopback port that it
// writes to <cfg>.addr.
func floodDaemon(cfgFile string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "flood daemon:", err); return 2 }
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fail(err)
	}
	lim.Cur = floodChildNoFile
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fail(err)
	}
	cfg, err := policy.LoadConfig(cfgFile)
	if err != nil {
		return fail(err)
	}
	s, err := sched.New(cfg, sched.Options{})
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	srv := sched.NewHTTPServer(cfg.HTTP, s.Handler())
	go srv.Serve(ln)
	if err := os.WriteFile(cfgFile+".addr.tmp", []byte(ln.Addr().String()), 0o644); err != nil {
		return fail(err)
	}
	if err := os.Rename(cfgFile+".addr.tmp", cfgFile+".addr"); err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := s.Run(ctx); err != nil {
		return fail(err)
	}
	return 0
}

// The incident of issue 12: some 20k idle keep-alive connections to the
// daemon's HTTP server took all its descriptors, so that every job failed
// with EMFILE, the lock heartbeat could not renew, and /healthz stopped
// answering. Here a daemon limited to 256 descriptors is flooded with
// thousands of connections that each send one request and then stay open;
// while they are open (and a second wave arrives), compactions must keep
// committing, the lease must keep being renewed, and /healthz must answer.
func TestAFloodOfIdleHTTPConnectionsLeavesTheDaemonWorking(t *testing.T) {
	wh := t.TempDir()
	m := newModel(t, createTable(t, wh, "a", map[string]string{"num-sorted-run.compaction-trigger": "2"}))
	rng := rand.New(rand.NewPCG(12, 6))
	m.commit(t, rng, 20)

	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "compactd.yaml")
	// The http section is left out: the defaults must hold.
	yaml := fmt.Sprintf(`workers: 2
tick: 50ms
discovery-interval: 200ms
lock-lease: 3s
warehouses:
  - path: %s
defaults:
  compact.schedule: "@every 1s"
  expire.enabled: "false"
  orphan.enabled: "false"
`, wh)
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floodChildEnv+"="+cfgFile)
	stderr := &syncWriter{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", tail(stderr.String(), 4000))
		}
	})
	var addr string
	waitFor(t, "the daemon's address", 20*time.Second, func() bool {
		b, err := os.ReadFile(cfgFile + ".addr")
		addr = string(b)
		return err == nil
	})
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	status := func() (sched.Status, error) {
		var st sched.Status
		resp, err := client.Get("http://" + addr + "/status")
		if err != nil {
			return st, err
		}
		defer resp.Body.Close()
		return st, json.NewDecoder(resp.Body).Decode(&st)
	}
	// committed counts the compactions that committed a snapshot.
	committed := func() (n int, failed []string) {
		st, err := status()
		if err != nil {
			return -1, nil
		}
		for _, j := range st.Recent {
			if j.Outcome == "success" && j.Snapshot != 0 {
				n++
			}
			if j.Outcome != "success" {
				failed = append(failed, j.Outcome+": "+j.Error)
			}
		}
		return n, failed
	}
	m.commit(t, rng, 20)
	waitFor(t, "a first compaction", 20*time.Second, func() bool { n, _ := committed(); return n >= 1 })
	before, _ := committed()
	leaseBefore := leaseExpiry(t, wh)

	var flood floodConns
	defer flood.close()
	const wave = 2500
	flood.open(t, addr, wave)
	t.Logf("flood: %d connections open", flood.len())

	// While the flood stays open: more commits, probes, a second wave.
	probes, answered := 0, 0
	var second sync.WaitGroup
	second.Add(1)
	go func() { defer second.Done(); flood.open(t, addr, wave) }()
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		m.commit(t, rng, 20)
		probes++
		if resp, err := client.Get("http://" + addr + "/healthz"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && string(body) == "ok\n" {
				answered++
			}
		} else {
			t.Logf("/healthz during the flood: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	second.Wait()
	t.Logf("flood: %d connections open; /healthz answered %d of %d probes", flood.len(), answered, probes)
	if answered != probes {
		t.Errorf("/healthz answered %d of %d probes during the flood", answered, probes)
	}
	var after int
	var failed []string
	waitFor(t, "status after the flood", 5*time.Second, func() bool { after, failed = committed(); return after >= 0 })
	if after < before+2 {
		t.Errorf("compactions committed during the flood: %d, want at least 2", after-before)
	}
	if len(failed) > 0 {
		t.Errorf("jobs failed during the flood: %q", failed)
	}
	// The heartbeat renews every lease/4; over 6s the lease must have moved
	// on by several seconds.
	if got := leaseExpiry(t, wh); got.Sub(leaseBefore) < 3*time.Second {
		t.Errorf("lease renewed from %s only to %s during the flood", leaseBefore.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano))
	}
	if strings.Contains(stderr.String(), "too many open files") {
		t.Errorf("the daemon ran out of descriptors:\n%s", tail(grepLines(stderr.String(), "too many open files"), 2000))
	}
	flood.close()
	m.check(t)
}

// leaseExpiry is the latest lease expiry in the warehouse's lock files.
func leaseExpiry(t *testing.T, wh string) time.Time {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(wh, sched.LockFile+"*"))
	var latest time.Time
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var l struct {
			Expires time.Time `json:"expires"`
		}
		if json.Unmarshal(b, &l) == nil && l.Expires.After(latest) {
			latest = l.Expires
		}
	}
	if latest.IsZero() {
		t.Errorf("no lease in %v", files)
	}
	return latest
}

// floodConns are connections that sent one keep-alive request and then
// stay open without reading, as a misbehaving scraper leaves them.
type floodConns struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (f *floodConns) open(t *testing.T, addr string, n int) {
	var wg sync.WaitGroup
	next := make(chan struct{})
	go func() {
		defer close(next)
		for i := 0; i < n; i++ {
			next <- struct{}{}
		}
	}()
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					continue
				}
				_, _ = c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: flood\r\n\r\n"))
				f.mu.Lock()
				f.conns = append(f.conns, c)
				f.mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func (f *floodConns) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.conns)
}

func (f *floodConns) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}

// syncWriter collects a child's stderr.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func grepLines(s, sub string) string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if strings.Contains(sc.Text(), sub) {
			out = append(out, sc.Text())
		}
	}
	return strings.Join(out, "\n")
}
