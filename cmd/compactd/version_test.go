package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

func TestVersionCommandAndFlag(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"version", "--json"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	var b buildInfo
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		t.Fatalf("version --json: %v: %s", err, out.String())
	}
	if b.GoVersion != runtime.Version() || b.Version == "" || b.Commit == "" || b.PaimonVersions != paimonVersions {
		t.Fatalf("version --json: %+v", b)
	}
	out.Reset()
	root = newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"--version"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.HasPrefix(s, "compactd ") || !strings.Contains(s, runtime.Version()) || !strings.Contains(s, "paimon tables: "+paimonVersions) {
		t.Fatalf("--version printed %q", s)
	}
}
