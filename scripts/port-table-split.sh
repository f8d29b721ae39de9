#!/usr/bin/env bash
# Ports a Go tree written against the old table package to the split of
# issue 13 item 3 (table/manifest, internal/javacompat): renames every moved
# or renamed identifier and fixes the imports. See the rename table in
# scripts/port-table-split.go; `-manual` lists what it leaves to a human.
#
# Usage (from the repository root, after merging the split into the branch
# and resolving conflicts in the moved files):
#   bash scripts/port-table-split.sh [-n] [dir...]    # default: .
#   bash scripts/port-table-split.sh -manual
#   go build ./... && go vet ./...
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run scripts/port-table-split.go "$@"
