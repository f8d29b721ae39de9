#!/usr/bin/env bash
# Runs the whole test suite. Installs the oracle (Java Paimon, pypaimon) and the
# loopback S3 server on first use (cached under ~/.m2 and ~/.cache/compactd),
# starts the server, runs the Go tests with both required, stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
echo "== go modules"
go mod download

echo "== oracle: Java Paimon + pypaimon"
bash interop/install.sh

echo "== S3 server"
bash scripts/s3-server.sh start
trap 'bash scripts/s3-server.sh stop || true' EXIT
eval "$(bash scripts/s3-server.sh env)"
export COMPACTD_REQUIRE_S3=1 COMPACTD_REQUIRE_ORACLE=1

echo "== lint: gofmt, vet, golangci-lint (layering)"
bash scripts/lint.sh

echo "== go test"
go test -count=1 -timeout 30m ./...
echo "== done in $(( $(date +%s) - start ))s"
