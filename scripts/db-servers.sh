#!/usr/bin/env bash
# db-servers.sh start|stop|env|status|reset [pg|mariadb] — loopback PostgreSQL
# and MariaDB servers for the JDBC-catalog tests.
#
# Each server is the Debian package's binary (installed with apt-get when
# missing: postgresql, mariadb-server), run directly — no systemd, no system
# cluster — on 127.0.0.1 only, on fixed uncommon ports (COMPACTD_PG_PORT,
# default 55432; COMPACTD_MYSQL_PORT, default 53306), with a private data
# directory and a database `paimon` owned by user compactd / password compactd.
# Unix sockets live in a 0700 directory of the server's user.
#
# Data directories persist (warm starts skip initialisation) under
# $COMPACTD_DB_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/compactd/db).
# PostgreSQL refuses to run as root: as root it runs as the `postgres` user
# the package creates, and because that user cannot enter a 0700 $HOME its
# data then lives in /var/tmp/compactd-db-pg instead (logged).
#
#   bash scripts/db-servers.sh start          # both (idempotent: running ones are left alone)
#   eval "$(bash scripts/db-servers.sh env)"  # COMPACTD_PG_* / COMPACTD_MYSQL_* exports
#   bash scripts/db-servers.sh stop           # stops both, keeps the data
#   bash scripts/db-servers.sh reset          # stops both and deletes their data
#
# Measured on the 2-core dev machine (Debian bookworm, PostgreSQL 15.18,
# MariaDB 10.11.19), loaded by other jobs:
#   apt-get update + install mariadb-server: 16 s (postgresql was preinstalled)
#   cold start of both (initdb / mariadb-install-db + users): 1.8 s
#   (fsync is off: test data only)
#   warm start (data kept): 0.5 s;  start when running: 0.05 s
set -euo pipefail

PG_PORT="${COMPACTD_PG_PORT:-55432}"
MY_PORT="${COMPACTD_MYSQL_PORT:-53306}"
DB_DIR="${COMPACTD_DB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/compactd/db}"
# Test-only credentials: both servers listen on loopback only.
DB_USER=compactd
DB_PASS=compactd
DB_NAME=paimon

log() { echo "db-servers: $*" >&2; }
die() {
	log "$*"
	exit 1
}

is_root() { [[ "$(id -u)" == 0 ]]; }

as_root() {
	if is_root; then
		"$@"
	else
		sudo -n "$@"
	fi
}

apt_install() {
	log "installing $* with apt-get (first time only)"
	local start=$SECONDS
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$@" >/dev/null
	log "installed $* in $((SECONDS - start)) s"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ---------------------------------------------------------------- PostgreSQL

pg_bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[[ -n "$d" && -x "$d/postgres" ]] && echo "$d"
}

pg_user() { if is_root; then echo postgres; else id -un; fi; }

# pg_run runs a PostgreSQL program as the server's user, from / (the
# postgres user may not be able to enter the current directory).
pg_run() {
	if is_root; then
		(cd / && runuser -u postgres -- "$@")
	else
		(cd / && "$@")
	fi
}

pg_dir() {
	if [[ -n "${COMPACTD_PG_DIR:-}" ]]; then
		echo "$COMPACTD_PG_DIR"
	elif is_root && ! runuser -u postgres -- test -x "$HOME" 2>/dev/null; then
		echo /var/tmp/compactd-db-pg
	else
		echo "$DB_DIR/pg"
	fi
}

