#!/usr/bin/env bash
# install-test-tools.sh — tools the tests run that are not Go modules:
#
#   promtool  Prometheus' rule checker (go test ./deploy checks deploy/alerts.yaml with it),
#             from the Debian package `prometheus`.
#
# A tool already on PATH is used as it is. Otherwise the binary is taken out of the Debian
# package (apt-get download + dpkg-deb -x, no root needed once the package lists exist) into
# ${XDG_CACHE_HOME:-$HOME/.cache}/compactd/bin, which the tests also look in: installing the
# package itself would enable and start a Prometheus server on systemd hosts.
#
#   bash scripts/install-test-tools.sh        # prints the directory to put on PATH
set -euo pipefail

BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/compactd/bin"

log() { echo "install-test-tools: $*" >&2; }

as_root() {
	if [[ "$(id -u)" == 0 ]]; then
		"$@"
	else
		sudo -n "$@"
	fi
}

# extract_deb PACKAGE PATH-IN-PACKAGE NAME: copies one file of a Debian package into BIN_DIR.
extract_deb() {
	local pkg=$1 path=$2 name=$3 tmp start=$SECONDS
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	log "extracting $path from the Debian package $pkg into $BIN_DIR (first time only)"
	if ! (cd "$tmp" && apt-get download -qq "$pkg" >/dev/null 2>&1); then
		# No package lists yet (a fresh machine): fetch them.
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
		(cd "$tmp" && apt-get download -qq "$pkg" >/dev/null)
	fi
	dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/root"
	mkdir -p "$BIN_DIR"
	install -m 0755 "$tmp/root$path" "$BIN_DIR/$name"
	log "$name from $pkg in $((SECONDS - start)) s"
}

if command -v promtool >/dev/null 2>&1; then
	:
elif [[ -x "$BIN_DIR/promtool" ]]; then
	:
else
	extract_deb prometheus /usr/bin/promtool promtool
fi
if command -v promtool >/dev/null 2>&1; then
	log "promtool: $(command -v promtool)"
else
	"$BIN_DIR/promtool" --version >/dev/null
	log "promtool: $BIN_DIR/promtool"
fi
echo "$BIN_DIR"
