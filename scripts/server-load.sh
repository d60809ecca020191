#!/bin/bash
# server-load.sh - how many requests a second tilebench-server answers on this machine: the
# server started on 127.0.0.1 (a free port) with a temporary database, a realistic board loaded
# (--submissions N, default 50, of a recorded sweep, by --submitters K, default 5, each copy's
# medians and intervals slowed by its own factor from 0 to 10 %, so the ranking has an order and
# the figures reproduce each other; a faster copy would break the peak of a real H100 sweep,
# which runs at up to 99 % of it), then bounded wrk runs against
#   leaderboard_json  GET /api/v1/leaderboards/SET/GPU
#   leaderboard_html  GET /leaderboards/SET/GPU
#   submissions       POST /api/v1/submissions, each request its own Idempotency-Key, so each
#                     one is parsed, checked and stored (the server runs with --rate 1000000)
# and one machine-readable line per endpoint:
#   server-load: endpoint=leaderboard_json engine=sqlite wrk=-t2,-c16,-d5s requests=N rps=R p50_ms=.. p90_ms=..
#                p99_ms=.. max_ms=.. non_2xx=N socket_errors=N
# The sweep: --db FILE, default tests/data/h100-small.db (the shipped variants on the H100, on
# the `gate` set); SET: --set, default gate. Loopback only; stops by itself (wrk's -d, then
# SIGTERM); everything lives in a temporary directory removed on exit.
# --engine sqlite (default: the server's own temporary SQLite file) or postgres (a throwaway
# PostgreSQL cluster on a Unix socket, started by tests/with_postgres.sh with fsync on, as
# SQLite's commits are; the server's --db is a database of it). --processes 2 (postgres only)
# runs two server processes on that one database and two wrk side by side, each with half the
# threads and connections against its own process (a load balancer's even split); each wrk's
# line is printed with process=1 and 2, then one line with process=all and the summed requests
# and rate (its latencies are the worse of the two).
#   scripts/server-load.sh [--duration S] [--threads T] [--connections C] [--submissions N]
#                          [--submitters K] [--db FILE] [--set NAME] [--server BINARY]
#                          [--min-read-rps N] [--engine sqlite|postgres] [--processes 1|2]
# --server BINARY: measure another build of tilebench-server (an older one, to compare).
# --min-read-rps N: exit 1 when leaderboard_json or leaderboard_html answer fewer than N
# requests a second, or when any request got a non-2xx answer (the CTest server_load uses
# 1000: issue 18's floor on the CI machine's two cores). Needs wrk (Debian's package;
# scripts/setup.sh installs it), curl, python3, a build (TB_BUILD, default build/). Exit 0 ok,
# 1 below the floor or errors, 2 usage or environment, 77 no wrk (a CTest skip).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${TB_BUILD:-$src/build}
duration=5 threads=2 connections=16 floor=0 subs=50 submitters=5 sweep=$src/tests/data/h100-small.db set=gate S=
engine=sqlite processes=1
args=("$@")
while [ $# -gt 0 ]; do
    case $1 in
        --duration) duration=$2; shift 2;;
        --threads) threads=$2; shift 2;;
        --connections) connections=$2; shift 2;;
        --submissions) subs=$2; shift 2;;
        --submitters) submitters=$2; shift 2;;
        --db) sweep=$2; shift 2;;
        --set) set=$2; shift 2;;
        --server) S=$2; shift 2;;
        --min-read-rps) floor=$2; shift 2;;
        --engine) engine=$2; shift 2;;
        --processes) processes=$2; shift 2;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0;;
        *) echo "server-load: error: unknown argument '$1' (see --help)" >&2; exit 2;;
    esac
done
for v in "$duration" "$threads" "$connections" "$floor" "$subs" "$submitters"; do
    [[ $v =~ ^[0-9]+$ ]] || { echo "server-load: error: '$v' is not a whole number" >&2; exit 2; }
done
[ "$submitters" -ge 1 ] && [ "$submitters" -le 100 ] || { echo "server-load: error: --submitters from 1 to 100" >&2; exit 2; }
[[ $set =~ ^[A-Za-z0-9_-]+$ ]] || { echo "server-load: error: '$set' is not a shape set's name" >&2; exit 2; }
case $engine in sqlite|postgres) ;; *) echo "server-load: error: --engine sqlite or postgres" >&2; exit 2;; esac
case $processes in 1) ;; 2) [ $engine = postgres ] || { echo "server-load: error: --processes 2 needs --engine postgres (an SQLite file is one process's)" >&2; exit 2; }
                            [ $((threads % 2)) = 0 ] && [ $((connections % 2)) = 0 ] || { echo "server-load: error: --processes 2 splits --threads and --connections: make them even" >&2; exit 2; };;
                   *) echo "server-load: error: --processes 1 or 2" >&2; exit 2;; esac