pg_running() {
	local bin dir
	bin=$(pg_bindir) || return 1
	dir=$(pg_dir)
	[[ -f "$dir/data/postmaster.pid" ]] && pg_run "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

pg_psql() {
	local bin dir
	bin=$(pg_bindir)
	dir=$(pg_dir)
	pg_run "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/run" -p "$PG_PORT" -U postgres -d postgres "$@"
}

pg_start() {
	if pg_running; then
		log "postgres already running on 127.0.0.1:$PG_PORT"
		return
	fi
	local bin dir
	if ! bin=$(pg_bindir); then
		apt_install postgresql
		bin=$(pg_bindir) || die "postgresql installed but no /usr/lib/postgresql/*/bin/postgres"
	fi
	dir=$(pg_dir)
	if port_open "$PG_PORT"; then
		die "127.0.0.1:$PG_PORT is taken by another process; set COMPACTD_PG_PORT"
	fi
	mkdir -p "$dir"
	is_root && chown "$(pg_user)" "$dir"
	pg_run mkdir -p "$dir/run"
	pg_run chmod 0700 "$dir" "$dir/run"
	if [[ ! -f "$dir/data/PG_VERSION" ]]; then
		log "initialising a PostgreSQL cluster in $dir/data"
		pg_run rm -rf "$dir/data"
		# Local (socket) connections trust the server's own user only: the
		# socket directory is 0700. TCP needs the password.
		pg_run "$bin/initdb" -D "$dir/data" -U postgres -E UTF8 --no-locale \
			--auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log" 2>&1 ||
			die "initdb failed: $(tail -n 5 "$dir/initdb.log")"
	fi
	pg_run "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories=$dir/run -c unix_socket_permissions=0700 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
		start >/dev/null || die "postgres did not start: $(tail -n 5 "$dir/postgres.log")"
	pg_psql <<EOF
SELECT 'CREATE ROLE $DB_USER LOGIN PASSWORD ''$DB_PASS''' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER')
\gexec
SELECT 'CREATE DATABASE $DB_NAME OWNER $DB_USER' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DB_NAME')
\gexec
EOF
	pg_run "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 30 || die "postgres not ready on 127.0.0.1:$PG_PORT"
	log "postgres $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT, data in $dir/data"
}

pg_stop() {
	if pg_running; then
		pg_run "$(pg_bindir)/pg_ctl" -D "$(pg_dir)/data" -m fast -w stop >/dev/null
		log "postgres stopped"
	else
		log "postgres not running"
	fi
}

# ------------------------------------------------------------------- MariaDB

my_dir() { echo "${COMPACTD_MYSQL_DIR:-$DB_DIR/mariadb}"; }

my_running() {
	local pidf
	pidf="$(my_dir)/run/mariadbd.pid"
	[[ -f "$pidf" ]] && kill -0 "$(cat "$pidf")" 2>/dev/null
}

my_client() {
	# mariadb-install-db gives root and the installing OS user unix_socket
	# accounts: connect over the private socket as ourselves.
	mariadb --no-defaults -S "$(my_dir)/run/mysqld.sock" -u "$(id -un)" "$@"
}

my_start() {
	if my_running; then
		log "mariadb already running on 127.0.0.1:$MY_PORT"
		return
	fi
	if ! command -v mariadbd >/dev/null 2>&1 && [[ ! -x /usr/sbin/mariadbd ]]; then
		apt_install mariadb-server
	fi
	local bin dir me pid
	bin=$(command -v mariadbd || echo /usr/sbin/mariadbd)
	dir=$(my_dir)
	me=$(id -un)
	if port_open "$MY_PORT"; then
		die "127.0.0.1:$MY_PORT is taken by another process; set COMPACTD_MYSQL_PORT"
	fi
	mkdir -p "$dir/run"
	chmod 0700 "$dir" "$dir/run"
	if [[ ! -d "$dir/data/mysql" ]]; then
		log "initialising a MariaDB data directory in $dir/data"
		rm -rf "$dir/data"
		mariadb-install-db --no-defaults --datadir="$dir/data" --user="$me" \
			--auth-root-authentication-method=socket --skip-test-db >"$dir/install-db.log" 2>&1 ||
			die "mariadb-install-db failed: $(tail -n 5 "$dir/install-db.log")"
	fi
	rm -f "$dir/run/mariadbd.pid"
	# setsid: the server outlives this script and the test run's shell.
	setsid "$bin" --no-defaults --datadir="$dir/data" --user="$me" \
		--bind-address=127.0.0.1 --port="$MY_PORT" --skip-name-resolve \
		--socket="$dir/run/mysqld.sock" --pid-file="$dir/run/mariadbd.pid" \
		--log-error="$dir/mariadb.log" --innodb-buffer-pool-size=64M \
		--innodb-flush-log-at-trx-commit=2 </dev/null >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1 300); do
		if my_client -e 'SELECT 1' >/dev/null 2>&1; then
			break
		fi
		kill -0 "$pid" 2>/dev/null || die "mariadbd exited: $(tail -n 5 "$dir/mariadb.log")"
		sleep 0.1
	done
	my_client -e 'SELECT 1' >/dev/null 2>&1 || die "mariadbd not ready after 30 s: $(tail -n 5 "$dir/mariadb.log")"
	# With skip-name-resolve a TCP client from 127.0.0.1 matches '%' (and
	# '127.0.0.1'), never 'localhost'.
	my_client <<EOF
CREATE USER IF NOT EXISTS '$DB_USER'@'%' IDENTIFIED BY '$DB_PASS';
CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
CREATE DATABASE IF NOT EXISTS $DB_NAME;
GRANT ALL PRIVILEGES ON $DB_NAME.* TO '$DB_USER'@'%';
GRANT ALL PRIVILEGES ON $DB_NAME.* TO '$DB_USER'@'127.0.0.1';
EOF
	log "mariadb $("$bin" --version | awk '{print $3}') on 127.0.0.1:$MY_PORT, data in $dir/data"
}

