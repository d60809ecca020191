#!/bin/bash
# server_cli.sh - tilebench-server started by its own binary on 127.0.0.1 (a free port), with
# the real client: a token added (stored hashed), a run submitted with `tilebench submit` and
# read back through the API, a replay answered with the same id, a board read before and after
# a new submission (the cached board is dropped), and bad requests each given the right 4xx
# while the server stays up; SIGTERM stops it cleanly. No GPU needed. The fixture's GPU reports
# no SM count, so its peak is unknown: this server runs with --allow-unknown-gpu (5.x: without
# it, such a GPU is refused). 6.x: a run with attention rows (issue 33) submitted, stored, ranked
# on the attn set apart from its GEMM row (which ranks on the GEMM sets), shown with its token,
# and hostile attention shapes refused by the server.
# Environment (set by CTest): TB, TB_BUILD, TB_SRC; and TB_PG when it runs under
# tests/with_postgres.sh (CTest server_cli_pg): every --db is then a new PostgreSQL database
# of that throwaway cluster instead of an SQLite file, the rest of the test the same.
set -u
pass=0; fail=0
ok()  { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail+1)); }
S="$TB_BUILD/bin/tilebench-server"
tmp=$(mktemp -d); pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp"
# the server's databases: SQLite files, or PostgreSQL databases (TB_PG); dbdump: what is stored
if [ -n "${TB_PG:-}" ]; then
    newdb() { "$TB_PG/createdb" "$1"; }; dbdump() { "$TB_PG/dump" "$1"; }; echo "engine: PostgreSQL"
else
    newdb() { echo "$1.db"; }; dbdump() { cat "$1.db"; }; echo "engine: SQLite"
