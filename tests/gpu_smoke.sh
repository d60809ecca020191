#!/bin/bash
# gpu_smoke.sh - the default sweep (every shipped variant) end to end on the smoke set: all
# measured, every variant that ran passed validation, stored, shown, exported. Then the
# store's resilience: a sweep killed with SIGKILL and one stopped with SIGINT are finished by
# --resume, and the finished run holds exactly variants x shapes measurements (those sweeps
# without the energy measurement: resuming is what they test).
set -u
. "$(dirname "$0")/gpu_common.sh"
db="$tmp/smoke.db"
"$TB" sweep --shapes smoke --db "$db" --no-progress >"$tmp/out" 2>"$tmp/err"; rc=$?
cat "$tmp/out"; tail -3 "$tmp/err"
[ $rc = 0 ] && ok smoke-1.1 || bad smoke-1.1 "default sweep on smoke exited $rc: $(tail -5 "$tmp/err")"
nv=$("$TB" list --format json 2>/dev/null | $PY -c "import json,sys; print(len(json.load(sys.stdin)))")
"$TB" export --db "$db" --format json > "$tmp/e.json"
$PY - "$tmp/e.json" "$nv" <<'PYEOF' && ok smoke-1.2 || bad smoke-1.2 "see above"
import json, sys
d = json.load(open(sys.argv[1])); nv = int(sys.argv[2])
r = d["results"]; fails = []
if len(r) != nv * 4: fails.append(f"{len(r)} results, want {nv} variants x 4 shapes")
for x in r:
    n = x["variant"]["name"]; p = x["problem"]
    if x["status"] == "unsupported": continue
    if x["status"] != "ok" or x["disposition"] != "passed":
        fails.append(f"{n} {p['m']}x{p['n']}x{p['k']}: {x['status']}/{x['disposition']} {x['reason']}")
ran = {x["variant"]["name"] for x in r if x["status"] == "ok"}
for fam in ("cublaslt", "simt_naive", "simt_tiled", "mma_sync"):
    if not any(n.startswith(fam) for n in ran): fails.append(f"no {fam} variant ran")
for f in fails: print("FAIL smoke-1.2:", f)
sys.exit(1 if fails else 0)
PYEOF
grep -q "rank" "$tmp/out" && ok smoke-1.3 || bad smoke-1.3 "no table printed"

count() { $PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('select count(*) from measurements where run_id=?',(int(sys.argv[2]),)).fetchone()[0])" "$@"; }
status() { $PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('select status from runs where id=?',(int(sys.argv[2]),)).fetchone()[0])" "$@"; }
wait_for() {   # wait until run $2 in $1 has >= $3 measurements
    for _ in $(seq 1 600); do
        [ -f "$1" ] && [ "$(count "$1" "$2" 2>/dev/null || echo 0)" -ge "$3" ] && return 0
        sleep 0.1
    done; return 1
}
kdb="$tmp/kill.db"
args=(sweep --shapes smoke,1000x1000x1000 --filter cublaslt --filter 'simt_*' --filter 'mma_sync*' --db "$kdb" --no-progress --quiet --max-time 0.3 --no-energy)
"$TB" "${args[@]}" 2>/dev/null & pid=$!
wait_for "$kdb" 1 3 && kill -KILL $pid; wait $pid 2>/dev/null
[ "$(status "$kdb" 1)" = running ] && ok smoke-2.1 || bad smoke-2.1 "a SIGKILLed run is not left 'running'"
"$TB" sweep --db "$kdb" --resume 1 --no-progress --quiet 2>"$tmp/r1"; rc=$?
[ $rc = 0 ] && [ "$(status "$kdb" 1)" = complete ] && ok smoke-2.2 || bad smoke-2.2 "resume after SIGKILL: rc $rc $(cat "$tmp/r1")"
nsel=$("$TB" list --format json --filter cublaslt --filter 'simt_*' --filter 'mma_sync*' 2>/dev/null | $PY -c "import json,sys; print(len(json.load(sys.stdin)))")
[ "$(count "$kdb" 1)" = $((nsel * 5)) ] && ok smoke-2.3 || bad smoke-2.3 "$(count "$kdb" 1) measurements, want $((nsel * 5))"
"$TB" "${args[@]}" 2>/dev/null & pid=$!
wait_for "$kdb" 2 2 && kill -INT $pid; wait $pid; rc=$?
[ $rc = 130 ] && [ "$(status "$kdb" 2)" = interrupted ] && ok smoke-2.4 || bad smoke-2.4 "SIGINT: rc $rc, status $(status "$kdb" 2)"
"$TB" sweep --db "$kdb" --resume 2 --no-progress --quiet 2>/dev/null && [ "$(count "$kdb" 2)" = $((nsel * 5)) ] \
    && ok smoke-2.5 || bad smoke-2.5 "resume after SIGINT: $(count "$kdb" 2) measurements"
$PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); r=c.execute('pragma integrity_check').fetchone()[0]; sys.exit(r!='ok')" "$kdb" \
    && ok smoke-2.6 || bad smoke-2.6 "integrity_check failed"
finish
