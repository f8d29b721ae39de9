package sched_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactd/compactd/compact"
	"github.com/compactd/compactd/policy"
	"github.com/compactd/compactd/sched"
	"github.com/compactd/compactd/table"
)

// hostile is what a halted reason or job error may carry: text from a
// store or a table, which the page must show as text.
const hostile = `<script>document.title="pwned"</script><img src=x onerror=alert(1)> & "quoted"`

// statusDaemon runs a real scheduler over a warehouse with db.orders,
// compacted, and db.evil, halted at once by a permanent error whose
// message is hostile; it returns once both show in the status.
func statusDaemon(t *testing.T) *sched.Scheduler {
	t.Helper()
	wh := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 12))
	orders := newModel(t, createTable(t, wh, "orders", nil))
	evil := newModel(t, createTable(t, wh, "evil", nil))
	for i := 0; i < 6; i++ {
		orders.commit(t, rng, 20)
		evil.commit(t, rng, 5)
	}
	r := &hookRunner{compact: func(ctx context.Context, tb *table.Table, o *compact.Options) error {
		if tb.Name() == "evil" {
			return &sched.PermanentError{Err: errors.New("corrupt file data-1.parquet: " + hostile)}
		}
		return nil
	}}
	s, _ := start(t, config(t, wh, compactOnly(nil)), sched.Options{Runner: r})
	waitFor(t, "db.orders compacted and db.evil halted", 20*time.Second, func() bool {
		o, _ := tableStatus(s, "db.orders")
		e, _ := tableStatus(s, "db.evil")
		return successes(o, policy.Compact) > 0 && e.Halted != ""
	})
	return s
}

func statusRequest(t *testing.T, h http.Handler, target, accept string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// What Chromium sends for a navigation.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"

// /status stays JSON for every client that does not prefer HTML (no
// Accept, curl's */*, application/json, a tie), and for ?format=json even
// from a browser; a browser's Accept or ?format=html gets the page, with
// every untrusted value escaped.
func TestStatusIsJSONForMachinesAndHTMLForBrowsers(t *testing.T) {
	s := statusDaemon(t)
	h := s.Handler()
	for _, c := range []struct{ target, accept string }{
		{"/status", ""},
		{"/status", "*/*"},
		{"/status", "application/json"},
		{"/status", "text/html, application/json"},
		{"/status", "text/html;q=0.5, application/json"},
		{"/status", "text/*"},
		{"/status?format=json", browserAccept},
	} {
		rec := statusRequest(t, h, c.target, c.accept)
		var st sched.Status
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s Accept %q: %d %s, want JSON", c.target, c.accept, rec.Code, rec.Header().Get("Content-Type"))
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || len(st.Tables) != 2 {
			t.Fatalf("GET %s Accept %q: %v, %d tables", c.target, c.accept, err, len(st.Tables))
		}
	}
	for _, c := range []struct{ target, accept string }{
		{"/status", browserAccept},
		{"/status", "text/html"},
		{"/status?format=html", ""},
		{"/status?format=html", "application/json"},
	} {
		rec := statusRequest(t, h, c.target, c.accept)
		body := rec.Body.String()
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || !strings.HasPrefix(body, "<!DOCTYPE html>") {
			t.Fatalf("GET %s Accept %q: %d %s, want the HTML page", c.target, c.accept, rec.Code, rec.Header().Get("Content-Type"))
		}
		if !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("the page's policy does not forbid scripts: %q", rec.Header().Get("Content-Security-Policy"))
		}
		for _, bad := range []string{"<script", "<img"} {
			if strings.Contains(body, bad) {
				t.Fatalf("GET %s: the page contains %s: an untrusted value is not escaped", c.target, bad)
			}
		}
		if !strings.Contains(body, "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;") {
			t.Fatalf("GET %s: the hostile reason is not shown escaped", c.target)
		}
	}
	if rec := statusRequest(t, h, "/status?format=xml", ""); rec.Code != 400 {
		t.Fatalf("?format=xml: %d, want 400", rec.Code)
	}
	if vary := statusRequest(t, h, "/status", "").Header().Values("Vary"); !strings.Contains(strings.Join(vary, ","), "Accept") {
		t.Fatalf("Vary %v lacks Accept: a cache could serve the page to a machine", vary)
	}
}

// chromium is the headless browser of the page test: $COMPACTD_CHROMIUM,
// else `chromium` on PATH (Debian's package; scripts/chromium.sh installs
// it). Missing, it fails the test under COMPACTD_REQUIRE_CHROMIUM=1.
func chromium(t *testing.T) string {
	t.Helper()
	const hint = "install it with: bash scripts/chromium.sh install"
	if p := os.Getenv("COMPACTD_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("COMPACTD_CHROMIUM=%s: %v; %s", p, err, hint)
		}
		return p
	}
	p, err := exec.LookPath("chromium")
	if err == nil {
		return p
	}
	if os.Getenv("COMPACTD_REQUIRE_CHROMIUM") == "1" {
		t.Fatalf("COMPACTD_REQUIRE_CHROMIUM=1 but no chromium on PATH (%v); %s", err, hint)
	}
	t.Skipf("the status page test needs headless Chromium (%v); %s", err, hint)
	return ""
}

// artifacts is where tests leave files for people to look at:
// $COMPACTD_TEST_ARTIFACTS if set, else a temporary directory.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("COMPACTD_TEST_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, tail(stderr.String(), 2000))
	}
	return out
}

