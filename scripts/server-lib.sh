# server-lib.sh — what the loopback test servers (s3-server.sh,
# rest-server.sh) share: a background process with a pid file, an env file
# of export lines, and the start|stop|env|status commands. The sourcing
# script sets PID_FILE, ENV_FILE and STATE_DIR (and may set PID_MATCH, a
# string its server's command line contains), defines log() and start(),
# and ends with: server_main "$@"

running() {
	[[ -f "$PID_FILE" ]] || return 1
	local pid
	pid=$(cat "$PID_FILE")
	kill -0 "$pid" 2>/dev/null || return 1
	# With PID_MATCH set, the process must name it on its command line: a
	# pid the system reused for another program is not ours to stop.
	[[ -z "${PID_MATCH:-}" ]] && return 0
	local cmdline
	cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	[[ "$cmdline" == *"$PID_MATCH"* ]]
}

stop() {
	if running; then
		local pid
		pid=$(cat "$PID_FILE")
		kill "$pid"
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		log "stopped pid $pid"
	else
		log "not running"
	fi
	rm -rf "$STATE_DIR"
}

env_cmd() {
	if ! running || [[ ! -f "$ENV_FILE" ]]; then
		log "not running; use: $0 start"
		exit 1
	fi
	cat "$ENV_FILE"
}

server_main() {
	case "${1:-}" in
	start) start ;;
	stop) stop ;;
	env) env_cmd ;;
	status) if running; then log "running (pid $(cat "$PID_FILE"))"; else log "not running"; exit 1; fi ;;
	*)
		echo "usage: $0 start|stop|env|status" >&2
		exit 2
		;;
	esac
}
