#!/usr/bin/env bash
# chromium.sh install|env|path — headless Chromium for the /status page test
# (sched/statuspage_test.go).
#
# The browser is Debian's `chromium` package (with fonts-liberation, so that the
# screenshot has text to show), installed with apt-get when no
# `chromium` is on PATH (as root, or through `sudo -n`); nothing is
# downloaded outside the distribution's packages.
#
#   bash scripts/chromium.sh install           # idempotent: an installed one is left alone
#   eval "$(bash scripts/chromium.sh env)"     # exports COMPACTD_CHROMIUM=<binary>
#   bash scripts/chromium.sh path              # prints the binary, fails if none
#
# The test reads COMPACTD_CHROMIUM (else looks `chromium` up on PATH); with
# COMPACTD_REQUIRE_CHROMIUM=1 (set by scripts/test.sh) a missing browser
# fails it instead of skipping it.
set -euo pipefail

log() { echo "chromium: $*" >&2; }
die() {
	log "$*"
	exit 1
}

as_root() {
	if [[ "$(id -u)" == 0 ]]; then
		"$@"
	else
		sudo -n "$@"
	fi
}

find_chromium() {
	local c
	for c in "${COMPACTD_CHROMIUM:-}" chromium /usr/bin/chromium; do
		[[ -n "$c" ]] || continue
		if command -v "$c" >/dev/null 2>&1; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

install_cmd() {
	local bin
	if bin=$(find_chromium); then
		log "already installed: $bin ($("$bin" --version 2>/dev/null || echo '?'))"
		return
	fi
	log "installing Debian's chromium with apt-get (first time only)"
	local start=$SECONDS
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-o DPkg::Lock::Timeout=300 chromium fonts-liberation >/dev/null
	bin=$(find_chromium) || die "apt-get installed chromium but no chromium binary is on PATH"
	log "installed $("$bin" --version 2>/dev/null || echo "$bin") in $((SECONDS - start)) s"
}

case "${1:-}" in
install) install_cmd ;;
env)
	bin=$(find_chromium) || die "no chromium: run bash scripts/chromium.sh install"
	echo "export COMPACTD_CHROMIUM=$(printf %q "$bin")"
	;;
path) find_chromium || die "no chromium: run bash scripts/chromium.sh install" ;;
*)
	echo "usage: $0 install|env|path" >&2
	exit 2
	;;
esac
