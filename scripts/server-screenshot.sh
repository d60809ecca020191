#!/bin/bash
# server-screenshot.sh - a leaderboard page of a recorded sweep as a PNG, the way the README shows
# it: tilebench-server started on 127.0.0.1 (a free port) with a temporary database, the sweep
# submitted with the real client (`tilebench submit`) by two submitters, alice and bob, then
# headless Chromium's screenshot of /leaderboards/SET/GPU.
#   scripts/server-screenshot.sh [--db FILE] [--set NAME] [--window-size W,H] [--output FILE]
# --db: the sweep (default tests/data/h100-small.db, the shipped variants on an H100 on the
# `gate` set, 2026-11-25); --set: the board's shape set (default gate); --window-size:
# Chromium's (default 1200,1250: the page of two submissions, whole); --output: the PNG
# (default docs/img/leaderboard-h100.png). Needs chromium (scripts/setup.sh installs it), curl,
# python3 and a build (TB_BUILD, default build/). Exit 0 with the PNG written, 1 when a step
# failed, 2 usage or environment.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${TB_BUILD:-$src/build}
sweep=$src/tests/data/h100-small.db set=gate size=1200,1250 out=$src/docs/img/leaderboard-h100.png
while [ $# -gt 0 ]; do
    case $1 in
        --db) sweep=$2; shift 2;;
        --set) set=$2; shift 2;;
        --window-size) size=$2; shift 2;;
        --output) out=$2; shift 2;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0;;
        *) echo "server-screenshot: error: unknown argument '$1' (see --help)" >&2; exit 2;;
    esac
done
[[ $set =~ ^[A-Za-z0-9_-]+$ ]] || { echo "server-screenshot: error: '$set' is not a shape set's name" >&2; exit 2; }
[[ $size =~ ^[0-9]+,[0-9]+$ ]] || { echo "server-screenshot: error: --window-size W,H" >&2; exit 2; }
chrome=$(command -v chromium) || { echo "server-screenshot: error: no chromium (scripts/setup.sh installs it)" >&2; exit 2; }
PY=$(command -v python3) || { echo "server-screenshot: error: no python3" >&2; exit 2; }
S=$build/bin/tilebench-server
for f in "$S" "$build/bin/tilebench"; do
    [ -x "$f" ] || { echo "server-screenshot: error: no '$f' (build first, or set TB_BUILD)" >&2; exit 2; }
done
[ -r "$sweep" ] || { echo "server-screenshot: error: cannot read the sweep '$sweep'" >&2; exit 2; }
case $out in /*) ;; *) out=$PWD/$out;; esac

tmp=$(mktemp -d); pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
cp "$sweep" sweep.db || exit 2
for who in alice bob; do
    t=$("$S" token add $who --db s.db) || exit 1
    eval "tok_$who=$t"
done
guard=(); setpriv --help 2>/dev/null | grep -q pdeathsig && guard=(setpriv --pdeathsig TERM)
"${guard[@]}" "$S" --port 0 --db s.db --rate 0 --shapes-dir "$src/results/shapes" > s.out 2> s.log & pid=$!
for _ in $(seq 1 100); do grep -q "listening on" s.out 2>/dev/null && break; sleep 0.05; done
port=$(sed -n 's/^listening on 127.0.0.1://p' s.out)
[ -n "$port" ] || { echo "server-screenshot: error: the server did not start: $(cat s.log)" >&2; exit 1; }
U=http://127.0.0.1:$port
TILEBENCH_TOKEN=$tok_alice "$build/bin/tilebench" submit --server "$U" --db sweep.db >&2 || exit 1
TILEBENCH_TOKEN=$tok_bob "$build/bin/tilebench" submit --server "$U" --db sweep.db >&2 || exit 1
gpu=$(curl -s "$U/api/v1/leaderboards" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)[0]["gpu"])') || exit 1
gpu_url=$("$PY" -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$gpu")
page=$U/leaderboards/$set/$gpu_url
code=$(curl -s -o /dev/null -w '%{http_code}' "$page")
[ "$code" = 200 ] || { echo "server-screenshot: error: $page answers HTTP $code" >&2; exit 1; }
timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$tmp/ud" \
    --hide-scrollbars --window-size="$size" --screenshot="$tmp/page.png" "$page" > chrome.log 2>&1
[ -s page.png ] || { echo "server-screenshot: error: no screenshot: $(tail -3 chrome.log)" >&2; exit 1; }
mkdir -p "$(dirname "$out")" && cp page.png "$out" || exit 1
echo "server-screenshot: $out ($(wc -c < "$out") bytes): $set on $gpu, submitted by alice and bob"
