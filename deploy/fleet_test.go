package deploy_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/compactd/compactd/policy"
)

// The fleet example is consistent: three replicas that may roll (no
// warehouse lock in fleet mode), the coordinator URL from the Secret the
// header tells to create (key url) through --coordinator, each replica
// named by its pod, the config and policy store loading from the
// ConfigMap, and the grace period under the pod's.
func TestTheKubernetesFleetExampleIsConsistent(t *testing.T) {
	data, err := os.ReadFile("kubernetes-fleet.yaml")
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
	cm := byKind["ConfigMap"]["data"].(object)
	dir := t.TempDir()
	for _, f := range []string{"compactd.yaml", "policies.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(cm[f].(string)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := policy.LoadConfig(filepath.Join(dir, "compactd.yaml"))
	if err != nil {
		t.Fatalf("the ConfigMap's compactd.yaml: %v", err)
	}
	cfg.WithDefaults()
	if cfg.Coordinator.URL != "" {
		t.Fatal("the coordinator URL (a credential) is in the ConfigMap; it belongs in the Secret")
	}
	if _, err := policy.LoadStore(filepath.Join(dir, "policies.yaml")); err != nil {
		t.Fatalf("the ConfigMap's policies.yaml: %v", err)
	}
	if cfg.PolicyPath() != "/etc/compactd/policies.yaml" {
		t.Fatalf("policy-file %s is not the mounted ConfigMap's", cfg.PolicyPath())
	}
	spec := byKind["Deployment"]["spec"].(object)
	if spec["replicas"] != 3 || spec["strategy"].(object)["type"] != "RollingUpdate" {
		t.Fatalf("the fleet Deployment should run 3 replicas and roll: %v %v", spec["replicas"], spec["strategy"])
	}
	pod := spec["template"].(object)["spec"].(object)
	c := pod["containers"].([]any)[0].(object)
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	env := map[string]object{}
	for _, e := range c["env"].([]any) {
		env[e.(object)["name"].(string)] = e.(object)["valueFrom"].(object)
	}
	i := slices.Index(args, "--coordinator")
	if i < 0 || args[i+1] != "$(COMPACTD_COORDINATOR)" {
		t.Fatalf("args %v do not pass the coordinator from the environment", args)
	}
	ref := env["COMPACTD_COORDINATOR"]["secretKeyRef"].(object)
	secret := headerCommand(t, "kubernetes-fleet.yaml", "kubectl -n compactd-fleet create secret generic compactd-postgres")
	if ref["name"] != "compactd-postgres" || !strings.Contains(strings.Join(secret, " "), "--from-literal=url=") || ref["key"] != "url" {
		t.Fatalf("COMPACTD_COORDINATOR comes from %v; the header creates %v", ref, secret)
	}
	if i := slices.Index(args, "--replica-id"); i < 0 || args[i+1] != "$(POD_NAME)" ||
		env["POD_NAME"]["fieldRef"].(object)["fieldPath"] != "metadata.name" {
		t.Fatalf("replicas are not named by their pods: %v", args)
	}
	if grace := pod["terminationGracePeriodSeconds"].(int); grace <= int(cfg.GracePeriod.D().Seconds()) {
		t.Fatalf("terminationGracePeriodSeconds %d must exceed the grace period %s", grace, cfg.GracePeriod.D())
	}
	if cfg.Coordinator.RescueAfter.D() <= 0 || cfg.Coordinator.BucketsPerUnit <= 0 {
		t.Fatalf("coordinator settings: %+v", cfg.Coordinator)
	}
}
