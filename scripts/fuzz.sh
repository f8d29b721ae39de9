#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME (default 30s) each. New crashers land in
# the package's testdata/fuzz/<Target>/ and become regression seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r f; do
  pkg=$(dirname "$f")
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //'); do
    echo "== $pkg $target ($fuzztime)"
    go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 5s
  done
done
