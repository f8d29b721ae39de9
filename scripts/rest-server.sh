#!/usr/bin/env bash
# rest-server.sh start|stop|env|status — a loopback Paimon REST catalog server for tests.
#
# Runs Paimon's own REST catalog server (RESTCatalogServer from paimon-core's tests jar, through
# the interop oracle's rest-server verb) on 127.0.0.1:$COMPACTD_REST_PORT (default 38417) with a
# fixed test bearer token, its warehouse in a temporary directory. Needs the oracle built
# (bash interop/install.sh). State (pid, env, warehouse, log) lives in $COMPACTD_REST_STATE_DIR
# (default ${TMPDIR:-/tmp}/compactd-rest-$UID).
#
#   eval "$(scripts/rest-server.sh start)"   # start (idempotent) and export the env
#   scripts/rest-server.sh env               # print the exports of a running server
#   scripts/rest-server.sh stop
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAVA_TARGET="${COMPACTD_INTEROP_JAVA_TARGET:-$ROOT/interop/java/target}"
PORT="${COMPACTD_REST_PORT:-38417}"
STATE_DIR="${COMPACTD_REST_STATE_DIR:-${TMPDIR:-/tmp}/compactd-rest-$(id -u)}"
PID_FILE="$STATE_DIR/server.pid"
ENV_FILE="$STATE_DIR/env"
LOG_FILE="$STATE_DIR/server.log"
OUT_FILE="$STATE_DIR/server.out"

# Test-only credentials: the server listens on loopback only.
TOKEN=compactd-rest-test-token
CATALOG=compactd

log() { echo "rest-server: $*" >&2; }

# running, stop, env_cmd and the command dispatch.
# shellcheck source=scripts/server-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"

start() {
	if running && [[ -f "$ENV_FILE" ]]; then
		log "already running (pid $(cat "$PID_FILE"))"
		cat "$ENV_FILE"
		return
	fi
	if [[ ! -f "$JAVA_TARGET/classpath.txt" || ! -f "$JAVA_TARGET/classpath-rest.txt" ]]; then
		log "the interop oracle is not built ($JAVA_TARGET); run: bash interop/install.sh"
		exit 1
	fi
	if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
		log "port $PORT is taken (set COMPACTD_REST_PORT)"
		exit 1
	fi
	rm -rf "$STATE_DIR"
	mkdir -p "$STATE_DIR/warehouse"
	local cp pid
	cp="$JAVA_TARGET/classes:$(cat "$JAVA_TARGET/classpath.txt"):$(cat "$JAVA_TARGET/classpath-rest.txt")"
	java -cp "$cp" compactd.interop.Main rest-server --warehouse "$STATE_DIR/warehouse" \
		--port "$PORT" --token "$TOKEN" --catalog "$CATALOG" --serve-forever true \
		</dev/null >"$OUT_FILE" 2>"$LOG_FILE" &
	pid=$!
	echo "$pid" >"$PID_FILE"
	for _ in $(seq 1 300); do
		if grep -q '"__compactd_rest_ready":true' "$OUT_FILE" 2>/dev/null; then
			break
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			log "server exited: $(tail -n 5 "$LOG_FILE")"
			rm -f "$PID_FILE"
			exit 1
		fi
		sleep 0.1
	done
	if ! grep -q '"__compactd_rest_ready":true' "$OUT_FILE"; then
		log "server did not get ready in 30 s; log in $LOG_FILE"
		kill "$pid" 2>/dev/null || true
		rm -f "$PID_FILE"
		exit 1
	fi
	cat >"$ENV_FILE" <<EOT
export COMPACTD_REST_URI=http://127.0.0.1:$PORT COMPACTD_REST_TOKEN=$TOKEN COMPACTD_REST_WAREHOUSE=$CATALOG
EOT
	log "RESTCatalogServer pid $pid on http://127.0.0.1:$PORT, catalog $CATALOG, data in $STATE_DIR/warehouse"
	cat "$ENV_FILE"
}

server_main "$@"