# postgres: this script again, beside a throwaway cluster (fsync on: commits as durable as SQLite's)
if [ $engine = postgres ] && [ -z "${TB_PG:-}" ]; then
    TB_PG_FSYNC=on exec bash "$src/tests/with_postgres.sh" bash "$0" "${args[@]}"
fi
command -v wrk >/dev/null || { echo "server-load: skipped: no wrk (apt-get install wrk; scripts/setup.sh does)" >&2; exit 77; }
command -v curl >/dev/null || { echo "server-load: error: no curl" >&2; exit 2; }
PY=$(command -v python3) || { echo "server-load: error: no python3" >&2; exit 2; }
S=${S:-$build/bin/tilebench-server}
for f in "$S" "$build/bin/tilebench"; do
    [ -x "$f" ] || { echo "server-load: error: no '$f' (build first, or set TB_BUILD)" >&2; exit 2; }
done
[ -r "$sweep" ] || { echo "server-load: error: cannot read the sweep '$sweep'" >&2; exit 2; }

tmp=$(mktemp -d); pid=; pid2=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$pid2" ] && kill "$pid2" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
cp "$sweep" sweep.db && "$build/bin/tilebench" export --db sweep.db --format submission --output doc.json \
    || { echo "server-load: error: cannot export a submission from '$sweep'" >&2; exit 2; }
# the copies: copy i's medians and intervals times 1 + ((7 i) mod 11) / 100, its own git_sha
"$PY" - "$subs" <<'PYEOF' || { echo "server-load: error: cannot make the copies" >&2; exit 2; }
import json, sys
d = json.load(open("doc.json"))
for i in range(1, int(sys.argv[1]) + 1):
    c = json.loads(json.dumps(d))
    f = 1 + (7 * i) % 11 / 100
    c["tilebench"]["git_sha"] = "%040x" % i
    for r in c["results"]:
        if r["timing"]:
            for k in ("median_ms", "median_lo_ms", "median_hi_ms"):
                r["timing"][k] *= f
    json.dump(c, open("copy%d.json" % i, "w"))
