#!/bin/bash
# submit_cli.sh - tilebench submit against a scripted stub on 127.0.0.1 (tests/stub_server.py):
# the document sent is the submission, with the bearer token and one idempotency key across
# retries; 503 answers are retried and a later 201 accepted; a 422 is final, one attempt, its
# reason printed escaped; an unreachable server fails after the retries; https with a self-signed
# certificate is refused unless --ca-file trusts it; no token, a flag token, plain http to
# another host are refused; a run with attention rows (issue 33) is sent whole, as version 2
# (4.x). No GPU needed. Environment (set by CTest): TB, TB_BUILD, TB_SRC.
set -u
pass=0; fail=0
ok()  { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail+1)); }
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
cd "$tmp"
"$TB_BUILD/tests/make_gate_fixture" g.db >/dev/null || { echo "FAIL submit-0: fixture"; exit 1; }
stub() {   # NAME SCRIPT [CERT KEY]: start a stub, set $port
    rm -f "$1.port" "$1.log"
    /usr/bin/python3 "$TB_SRC/tests/stub_server.py" "$1.port" "$1.log" "$2" ${3:-} ${4:-} & pids+=($!)
    for i in $(seq 1 50); do [ -s "$1.port" ] && break; sleep 0.1; done
    port=$(cat "$1.port")
}
export TILEBENCH_TOKEN=t0ken-for-tests

stub a "503,503,201"
out=$("$TB" submit --server "http://127.0.0.1:$port" --db g.db --run 1 --retries 3 --timeout 5 2>&1); rc=$?
n=$(wc -l < a.log); keys=$(/usr/bin/python3 -c 'import json; print(len({json.loads(l)["key"] for l in open("a.log")}))')
[ $rc = 0 ] && grep -q "submission 7" <<<"$out" && [ "$n" = 3 ] && [ "$keys" = 1 ] && ok submit-1.1 \
    || bad submit-1.1 "503,503,201: exit $rc, $n requests, $keys keys: $out"
/usr/bin/python3 -c '
import json
r = [json.loads(l) for l in open("a.log")]
assert all(x["path"] == "/api/v1/submissions" and x["auth"] == "Bearer t0ken-for-tests" and x["valid_json"] for x in r)
assert len(r[0]["key"]) == 64' && ok submit-1.2 || bad submit-1.2 "path, token or document wrong: $(head -1 a.log)"

stub b "422"
out=$("$TB" submit --server "http://127.0.0.1:$port" --db g.db --run 1 --retries 3 2>&1); rc=$?
[ $rc = 1 ] && [ "$(wc -l < b.log)" = 1 ] && grep -q "refused the submission (HTTP 422): row 3: 9999 TFLOP/s is above" <<<"$out" \
    && ! grep -q $'\x1b' <<<"$out" && [ "$(wc -l <<<"$out")" = 1 ] && ok submit-1.3 || bad submit-1.3 "422: exit $rc: $(cat -v <<<"$out")"

# an unreachable server: the retries, then one line (a port nothing listens on)
dead=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
s0=$(date +%s)
out=$("$TB" submit --server "http://127.0.0.1:$dead" --db g.db --retries 2 --timeout 2 2>&1); rc=$?
[ $rc = 1 ] && grep -q "after 3 attempts" <<<"$out" && [ $(( $(date +%s) - s0 )) -lt 20 ] && ok submit-1.4 || bad submit-1.4 "exit $rc: $out"

# https: a self-signed certificate is refused, and trusted with --ca-file
openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" >/dev/null 2>&1
stub c "201" cert.pem key.pem
out=$("$TB" submit --server "https://127.0.0.1:$port" --db g.db --retries 2 --timeout 5 2>&1); rc=$?
[ $rc = 1 ] && grep -qi "certificate" <<<"$out" && [ ! -s c.log ] && ok submit-2.1 || bad submit-2.1 "self-signed accepted or wrong error: exit $rc: $out"
out=$("$TB" submit --server "https://127.0.0.1:$port" --db g.db --ca-file cert.pem --timeout 5 2>&1); rc=$?
[ $rc = 0 ] && grep -q "submission 7" <<<"$out" && ok submit-2.2 || bad submit-2.2 "--ca-file: exit $rc: $out"

# refused before any request
out=$(env -u TILEBENCH_TOKEN "$TB" submit --server "http://127.0.0.1:$port" --db g.db 2>&1); rc=$?
[ $rc = 2 ] && grep -q "needs a token" <<<"$out" && ok submit-3.1 || bad submit-3.1 "$out"
out=$("$TB" submit --server "http://example.org" --db g.db 2>&1); rc=$?
[ $rc = 2 ] && grep -q "is not https://" <<<"$out" && ok submit-3.2 || bad submit-3.2 "$out"
out=$("$TB" submit --token abc --server "http://127.0.0.1:1" --db g.db 2>&1); rc=$?
[ $rc = 2 ] && ok submit-3.3 || bad submit-3.3 "a token flag accepted: $out"
printf 'file-t0ken\n' > tok; chmod 644 tok
stub d "201"
out=$(env -u TILEBENCH_TOKEN "$TB" submit --server "http://127.0.0.1:$port" --db g.db --token-file tok 2>&1); rc=$?
[ $rc = 0 ] && grep -q "may be read by others" <<<"$out" && grep -q '"Bearer file-t0ken"' d.log && ok submit-3.4 || bad submit-3.4 "exit $rc: $out"
"$TB" submit --db g.db --run 3 --dry-run | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["format"]=="tilebench-submission"' \
    && ok submit-3.5 || bad submit-3.5 "--dry-run"

# 4.x a run with attention rows: the document (version 2) holds them beside its GEMM row, and the
# upload sends exactly that document (its SHA-256 is the idempotency key)
"$TB_BUILD/tests/make_gate_fixture" --attention a.db >/dev/null || bad submit-4.0 "fixture"
"$TB" submit --db a.db --dry-run > a.json
/usr/bin/python3 -c 'import json; d=json.load(open("a.json")); ops=[r["shape"].get("op", "gemm") for r in d["results"]]
assert d["version"] == 2 and ops.count("attention_fwd") == 3 and ops.count("gemm") == 1, (d["version"], ops)
assert d["results"][0]["shape"]["token"] == "4x32x4096x4096x128:causal:hkv=8", d["results"][0]["shape"]' \
    && ok submit-4.1 || bad submit-4.1 "--dry-run of an attention run: $(head -c 300 a.json)"
stub e "201"
out=$("$TB" submit --server "http://127.0.0.1:$port" --db a.db --timeout 5 2>&1); rc=$?
want=$(sha256sum a.json | cut -c1-64)
[ $rc = 0 ] && grep -q "\"key\": \"$want\"" e.log && ok submit-4.2 || bad submit-4.2 "exit $rc: $out; sent $(cat e.log), want key $want"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
