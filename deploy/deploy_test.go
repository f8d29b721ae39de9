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
	"strconv"
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
	// Readiness is the lock and the first discovery (/readyz), not mere liveness.
	if ready, ok := c["readinessProbe"].(object); !ok || ready["httpGet"].(object)["path"] != "/readyz" {
		t.Fatal("readiness probe is not /readyz")
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

// shellWords splits a command line of the header on blanks, keeping
// double-quoted words whole (enough for the examples written here).
func shellWords(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted = !quoted
			in = true
		case (r == ' ' || r == '\t') && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// headerCommand returns the command of the file's "#" header that starts
// with prefix, its continuation lines joined.
func headerCommand(t *testing.T, file, prefix string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cmd string
	collecting := false
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		l = strings.TrimSpace(strings.TrimPrefix(l, "#"))
		if strings.HasPrefix(l, prefix) {
			collecting = true
		}
		if collecting {
			cont := strings.HasSuffix(l, "\\")
			cmd += " " + strings.TrimSuffix(l, "\\")
			if !cont {
				break
			}
		}
	}
	if cmd == "" {
		t.Fatalf("%s: no %q example in the header", file, prefix)
	}
	return shellWords(cmd)
}

// The Dockerfile's `docker run` example works as written: it mounts the
// checkout and names the bundled config inside it (whose relative paths
// then lead to the example warehouse `make demo` creates and to files in
// the checkout), runs as the caller's uid (the image's user could not
// write into a host-owned checkout), listens on all interfaces at the
// published port, and the build context leaves the bulky directories out.
func TestTheDockerRunExampleWorksAsWritten(t *testing.T) {
	args := headerCommand(t, "Dockerfile", "docker run")
	flag := func(name string) string {
		i := slices.Index(args, name)
		if i < 0 || i+1 >= len(args) {
			t.Fatalf("docker run example %v lacks %s", args, name)
		}
		return args[i+1]
	}
	host, mount, ok := strings.Cut(flag("-v"), ":")
	if !ok || host != "$PWD" {
		t.Fatalf("the example mounts %q, want the checkout ($PWD, the build's directory)", flag("-v"))
	}
	if flag("--user") != "$(id -u):$(id -g)" {
		t.Fatalf("the example runs as %q, want the caller's uid and gid", flag("--user"))
	}
	conf, ok := strings.CutPrefix(flag("--config"), mount+"/")
	if !ok {
		t.Fatalf("--config %s is not in the mounted checkout %s", flag("--config"), mount)
	}
	cfg, err := policy.LoadConfig(filepath.Join("..", conf))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("..")
	for _, p := range []string{cfg.WarehousePath(cfg.Warehouses[0]), cfg.PolicyPath(), cfg.StatePath()} {
		abs, _ := filepath.Abs(p)
		if !strings.HasPrefix(abs, root+string(filepath.Separator)) {
			t.Errorf("%s resolves outside the mounted checkout", p)
		}
	}
	if wh, _ := filepath.Abs(cfg.WarehousePath(cfg.Warehouses[0])); wh != filepath.Join(root, ".cache", "example-warehouse") {
		t.Errorf("the config watches %s, not the example warehouse make demo creates", wh)
	}
	published := flag("-p")
	listen := flag("--listen")
	if _, port, _ := strings.Cut(published, ":"); !strings.HasPrefix(listen, "0.0.0.0:") || !strings.HasSuffix(listen, ":"+port) {
		t.Errorf("--listen %s is not reachable through -p %s", listen, published)
	}
	docker, _ := os.ReadFile("Dockerfile")
	if !strings.Contains(string(docker), "EXPOSE "+strings.TrimPrefix(listen, "0.0.0.0:")) {
		t.Errorf("the image does not EXPOSE the example's port")
	}
	ignore, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(ignore), "\n")
	for _, want := range []string{".git", ".cache", "bin"} {
		if !slices.Contains(lines, want) {
			t.Errorf(".dockerignore does not exclude %s", want)
		}
	}
}

type object = map[string]any

func kubernetesObjects(t *testing.T) map[string]object {
	t.Helper()
	data, err := os.ReadFile("kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]object{}
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
		byKind[o["kind"].(string)] = o
	}
	return byKind
}

