package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// RESTEnv names a Paimon REST catalog server: the shared one of
// scripts/rest-server.sh (RequireREST) or a test's own (StartRESTServer).
type RESTEnv struct {
	URI       string // http://127.0.0.1:port
	Token     string // bearer token
	Warehouse string // the catalog name clients send to GET /v1/config
}

// RequireREST returns the REST catalog server named by COMPACTD_REST_URI,
// COMPACTD_REST_TOKEN and COMPACTD_REST_WAREHOUSE (eval "$(bash
// scripts/rest-server.sh start)"), after checking that it answers. Without
// it the test skips, unless COMPACTD_REQUIRE_REST=1 (set by scripts/test.sh),
// which turns a missing or unreachable server into a failure.
func RequireREST(tb testing.TB) RESTEnv {
	tb.Helper()
	const hint = `run: eval "$(bash scripts/rest-server.sh start)"`
	missing := func(format string, args ...any) {
		tb.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("COMPACTD_REQUIRE_REST") == "1" {
			tb.Fatalf("COMPACTD_REQUIRE_REST=1 but %s; %s", msg, hint)
		}
		tb.Skipf("REST catalog tests need a server: %s; %s", msg, hint)
	}
	e := RESTEnv{URI: os.Getenv("COMPACTD_REST_URI"), Token: os.Getenv("COMPACTD_REST_TOKEN"), Warehouse: os.Getenv("COMPACTD_REST_WAREHOUSE")}
	if e.URI == "" {
		missing("COMPACTD_REST_URI is not set")
		return e
	}
	if err := e.Ping(context.Background()); err != nil {
		missing("the server at %s does not answer: %v", e.URI, err)
	}
	return e
}

// Ping asks the server for its configuration (GET /v1/config), which
// also checks the token.
func (e RESTEnv) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := strings.TrimRight(e.URI, "/") + "/v1/config?warehouse=" + url.QueryEscape(e.Warehouse)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+e.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v1/config: HTTP %d", resp.StatusCode)
	}
	return nil
}

// CatalogOptions are the Java oracle's catalog options for the server
// (with --warehouse e.Warehouse): Java(t).WithCatalogOptions(e.CatalogOptions()).
func (e RESTEnv) CatalogOptions() map[string]string {
	return map[string]string{
		"metastore":      "rest",
		"uri":            e.URI,
		"token.provider": "bear",
		"token":          e.Token,
	}
}

// RESTServer is a REST catalog server a test started for itself (the
// rest-server verb): unlike the shared one it takes control commands.
type RESTServer struct {
	RESTEnv
	Dir   string // its warehouse directory
	cmd   *exec.Cmd
	stdin io.WriteCloser
	acks  chan string
}

// StartRESTServer starts Paimon's RESTCatalogServer on a free loopback port
// with a random token and its warehouse in a temporary directory; it is
// stopped when the test ends. extraFlags go to the rest-server verb (e.g.
// "--data-token", "true").
func StartRESTServer(tb testing.TB, extraFlags ...string) *RESTServer {
	tb.Helper()
	j := Java(tb)
	restCP, err := os.ReadFile(filepath.Join(j.target, "classpath-rest.txt"))
	if err != nil {
		tb.Fatalf("interop: REST server classpath: %v: %s", err, missingHint)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("interop: free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	s := &RESTServer{RESTEnv: RESTEnv{Token: "t-" + uuid.NewString(), Warehouse: "compactd_test"}, Dir: tb.TempDir(), acks: make(chan string, 16)}
	logFile, err := os.Create(filepath.Join(tb.TempDir(), "rest-server.log"))
	if err != nil {
		tb.Fatalf("interop: %v", err)
	}
	p, err := j.startVerb(context.Background(), "rest-server", append([]string{
		"--warehouse", s.Dir, "--port", strconv.Itoa(port), "--token", s.Token, "--catalog", s.Warehouse}, extraFlags...),
		logFile, strings.TrimSpace(string(restCP)))
	if err != nil {
		tb.Fatalf("interop: REST server: %v", err)
	}
	s.cmd, s.stdin = p.cmd, p.stdin
	stdout := p.stdout
	tb.Cleanup(func() {
		_ = s.stdin.Close() // the verb stops when stdin closes
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
		p.cancel()
		_ = logFile.Close()
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				ready <- sc.Text()
				first = false
				continue
			}
			s.acks <- sc.Text()
		}
		close(s.acks)
		if first {
			close(ready)
		}
	}()
	select {
	case line, ok := <-ready:
		var r struct {
			Ready bool   `json:"__compactd_rest_ready"`
			URI   string `json:"uri"`
		}
		if !ok || json.Unmarshal([]byte(line), &r) != nil || !r.Ready {
			log, _ := os.ReadFile(logFile.Name())
			tb.Fatalf("interop: REST server did not start (%q):\n%s", line, tail(string(log), 4000))
		}
		s.URI = r.URI
	case <-time.After(60 * time.Second):
		tb.Fatalf("interop: REST server not ready after 60s")
	}
	return s
}

// FailNextCommit makes the server answer its next successful commit with
// HTTP 500 after the snapshot is published (RESTCatalogServer's
// commitSuccessThrowException): a response lost after the commit landed.
func (s *RESTServer) FailNextCommit(tb testing.TB) {
	tb.Helper()
	if _, err := io.WriteString(s.stdin, "fail-next-commit\n"); err != nil {
		tb.Fatalf("interop: REST server control: %v", err)
	}
	select {
	case ack := <-s.acks:
		if !strings.Contains(ack, `"ok"`) {
			tb.Fatalf("interop: REST server control: %s", ack)
		}
	case <-time.After(10 * time.Second):
		tb.Fatalf("interop: REST server control: no answer")
	}
}