my_stop() {
	if my_running; then
		local pid
		pid=$(cat "$(my_dir)/run/mariadbd.pid")
		kill "$pid"
		for _ in $(seq 1 300); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && die "mariadbd pid $pid did not stop"
		log "mariadb stopped"
	else
		log "mariadb not running"
	fi
}

# ---------------------------------------------------------------------------

env_cmd() {
	local ok=1
	if [[ "$want_pg" == 1 ]] && ! pg_running; then
		log "postgres not running; use: $0 start"
		ok=0
	fi
	if [[ "$want_my" == 1 ]] && ! my_running; then
		log "mariadb not running; use: $0 start"
		ok=0
	fi
	[[ "$ok" == 1 ]] || exit 1
	if [[ "$want_pg" == 1 ]]; then
		cat <<EOF
export COMPACTD_PG_DSN='postgres://$DB_USER:$DB_PASS@127.0.0.1:$PG_PORT/$DB_NAME' COMPACTD_PG_JDBC='jdbc:postgresql://127.0.0.1:$PG_PORT/$DB_NAME' COMPACTD_PG_USER=$DB_USER COMPACTD_PG_PASSWORD=$DB_PASS
EOF
	fi
	if [[ "$want_my" == 1 ]]; then
		cat <<EOF
export COMPACTD_MYSQL_DSN='$DB_USER:$DB_PASS@tcp(127.0.0.1:$MY_PORT)/$DB_NAME' COMPACTD_MYSQL_JDBC='jdbc:mysql://127.0.0.1:$MY_PORT/$DB_NAME' COMPACTD_MYSQL_USER=$DB_USER COMPACTD_MYSQL_PASSWORD=$DB_PASS
EOF
	fi
}

want_pg=1
want_my=1
case "${2:-}" in
"") ;;
pg | postgres | postgresql) want_my=0 ;;
mariadb | mysql) want_pg=0 ;;
*)
	echo "usage: $0 start|stop|env|status|reset [pg|mariadb]" >&2
	exit 2
	;;
esac

case "${1:-}" in
start)
	[[ "$want_pg" == 1 ]] && pg_start
	[[ "$want_my" == 1 ]] && my_start
	env_cmd
	;;
stop)
	[[ "$want_pg" == 1 ]] && pg_stop
	[[ "$want_my" == 1 ]] && my_stop
	true
	;;
reset)
	if [[ "$want_pg" == 1 ]]; then
		pg_stop
		rm -rf "$(pg_dir)"
	fi
	if [[ "$want_my" == 1 ]]; then
		my_stop
		rm -rf "$(my_dir)"
	fi
	;;
env) env_cmd ;;
status)
	rc=0
	if [[ "$want_pg" == 1 ]]; then
		if pg_running; then log "postgres running on 127.0.0.1:$PG_PORT"; else log "postgres not running"; rc=1; fi
	fi
	if [[ "$want_my" == 1 ]]; then
		if my_running; then log "mariadb running on 127.0.0.1:$MY_PORT"; else log "mariadb not running"; rc=1; fi
	fi
	exit $rc
	;;
*)
	echo "usage: $0 start|stop|env|status|reset [pg|mariadb]" >&2
	exit 2
	;;
esac
