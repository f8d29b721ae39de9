#!/usr/bin/env bash
# s3-server.sh start|stop|env|status — a loopback S3-compatible server for tests.
#
# Runs versitygw (Apache-2.0) with its posix backend on 127.0.0.1 on a free
# port (or $COMPACTD_S3_PORT), with fixed test credentials, and creates the
# test bucket. The binary is built once with `go install` and cached in
# ${XDG_CACHE_HOME:-$HOME/.cache}/compactd/bin (the first build takes a few
# minutes). State (pid, env, data) is the checkout's own, in
# $COMPACTD_S3_STATE_DIR (default <checkout>/.cache/s3-server): `make test` in
# two checkouts runs two servers, and neither stops the other's.
#
#   eval "$(scripts/s3-server.sh start)"   # start (idempotent) and export the env
#   scripts/s3-server.sh env               # print the exports of a running server
#   scripts/s3-server.sh stop
set -euo pipefail

VERSITYGW_VERSION=v1.8.0
BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/compactd/bin"
BIN="$BIN_DIR/versitygw"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE_DIR="${COMPACTD_S3_STATE_DIR:-$ROOT/.cache/s3-server}"
PORT="${COMPACTD_S3_PORT:-}" # empty: a free port, chosen at start
PID_FILE="$STATE_DIR/versitygw.pid"
ENV_FILE="$STATE_DIR/env"
LOG_FILE="$STATE_DIR/versitygw.log"

# Test-only credentials: the server listens on loopback only.
ACCESS_KEY=compactdtest
SECRET_KEY=compactdtestsecret
REGION=us-east-1
BUCKET=compactd-test

log() { echo "s3-server: $*" >&2; }

install_bin() {
	# go install embeds no version in this binary: a stamp file records it.
	if [[ -x "$BIN" && "$(cat "$BIN.version" 2>/dev/null)" == "$VERSITYGW_VERSION" ]]; then
		return
	fi
	mkdir -p "$BIN_DIR"
	log "building versitygw $VERSITYGW_VERSION into $BIN_DIR (first time only, a few minutes)"
	local start=$SECONDS
	# Build outside any module so the project's go.mod is not consulted.
	(cd "$BIN_DIR" && GOBIN="$BIN_DIR" GOFLAGS=-buildvcs=false \
		go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION")
	echo "$VERSITYGW_VERSION" >"$BIN.version"
	log "built in $((SECONDS - start)) s"
}

# The pid file's process is ours only if it serves this state directory (a
# pid reused after a reboot is not stopped).
PID_MATCH="$STATE_DIR/data"

# running, stop, env_cmd and the command dispatch.
# shellcheck source=scripts/server-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"

http_code() {
	curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" 2>/dev/null || true
}

start() {
	if running && [[ -f "$ENV_FILE" ]]; then
		log "already running (pid $(cat "$PID_FILE"))"
		cat "$ENV_FILE"
		return
	fi
	install_bin
	rm -rf "$STATE_DIR"
	mkdir -p "$STATE_DIR/data" "$STATE_DIR/meta"
	local port pid code attempt
	for attempt in 1 2 3 4 5 6 7 8; do
		port=${PORT:-$((20000 + RANDOM % 40000))}
		# Occupied if something accepts a connection there.
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			if [[ -n "$PORT" ]]; then
				log "port $PORT (COMPACTD_S3_PORT) is taken"
				exit 1
			fi
			continue
		fi
		# --sidecar keeps object metadata in files, so the data directory
		# needs no extended-attribute support.
		"$BIN" --port "127.0.0.1:$port" --access "$ACCESS_KEY" --secret "$SECRET_KEY" \
			--region "$REGION" --quiet \
			posix --sidecar "$STATE_DIR/meta" "$STATE_DIR/data" </dev/null >"$LOG_FILE" 2>&1 &
		pid=$!
		for _ in $(seq 1 100); do
			code=$(http_code "http://127.0.0.1:$port/")
			if [[ "$code" != "000" && -n "$code" ]]; then
				break
			fi
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null && [[ "$code" != "000" ]]; then
			break
		fi
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pid=""
		log "attempt $attempt on port $port failed: $(tail -n 3 "$LOG_FILE" 2>/dev/null)"
		if [[ -n "$PORT" ]]; then
			break
		fi
	done
	if [[ -z "${pid:-}" ]]; then
		log "could not start versitygw; log in $LOG_FILE"
		exit 1
	fi
	echo "$pid" >"$PID_FILE"
	local endpoint="http://127.0.0.1:$port"
	# CreateBucket, signed by curl's SigV4 support.
	code=$(curl -s -o "$STATE_DIR/create-bucket.out" -w '%{http_code}' -X PUT \
		--aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS_KEY:$SECRET_KEY" \
		-H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
		"$endpoint/$BUCKET")
	if [[ "$code" != "200" ]]; then
		log "create bucket $BUCKET: HTTP $code: $(cat "$STATE_DIR/create-bucket.out")"
		kill "$pid" || true
		exit 1
	fi
	cat >"$ENV_FILE" <<EOF
export COMPACTD_TEST_S3_ENDPOINT=$endpoint COMPACTD_TEST_S3_BUCKET=$BUCKET AWS_ACCESS_KEY_ID=$ACCESS_KEY AWS_SECRET_ACCESS_KEY=$SECRET_KEY AWS_REGION=$REGION
EOF
	log "versitygw pid $pid listening on $endpoint, bucket $BUCKET, data in $STATE_DIR/data"
	cat "$ENV_FILE"
}

server_main "$@"