fi
DB_S=$(newdb s) && DB_U=$(newdb u) || { echo "FAIL server-0: cannot make the databases"; exit 1; }
"$TB_BUILD/tests/make_gate_fixture" g.db >/dev/null || { echo "FAIL server-0: fixture"; exit 1; }
tok=$("$S" token add alice --db "$DB_S") && [ ${#tok} = 48 ] && ok server-1.1 || bad server-1.1 "token add: '$tok'"
dbdump s | grep -qa alice && ! dbdump s | grep -qa "$tok" && ok server-1.2 || bad server-1.2 "the token is stored in clear"
"$S" --port 0 --db "$DB_S" --max-body 200000 --rate 10 --shapes-dir "$TB_SRC/results/shapes" --allow-unknown-gpu > s.out 2> s.log & pid=$!
for i in $(seq 1 50); do grep -q "listening on" s.out 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127.0.0.1://p' s.out)
[ -n "$port" ] && ok server-1.3 || bad server-1.3 "did not start: $(cat s.log)"
U="http://127.0.0.1:$port"
req() { curl -s -o body -w '%{http_code}' "$@"; }   # prints the status; the body in ./body

out=$(TILEBENCH_TOKEN=$tok "$TB" submit --server "$U" --db g.db --run 1 2>&1)
[ $? = 0 ] && grep -q "submission 1 " <<<"$out" && ok server-2.1 || bad server-2.1 "submit: $out"
out=$(TILEBENCH_TOKEN=$tok "$TB" submit --server "$U" --db g.db --run 1 2>&1)
grep -q "submission 1 " <<<"$out" && [ "$(req "$U/api/v1/leaderboards")" = 200 ] && grep -q '"submissions":1' body \
    && ok server-2.2 || bad server-2.2 "a replay counted twice: $out $(cat body)"
[ "$(req "$U/api/v1/submissions/1")" = 200 ] && "$TB_BUILD/tests/parse_submission" body | grep -q "^ok 12 results" \
    && ok server-2.3 || bad server-2.3 "the stored document does not read back"
# the board is read (and cached) with one submission; a second one of the same GPU model drops
# it: the JSON and the HTML boards then show two
[ "$(req "$U/api/v1/leaderboards/square/fixture%20GPU")" = 200 ] && grep -q '"submission":1' body && ! grep -q '"submission":2' body \
    && [ "$(req "$U/leaderboards/square/fixture%20GPU")" = 200 ] && [ "$(grep -c '<tr class="entry">' body)" = 1 ] \
    && [ "$(req "$U/api/v1/leaderboards/square/fixture%20GPU")" = 200 ] && [ "$(req "$U/")" = 200 ] && grep -q '<td class="n">1</td>' body \
    && ok server-2.4a || bad server-2.4a "the board of one: $(head -c 300 body)"
TILEBENCH_TOKEN=$tok "$TB" submit --server "$U" --db g.db --run 3 >/dev/null 2>&1 && [ "$(req "$U/api/v1/submissions/2")" = 200 ] \
    && ok server-2.4 || bad server-2.4 "a second run"
[ "$(req "$U/api/v1/leaderboards/square/fixture%20GPU")" = 200 ] && grep -q '"submission":2' body \
    && [ "$(req "$U/leaderboards/square/fixture%20GPU")" = 200 ] && [ "$(grep -c '<tr class="entry">' body)" = 2 ] \
    && [ "$(req "$U/")" = 200 ] && grep -q '<td class="n">2</td>' body \
    && ok server-2.4b || bad server-2.4b "a stale board after a new submission: $(head -c 300 body)"

# the ranking: the fixture GPU's submissions on the square set, by the geometric mean of their
# best validated rate per shape, recomputed here from the stored documents
[ "$(req "$U/api/v1/leaderboards/square/fixture%20GPU")" = 200 ] && cp body rank.json
for i in 1 2; do curl -s "$U/api/v1/submissions/$i" > sub$i.json; done
/usr/bin/python3 - <<'PY' && ok server-2.5 || bad server-2.5 "ranking: $(cat rank.json)"
import json, math
rank = json.load(open("rank.json"))
square = [(s, s, s, 1) for s in (512, 1024, 2048, 4096, 8192, 16384)]
want = []
for i in (1, 2):
    d = json.load(open(f"sub{i}.json"))
    best = {}
    for r in d["results"]:
        if r["timing"] is None: continue
        sh = r["shape"]; key = (sh["m"], sh["n"], sh["k"], sh["batch"])
        if key not in square: continue
        tf = 2 * sh["m"] * sh["n"] * sh["k"] * sh["batch"] / (r["timing"]["median_ms"] * 1e-3) / 1e12
        best[key] = max(best.get(key, 0), tf)
    if best:
        want.append((math.exp(sum(map(math.log, best.values())) / len(best)), i, len(best)))
want.sort(key=lambda x: (-x[0], x[1]))
assert [(e["submission"], e["shapes_counted"], e["shapes_in_set"]) for e in rank] == [(i, n, 6) for _, i, n in want], rank
assert all(abs(e["geomean_tflops"] - g) < 1e-9 * g for e, (g, _, _) in zip(rank, want)), rank
assert [e["rank"] for e in rank] == list(range(1, len(rank) + 1))
PY
check() { local id=$1 want=$2; shift 2; local got; got=$(req "$@"); [ "$got" = "$want" ] && ok "$id" || bad "$id" "HTTP $got, want $want: $(head -c 200 body)"; }
check server-2.6 404 "$U/api/v1/leaderboards/nosuchset/fixture%20GPU"
[ "$(req "$U/api/v1/leaderboards/square/Another%20GPU")" = 200 ] && [ "$(cat body)" = "[]" ] && ok server-2.7 || bad server-2.7 "$(cat body)"

# bad requests: the right 4xx, and the server stays up
"$TB" export --db g.db --run 2 --format submission --output good.json
check server-3.1 401 -X POST --data-binary @good.json "$U/api/v1/submissions"
check server-3.2 401 -X POST -H "Authorization: Bearer wrong" --data-binary @good.json "$U/api/v1/submissions"
check server-3.3 400 -X POST -H "Authorization: Bearer $tok" --data '{"format":"tilebench-submission"' "$U/api/v1/submissions"
/usr/bin/python3 -c 'import json; d=json.load(open("good.json")); d["results"][0]["timing"]["median_ms"]=float("nan"); open("nan.json","w").write(json.dumps(d))'
check server-3.4 400 -X POST -H "Authorization: Bearer $tok" --data-binary @nan.json "$U/api/v1/submissions"
grep -q "not JSON" body || bad server-3.4b "NaN: $(cat body)"
head -c 300000 /dev/zero | tr '\0' 'x' > big.txt
/usr/bin/python3 -c 'import json; d=json.load(open("good.json")); d["environment"]["compute_capability"]="9.0"; d["environment"]["sm_count"]=132
t=[r for r in d["results"] if r["timing"]][1]["timing"]; t["median_ms"]=0.001; t["median_lo_ms"]=0.0009; t["median_hi_ms"]=0.0011
open("fast.json","w").write(json.dumps(d))'
check server-3.4c 422 -X POST -H "Authorization: Bearer $tok" --data-binary @fast.json "$U/api/v1/submissions"
grep -q 'results\[1\]: .* TFLOP/s (from its shape and median) is above the GPU' body || bad server-3.4d "422 reason: $(cat body)"
/usr/bin/python3 -c 'import json; d=json.load(open("good.json"))
for r in d["results"]: r["shape"].update(m=3, n=5, k=7)
open("offset.json","w").write(json.dumps(d))'
check server-3.4e 422 -X POST -H "Authorization: Bearer $tok" --data-binary @offset.json "$U/api/v1/submissions"
grep -q 'results\[0\] (variant [^,]*, shape 3x5x7): the shape is on no leaderboard set (.*square' body || bad server-3.4f "$(cat body)"
# one result off the sets among good ones: refused too, naming that one (index, variant, shape)
/usr/bin/python3 -c 'import json; d=json.load(open("good.json")); d["results"][5]["shape"].update(k=4095)
open("offset1.json","w").write(json.dumps(d)); print(d["results"][5]["variant"]["name"], d["results"][5]["shape"]["m"])' > off.txt
check server-3.4g 422 -X POST -H "Authorization: Bearer $tok" --data-binary @offset1.json "$U/api/v1/submissions"
read -r offvar offm < off.txt
grep -qF "results[5] (variant $offvar, shape ${offm}x${offm}x4095): the shape is on no leaderboard set" body || bad server-3.4h "$(cat body)"
check server-3.5 413 -X POST -H "Authorization: Bearer $tok" --data-binary @big.txt "$U/api/v1/submissions"
check server-3.6 400 "$U/api/v1/submissions/..%2F..%2Fetc%2Fpasswd"
check server-3.7 404 "$U/api/v1/submissions/999"
check server-3.8 404 "$U/nowhere"
check server-3.9 405 -X DELETE "$U/api/v1/submissions/1"
printf '{"format":"tilebench-submission","x":"\xff\x1b[2J"}' > hostile.json
check server-3.10 400 -X POST -H "Authorization: Bearer $tok" --data-binary @hostile.json "$U/api/v1/submissions"
/usr/bin/python3 -c 'import json,sys; json.load(open("body"))' && ok server-3.11 || bad server-3.11 "an error body that is not JSON: $(cat -v body)"
"$S" token revoke alice --db "$DB_S"
check server-3.12 401 -X POST -H "Authorization: Bearer $tok" --data-binary @good.json "$U/api/v1/submissions"
[ "$(req "$U/api/v1/leaderboards")" = 200 ] && grep -q '"submissions":2' body && ok server-3.13 || bad server-3.13 "a bad request wrote a row: $(cat body)"
n=$(grep -c " /api/v1/\| /nowhere" s.log); [ "$n" -ge 14 ] && ok server-3.14 || bad server-3.14 "$n log lines"

# the rate: one token's burst beyond 10 submissions a minute gets 429 (counted per token)
tok2=$("$S" token add bob --db "$DB_S")
codes=""; for i in $(seq 1 14); do codes="$codes $(req -X POST -H "Authorization: Bearer $tok2" --data-binary @good.json "$U/api/v1/submissions")"; done
[ "$(tr ' ' '\n' <<<"$codes" | grep -c 429)" -ge 2 ] && grep -q 201 <<<"$codes" && ok server-3.15 || bad server-3.15 "no 429 in a burst of 14 at 10/min: $codes"

kill -TERM $pid; wait $pid; rc=$?; pid=
[ $rc = 0 ] && grep -q "stopped" s.log && ok server-4.1 || bad server-4.1 "SIGTERM: exit $rc"

# without --allow-unknown-gpu (the default) the fixture's GPU, whose peak is unknown (no SM
# count), is refused; the same document as a 132-SM sm_90 (an H100) is taken
"$S" --port 0 --db "$DB_U" --rate 0 --shapes-dir "$TB_SRC/results/shapes" > u.out 2> u.log & pid=$!
for i in $(seq 1 50); do grep -q "listening on" u.out 2>/dev/null && break; sleep 0.1; done
U="http://127.0.0.1:$(sed -n 's/^listening on 127.0.0.1://p' u.out)"
tok3=$("$S" token add carol --db "$DB_U")
check server-5.1 422 -X POST -H "Authorization: Bearer $tok3" --data-binary @good.json "$U/api/v1/submissions"
grep -q "no known peak for GPU 'fixture GPU' (compute capability 9.0, 0 SMs)" body || bad server-5.1b "$(cat body)"
/usr/bin/python3 -c 'import json; d=json.load(open("good.json")); d["environment"].update(sm_count=132)
open("h100.json","w").write(json.dumps(d)); d["environment"].update(compute_capability="10.0"); open("cc10.json","w").write(json.dumps(d))
d["environment"].update(compute_capability="9.0", sm_count=1000); open("sm1000.json","w").write(json.dumps(d))'
check server-5.2 201 -X POST -H "Authorization: Bearer $tok3" --data-binary @h100.json "$U/api/v1/submissions"
check server-5.3 422 -X POST -H "Authorization: Bearer $tok3" --data-binary @cc10.json "$U/api/v1/submissions"
grep -q "no known peak for GPU 'fixture GPU' (compute capability 10.0, 132 SMs)" body || bad server-5.3b "$(cat body)"
check server-5.4 422 -X POST -H "Authorization: Bearer $tok3" --data-binary @sm1000.json "$U/api/v1/submissions"
grep -q "environment.sm_count: 1000 SMs, more than any GPU of compute capability 9.0 has (144)" body || bad server-5.4b "$(cat body)"

# 6.x attention (issue 33): the fixture's attention run (an H100's 132 SMs: checked by default)
# goes through the client; its attention rows rank on the attn set and nowhere else, its GEMM
# row on the GEMM sets and nowhere else
"$TB_BUILD/tests/make_gate_fixture" --attention a.db >/dev/null || bad server-6.0 "fixture"
out=$(TILEBENCH_TOKEN=$tok3 "$TB" submit --server "$U" --db a.db 2>&1)
[ $? = 0 ] && grep -q "submission 2 " <<<"$out" && ok server-6.1 || bad server-6.1 "submit: $out"
[ "$(req "$U/api/v1/submissions/2")" = 200 ] && "$TB_BUILD/tests/parse_submission" body | grep -q "^ok 4 results" \
    && grep -qE '"version":[[:space:]]*2,' body && cp body asub.json && ok server-6.2 || bad server-6.2 "the attention document does not read back"
curl -s "$U/api/v1/leaderboards/attn/fixture%20GPU" > attn.json
curl -s "$U/api/v1/leaderboards/square/fixture%20GPU" > square.json
/usr/bin/python3 - <<'PY' && ok server-6.3 || bad server-6.3 "attention ranking: $(head -c 600 attn.json) / $(head -c 300 square.json)"
import json, math
def pairs(q, k, c): return q * k - q * (q - 1) // 2 if c else q * k
d = json.load(open("asub.json"))
best = {}
for r in d["results"]:
    sh = r["shape"]
    if r["timing"] is None or sh.get("op") != "attention_fwd": continue
    f = 4 * sh["batch"] * sh["heads"] * sh["head_dim"] * pairs(sh["seq_q"], sh["seq_k"], sh["causal"])
    best[sh["token"]] = max(best.get(sh["token"], 0), f / (r["timing"]["median_ms"] * 1e-3) / 1e12)
attn = json.load(open("attn.json"))
assert len(attn) == 1 and attn[0]["submission"] == 2 and attn[0]["op"] == "attention_fwd", attn
e = attn[0]
assert (e["shapes_counted"], e["shapes_in_set"], e["best_variant"]) == (2, 26, "flash_fwd"), e
got = {s["shape"]: s["tflops"] for s in e["shapes"]}
assert got.keys() == best.keys() and all(abs(got[t] - best[t]) < 1e-9 * best[t] for t in best), (got, best)
assert all("m" not in s and s["causal"] in (True, False) for s in e["shapes"]), e["shapes"]
g = math.exp(sum(map(math.log, best.values())) / len(best))
assert abs(e["geomean_tflops"] - g) < 1e-9 * g, (e["geomean_tflops"], g)
# on the square set: the GEMM submission (1) and the attention run's one GEMM row (4096^3),
# never an attention shape
square = json.load(open("square.json"))
assert sorted(x["submission"] for x in square) == [1, 2] and all(x["op"] == "gemm" for x in square), square
two = next(x for x in square if x["submission"] == 2)
assert two["shapes_counted"] == 1 and two["best_variant"] == "cublaslt" and two["shapes"][0]["m"] == 4096, two
assert all("shape" not in s for x in square for s in x["shapes"]), square
PY
[ "$(req "$U/leaderboards/attn/fixture%20GPU")" = 200 ] && grep -qF '<code class="attn">4x32x4096x4096x128:causal:hkv=8</code>' body \
    && grep -qF '<code class="attn">2x16x8192x8192x128</code>' body && grep -qF 'operation: <code>attention_fwd</code>' body \
    && ! grep -q '&times;' body && [ "$(grep -c '<tr class="entry">' body)" = 1 ] \
    && ok server-6.4 || bad server-6.4 "the attention board: $(grep -o '<table id="best".\{0,400\}' body)"
[ "$(req "$U/leaderboards/square/fixture%20GPU")" = 200 ] && ! grep -q 'class="attn"' body && grep -qF 'operation: <code>gemm</code>' body \
    && ok server-6.5 || bad server-6.5 "an attention shape on a GEMM board"
[ "$(req "$U/submissions/2")" = 200 ] && grep -qF '4x32x4096x4096x128:causal:hkv=8' body \
    && grep -qF -- '--filter flash_fwd --shapes 4x32x4096x4096x128:causal:hkv=8 --method cold' body \
    && grep -qF -- '--shapes 4096x4096x4096 --layout tn' body && ok server-6.6 || bad server-6.6 "the submission page: $(grep -o 'tilebench sweep[^<]*' body | head -3)"
[ "$(req "$U/")" = 200 ] && grep -q 'href="/leaderboards/attn/fixture%20GPU"' body && ok server-6.7 || bad server-6.7 "the index: $(head -c 400 body)"
# hostile attention shapes: one clear message each, nothing stored
/usr/bin/python3 - <<'PY'
import json
d = json.load(open("asub.json"))
def put(name, **kw):
    x = json.loads(json.dumps(d)); x["results"][0]["shape"].update(kw); open(name, "w").write(json.dumps(x))
put("disagree.json", heads_kv=4)
put("hkv3.json", heads_kv=3, token="4x32x4096x4096x128:causal:hkv=3")
put("huge.json", seq_q=1 << 30)
put("offset_attn.json", batch=3, token="3x32x4096x4096x128:causal:hkv=8")
x = json.loads(json.dumps(d)); x["version"] = 1; open("v1attn.json", "w").write(json.dumps(x))
PY
post() { check "$1" "$2" -X POST -H "Authorization: Bearer $tok3" -H "Idempotency-Key: $1" --data-binary @"$3" "$U/api/v1/submissions"
         grep -qF "$4" body || bad "$1b" "$(cat body)"; }
post server-6.8 400 disagree.json 'results[0].shape.token: disagrees with the shape'"'"'s fields, which say 4x32x4096x4096x128:causal:hkv=4'
post server-6.9 400 hkv3.json 'hkv=3 does not divide the 32 query heads'
post server-6.10 400 huge.json 'results[0].shape.seq_q: out of range'
post server-6.11 422 offset_attn.json 'results[0] (variant flash_fwd, shape 3x32x4096x4096x128:causal:hkv=8): the shape is on no leaderboard set'
post server-6.12 400 v1attn.json 'results[0].shape.op: an attention row needs version 2'
[ "$(req "$U/api/v1/leaderboards")" = 200 ] && grep -q '"submissions":2' body && ok server-6.13 || bad server-6.13 "a refused attention document was stored: $(cat body)"
kill -TERM $pid; wait $pid; pid=
echo "$pass passed, $fail failed"
[ $fail = 0 ]
