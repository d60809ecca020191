#!/bin/bash
# server_browser.sh - the leaderboard end to end, read by a real browser: tilebench-server
# started by its own binary on 127.0.0.1 (a free port), tokens added, a recorded sweep
# submitted with the real client (`tilebench submit`) by two submitters and a 30 % slower copy
# by a third, the ranking read back through the JSON API (with "reproduced_by"), then the
# leaderboard page rendered by headless Chromium (Debian's `chromium`: --dump-dom and a
# --screenshot) and the entry, the per-shape bests and the SVG history chart found in its DOM;
# then a document full of HTML (<script>, "><img ...>, &) submitted and its pages checked to
# hold that text as text, never as elements; then a run with attention rows (issue 33, 8.x):
# its board on the attn set shows each shape's token, its page a command sweep takes. Chromium
# is installed by scripts/setup.sh: when it
# is missing this test FAILS (it does not skip). No GPU needed.
# The recorded sweep: $TB_SERVER_DB, else tests/data/h100-small.db (recorded on the H100; the
# board is then `gate` on "NVIDIA H100 80GB HBM3", checked against the H100's peak), else (a
# tree without that file) the invented fixture of tests/make_gate_fixture, whose GPU has no SM
# count, so the server then runs with --allow-unknown-gpu; it says which.
# Environment (set by CTest): TB, TB_BUILD, TB_SRC; and TB_PG when it runs under
# tests/with_postgres.sh (CTest server_browser_pg): the server's --db is then a new PostgreSQL
# database of that throwaway cluster instead of an SQLite file, the rest of the test the same.
set -u
pass=0; fail=0
ok()  { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail+1)); }
S="$TB_BUILD/bin/tilebench-server"
PY=/usr/bin/python3
tmp=$(mktemp -d); pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp"

if [ -n "${TB_PG:-}" ]; then DB_S=$("$TB_PG/createdb" s) || { echo "FAIL browser-0: createdb"; exit 1; }; echo "engine: PostgreSQL"
else DB_S=s.db; echo "engine: SQLite"; fi

chrome=$(command -v chromium)
if [ -z "$chrome" ]; then
    echo "FAIL browser-0: no chromium on PATH (scripts/setup.sh installs Debian's chromium)"; exit 1
fi

# ---- the recorded sweep -----------------------------------------------------------------------
if [ -n "${TB_SERVER_DB:-}" ]; then src=$TB_SERVER_DB
elif [ -f "$TB_SRC/tests/data/h100-small.db" ]; then src=$TB_SRC/tests/data/h100-small.db
else src=; fi
flags=()
if [ -n "$src" ]; then
    cp "$src" sweep.db || { echo "FAIL browser-0: cannot read $src"; exit 1; }
    echo "recorded sweep: $src"
else
    "$TB_BUILD/tests/make_gate_fixture" sweep.db >/dev/null || { echo "FAIL browser-0: fixture"; exit 1; }
    flags=(--allow-unknown-gpu)   # the fixture's GPU has no SM count: its peak is unknown
    echo "recorded sweep: the invented fixture of tests/make_gate_fixture ($TB_SRC/tests/data/h100-small.db is missing)"
fi

