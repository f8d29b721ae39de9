package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); without
// it the module version of the build info is used.
var version = ""

// PaimonVersions are the Paimon versions whose tables compactd reads and
// writes (metadata of 0.8 to 2.0; tables written by Java 0.9 to 2.0 are in
// the test fixtures).
const paimonVersions = "0.8–2.0"

// buildInfo is what `compactd version` reports.
type buildInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	CommitTime     string `json:"commitTime,omitempty"`
	Modified       bool   `json:"modified"`
	GoVersion      string `json:"goVersion"`
	Platform       string `json:"platform"`
	PaimonVersions string `json:"paimonVersions"`
}

func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: "unknown", GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, PaimonVersions: paimonVersions}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.CommitTime = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	return b
}

func (b buildInfo) String() string {
	commit := b.Commit
	if b.Modified {
		commit += " (modified)"
	}
	return fmt.Sprintf("compactd %s\ncommit: %s\ngo: %s %s\npaimon tables: %s", b.Version, commit, b.GoVersion, b.Platform, b.PaimonVersions)
}

func printVersion(w io.Writer, asJSON bool) error {
	b := currentBuild()
	if asJSON {
		return json.NewEncoder(w).Encode(b)
	}
	_, err := fmt.Fprintln(w, b)
	return err
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print compactd's version, commit, Go version and the Paimon versions it supports",
		Example: "  compactd version\n  compactd version --json\n  compactd --version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return printVersion(cmd.OutOrStdout(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
