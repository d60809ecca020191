#!/bin/bash
# server_pg_cli.sh - tilebench-server's PostgreSQL engine from the command line, beside a
# throwaway cluster (run under `tests/with_postgres.sh --tcp`, CTest server_pg_cli, label
# postgres): the password rules (a URI holding one is refused without echoing it; PGPASSWORD,
# PGPASSFILE and --db-password-file work over TCP; a wrong one fails naming the host, never the
# password, in no error and no log line), sslmode passed through to libpq, PostgreSQL
# unreachable at start (one line naming the host, exit 2, quickly; --wait-db waits, and a
# server whose database comes up meanwhile starts), token add|list|revoke, the migrations
# (schema version recorded; two processes migrating one new database at once; a version from
# the future refused), and copy-db (an SQLite community moved whole: counts printed for both
# sides, ids, tokens (hashed, and they still work), documents, pages and rankings byte-identical
# through a server on either; a non-empty target refused and left as it was; wrong directions
# refused). Environment: TB, TB_BUILD, TB_SRC (CTest), TB_PG, TB_PG_PASSWORD (with_postgres.sh).
set -u
pass=0; fail=0
ok()  { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail+1)); }
S="$TB_BUILD/bin/tilebench-server"
[ -n "${TB_PG:-}" ] && [ -n "${TB_PG_PASSWORD:-}" ] || { echo "FAIL pg-0: run me under tests/with_postgres.sh --tcp"; exit 1; }
tmp=$(mktemp -d); pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
cd "$tmp"
unset PGPASSWORD PGPASSFILE
PW=$TB_PG_PASSWORD
start_server() {   # start_server NAME ARGS...: a server in the background; its URL in $U, pid in $pid
    local name=$1; shift
    "$S" --port 0 --shapes-dir "$TB_SRC/results/shapes" "$@" > "$name.out" 2> "$name.log" & pid=$!; pids+=("$pid")
    for _ in $(seq 1 100); do grep -q "listening on" "$name.out" 2>/dev/null && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done
    U="http://127.0.0.1:$(sed -n 's/^listening on 127.0.0.1://p' "$name.out")"
    grep -q "listening on" "$name.out"
}
stop_server() { kill -TERM "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
one_line() { [ "$(wc -l < "$1")" -le 1 ]; }

# ---- 1. the password ------------------------------------------------------------------------------
DB=$("$TB_PG/createdb" pw) || { echo "FAIL pg-0: createdb"; exit 1; }
TCP=$("$TB_PG/tcp_uri" pw)                        # postgresql://tilebench@127.0.0.1:PORT/pw
HOSTPORT=${TCP#postgresql://tilebench@}; HOSTPORT=${HOSTPORT%/pw}
secret_uri="postgresql://tilebench:${PW}@$HOSTPORT/pw"
"$S" token list --db "$secret_uri" > out 2> err; rc=$?
[ $rc = 2 ] && one_line err && grep -q "holds a password" err && ! grep -q "$PW" err out \
    && ok pg-1.1 || bad pg-1.1 "a URI with user:password@: exit $rc, $(cat err)"
"$S" --port 0 --db "$TCP?password=$PW" > out 2> err; rc=$?
[ $rc = 2 ] && grep -q "holds a password" err && ! grep -q "$PW" err out && ok pg-1.2 || bad pg-1.2 "?password=: exit $rc, $(cat err)"
env -u PGPASSWORD "$S" token list --db "$TCP" > out 2> err; rc=$?
[ $rc = 2 ] && one_line err && grep -q "127.0.0.1 port ${HOSTPORT#*:}" err && ok pg-1.3 || bad pg-1.3 "no password: exit $rc, $(cat err)"
wrong=not-the-password-4711
PGPASSWORD=$wrong "$S" token list --db "$TCP" > out 2> err; rc=$?
[ $rc = 2 ] && one_line err && grep -q "password authentication failed" err && grep -q 127.0.0.1 err && ! grep -q "$wrong" err \
    && ok pg-1.4 || bad pg-1.4 "a wrong PGPASSWORD: exit $rc, $(cat err)"
printf '%s\n' "$wrong" > wrong.pw
"$S" token list --db "$TCP" --db-password-file wrong.pw > out 2> err; rc=$?
[ $rc = 2 ] && one_line err && ! grep -q "$wrong" err && ok pg-1.5 || bad pg-1.5 "a wrong password file: exit $rc, $(cat err)"
t1=$(PGPASSWORD=$PW "$S" token add alice --db "$TCP" 2> err) && [ ${#t1} = 48 ] && ok pg-1.6 || bad pg-1.6 "PGPASSWORD: $(cat err)"
printf '%s\n' "$PW" > good.pw; chmod 600 good.pw
env -u PGPASSWORD "$S" token list --db "$TCP" --db-password-file good.pw > out 2> err && grep -q " alice " out \
    && ok pg-1.7 || bad pg-1.7 "--db-password-file: $(cat err)"
printf '127.0.0.1:%s:pw:tilebench:%s\n' "${HOSTPORT#*:}" "$PW" > pgpass; chmod 600 pgpass
env -u PGPASSWORD PGPASSFILE=$PWD/pgpass "$S" token list --db "$TCP" > out 2> err && grep -q " alice " out \
    && ok pg-1.8 || bad pg-1.8 "PGPASSFILE: $(cat err)"
"$S" token list --db "$TCP" --db-password-file nowhere.pw > out 2> err; rc=$?
[ $rc = 2 ] && grep -q "cannot read the password file 'nowhere.pw'" err && ok pg-1.9 || bad pg-1.9 "exit $rc $(cat err)"
# a server with its password from a file: it serves, and its password is in no log line
if start_server pwsrv --db "$TCP" --db-password-file good.pw --rate 0; then
    code=$(curl -s -o body -w '%{http_code}' "$U/api/v1/leaderboards")
    stop_server "$pid"
    [ "$code" = 200 ] && ! grep -q "$PW" pwsrv.log pwsrv.out && ok pg-1.10 || bad pg-1.10 "HTTP $code $(cat pwsrv.log)"
else bad pg-1.10 "the server did not start: $(cat pwsrv.log)"; fi

# ---- 2. sslmode, unreachable at start, --wait-db ------------------------------------------------------
PGPASSWORD=$PW "$S" token list --db "$TCP?sslmode=require" > out 2> err; rc=$?
[ $rc = 2 ] && grep -q "SSL" err && one_line err && ok pg-2.1 || bad pg-2.1 "sslmode=require against a server without SSL: exit $rc, $(cat err)"
PGPASSWORD=$PW "$S" token list --db "$TCP?sslmode=disable" > out 2> err && grep -q alice out && ok pg-2.2 || bad pg-2.2 "sslmode=disable: $(cat err)"
closed=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
t0=$(date +%s.%N)
PGPASSWORD=$PW "$S" --port 0 --db "postgresql://tilebench@127.0.0.1:$closed/x" --shapes-dir "$TB_SRC/results/shapes" > out 2> err; rc=$?
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
[ $rc = 2 ] && [ "$(grep -c . err)" = 1 ] && grep -q "cannot connect to PostgreSQL at 127.0.0.1 port $closed" err && ! grep -q "$PW" err \
    && awk -v t="$took" 'BEGIN { exit !(t < 5) }' && ok pg-2.3 || bad pg-2.3 "unreachable: exit $rc in $took s: $(cat err)"
t0=$(date +%s.%N)
"$S" --port 0 --db "postgresql://tilebench@127.0.0.1:$closed/x" --wait-db 2 --shapes-dir "$TB_SRC/results/shapes" > out 2> err; rc=$?
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
[ $rc = 2 ] && grep -q "waiting up to 2 s" err && awk -v t="$took" 'BEGIN { exit !(t >= 1.9 && t < 6) }' \
    && ok pg-2.4 || bad pg-2.4 "--wait-db 2: exit $rc in $took s: $(cat err)"
# the database down at start, up 2 s later: a server with --wait-db 30 comes up by itself
"$TB_PG/pg_ctl" stop -m fast -w > /dev/null
PGPASSWORD=$PW "$S" --port 0 --db "$DB" --wait-db 30 --shapes-dir "$TB_SRC/results/shapes" > wait.out 2> wait.log & pid=$!; pids+=("$pid")
sleep 2
"$TB_PG/start" > /dev/null || bad pg-2.5 "the cluster did not start again"
for _ in $(seq 1 100); do grep -q "listening on" wait.out 2>/dev/null && break; sleep 0.1; done
grep -q "listening on" wait.out && grep -q "waiting up to 30 s for the database" wait.log && ok pg-2.5 || bad pg-2.5 "$(cat wait.log)"
stop_server $pid

# ---- 3. tokens ------------------------------------------------------------------------------------------
t2=$("$S" token add bob --db "$DB") && "$S" token revoke alice --db "$DB" && "$S" token list --db "$DB" > out \
    && grep -qE "^1 alice [0-9T:-]+Z revoked [0-9T:-]+Z$" out && grep -qE "^2 bob [0-9T:-]+Z$" out \
    && ok pg-3.1 || bad pg-3.1 "token add, revoke, list: $(cat out)"
! "$S" token revoke alice --db "$DB" 2> err && grep -q "no live token named 'alice'" err && ok pg-3.2 || bad pg-3.2 "$(cat err)"
! "$S" token add bob --db "$DB" 2> err && grep -q "is the name taken" err && one_line err && ok pg-3.3 || bad pg-3.3 "$(cat err)"
"$TB_PG/dump" pw > dump.sql && grep -q bob dump.sql && ! grep -q "$t1" dump.sql && ! grep -q "$t2" dump.sql \
    && ok pg-3.4 || bad pg-3.4 "a token stored in clear"

# ---- 4. migrations --------------------------------------------------------------------------------------
[ "$("$TB_PG/sql" pw "SELECT version FROM tilebench_schema")" = 3 ] && ok pg-4.1 || bad pg-4.1 "schema version"
M=$("$TB_PG/createdb" mig)
for i in 1 2 3 4; do "$S" token list --db "$M" > "mig$i.out" 2> "mig$i.err" & done; wait
[ "$(cat mig*.err)" = "" ] && [ "$("$TB_PG/sql" mig "SELECT count(*), min(version) FROM tilebench_schema")" = "1|3" ] \
    && ok pg-4.2 || bad pg-4.2 "four processes migrating at once: $(cat mig*.err)"
"$TB_PG/sql" mig "UPDATE tilebench_schema SET version = 99"
"$S" token list --db "$M" > out 2> err; rc=$?
[ $rc = 2 ] && grep -q "schema version 99" err && ok pg-4.3 || bad pg-4.3 "a future version: exit $rc $(cat err)"

# ---- 5. copy-db: an SQLite community into PostgreSQL -------------------------------------------------------
"$TB_BUILD/tests/make_gate_fixture" g.db > /dev/null || { echo "FAIL pg-0: fixture"; exit 1; }
ta=$("$S" token add alice --db lite.db); tb=$("$S" token add bob --db lite.db); "$S" token add carol --db lite.db > /dev/null
start_server lite --db lite.db --rate 0 --allow-unknown-gpu || bad pg-5.0 "$(cat lite.log)"
for run in 1 2 3; do
    TILEBENCH_TOKEN=$ta "$TB" submit --server "$U" --db g.db --run $run > /dev/null 2>&1 || bad pg-5.0 "alice submit $run"
done
TILEBENCH_TOKEN=$tb "$TB" submit --server "$U" --db g.db --run 1 > /dev/null 2>&1 || bad pg-5.0 "bob submit"
"$S" token revoke carol --db lite.db
pages=("/api/v1/leaderboards" "/api/v1/leaderboards/square/fixture%20GPU" "/leaderboards/square/fixture%20GPU" "/"
       "/api/v1/submissions/1" "/api/v1/submissions/4" "/submissions/2")
for i in "${!pages[@]}"; do curl -s "$U${pages[$i]}" > "lite$i.txt"; done
stop_server $pid
C=$("$TB_PG/createdb" copy)
"$S" copy-db --from lite.db --to "$C" > out 2> err; rc=$?
[ $rc = 0 ] && grep -q "^from lite.db (SQLite): 3 tokens, 4 submissions$" out && grep -q "^to PostgreSQL: 3 tokens, 4 submissions$" out \
    && ok pg-5.1 || bad pg-5.1 "copy-db: exit $rc $(cat out err)"
"$TB_PG/sql" copy "SELECT id, name, hash, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
    coalesce(to_char(revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '') FROM tokens ORDER BY id" > pg_tokens.txt
/usr/bin/python3 -c 'import sqlite3; [print("|".join(str(x) for x in r)) for r in sqlite3.connect("lite.db").execute("SELECT id, name, hash, created_at, coalesce(revoked_at, \"\") FROM tokens ORDER BY id")]' > lite_tokens.txt
cmp -s pg_tokens.txt lite_tokens.txt && ok pg-5.2 || bad pg-5.2 "tokens differ: $(diff pg_tokens.txt lite_tokens.txt | head -5)"
[ "$("$TB_PG/sql" copy "SELECT gpu_name, generation FROM board_generations")" = "fixture GPU|4" ] \
    && ok pg-5.3 || bad pg-5.3 "generations: $("$TB_PG/sql" copy "SELECT * FROM board_generations")"
start_server pgsrv --db "$C" --rate 0 --allow-unknown-gpu || bad pg-5.4 "$(cat pgsrv.log)"
same=0
for i in "${!pages[@]}"; do curl -s "$U${pages[$i]}" > "pg$i.txt"; cmp -s "lite$i.txt" "pg$i.txt" && same=$((same+1)) || echo "  differs: ${pages[$i]}"; done
[ $same = ${#pages[@]} ] && [ -s lite2.txt ] && ok pg-5.4 || bad pg-5.4 "$same of ${#pages[@]} answers byte-identical through the copy"
# the copied (hashed) token still authenticates, the revoked one stays revoked, the next id follows
"$TB" export --db g.db --run 2 --format submission --output doc.json
/usr/bin/python3 -c 'import json; d = json.load(open("doc.json")); d["tilebench"]["git_sha"] = "after-the-copy"; json.dump(d, open("doc2.json", "w"))'
code=$(curl -s -o body -w '%{http_code}' -H "Authorization: Bearer $ta" --data-binary @doc2.json "$U/api/v1/submissions")
[ "$code" = 201 ] && grep -q '"id":5' body && ok pg-5.5 || bad pg-5.5 "a submission after the copy: HTTP $code $(cat body)"
t4=$("$S" token add dave --db "$C") && [ "$("$S" token list --db "$C" | tail -1 | cut -d' ' -f1-2)" = "4 dave" ] \
    && ok pg-5.6 || bad pg-5.6 "a token after the copy: $("$S" token list --db "$C")"
stop_server $pid
"$S" copy-db --from lite.db --to "$C" > out 2> err; rc=$?
[ $rc = 1 ] && grep -q "not empty (4 tokens, 5 submissions)" err && [ "$("$TB_PG/sql" copy "SELECT count(*) FROM submissions")" = 5 ] \
    && ok pg-5.7 || bad pg-5.7 "a non-empty target: exit $rc $(cat out err)"
"$S" copy-db --from "$C" --to "$("$TB_PG/createdb" c2)" > out 2> err; rc=$?
[ $rc = 2 ] && grep -q "copies an SQLite file" err && ok pg-5.8 || bad pg-5.8 "PostgreSQL to PostgreSQL: exit $rc $(cat err)"
"$S" copy-db --from lite.db --to other.db > out 2> err; rc=$?
[ $rc = 2 ] && [ ! -e other.db ] && ok pg-5.9 || bad pg-5.9 "into a file: exit $rc $(cat err)"
"$S" copy-db --from nothere.db --to "$("$TB_PG/uri" c2)" > out 2> err; rc=$?
[ $rc = 2 ] && grep -q "cannot read 'nothere.db'" err && [ ! -e nothere.db ] && ok pg-5.10 || bad pg-5.10 "a missing source: exit $rc $(cat err)"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