// The /status page as a browser shows it (issue 18): headless Chromium
// loads it from a running daemon with its own Accept header; the DOM holds
// both tables with their states, the halted table's reason and the job's
// error as text (the hostile markup in them made no element), and a
// screenshot of the page lands in the test artifacts.
func TestTheStatusPageInHeadlessChromium(t *testing.T) {
	bin := chromium(t)
	s := statusDaemon(t)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	url := srv.URL + "/status"

	started := time.Now()
	dom := string(runChromium(t, bin, "--dump-dom", url))
	t.Logf("dump-dom in %s, %d bytes", time.Since(started).Round(time.Millisecond), len(dom))
	for _, want := range []string{
		`<h1>compactd</h1>`,
		`data-table="db.orders" data-state="ok"`,
		`data-table="db.evil" data-state="halted"`,
		`<span class="badge halted">halted</span>`,
		// The reason as text: serialized back with its markup escaped.
		`compact: corrupt file data-1.parquet: &lt;script&gt;document.title="pwned"&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; &amp; "quoted"`,
		`compactd resume db.evil`,
		`<span class="badge success">success</span>`,
		`id="jobs"`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page's DOM lacks %s", want)
		}
	}
	for _, bad := range []string{"<script", "<img", "pwned</title>"} {
		if strings.Contains(dom, bad) {
			t.Errorf("the page's DOM has %s: hostile text became markup", bad)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", tail(dom, 6000))
		t.FailNow()
	}

	png := filepath.Join(artifacts(t), "status.png")
	os.Remove(png)
	started = time.Now()
	runChromium(t, bin, "--screenshot="+png, "--window-size=1280,900", "--hide-scrollbars", url+"?format=html")
	data, err := os.ReadFile(png)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || len(data) < 10_000 {
		t.Fatalf("%s is not a PNG of the page (%d bytes)", png, len(data))
	}
	t.Logf("screenshot in %s: %s (%d bytes)", time.Since(started).Round(time.Millisecond), png, len(data))
}

// The fleet on the /status page (issue 20) as a browser shows it: this
// replica and the leader, the live replicas with their workers, the queue
// and the running units with their bucket ranges, from the coordinator's
// last heartbeat; replica hosts come from other machines, so hostile text
// there stays text. A coordinator that cannot be reached shows a banner.
func TestTheFleetOnTheStatusPageInHeadlessChromium(t *testing.T) {
	bin := chromium(t)
	wh := t.TempDir()
	createTable(t, wh, "big", map[string]string{"bucket": "16"})
	now := time.Now()
	c := &fakeCoordinator{status: &sched.FleetStatus{Replica: "replica-b", Leader: "replica-a", Workers: 6,
		QueueDepth: 3, OldestDueSeconds: 95, Observed: now,
		Replicas: []sched.ReplicaStatus{
			{ID: "replica-a", Host: "host-a", Workers: 4, Started: now.Add(-10 * time.Minute), LastSeen: now.Add(-time.Second)},
			{ID: "replica-b", Host: hostile, Workers: 2, Started: now.Add(-5 * time.Minute), LastSeen: now},
		},
		Running: []sched.UnitStatus{
			{Unit: sched.Unit{Warehouse: wh, Table: "db.big", Kind: policy.Compact, Buckets: &compact.BucketRange{From: 4, To: 8}},
				Replica: "replica-a", Since: now.Add(-42 * time.Second), Attempt: 2},
			{Unit: sched.Unit{Warehouse: wh, Table: "db.small", Kind: policy.Expire}, Replica: "replica-b", Since: now.Add(-3 * time.Second), Attempt: 1},
		}}}
	s, _ := start(t, config(t, wh, compactOnly(nil)), sched.Options{Coordinator: c})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	url := srv.URL + "/status"
	dom := string(runChromium(t, bin, "--dump-dom", url))
	for _, want := range []string{
		`id="fleet" data-replica="replica-b" data-leader="replica-a"`,
		`leader <code>replica-a</code>`,
		`2 live replicas, 6 workers`,
		`3 units waiting`,
		`2 units running`,
		`<tr data-replica="replica-a">`,
		`<tr data-replica="replica-b">`,
		`&lt;script&gt;document.title="pwned"&lt;/script&gt;`,
		`<tr data-unit="compact of db.big buckets [4,8)">`,
		`[4,8)`,
		`<tr data-unit="expire of db.small">`,
		`whole table`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page's DOM lacks %s", want)
		}
	}
	for _, bad := range []string{"<script", "<img", "pwned</title>", `id="fleet-error"`, "every warehouse locked"} {
		if strings.Contains(dom, bad) {
			t.Errorf("the page's DOM has %s", bad)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", tail(dom, 8000))
		t.FailNow()
	}
	png := filepath.Join(artifacts(t), "status-fleet.png")
	os.Remove(png)
	runChromium(t, bin, "--screenshot="+png, "--window-size=1280,900", "--hide-scrollbars", url+"?format=html")
	if data, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) || len(data) < 10_000 {
		t.Fatalf("no screenshot of the fleet page at %s (%d bytes, %v)", png, len(data), err)
	}

	c.mu.Lock()
	c.status.Error = "coordinator: heartbeat: dial tcp 127.0.0.1:5432: connection refused"
	c.mu.Unlock()
	page := statusRequest(t, s.Handler(), "/status?format=html", "").Body.String()
	if !strings.Contains(page, `id="fleet-error"`) || !strings.Contains(page, "connection refused") {
		t.Fatalf("no banner for an unreachable coordinator:\n%s", tail(page, 3000))
	}
}
