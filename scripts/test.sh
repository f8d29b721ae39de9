#!/usr/bin/env bash
# Runs the whole test suite. Installs the oracle (Java Paimon, pypaimon), promtool
# (scripts/install-test-tools.sh) and the loopback S3 server on first use (cached
# under ~/.m2 and ~/.cache/compactd),
# and PostgreSQL + MariaDB from Debian packages (scripts/db-servers.sh), starts
# the servers (and Paimon's REST catalog server, scripts/rest-server.sh),
# installs headless Chromium from Debian packages for the /status page test
# (scripts/chromium.sh), runs the Go tests with all of them required, stops
# the servers.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
echo "== go modules"
go mod download

echo "== oracle: Java Paimon + pypaimon"
bash interop/install.sh

echo "== test tools: promtool"
PATH="$PATH:$(bash scripts/install-test-tools.sh)"
export PATH

echo "== S3 server, PostgreSQL and MariaDB (JDBC catalogs), REST catalog server"
# One trap stops every server, whichever of them started.
trap 'bash scripts/s3-server.sh stop || true; bash scripts/db-servers.sh stop || true; bash scripts/rest-server.sh stop || true' EXIT
bash scripts/s3-server.sh start
eval "$(bash scripts/s3-server.sh env)"
bash scripts/db-servers.sh start >/dev/null
eval "$(bash scripts/db-servers.sh env)"
# Paimon's own RESTCatalogServer (needs the oracle built above).
bash scripts/rest-server.sh start >/dev/null
eval "$(bash scripts/rest-server.sh env)"

echo "== headless Chromium (the /status page test)"
bash scripts/chromium.sh install
eval "$(bash scripts/chromium.sh env)"
# Files tests leave for people (the page's screenshot), kept after the run.
export COMPACTD_TEST_ARTIFACTS="${COMPACTD_TEST_ARTIFACTS:-${TMPDIR:-/tmp}/compactd-test-artifacts}"
echo "test artifacts: $COMPACTD_TEST_ARTIFACTS"
export COMPACTD_REQUIRE_S3=1 COMPACTD_REQUIRE_ORACLE=1 COMPACTD_REQUIRE_JDBC=1 COMPACTD_REQUIRE_REST=1 COMPACTD_REQUIRE_CHROMIUM=1

echo "== lint: gofmt, vet, golangci-lint (layering)"
bash scripts/lint.sh

echo "== go test"
go test -count=1 -timeout 60m ./...
echo "== done in $(( $(date +%s) - start ))s"
