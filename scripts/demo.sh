#!/usr/bin/env bash
# The README's first command: build the example warehouse with compactd's own
# writer (a partial-update wide table fed by three write-only writers), then
# inspect, plan, compact and scan it. Local filesystem, nothing to configure.
set -euo pipefail
cd "$(dirname "$0")/.."
wh=${1:-$PWD/.cache/example-warehouse}
bin=./bin/compactd
rm -rf "$wh"
mkdir -p "$wh"
# Bold command lines on a terminal only: piped output stays plain text.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
else
  step() { printf '\n$ %s\n' "$*"; }
fi

step compactd example "$wh"
$bin example "$wh"

step compactd inspect "$wh" shop.orders "(first bucket)"
$bin inspect "$wh" shop.orders > "$wh/.inspect"
sed -n '1,/^Buckets/p' "$wh/.inspect" | grep -v '^  [0-9][0-9]* *APPEND' | sed -n '1,16p'
echo "  ... $(grep -c APPEND "$wh/.inspect") APPEND snapshots from the three writers"
sed -n '/^Buckets/,/bucket 1:/p' "$wh/.inspect" | sed -n '2,7p'
echo "    ..."

step compactd plan "$wh" shop.orders
$bin plan "$wh" shop.orders

$bin scan "$wh" shop.orders | sort > "$wh/.rows-before"
step compactd compact "$wh" shop.orders
$bin compact "$wh" shop.orders

step compactd inspect "$wh" shop.orders "(buckets after compaction)"
$bin inspect "$wh" shop.orders > "$wh/.inspect"
sed -n '/^Buckets/,$p' "$wh/.inspect" | sed -n '1,10p'

step compactd scan "$wh" shop.orders "| head -5"
$bin scan "$wh" shop.orders > "$wh/.rows-after"
sed -n '1,5p' "$wh/.rows-after"
if sort "$wh/.rows-after" | cmp -s - "$wh/.rows-before"; then
  echo "rows before and after compaction are identical ($(wc -l < "$wh/.rows-before") rows)"
else
  echo "rows changed by compaction!" >&2
  exit 1
fi
