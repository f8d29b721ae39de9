#!/usr/bin/env bash
# Builds the interop test oracles (idempotent; fast when already built):
#   - interop/java: Java Paimon CLI, compiled to target/classes + target/classpath.txt (jars in ~/.m2);
#   - a Python venv with pypaimon at ${COMPACTD_VENV:-~/.cache/compactd/venv}.
# Go tests (package interop) run them with no Maven/pip at test time.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
java_dir="$here/java"
venv="${COMPACTD_VENV:-$HOME/.cache/compactd/venv}"
pypaimon_version="2.1.0"

need() { command -v "$1" >/dev/null 2>&1 || { echo "install.sh: $1 not found on PATH" >&2; exit 1; }; }

# ---- Java
need java
need mvn
stamp="$java_dir/target/.built"
newest_src="$(find "$java_dir/pom.xml" "$java_dir/src" -type f -newer "$stamp" 2>/dev/null | head -1 || true)"
if [[ ! -f "$stamp" || -n "$newest_src" || ! -f "$java_dir/target/classpath.txt" ]]; then
  echo "interop: building Java oracle (mvn)" >&2
  # Offline first (fast when ~/.m2 is warm); online on the first install.
  if ! (cd "$java_dir" && mvn -q -B -o compile >/dev/null 2>&1); then
    (cd "$java_dir" && mvn -q -B compile)
  fi
  touch "$stamp"
fi

# ---- Python
need python3
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('pypaimon') != '$pypaimon_version')" 2>/dev/null; then
  echo "interop: creating pypaimon venv at $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "pypaimon==$pypaimon_version"
fi
