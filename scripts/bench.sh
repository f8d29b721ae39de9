#!/usr/bin/env bash
# make bench: compactd side by side with Java Paimon in one run (see docs/perf.md).
#
# Measures full compaction of one bucket (compactd, Java Paimon, and a
# decode/re-encode "floor"), planning, snapshot expiration at scale and S3 vs
# local disk; prints a markdown report and writes it to $BENCH_OUT.
#
# Sizes come from the environment so a quick run is possible:
#   BENCH_ROWS=1000000,10000000   row counts of the compaction benchmark
#   BENCH_SCHEMAS=narrow,wide,widepu,narrow_orc,wide_orc   (_orc: the same table writing ORC data files)
#   BENCH_REPEAT=3                           repetitions of each compaction (medians, min–max ratios)
#   BENCH_EXPIRE=1000:100000,10000:1000000   snapshots:files (set but empty: skip)
#   BENCH_PLAN=100:100,1000:100              buckets:files-per-bucket (set but empty: skip)
#   BENCH_DV=10000000                        base rows of the deletion-vector table (0: skip)
#   BENCH_CHANGELOG=10000000                 base rows of the changelog-producer table (0: skip)
#   BENCH_S3=1                               also compact on the loopback S3 server
#   BENCH_S3_ROWS=1000000
#   BENCH_DUCKDB=1                           DuckDB as a second reference (PyPI duckdb in its own venv)
#   BENCH_FLEET=64                           buckets (= units) of the fleet's table, 1 vs 3 replicas (0: skip);
#                                            starts scripts/db-servers.sh for its PostgreSQL
#   BENCH_FLEET_ROWS=2000000
#   BENCH_JAVA_OPTS=                         JVM flags for Java's compaction
#   BENCH_WORK=.cache/bench                  generated tables are cached here
#   BENCH_OUT=.cache/bench/results.md
# Extra arguments go to `compactd-bench run` (e.g. -planner-bench=false, -java=false).
# Quick run: BENCH_REPEAT=1 BENCH_ROWS=200000 BENCH_EXPIRE=100:10000 BENCH_PLAN=10:100 BENCH_DV=200000 BENCH_CHANGELOG=200000 BENCH_FLEET_ROWS=500000 make bench
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO="${GO:-go}"
work="${BENCH_WORK:-.cache/bench}"
out="${BENCH_OUT:-$work/results.md}"
mkdir -p "$work" "$(dirname "$out")"

command -v /usr/bin/time >/dev/null || { echo "bench: /usr/bin/time (GNU time) is required" >&2; exit 1; }
"$GO" build -o bin/compactd ./cmd/compactd
"$GO" build -o bin/compactd-bench ./cmd/compactd-bench
bash interop/install.sh

# DuckDB, the second reference: its own venv, so pypaimon's stays as the
# interop harness pins it.
duck_flag=()
if [[ "${BENCH_DUCKDB:-1}" == 1 ]]; then
	duck_venv="${COMPACTD_DUCKDB_VENV:-$HOME/.cache/compactd/duckdb-venv}"
	duck_version=2.0.0
	if ! "$duck_venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('duckdb') != '$duck_version')" 2>/dev/null; then
		echo "bench: creating the DuckDB venv at $duck_venv" >&2
		python3 -m venv "$duck_venv"
		"$duck_venv/bin/pip" install -q --disable-pip-version-check "duckdb==$duck_version"
	fi
	duck_flag=(-duckdb "$duck_venv/bin/python")
fi

s3_flag=()
if [[ "${BENCH_S3:-1}" == 1 ]]; then
	eval "$(bash scripts/s3-server.sh start)"
	s3_flag=(-s3 -s3-rows "${BENCH_S3_ROWS:-1000000}")
fi

if [[ "${BENCH_FLEET:-64}" != 0 ]]; then
	bash scripts/db-servers.sh start >&2
	eval "$(bash scripts/db-servers.sh env)"
fi

exec bin/compactd-bench run \
	-work "$work" \
	-compactd bin/compactd \
	-rows "${BENCH_ROWS:-1000000,10000000}" \
	-schemas "${BENCH_SCHEMAS:-narrow,wide,widepu,narrow_orc,wide_orc}" \
	-repeat "${BENCH_REPEAT:-3}" \
	-expire "${BENCH_EXPIRE-1000:100000,10000:1000000}" \
	-plan "${BENCH_PLAN-100:100,1000:100}" \
	-dv-rows "${BENCH_DV:-10000000}" \
	-changelog-rows "${BENCH_CHANGELOG:-10000000}" \
	-java-opts "${BENCH_JAVA_OPTS:-}" \
	-fleet-buckets "${BENCH_FLEET:-64}" \
	-fleet-rows "${BENCH_FLEET_ROWS:-2000000}" \
	"${s3_flag[@]}" \
	"${duck_flag[@]}" \
	-out "$out" \
	"$@"
