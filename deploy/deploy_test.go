// Package deploy_test checks the deployment files: the systemd unit with
// systemd-analyze, the Kubernetes manifests structurally (kubectl needs a
// cluster to validate), and that every embedded compactd config loads.
// The Dockerfile is validated by building it (see its header); Docker is
// not available where these tests run.
package deploy_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/compactd/compactd/policy"
)

func TestTheSystemdUnitVerifies(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Fatalf("systemd-analyze is needed to verify deploy/compactd.service: %v", err)
	}
	unit, err := os.ReadFile("compactd.service")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(unit, []byte("ExecStart=/usr/local/bin/compactd daemon --config /etc/compactd/compactd.yaml")) {
		t.Fatal("ExecStart does not run the daemon with the installed config")
	}
	// verify checks that ExecStart is executable: point it at this test
	// binary instead of the installed path.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "compactd.service")
	os.WriteFile(f, bytes.ReplaceAll(unit, []byte("/usr/local/bin/compactd"), []byte(self)), 0o644)
	out, err := exec.Command("systemd-analyze", "verify", f).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func TestTheKubernetesExampleIsConsistent(t *testing.T) {
	data, err := os.ReadFile("kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type object = map[string]any
	var objs []object
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	byKind := map[string]object{}
	for _, o := range objs {
		md, _ := o["metadata"].(object)
		if o["apiVersion"] == nil || o["kind"] == nil || md["name"] == nil {
			t.Fatalf("object without apiVersion, kind or name: %v", o)
		}
		byKind[o["kind"].(string)] = o
	}
	for _, k := range []string{"ConfigMap", "Deployment", "Service", "PersistentVolumeClaim"} {
		if byKind[k] == nil {
			t.Fatalf("no %s", k)
		}
	}
	conf := byKind["ConfigMap"]["data"].(object)["compactd.yaml"].(string)
	cf := filepath.Join(t.TempDir(), "compactd.yaml")
	os.WriteFile(cf, []byte(conf), 0o644)
	cfg, err := policy.LoadConfig(cf)
	if err != nil {
		t.Fatalf("the ConfigMap's compactd.yaml: %v", err)
	}
	spec := byKind["Deployment"]["spec"].(object)
	if spec["replicas"] != 1 || spec["strategy"].(object)["type"] != "Recreate" {
		t.Fatal("the Deployment must run one daemon and replace it, not roll")
	}
	pod := spec["template"].(object)["spec"].(object)
	c := pod["containers"].([]any)[0].(object)
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	if i := slices.Index(args, "--config"); i < 0 || args[i+1] != "/etc/compactd/compactd.yaml" {
		t.Fatalf("container args %v do not name the mounted config", args)
	}
	mounts := map[string]string{}
	for _, m := range c["volumeMounts"].([]any) {
		mounts[m.(object)["mountPath"].(string)] = m.(object)["name"].(string)
	}
	if mounts["/etc/compactd"] != "config" {
		t.Fatal("the config map is not mounted at /etc/compactd")
	}
	for _, p := range []string{cfg.PolicyPath(), cfg.StatePath()} {
		if !strings.HasPrefix(p, "/var/lib/compactd/") || mounts["/var/lib/compactd"] != "state" {
			t.Fatalf("%s is not on the writable state volume", p)
		}
	}
	if !strings.HasSuffix(cfg.Listen, ":9464") || strings.HasPrefix(cfg.Listen, "127.") {
		t.Fatalf("listen %s is not reachable by the probes", cfg.Listen)
	}
	probe := c["livenessProbe"].(object)["httpGet"].(object)
	if probe["path"] != "/healthz" {
		t.Fatal("liveness probe is not /healthz")
	}
	grace := pod["terminationGracePeriodSeconds"].(int)
	if grace <= int(cfg.GracePeriod.D().Seconds()) {
		t.Fatalf("terminationGracePeriodSeconds %d must exceed the daemon's grace period %s", grace, cfg.GracePeriod.D())
	}
}

func TestTheDockerfileBuildsAStaticBinaryOfTheDaemon(t *testing.T) {
	data, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{"CGO_ENABLED=0 go build", "./cmd/compactd", "distroless/static", `ENTRYPOINT ["/usr/local/bin/compactd"]`, `"daemon"`} {
		if !strings.Contains(s, want) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}
}
