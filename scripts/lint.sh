#!/usr/bin/env bash
# Runs the linters: gofmt, go vet, and golangci-lint with .golangci.yml, whose
# depguard rules encode the package layering (docs/ARCHITECTURE.md).
# golangci-lint is built once with `go install` from the Go module proxy and
# cached in ${XDG_CACHE_HOME:-$HOME/.cache}/compactd/bin (the first build takes
# a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

GOLANGCI_LINT_VERSION=v2.6.2
BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/compactd/bin"
BIN="$BIN_DIR/golangci-lint"

if [[ ! -x "$BIN" || "$(cat "$BIN.version" 2>/dev/null)" != "$GOLANGCI_LINT_VERSION" ]]; then
	mkdir -p "$BIN_DIR"
	echo "lint: building golangci-lint $GOLANGCI_LINT_VERSION into $BIN_DIR (first time only)" >&2
	# Outside any module, so the project's go.mod is not consulted.
	(cd "$BIN_DIR" && GOBIN="$BIN_DIR" GOFLAGS=-buildvcs=false \
		go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION")
	echo "$GOLANGCI_LINT_VERSION" >"$BIN.version"
fi

unformatted=$(gofmt -l $(git ls-files '*.go'))
if [[ -n "$unformatted" ]]; then
	echo "gofmt would change:"
	echo "$unformatted"
	exit 1
fi
go vet ./...
"$BIN" run ./...