# ---- the server, three submitters -------------------------------------------------------------
for who in alice bob carol mallory dave; do
    t=$("$S" token add $who --db "$DB_S") && [ ${#t} = 48 ] || { echo "FAIL browser-0: token add $who"; exit 1; }
    eval "tok_$who=$t"
done
! "$S" token add '<script>alert(1)</script>' --db "$DB_S" 2>/dev/null && ! "$S" token add '"><img src=x>' --db "$DB_S" 2>/dev/null \
    && ok browser-1.1 || bad browser-1.1 "a token name with HTML in it was taken"
"$S" --port 0 --db "$DB_S" --rate 0 --shapes-dir "$TB_SRC/results/shapes" "${flags[@]}" > s.out 2> s.log & pid=$!
for i in $(seq 1 50); do grep -q "listening on" s.out 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127.0.0.1://p' s.out)
[ -n "$port" ] && ok browser-1.2 || { bad browser-1.2 "did not start: $(cat s.log)"; exit 1; }
U="http://127.0.0.1:$port"

out=$(TILEBENCH_TOKEN=$tok_alice "$TB" submit --server "$U" --db sweep.db 2>&1) && grep -q "submission 1 " <<<"$out" \
    && ok browser-2.1 || bad browser-2.1 "alice's submit: $out"
out=$(TILEBENCH_TOKEN=$tok_bob "$TB" submit --server "$U" --db sweep.db 2>&1) && grep -q "submission 2 " <<<"$out" \
    && ok browser-2.2 || bad browser-2.2 "bob's submit: $out"
# carol: the same run 30 % slower, which nobody reproduces (beyond the 10 % drift allowance)
"$TB" export --db sweep.db --format submission --output doc.json || { echo "FAIL browser-0: export"; exit 1; }
$PY -c 'import json; d=json.load(open("doc.json"))
for r in d["results"]:
    t=r["timing"]
    if t:
        for k in ("median_ms","median_lo_ms","median_hi_ms"): t[k]*=1.3
open("slow.json","w").write(json.dumps(d))'
code=$(curl -s -o body -w '%{http_code}' -H "Authorization: Bearer $tok_carol" --data-binary @slow.json "$U/api/v1/submissions")
[ "$code" = 201 ] && ok browser-2.3 || bad browser-2.3 "carol's submission: HTTP $code $(cat body)"

# ---- the ranking through the API: which board, who leads, what is reproduced -------------------
curl -s "$U/api/v1/leaderboards" > boards.json
for f in "$TB_SRC"/results/shapes/gate.txt "$TB_SRC"/results/shapes/square.txt "$TB_SRC"/results/shapes/*.txt; do
    set_name=$(basename "$f" .txt)
    gpu=$($PY -c 'import json; print(json.load(open("boards.json"))[0]["gpu"])')
    gpu_url=$($PY -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$gpu")
    curl -s "$U/api/v1/leaderboards/$set_name/$gpu_url" > rank.json
    [ "$($PY -c 'import json; print(len(json.load(open("rank.json"))))')" = 3 ] && break
done
echo "board: $set_name on $gpu"
$PY - <<'PY' && ok browser-3.1 || bad browser-3.1 "ranking: $(head -c 600 rank.json)"
import json
r = json.load(open("rank.json"))
assert len(r) == 3, r
assert [e["submitter"] for e in r] == ["alice", "bob", "carol"], [e["submitter"] for e in r]   # a tie: the earlier first
assert abs(r[2]["geomean_tflops"] * 1.3 - r[0]["geomean_tflops"]) < 1e-6 * r[0]["geomean_tflops"]
for e in r[:2]:   # alice and bob posted the same figures: each reproduced by the other, and only by the other
    assert e["shapes"] and all(s["reproduced_by"] == 1 for s in e["shapes"]), e
assert all(s["reproduced_by"] == 0 for s in r[2]["shapes"]), r[2]   # carol: 30 % off, beyond 10 %
assert all(e["vs_cublaslt"] is None or e["vs_cublaslt"] > 0 for e in r)
PY

# ---- the page over HTTP: status, type, security headers, HEAD, 4xx pages -----------------------
B="$U/leaderboards/$set_name/$gpu_url"
curl -s -D head.txt -o page.html "$B"
grep -qi '^content-type: text/html; charset=utf-8' head.txt && grep -qi "^content-security-policy: default-src 'none'; style-src 'unsafe-inline'; img-src data:" head.txt \
    && grep -qi '^x-content-type-options: nosniff' head.txt && grep -q ' 200' head.txt \
    && ok browser-4.1 || bad browser-4.1 "headers: $(cat head.txt)"
$PY - "$port" "/leaderboards/$set_name/$gpu_url" <<'PY' && ok browser-4.2 || bad browser-4.2 "HEAD"
import socket, sys   # HEAD: the GET's status and headers, and not a byte of body
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"HEAD " + sys.argv[2].encode() + b" HTTP/1.0\r\nHost: x\r\n\r\n")
got = b""
while True:
    b = s.recv(65536)
    if not b: break
    got += b
head, _, body = got.partition(b"\r\n\r\n")
assert head.startswith(b"HTTP/1.") and b" 200 " in head.split(b"\r\n")[0], head
assert b"text/html" in head and body == b"", (head, body[:80])
PY
hcheck() {   # id, want status, url: an HTML page with that status
    local got; got=$(curl -s -o body -D h -w '%{http_code}' "$3")
    [ "$got" = "$2" ] && grep -qi '^content-type: text/html' h && grep -q '<p id="error">' body && ok "$1" || bad "$1" "HTTP $got, want $2 HTML"
}
hcheck browser-4.3 404 "$U/leaderboards/nosuchset/$gpu_url"
hcheck browser-4.4 404 "$U/leaderboards/$set_name/No%20such%20GPU"
hcheck browser-4.5 400 "$U/submissions/1%27%20or%201=1"
hcheck browser-4.6 404 "$U/submissions/999999"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$U/api/v1/leaderboards/$set_name/$gpu_url")" = 200 ] \
    && ok browser-4.7 || bad browser-4.7 "the JSON route changed"

# ---- headless Chromium: the DOM and a screenshot ---------------------------------------------------
browse() {   # url, output, what (dom|png)
    local n=$((${n_ud:-0} + 1)); n_ud=$n
    if [ "$3" = dom ]; then
        timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$tmp/ud$n" \
            --dump-dom "$1" > "$2" 2>> chrome.log
    else
        timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$tmp/ud$n" \
            --hide-scrollbars --window-size=1280,1600 --screenshot="$tmp/$2" "$1" >> chrome.log 2>&1
    fi
}
browse "$B" board.dom dom && [ -s board.dom ] && ok browser-5.1 || bad browser-5.1 "chromium --dump-dom: $(tail -3 chrome.log)"
cat > dom.py <<'PY'
# dom.py FILE: the elements of a DOM that Chromium serialised, as (tag, attrs, text, parents)
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.stack = []; s.els = []
    def handle_starttag(s, t, a):
        e = {"tag": t, "attrs": dict(a), "text": "", "parents": [x["tag"] + "#" + x["attrs"].get("id", "") for x in s.stack]}
        s.els.append(e)
        if t not in ("br", "meta", "img", "input", "link", "hr"): s.stack.append(e)
    def handle_endtag(s, t):
        while s.stack:
            if s.stack.pop()["tag"] == t: break
    def handle_data(s, d):
        for e in s.stack: e["text"] += d
def load(f):
    p = P(); p.feed(open(f, encoding="utf-8").read()); return p.els
PY
$PY - "$gpu" <<'PY' && ok browser-5.2 || bad browser-5.2 "the entry is not in the DOM"
import json, sys
sys.path.insert(0, ".")
from dom import load
els, r = load("board.dom"), json.load(open("rank.json"))
rows = [e for e in els if e["tag"] == "tr" and e["attrs"].get("class") == "entry" and "table#ranking" in e["parents"]]
assert len(rows) == 3, len(rows)
def cells(row):   # the texts of a row's cells: the td elements after it, up to the next row
    i = next(i for i, e in enumerate(els) if e is row) + 1
    out = []
    while i < len(els) and els[i]["tag"] != "tr":
        if els[i]["tag"] == "td": out.append(els[i]["text"].strip())
        i += 1
    return out
first = cells(rows[0])
assert first[1] == "alice" and first[2] == r[0]["best_variant"], first
assert first[3] == "%.1f" % r[0]["geomean_tflops"], (first, r[0])
assert [cells(x)[1] for x in rows] == ["alice", "bob", "carol"]
h1 = [e["text"] for e in els if e["tag"] == "h1"][0]
assert sys.argv[1] in h1, h1
best = [e for e in els if e["tag"] == "td" and e["attrs"].get("class") == "repro" and "table#best" in e["parents"]]
assert best and all(e["text"].strip() == "reproduced by 1" for e in best), [e["text"] for e in best]
assert not [e for e in els if e["tag"] == "script"]
PY
$PY - <<'PY' && ok browser-5.3 || bad browser-5.3 "the history chart is not in the DOM"
import json, sys
sys.path.insert(0, ".")
from dom import load
els, r = load("board.dom"), json.load(open("rank.json"))
svg = [e for e in els if e["tag"] == "svg" and "figure#history" in e["parents"]]
assert len(svg) == 1, svg
inside = lambda t: [e for e in els if e["tag"] == t and any(p.startswith("svg") for p in e["parents"])]
circles = inside("circle")
assert len(circles) == 3, len(circles)                       # one point per submission
titles = [e["text"] for e in inside("title")]
assert any("by alice" in t for t in titles) and any("by carol" in t for t in titles), titles
values = [e["text"] for e in inside("text") if e["attrs"].get("class") == "v"]
best = "%.1f" % r[0]["geomean_tflops"]
assert values == [best] * 3, values                           # the board's best after each: alice's holds
assert any("TFLOP/s" in e["text"] for e in inside("text")), "no y axis title"
assert inside("polyline")
PY
browse "$B" board.png png
$PY - <<'PY' && ok browser-5.4 || bad browser-5.4 "no PNG screenshot: $(tail -3 chrome.log)"
import struct
b = open("board.png", "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR", b[:16]
w, h = struct.unpack(">II", b[16:24])
assert w >= 800 and h >= 600 and len(b) > 10000, (w, h, len(b))
PY
cp board.png "$TB_BUILD/tests/leaderboard.png" 2>/dev/null && echo "screenshot: $TB_BUILD/tests/leaderboard.png"

# carol's detail page: her figures not reproduced, the command that measures each again
browse "$U/submissions/3" sub.dom dom
$PY - <<'PY' && ok browser-5.5 || bad browser-5.5 "submission page"
import json, sys
sys.path.insert(0, ".")
from dom import load
els = load("sub.dom")
rep = [e["text"].strip() for e in els if e["tag"] == "td" and e["attrs"].get("class") == "repro"]
assert rep and "not reproduced" in rep and "reproduced by 1" not in rep, rep
cmds = [e["text"] for e in els if e["tag"] == "code" and e["attrs"].get("class") == "command"]
assert len(cmds) == len([e for e in els if e["tag"] == "tr" and e["attrs"].get("class") == "result"]), len(cmds)
assert all(c.startswith("tilebench sweep --filter ") and " --shapes " in c for c in cmds), cmds[:2]
env = [e["text"] for e in els if e["tag"] == "dl" and e["attrs"].get("id") == "environment"][0]
assert "carol" in env and "SMs" in env and "driver" in env, env
PY
# every command a page prints parses: run with --help appended, getopt reads every flag before
# --help, and an unknown one exits 2 (as tests/doc_commands.py does for the docs)
cmdcheck() {   # id, dom
$PY - "$TB" "$2" "${3:-}" <<'PY' && ok "$1" || bad "$1" "a command sweep does not take"
import shlex, subprocess, sys
sys.path.insert(0, ".")
from dom import load
cmds = {e["text"] for e in load(sys.argv[2]) if e["tag"] == "code" and e["attrs"].get("class") == "command"}
assert cmds
if not sys.argv[3]: del sys.argv[3]
for c in cmds:
    w = shlex.split(c)
    assert w[:2] == ["tilebench", "sweep"], w
    i = 2   # flag, value, flag, value ...: a word that slipped out of its quotes breaks the pattern
    while i < len(w):
        assert w[i].startswith("--"), (c, w[i])
        if w[i] == "--stop" and len(sys.argv) > 3: assert w[i + 1] == sys.argv[3], (w[i + 1], sys.argv[3])
        i += 1 if w[i] == "--no-energy" else 2
    r = subprocess.run([sys.argv[1]] + w[1:] + ["--help"], capture_output=True, text=True)
    assert r.returncode == 0, (c, r.returncode, r.stderr)
PY
}
cmdcheck browser-5.6 sub.dom

# ---- hostile text: HTML in every string a document can carry ---------------------------------------
$PY - <<'PY'
import json
d = json.load(open("doc.json"))
X = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
d["environment"]["gpu_name"] = "H100 " + X + " & 50%/x"
d["environment"]["driver_version"] = '"><img src=x>'
d["options"]["stop"] = "stdrel'; " + X
for r in d["results"]:
    r["variant"]["family"] = X
    r["variant"]["params"] = {X: X}
    r["shape"]["label"] = X
    r["validation"]["rule"] = r["validation"]["rule"] and X
open("hostile.json", "w").write(json.dumps(d))
open("hostile.gpu", "w").write(d["environment"]["gpu_name"])
open("hostile.stop", "w").write(d["options"]["stop"])
PY
code=$(curl -s -o body -w '%{http_code}' -H "Authorization: Bearer $tok_mallory" --data-binary @hostile.json "$U/api/v1/submissions")
[ "$code" = 201 ] && ok browser-6.1 || bad browser-6.1 "the hostile document: HTTP $code $(cat body)"
hid=$($PY -c 'import json; print(json.load(open("body"))["id"])' 2>/dev/null)
hgpu=$($PY -c 'import urllib.parse; print(urllib.parse.quote(open("hostile.gpu").read(), safe=""))')
browse "$U/leaderboards/$set_name/$hgpu" hboard.dom dom
browse "$U/submissions/$hid" hsub.dom dom
browse "$U/" index.dom dom
$PY - <<'PY' && ok browser-6.2 || bad browser-6.2 "hostile text became markup"
import sys
sys.path.insert(0, ".")
from dom import load
X = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
for f, want in (("hboard.dom", 1), ("hsub.dom", 4), ("index.dom", 1)):
    els = load(f)
    assert els, f
    tags = {e["tag"] for e in els}
    assert not tags & {"script", "img", "iframe", "object", "embed"}, (f, tags)
    assert not [a for e in els for a in e["attrs"] if a.startswith("on")], f
    text = "".join(e["text"] for e in els if e["tag"] == "body")
    assert text.count(X) >= want, (f, text.count(X))   # shown, as text
main = load("hboard.dom")
assert [e for e in main if e["tag"] == "h1" and "H100 " + X + " & 50%/x" in e["text"]], "the GPU name (with its / and %) did not come back whole"
links = [e["attrs"]["href"] for e in load("index.dom") if e["tag"] == "a" and "href" in e["attrs"]]
assert any("%3Cscript%3E" in h and "%2Fx" in h for h in links), links
PY

cmdcheck browser-6.3 hsub.dom "$(cat hostile.stop)"   # the hostile stopping rule stays one quoted word
# ---- attention (issue 33): the attn board and page as Chromium reads them -----------------------------
"$TB_BUILD/tests/make_gate_fixture" --attention a.db >/dev/null || bad browser-8.0 "fixture"
out=$(TILEBENCH_TOKEN=$tok_dave "$TB" submit --server "$U" --db a.db 2>&1) && aid=$(sed -n 's/.*: submission \([0-9]*\) .*/\1/p' <<<"$out") \
    && [ -n "$aid" ] && ok browser-8.1 || bad browser-8.1 "submit: $out"
browse "$U/leaderboards/attn/fixture%20GPU" aboard.dom dom
browse "$U/submissions/${aid:-0}" asub.dom dom
$PY - <<'PY' && ok browser-8.2 || bad browser-8.2 "the attention board or page"
import sys
sys.path.insert(0, ".")
from dom import load
els = load("aboard.dom")
best = [e for e in els if e["tag"] == "tr" and "table#best" in e["parents"] and e["text"].strip() and "shape" not in e["text"]]
assert len(best) == 26, len(best)   # every shape of the attn set, each named by its token
toks = [e["text"] for e in els if e["tag"] == "code" and e["attrs"].get("class") == "attn" and "table#best" in e["parents"]]
assert len(toks) == 26 and "4x32x4096x4096x128:causal:hkv=8" in toks and "4x32x512x8192x128:causal:hkv=8" in toks, toks[:4]
body = "".join(e["text"] for e in els if e["tag"] == "body")
assert "\u00d7" not in body and "attention_fwd" in body, body[:300]
rows = [e for e in els if e["tag"] == "tr" and e["attrs"].get("class") == "entry"]
assert len(rows) == 1 and "dave" in rows[0]["text"] and "flash_fwd" in rows[0]["text"], [r["text"] for r in rows]
sub = load("asub.dom")
cmds = [e["text"] for e in sub if e["tag"] == "code" and e["attrs"].get("class") == "command"]
assert any(" --shapes 4x32x4096x4096x128:causal:hkv=8 " in c and " --layout " not in c for c in cmds), cmds
assert any(" --shapes 4096x4096x4096 --layout tn " in c for c in cmds), cmds
PY
cmdcheck browser-8.3 asub.dom   # sweep takes the attention commands as printed

n=$(grep -c " GET /" s.log); [ "$n" -ge 12 ] && ok browser-7.1 || bad browser-7.1 "$n log lines for pages"
kill -TERM $pid; wait $pid; rc=$?; pid=
[ $rc = 0 ] && ok browser-7.2 || bad browser-7.2 "SIGTERM: exit $rc"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