open("gpu.txt", "w").write(d["environment"]["gpu_name"])
PYEOF
gpu=$(cat gpu.txt)
gpu_url=$("$PY" -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$gpu")
if [ $engine = postgres ]; then db=$("$TB_PG/createdb" load) || exit 2; else db=s.db; fi
for k in $(seq 1 "$submitters"); do
    tok[$k]=$("$S" token add "load$k" --db "$db") || exit 2
done
# setpriv --pdeathsig: the server goes with this script even when it is killed (a CTest timeout)
guard=(); setpriv --help 2>/dev/null | grep -q pdeathsig && guard=(setpriv --pdeathsig TERM)
start() {   # start N: server process N on the database; its URL in U[N]
    "${guard[@]}" "$S" --port 0 --db "$db" --rate 1000000 --shapes-dir "$src/results/shapes" > s$1.out 2> s$1.log &
    [ "$1" = 1 ] && pid=$! || pid2=$!
    for _ in $(seq 1 100); do grep -q "listening on" s$1.out 2>/dev/null && break; sleep 0.05; done
    local port; port=$(sed -n 's/^listening on 127.0.0.1://p' s$1.out)
    [ -n "$port" ] || { echo "server-load: error: the server did not start: $(cat s$1.log)" >&2; exit 2; }
    U[$1]=http://127.0.0.1:$port
}
start 1
[ "$processes" = 2 ] && start 2
U=${U[1]}
post_tok=${tok[1]}   # the token the submissions endpoint posts with

# the board a leaderboard read ranks
for i in $(seq 1 "$subs"); do
    k=$(( (i - 1) % submitters + 1 ))
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer ${tok[$k]}" \
           --data-binary @copy$i.json "$U/api/v1/submissions")
    [ "$code" = 201 ] || { echo "server-load: error: seeding submission $i got HTTP $code" >&2; exit 2; }
done

# one Lua script for every run: the request (from env), and done() printing the line
cat > load.lua <<'LUA'
local endpoint, method, path = os.getenv("LOAD_ENDPOINT"), os.getenv("LOAD_METHOD"), os.getenv("LOAD_PATH")
local body, token, prefix = nil, os.getenv("LOAD_TOKEN"), os.getenv("LOAD_PREFIX") or "load"
if method == "POST" then
    local f = assert(io.open(os.getenv("LOAD_BODY"), "rb")); body = f:read("*a"); f:close()
end
local threads, n = {}, 0
thread_no = 0   -- a global: setup() sets it in each thread
function setup(thread)
    thread:set("thread_no", #threads)
    table.insert(threads, thread)
end
function request()
    if method ~= "POST" then return wrk.format("GET", path) end
    n = n + 1   -- a new key each time: every request is a new submission, never a replay
    return wrk.format("POST", path, { ["Authorization"] = "Bearer " .. token,
        ["Content-Type"] = "application/json",
        ["Idempotency-Key"] = string.format("%s-%d-%d", prefix, thread_no, n) }, body)
end
function done(s, latency, requests)
    local e = s.errors
    local ms = function(us) return string.format("%.3f", us / 1000) end
    io.write(string.format("server-load: endpoint=%s wrk=%s requests=%d rps=%.1f p50_ms=%s p90_ms=%s p99_ms=%s max_ms=%s non_2xx=%d socket_errors=%d\n",
        endpoint, os.getenv("LOAD_WRK"), s.requests, s.requests / (s.duration / 1e6),
        ms(latency:percentile(50)), ms(latency:percentile(90)), ms(latency:percentile(99)), ms(latency.max),
        e.status, e.connect + e.read + e.write + e.timeout))
end
LUA

params="-t$threads -c$connections -d${duration}s"
[ "$processes" = 2 ] && params="-t$((threads / 2)) -c$((connections / 2)) -d${duration}s"
bad=0
measure() {   # measure ENDPOINT METHOD PATH [BODY]
    local line
    if [ "$processes" = 2 ]; then   # one wrk per process, side by side, then the sum
        local w=()
        for n in 1 2; do
            LOAD_ENDPOINT="$1 process=$n engine=$engine" LOAD_PREFIX=load$n LOAD_METHOD=$2 LOAD_PATH=$3 LOAD_BODY=${4:-} LOAD_TOKEN=$post_tok \
                LOAD_WRK=${params// /,} wrk $params --timeout 5s --latency -s load.lua "${U[$n]}$3" > "wrk-$1-$n.txt" 2>&1 & w+=($!)
        done
        wait "${w[@]}"
        cat "wrk-$1-1.txt" "wrk-$1-2.txt" | grep '^server-load: '
        line=$(cat "wrk-$1-1.txt" "wrk-$1-2.txt" | grep '^server-load: ' | awk -v e="$1" -v eng="$engine" '
            { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
              req += v["requests"]; rps += v["rps"]; n2 += v["non_2xx"]; se += v["socket_errors"]; w = v["wrk"]; k++
              split("p50_ms p90_ms p99_ms max_ms", ps, " ")
              for (j in ps) if (v[ps[j]] + 0 > m[ps[j]] + 0) m[ps[j]] = v[ps[j]] }
            END { if (k == 2) printf "server-load: endpoint=%s process=all engine=%s wrk=2x%s requests=%d rps=%.1f p50_ms=%s p90_ms=%s p99_ms=%s max_ms=%s non_2xx=%d socket_errors=%d\n",
                  e, eng, w, req, rps, m["p50_ms"], m["p90_ms"], m["p99_ms"], m["max_ms"], n2, se }')
    else
        LOAD_ENDPOINT="$1 engine=$engine" LOAD_METHOD=$2 LOAD_PATH=$3 LOAD_BODY=${4:-} LOAD_TOKEN=$post_tok LOAD_WRK=${params// /,} \
            wrk $params --timeout 5s --latency -s load.lua "$U$3" > "wrk-$1.txt" 2>&1
        line=$(grep '^server-load: ' "wrk-$1.txt")
    fi
    [ -n "$line" ] || { echo "server-load: error: wrk failed on $1: $(tail -3 "wrk-$1"*.txt)" >&2; bad=1; return; }
    echo "$line"
    local rps non2xx
    rps=$(sed -n 's/.* rps=\([0-9.]*\) .*/\1/p' <<<"$line"); non2xx=$(sed -n 's/.* non_2xx=\([0-9]*\) .*/\1/p' <<<"$line")
    if [ "$non2xx" != 0 ]; then echo "server-load: $1: $non2xx answers were not 2xx" >&2; bad=1; fi
    if [ "$floor" -gt 0 ] && [ "$1" != submissions ] && ! awk -v r="$rps" -v f="$floor" 'BEGIN { exit !(r >= f) }'; then
        echo "server-load: $1: $rps requests/s, below the floor of $floor" >&2; bad=1
    fi
}
json=/api/v1/leaderboards/$set/$gpu_url
[ "$(curl -s -o /dev/null -w '%{http_code}' "$U$json")" = 200 ] || { echo "server-load: error: $json does not answer 200" >&2; exit 2; }
measure leaderboard_json GET "$json"
html=/leaderboards/$set/$gpu_url
[ "$(curl -s -o page.html -w '%{http_code}' "$U$html")" = 200 ] || { echo "server-load: error: $html does not answer 200" >&2; exit 2; }
measure leaderboard_html GET "$html"
measure submissions POST /api/v1/submissions "$tmp/copy1.json"
stored=$(curl -s "$U/api/v1/leaderboards")
echo "server-load: machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); loopback; engine $engine, $processes server process(es); board $set on $gpu: $subs submissions by $submitters submitters seeded ($(wc -c < page.html) bytes of page); leaderboards after: $stored" | cut -c1-400
for p in $pid $pid2; do
    kill -TERM "$p"; wait "$p"; rc=$?
    [ $rc = 0 ] || { echo "server-load: the server exited $rc on SIGTERM" >&2; bad=1; }
done
pid=; pid2=
exit $bad
