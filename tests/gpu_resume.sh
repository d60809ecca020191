#!/bin/bash
# gpu_resume.sh - the store's resilience on the GPU (split from gpu_smoke.sh so that each device
# call of scripts/device-check.sh ends well inside its limit): a sweep killed with SIGKILL and one
# stopped with SIGINT are finished by --resume, and the finished run holds exactly variants x
# shapes measurements (without the energy measurement: resuming is what they test).
set -u
. "$(dirname "$0")/gpu_common.sh"
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
