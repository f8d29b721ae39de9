// Package scripts_test runs the test servers' scripts the way make test
// does.
package scripts_test

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// checkout copies the S3 server's scripts into a fresh directory, as they
// lie in a checkout of their own.
func checkout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"s3-server.sh", "server-lib.sh"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "scripts", f), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// s3 runs scripts/s3-server.sh in a checkout, in an environment without
// any S3 server settings and with a private TMPDIR (so that no server of
// the machine's is touched).
func s3(t *testing.T, dir, tmp string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(dir, "scripts", "s3-server.sh")}, args...)...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "COMPACTD_S3_") && !strings.HasPrefix(e, "TMPDIR=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(append(cmd.Env, "TMPDIR="+tmp), env...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Logf("s3-server.sh %v in %s: %v\n%s", args, dir, err, stderr.String())
	}
	return string(out), err
}

func endpointOf(t *testing.T, env string) string {
	t.Helper()
	for _, f := range strings.Fields(env) {
		if v, ok := strings.CutPrefix(f, "COMPACTD_TEST_S3_ENDPOINT="); ok {
			return v
		}
	}
	t.Fatalf("no COMPACTD_TEST_S3_ENDPOINT in %q", env)
	return ""
}

func answers(endpoint string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(endpoint + "/")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// Two checkouts run two S3 servers: each keeps its pid, data and port to
// itself, `env` prints the checkout's own, and stopping one leaves the
// other serving. COMPACTD_S3_PORT picks the port.
func TestS3ServersOfTwoCheckoutsAreApart(t *testing.T) {
	tmp := t.TempDir()
	a, b := checkout(t), checkout(t)
	t.Cleanup(func() {
		s3(t, a, tmp, nil, "stop")
		s3(t, b, tmp, nil, "stop")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	envA, err := s3(t, a, tmp, nil, "start")
	if err != nil {
		t.Fatal(err)
	}
	envB, err := s3(t, b, tmp, []string{"COMPACTD_S3_PORT=" + strconv.Itoa(port)}, "start")
	if err != nil {
		t.Fatal(err)
	}
	epA, epB := endpointOf(t, envA), endpointOf(t, envB)
	if epA == epB {
		t.Fatalf("both checkouts got the server at %s", epA)
	}
	if want := "http://127.0.0.1:" + strconv.Itoa(port); epB != want {
		t.Errorf("with COMPACTD_S3_PORT=%d the endpoint is %s, want %s", port, epB, want)
	}
	for _, d := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(d, ".cache", "s3-server", "versitygw.pid")); err != nil {
			t.Errorf("checkout %s keeps no pid file of its own: %v", d, err)
		}
	}
	if env, err := s3(t, a, tmp, nil, "env"); err != nil || endpointOf(t, env) != epA {
		t.Fatalf("env in checkout a: %q, %v; want its own server %s", env, err, epA)
	}
	for _, want := range []string{"COMPACTD_TEST_S3_BUCKET=", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_REGION="} {
		if !strings.Contains(envA, want) {
			t.Errorf("env lacks %s: %q", want, envA)
		}
	}
	if _, err := s3(t, a, tmp, nil, "stop"); err != nil {
		t.Fatal(err)
	}
	if _, err := s3(t, b, tmp, nil, "status"); err != nil {
		t.Fatal("stopping checkout a's server stopped checkout b's")
	}
	if !answers(epB) {
		t.Fatalf("checkout b's server at %s stopped answering when a's stopped", epB)
	}
	if _, err := s3(t, a, tmp, nil, "status"); err == nil {
		t.Fatal("checkout a's server still runs after stop")
	}
}