func name(o object) string { return o["metadata"].(object)["name"].(string) }

// The Kubernetes example's header commands match its objects: the Secret
// it tells to create is the one the Deployment reads, with every key it
// reads; the port-forward runs in the background (it blocks), reaches the
// port the daemon listens on, and the curl after it uses the forwarded
// port. The objects reference each other by the names they carry.
func TestTheKubernetesHeaderCommandsMatchTheObjects(t *testing.T) {
	objs := kubernetesObjects(t)
	ns := name(objs["Namespace"])
	for kind, o := range objs {
		if kind != "Namespace" && o["metadata"].(object)["namespace"] != ns {
			t.Errorf("%s %s is not in namespace %s", kind, name(o), ns)
		}
	}
	pod := objs["Deployment"]["spec"].(object)["template"].(object)["spec"].(object)
	c := pod["containers"].([]any)[0].(object)

	secret := headerCommand(t, "kubernetes.yaml", "kubectl -n "+ns+" create secret generic")
	if len(secret) < 7 {
		t.Fatalf("create secret command %v", secret)
	}
	secretName := secret[6]
	literals := map[string]bool{}
	for _, a := range secret[7:] {
		if v, ok := strings.CutPrefix(a, "--from-literal="); ok {
			k, _, _ := strings.Cut(v, "=")
			literals[k] = true
		}
	}
	refs := 0
	for _, e := range c["env"].([]any) {
		ref, ok := e.(object)["valueFrom"].(object)["secretKeyRef"].(object)
		if !ok {
			continue
		}
		refs++
		if ref["name"] != secretName || !literals[ref["key"].(string)] {
			t.Errorf("env %s reads key %s of Secret %s; the header creates Secret %s with keys %v",
				e.(object)["name"], ref["key"], ref["name"], secretName, literals)
		}
	}
	if refs == 0 {
		t.Error("the Deployment reads no Secret: the header's Secret would be unused")
	}

	cm := objs["ConfigMap"]["data"].(object)["compactd.yaml"].(string)
	cf := filepath.Join(t.TempDir(), "compactd.yaml")
	os.WriteFile(cf, []byte(cm), 0o644)
	cfg, err := policy.LoadConfig(cf)
	if err != nil {
		t.Fatal(err)
	}
	_, listenPort, _ := strings.Cut(cfg.Listen, ":")
	pf := headerCommand(t, "kubernetes.yaml", "kubectl -n "+ns+" port-forward")
	if len(pf) != 7 || pf[4] != "deploy/"+name(objs["Deployment"]) || pf[6] != "&" {
		t.Fatalf("port-forward command %v: want kubectl -n %s port-forward deploy/%s LOCAL:REMOTE &", pf, ns, name(objs["Deployment"]))
	}
	local, remote, ok := strings.Cut(pf[5], ":")
	if !ok || remote != listenPort {
		t.Fatalf("port-forward %v does not reach the daemon's port %s", pf, listenPort)
	}
	curl := headerCommand(t, "kubernetes.yaml", "curl")
	if !slices.Contains(curl, "localhost:"+local+"/status") {
		t.Errorf("curl %v does not use the forwarded port %s", curl, local)
	}
	ports := c["ports"].([]any)
	if len(ports) != 1 || strconv.Itoa(ports[0].(object)["containerPort"].(int)) != listenPort {
		t.Errorf("container ports %v, the daemon listens on %s", ports, listenPort)
	}
	portName := ports[0].(object)["name"]
	for _, p := range objs["Service"]["spec"].(object)["ports"].([]any) {
		if p.(object)["targetPort"] != portName {
			t.Errorf("Service port %v does not target the container's port %v", p, portName)
		}
	}
	for _, v := range pod["volumes"].([]any) {
		v := v.(object)
		if m, ok := v["configMap"].(object); ok && m["name"] != name(objs["ConfigMap"]) {
			t.Errorf("volume %s names config map %s", v["name"], m["name"])
		}
		if p, ok := v["persistentVolumeClaim"].(object); ok && p["claimName"] != name(objs["PersistentVolumeClaim"]) {
			t.Errorf("volume %s names claim %s", v["name"], p["claimName"])
		}
	}
}
