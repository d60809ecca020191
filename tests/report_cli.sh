#!/bin/bash
# report_cli.sh - tilebench report without a GPU: the HTML page and its SVG figures built from the
# real H100 sweep tests/data/h100-small.db (migrated copy) and from the invented databases of
# tests/make_fixture_db.c (a calibration and DRAM counters: a measured roofline) and
# tests/make_gate_fixture.c (two runs for --compare, a gate run with hostile text); every figure
# parsed as SVG and its plotted series counted against the database (bars, cells, points, one
# vertex per sample), the tables checked against the database, show's ranks and compare's ratios;
# escaping of hostile names; bad input refused with exit 2 and nothing written; an interrupted
# report leaves the old one whole; the script found in an install prefix; the page rendered by
# headless Chromium to a screenshot that must not be blank.
# matplotlib (python3-matplotlib) and chromium are installed by scripts/setup.sh: when either
# is missing this test FAILS (it does not skip). Environment (set by CTest): TB, TB_BUILD, TB_SRC.
set -u
pass=0; fail=0
PY=/usr/bin/python3
tmp=$(mktemp -d); bg=
trap '[ -n "$bg" ] && kill $bg 2>/dev/null; rm -rf "$tmp"' EXIT
ok()   { echo "ok   $1"; pass=$((pass+1)); }
bad()  { echo "FAIL $1: $2"; fail=$((fail+1)); }
run() {   # id, wanted exit code, a needle in its output (or ""), the command
    local id=$1 want=$2 needle=$3; shift 3
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" != "$want" ]; then bad "$id" "exit $rc, want $want: $out"; return; fi
    if [ -n "$needle" ] && ! grep -qF -- "$needle" <<<"$out"; then bad "$id" "no '$needle' in: $out"; return; fi
    if [ "$want" = 2 ] && [ "$(grep -c . <<<"$out")" != 1 ]; then bad "$id" "not one line: $out"; return; fi
    ok "$id"
}
cd "$tmp"
unset GITHUB_STEP_SUMMARY TILEBENCH_PYTHON

# ---- 0. what the test needs: a FAIL, never a skip ------------------------------------------------
if ! $PY -c 'import matplotlib' 2>/dev/null; then
    echo "FAIL report-0.1: no matplotlib for $PY (scripts/setup.sh installs python3-matplotlib)"; exit 1; fi
chrome=$(command -v chromium || true)
if [ -z "$chrome" ]; then echo "FAIL report-0.2: no chromium on PATH (scripts/setup.sh installs it)"; exit 1; fi
cp "$TB_SRC/tests/data/h100-small.db" h100.db && "$TB" migrate --db h100.db >/dev/null \
    || { echo "FAIL report-0.3: cannot migrate a copy of tests/data/h100-small.db"; exit 1; }
"$TB_BUILD/tests/make_fixture_db" old.db --schema 3 || { echo "FAIL report-0.3: a schema-3 database"; exit 1; }
"$TB_BUILD/tests/make_fixture_db" f.db >/dev/null && "$TB_BUILD/tests/make_gate_fixture" g.db >/dev/null \
    || { echo "FAIL report-0.4: fixtures"; exit 1; }

# the checks, shared by the sections below: python3 check.py WHAT DB DIR [args]
cat > check.py <<'PY'
import json, math, re, sqlite3, sys, xml.etree.ElementTree as ET
what, db, out = sys.argv[1:4]
args = sys.argv[4:]
con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)   # leaves no -wal/-shm
con.text_factory = lambda b: b.decode("utf-8", "backslashreplace")
q = lambda sql, *a: con.execute(sql, a).fetchall()

def strip(e):                                  # the page is XHTML with an inline SVG namespace
    for x in e.iter():
        if isinstance(x.tag, str) and "}" in x.tag:
            x.tag = x.tag.split("}", 1)[1]
    return e

def page():
    s = open(f"{out}/index.html", encoding="utf-8").read()
    assert s.startswith("<!DOCTYPE html>\n"), s[:40]
    return strip(ET.fromstring(s.split("\n", 1)[1]))

def table(root, tid):
    t = [x for x in root.iter("table") if x.get("id") == tid]
    assert len(t) == 1, (tid, len(t))
    head = ["".join(th.itertext()) for th in t[0].iter("th")]
    rows = [["".join(td.itertext()) for td in tr.findall("td")] for tr in t[0].find("tbody").findall("tr")]
    return head, rows

def svg(name):
    return strip(ET.parse(f"{out}/{name}").getroot())

def ids(root, prefix):
    return [e for e in root.iter() if (e.get("id") or "").startswith(prefix)]

def vertices(g):                               # the vertices of a line's path
    return sum(len(re.findall(r"[ML]", p.get("d", ""))) for p in g.iter("path"))

run = int(args[0]) if args else q("SELECT max(id) FROM runs")[0][0]
RANKED = "m.status = 'ok' AND m.disposition = 'passed' AND m.median_ms > 0"
probs = q("SELECT DISTINCT p.id, p.m, p.n, p.k, p.batch FROM measurements m JOIN problems p ON p.id = m.problem_id "
          "WHERE m.run_id = ? ORDER BY p.id", run)
key = lambda p: f"{p[1]}x{p[2]}x{p[3]}" + (f"x{p[4]}" if p[4] > 1 else "")

def tflops(mid):
    med, tf, m, n, k, b = q("SELECT m.median_ms, m.tflops, p.m, p.n, p.k, p.batch FROM measurements m "
                            "JOIN problems p ON p.id = m.problem_id WHERE m.id = ?", mid)[0]
    return tf if tf is not None else 2.0 * m * n * k * b / (med * 1e-3) / 1e12

if what == "files":              # every figure the database calls for, and nothing else
    import os
    want = {"index.html", "heatmap.svg", "roofline.svg"} | {f"rank-{key(p)}.svg" for p in probs}
    got = set(os.listdir(out))
    extra = got - want - {"clock.svg", "compare.svg"} - {x for x in got if x.startswith("design-")}
    assert want <= got and not extra, (sorted(want - got), sorted(extra))
    for f in got - {"index.html"}:
        svg(f)                   # each parses as XML
    print(len(got) - 1)

elif what == "ranking":          # bars and whiskers per shape = ranked measurements; table = DB; ranks = show's
    root = page()
    show = open(args[1]).read()
    shown, cur = {}, None
    for line in show.splitlines():
        m = re.match(r"^shape (\S+)", line)
        if m: cur = m.group(1); shown[cur] = {}; continue
        m = re.match(r"^\s+(=1|\d+)\s+(\S+)\s+\d", line)
        if m and cur: shown[cur][m.group(2)] = m.group(1)
    for p in probs:
        rows = q(f"SELECT m.id, v.name, m.median_ms FROM measurements m JOIN variants v ON v.id = m.variant_id "
                 f"WHERE m.run_id = ? AND m.problem_id = ? AND {RANKED}", run, p[0])
        s = svg(f"rank-{key(p)}.svg")
        assert len(ids(s, "bar-")) == len(rows), (key(p), len(ids(s, "bar-")), len(rows))
        assert len(ids(s, "ci-")) == len(rows), (key(p), "whiskers")
        head, t = table(root, f"t-rank-{key(p)}")
        assert head[:3] == ["rank", "variant", "TFLOP/s"], head
        ranked = [r for r in t if r[0] != "-"]
        assert len(ranked) == len(rows) and len(t) == len(q("SELECT id FROM measurements WHERE run_id = ? AND problem_id = ?", run, p[0]))
        db = {name: (mid, med) for mid, name, med in rows}
        for r in ranked:
            mid, med = db[r[1]]
            assert abs(float(r[2]) - tflops(mid)) <= 0.051, (r, tflops(mid))
            assert abs(float(r[3]) - med) <= 0.00006, (r, med)
            assert shown[key(p)][r[1]] == r[0], (key(p), r[1], r[0], shown[key(p)].get(r[1]))
    print(len(probs))

elif what == "heatmap":          # a cell per ranked (variant, shape) where a cuBLAS ran; its % from the medians
    root = page()
    s = svg("heatmap.svg")
    cols = [p for p in probs if q(f"SELECT 1 FROM measurements m JOIN variants v ON v.id = m.variant_id WHERE m.run_id = ? "
                                 f"AND m.problem_id = ? AND v.name IN ('cublaslt', 'cublaslt-tuned') AND {RANKED}", run, p[0])]
    cells, names = 0, set()
    head, t = table(root, "t-heatmap")
    byname = {r[0]: r for r in t}
    for c, p in enumerate(cols):
        ref = min(x for (x,) in q(f"SELECT m.median_ms FROM measurements m JOIN variants v ON v.id = m.variant_id WHERE "
                                 f"m.run_id = ? AND m.problem_id = ? AND v.name IN ('cublaslt', 'cublaslt-tuned') AND {RANKED}",
                                 run, p[0]))
        for name, med in q(f"SELECT v.name, m.median_ms FROM measurements m JOIN variants v ON v.id = m.variant_id "
                           f"WHERE m.run_id = ? AND m.problem_id = ? AND {RANKED}", run, p[0]):
            cells += 1
            assert abs(float(byname[name][1 + c]) - 100 * ref / med) <= 0.051, (name, byname[name][1 + c], 100 * ref / med)
        names |= {n for (n,) in q("SELECT v.name FROM measurements m JOIN variants v ON v.id = m.variant_id "
                                  "WHERE m.run_id = ? AND m.problem_id = ?", run, p[0])}
    assert len(ids(s, "cell-")) == cells, (len(ids(s, "cell-")), cells)
    assert len(ids(s, "gap-")) == len(names) * len(cols) - cells, "grey cells"
    assert len(t) == len(names)
    print(cells)

elif what == "roofline":         # a point per ranked measurement; the ceilings labelled with their source
    root = page()
    s = svg("roofline.svg")
    n = q(f"SELECT count(*) FROM measurements m WHERE m.run_id = ? AND {RANKED}", run)[0][0]
    assert len(ids(s, "pt-")) == n, (len(ids(s, "pt-")), n)
    head, t = table(root, "t-roofline")
    assert len(t) == n
    text = " ".join(s.itertext())
    source = args[1]             # nominal | measured
    assert f"tensor ceiling {args[2]} TFLOP/s, {source}" in text, text[:400]
    assert f"DRAM {args[3]} GB/s" in text and source + ":" in text
    assert ("ceilings " + source) in "".join(root.itertext())
    print(n)

elif what == "clock":            # one line per measurement with clock stamps, one vertex per stamp
    root = page()
    if len(args) > 1:
        pid = [p[0] for p in probs if key(p) == args[1]][0]
    else:
        cand = [p for p in probs if q("SELECT 1 FROM samples s JOIN measurements m ON m.id = s.measurement_id WHERE "
                                      "m.run_id = ? AND m.problem_id = ? AND s.clock_mhz IS NOT NULL", run, p[0])]
        pid = max(cand, key=lambda p: (2.0 * p[1] * p[2] * p[3] * p[4], -p[0]))[0]
    counts = q("SELECT m.id, v.name, count(s.clock_mhz) FROM measurements m JOIN variants v ON v.id = m.variant_id "
               "JOIN samples s ON s.measurement_id = m.id WHERE m.run_id = ? AND m.problem_id = ? "
               "GROUP BY m.id HAVING count(s.clock_mhz) > 0", run, pid)
    s = svg("clock.svg")
    lines = ids(s, "clk-")
    assert len(lines) == len(counts), (len(lines), len(counts))
    assert sorted(vertices(g) for g in lines) == sorted(c for _, _, c in counts), "vertices"
    head, t = table(root, "t-clock")
    assert {r[0]: int(r[1]) for r in t} == {n: c for _, n, c in counts}
    _, every = table(root, "t-clock-all")
    assert len(every) == sum(c for _, _, c in counts)
    title = " ".join(s.itertext())
    k = [key(p) for p in probs if p[0] == pid][0]
    assert f"at {k}" in title, title[:200]
    print(k, sum(c for _, _, c in counts))

elif what == "design":           # every point drawn is a row's figure in the table, and the DB's
    import glob, os
    root = page()
    total = 0
    for f in sorted(glob.glob(f"{out}/design-*.svg")):
        stem = os.path.basename(f)[:-4]
        s = svg(os.path.basename(f))
        head, t = table(root, f"t-{stem}")
        shapes = [h.split()[0] for h in head[4:]]
        pts = 0
        for r in t:
            for sk, cell in zip(shapes, r[4:]):
                if cell == "-": continue
                pts += 1
                pid = [p[0] for p in probs if key(p) == sk][0]
                mid = q("SELECT m.id FROM measurements m JOIN variants v ON v.id = m.variant_id WHERE m.run_id = ? "
                        "AND m.problem_id = ? AND v.name = ?", run, pid, r[2])[0][0]
                assert abs(float(cell) - tflops(mid)) <= 0.051, (r, sk)
        assert len(ids(s, "pt-")) == pts, (stem, len(ids(s, "pt-")), pts)
        total += pts
    print(total)

elif what == "compare":          # the chart's points and the table are tilebench compare's rows
    root = page()
    doc = json.load(open(args[1]))
    with_ratio = [r for r in doc["rows"] if isinstance(r.get("ratio"), (int, float))]
    s = svg("compare.svg")
    assert len(ids(s, "ratio-")) == len(with_ratio), (len(ids(s, "ratio-")), len(with_ratio))
    head, t = table(root, "t-compare")
    assert len(t) == len(doc["rows"])
    for r, d in zip(t, doc["rows"]):
        assert r[0] == d["variant"] and r[1] == d["shape"], (r, d)
        if isinstance(d.get("ratio"), (int, float)):
            assert r[4] == f"{d['ratio']:.3f} [{d['lo']:.3f}, {d['hi']:.3f}]", (r, d)
        assert r[5].startswith(d["change"]), (r, d)
    print(len(with_ratio))

elif what == "page":             # well-formed, no script, no external resource, ids unique, every figure inline
    import os
    s = open(f"{out}/index.html", encoding="utf-8").read()
    root = page()
    assert not list(root.iter("script")) and "<script" not in s.lower(), "a script element"
    bad = re.search(r"\b(src|href)=\"(?!#|data:)[^\"]{0,80}", s)   # only in-page references and data: URIs
    assert not bad, bad.group(0)
    assert "Content-Security-Policy" in s and "default-src 'none'" in s
    allids = [e.get("id") for e in root.iter() if e.get("id")]
    assert len(allids) == len(set(allids)), "duplicate ids"
    nsvg = len([f for f in os.listdir(out) if f.endswith(".svg")])
    assert len(list(root.iter("svg"))) == nsvg, (len(list(root.iter("svg"))), nsvg)
    assert all(ord(c) >= 32 or c in "\n\t" for c in s), "a raw control character"
    print(nsvg)
PY
chk() { $PY check.py "$@" 2>&1 | tail -1; return ${PIPESTATUS[0]}; }

# ---- 1. bad input: exit 2, one line, nothing written -----------------------------------------------
run report-1.1 2 "report needs --output DIR" "$TB" report --db h100.db
run report-1.2 2 "unknown or incomplete option '--bogus' for 'report'" "$TB" report --db h100.db --output o --bogus
run report-1.3 2 "invalid value '0' for --run" "$TB" report --db h100.db --output o --run 0
run report-1.4 2 "--control needs --compare RUN" "$TB" report --db g.db --output o --control cublaslt
run report-1.5 2 "invalid value '4096x' for --shape" "$TB" report --db h100.db --output o --shape 4096x
run report-1.6 2 "shape '1x2x3' is not in run 1 (its shapes: 4096x4096x4096, 8192x8192x8192, 4096x4096x14336)" \
    "$TB" report --db h100.db --output o --shape 1x2x3
run report-1.7 2 "cannot open 'missing.db'" "$TB" report --db missing.db --output o
echo "not a database" > text.db
run report-1.8 2 "text.db" "$TB" report --db text.db --output o
run report-1.9 2 "tilebench migrate --db old.db" "$TB" report --db old.db --output o
run report-1.10 2 "99" "$TB" report --db h100.db --output o --run 99
run report-1.11 2 "--compare:" "$TB" report --db g.db --output o --run 2 --compare 99
run report-1.12 2 "--compare 2 is the report's own run" "$TB" report --db g.db --output o --run 2 --compare 2
echo keep > afile
run report-1.13 2 "output 'afile' exists and is not a directory" "$TB" report --db h100.db --output afile
[ "$(cat afile)" = keep ] && ok report-1.14 || bad report-1.14 "the file was changed"
mkdir mine && echo notes > mine/notes.txt
run report-1.15 2 "output directory 'mine' holds 'notes.txt', which a report does not write" \
    "$TB" report --db h100.db --output mine
[ "$(ls -A mine)" = notes.txt ] && [ "$(cat mine/notes.txt)" = notes ] && ok report-1.16 || bad report-1.16 "mine/ changed: $(ls -A mine)"
mkdir dbdir && cp f.db dbdir/f.db
run report-1.17 2 "output directory 'dbdir' holds the database 'dbdir/f.db'" "$TB" report --db dbdir/f.db --output dbdir
run report-1.18 2 "its folder 'no/such' does not exist" "$TB" report --db h100.db --output no/such/dir
run report-1.19 2 "not standard output" "$TB" report --db h100.db --output -
run report-1.20 2 "cannot run python3 '/nonexistent/python3'" env TILEBENCH_PYTHON=/nonexistent/python3 \
    "$TB" report --db h100.db --output o
printf '#!/bin/sh\nexec %s -S "$@"\n' "$PY" > nompl.sh && chmod +x nompl.sh   # no site-packages: no matplotlib
run report-1.21 2 "matplotlib is missing" env TILEBENCH_PYTHON=$tmp/nompl.sh "$TB" report --db h100.db --output o
left=$(ls -A | grep -vE '^(old.db|h100.db|f.db|g.db|check.py|text.db|afile|mine|dbdir|nompl.sh)$' || true)
[ -z "$left" ] && ok report-1.22 || bad report-1.22 "a refused report left: $left"
out=$("$TB" report --help) && grep -q -- "--compare RUN" <<<"$out" && grep -q -- "--shape" <<<"$out" \
    && ok report-1.23 || bad report-1.23 "--help: $out"

# ---- 2. the real H100 sweep ---------------------------------------------------------------------------
sum0=$(sha256sum h100.db)
out=$("$TB" report --db h100.db --output rep 2>&1); rc=$?
[ $rc = 0 ] && grep -q "report of run 1: rep/index.html and 8 figures" <<<"$out" && ok report-2.1 || bad report-2.1 "exit $rc: $out"
[ "$(sha256sum h100.db)" = "$sum0" ] && [ ! -e h100.db-wal ] && [ ! -e h100.db-shm ] \
    && ok report-2.2 || bad report-2.2 "the database changed or a -wal/-shm is left: $(ls h100.db*)"
r=$(chk files h100.db rep) && [ "$r" = 8 ] && ok report-2.3 || bad report-2.3 "figures: $r"
r=$(chk page h100.db rep) && ok report-2.4 || bad report-2.4 "$r"
"$TB" show --db h100.db > show.txt
r=$(chk ranking h100.db rep 1 show.txt) && ok report-2.5 || bad report-2.5 "rankings: $r"
r=$(chk heatmap h100.db rep) && ok report-2.6 || bad report-2.6 "heat map: $r"
r=$(chk roofline h100.db rep 1 nominal 1071 3350) && [ "$r" = 55 ] && ok report-2.7 || bad report-2.7 "roofline: $r"
r=$(chk clock h100.db rep) && [ "$r" = "8192x8192x8192 672" ] && ok report-2.8 || bad report-2.8 "clock: $r"
r=$(chk design h100.db rep) && [ "$r" -gt 0 ] && ok report-2.9 || bad report-2.9 "design space: $r"
grep -q 'no neighbour of the best point in: stages, schedule' rep/index.html && ok report-2.10 \
    || bad report-2.10 "the wgmma knobs without a single-knob neighbour are not named"
grep -q 'power mean 646 W, max 691 W of the 700 W limit, power-capped in 191 of 195 NVML samples' rep/clock.svg \
    && ok report-2.11 || bad report-2.11 "no NVML power line in clock.svg"
# a second report over the first: replaced whole, a stale figure gone, no temporary directory left
cp rep/heatmap.svg rep/rank-stale.svg
out=$("$TB" report --db h100.db --output rep/ --shape 4096x4096x4096 2>&1) && [ ! -e rep/rank-stale.svg ] \
    && [ -z "$(ls -A | grep '\.tmp\.')" ] && ok report-2.12 || bad report-2.12 "$out; $(ls -A rep)"
r=$(chk clock h100.db rep 1 4096x4096x4096) && [ "$r" = "4096x4096x4096 3026" ] && ok report-2.13 || bad report-2.13 "--shape: $r"

# ---- 3. the fixture databases -------------------------------------------------------------------------
out=$("$TB" report --db f.db --output repf 2>&1) && ok report-3.1 || bad report-3.1 "$out"
r=$(chk roofline f.db repf 1 measured 700 2500) && ok report-3.2 || bad report-3.2 "measured ceilings: $r"
# cublaslt's DRAM counters: 8 MiB at 256 FLOP/byte, 33.1 % of the attainable 640 (tests/make_fixture_db.c)
grep -q '<td>cublaslt</td><td>1024x1024x1024 tn</td><td class="n">256.0</td><td>measured</td><td class="n">211.6</td><td class="n">640.0</td><td class="n">33.1 %</td><td>memory</td>' repf/index.html \
    && ok report-3.3 || bad report-3.3 "the measured roofline row of cublaslt"
"$TB" compare 1 2 --db g.db --control cublaslt --format json > c.json
GITHUB_STEP_SUMMARY=$tmp/summary.md "$TB" report --db g.db --run 2 --compare 1 --control cublaslt --output repg > /dev/null 2>&1 \
    && ok report-3.4 || bad report-3.4 "report --compare exits $?"
[ ! -e summary.md ] && ok report-3.5 || bad report-3.5 "the report appended to GITHUB_STEP_SUMMARY"
r=$(chk compare g.db repg 2 c.json) && [ "$r" = 7 ] && ok report-3.6 || bad report-3.6 "before/after: $r"
r=$(chk page g.db repg) && ok report-3.7 || bad report-3.7 "$r"
# run 3: a gate run whose crash reason carries markup, quotes, escape sequences and bad UTF-8
"$TB" report --db g.db --run 3 --output rep3 > /dev/null 2>&1 && r=$(chk page g.db rep3) && \
    grep -qF 'worker killed by signal 11 &lt;Segmentation fault&gt; &amp; &quot;planted&quot; \x1b]0;pwned\x07\x1b[2J' rep3/index.html \
    && ok report-3.8 || bad report-3.8 "the crash reason is not shown escaped: $r"
# hostile variant names and labels, written straight into a copy of the database
cp f.db hx.db
$PY - hx.db <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE variants SET name = ?, family = ? WHERE name = 'fixture_fast'",
          ('<script>alert(1)</script> & $x^2$ \x1b[31m', '"><img src=x onerror=alert(1)>'))
c.execute("UPDATE problems SET label = '<b>bold</b>&'")
c.commit()
PY
# attention rows (issue 33): the ranking figure named by the token, the rate from the op's FLOPs
# (causal counted as the pairs computed, docs/method.md), the roofline from its bytes
"$TB_BUILD/tests/make_gate_fixture" --attention at.db > /dev/null
out=$("$TB" report --db at.db --output repat 2>&1) && r=$(chk page at.db repat) && \
    ls repat | grep -qF 'rank-2x16x8192x8192x128' && \
    grep -qF '4x32x4096x4096x128:causal:hkv=8' repat/index.html && \
    $PY - at.db "$TB_SRC/scripts/report" <<'PY' && ok report-3.10 || bad report-3.10 "attention: $out $r"
import sqlite3, sys
sys.path.insert(0, sys.argv[2])
from report_data import Problem, attn_pairs
assert attn_pairs(4096, 4096, True) == 4096 * 4097 // 2 and attn_pairs(512, 8192, True) == 512 * 8192 - 512 * 511 // 2
c = sqlite3.connect(sys.argv[1]); c.row_factory = sqlite3.Row
for r in c.execute("SELECT * FROM problems WHERE op = 'attention_fwd'"):
    p = Problem(dict(r))
    want = 4.0 * r["batch"] * r["heads"] * r["head_dim"] * attn_pairs(r["seq_q"], r["seq_k"], r["causal"])
    assert p.flops == want and p.flops > 0, (p.key, p.flops, want)
    assert p.compulsory_bytes() > 0
PY
# --shape takes an attention token, and names the run's shapes by their tokens
out=$("$TB" report --db at.db --output repat2 --shape 2x16x8192x8192x128 2>&1) && ok report-3.11 || bad report-3.11 "$out"
run report-3.12 2 "its shapes: 4x32x4096x4096x128:causal:hkv=8, 2x16x8192x8192x128" "$TB" report --db at.db --output repat3 --shape 1x2x8x8x64
"$TB" report --db hx.db --output rephx > /dev/null 2>&1 && r=$(chk page hx.db rephx) && \
    grep -qF '&lt;script&gt;alert(1)&lt;/script&gt; &amp; $x^2$ \x1b[31m' rephx/index.html && \
    ! grep -q '<img' rephx/index.html && grep -qF '$x^2$' rephx/rank-1024x1024x1024.svg && \
    ! grep -qP '[\x00-\x08\x0b\x0c\x0e-\x1f]' rephx/*.svg && ok report-3.9 || bad report-3.9 "hostile names: $r"

# ---- 4. interrupted: the old report stays whole, nothing is left -----------------------------------
printf '#!/bin/bash\ntrap "kill \\$!; exit 143" TERM\nsleep 30 & wait $!\nexec %s "$@"\n' "$PY" > slowpy.sh && chmod +x slowpy.sh
before=$(cat repf/index.html | sha256sum)
TILEBENCH_PYTHON=$tmp/slowpy.sh "$TB" report --db f.db --output repf > int.out 2>&1 & bg=$!
sleep 1; kill -TERM $bg; wait $bg; rc=$?; bg=
[ $rc = 143 ] && [ "$(cat repf/index.html | sha256sum)" = "$before" ] && [ -z "$(ls -A | grep '\.tmp\.')" ] \
    && ok report-4.1 || bad report-4.1 "exit $rc, want 143, old report whole, no temporary directory: $(ls -A)"
# (a background job starts with SIGINT ignored, which report keeps ignored: python puts it back first)
TILEBENCH_PYTHON=$tmp/slowpy.sh $PY -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$TB" report --db f.db --output fresh > int.out 2>&1 & bg=$!
sleep 1; kill -INT $bg; wait $bg; rc=$?; bg=
[ $rc = 130 ] && [ ! -e fresh ] && [ -z "$(ls -A | grep '\.tmp\.')" ] && ok report-4.2 || bad report-4.2 "exit $rc: $(ls -A)"

# ---- 5. installed: the script beside the binary (bin/../share/tilebench/report) wins ----------------
mkdir -p pfx/bin pfx/share/tilebench && cp "$TB" pfx/bin/ && cp -r "$TB_SRC/scripts/report" pfx/share/tilebench/report \
    && sed -i 's/tilebench report: run /tilebench report (installed copy): run /' pfx/share/tilebench/report/__main__.py
pfx/bin/tilebench report --db f.db --output repi > /dev/null 2>&1 && grep -q "installed copy" repi/index.html \
    && [ ! -e pfx/share/tilebench/report/__pycache__ ] && ok report-5.1 || bad report-5.1 "the installed script was not used"

# ---- 6. headless Chromium: the page renders, and not blank ------------------------------------------
timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$tmp/ud1" \
    --hide-scrollbars --window-size=1200,2000 --screenshot="$tmp/page.png" "file://$tmp/rep/index.html" > chrome.log 2>&1
$PY - page.png <<'PY' && ok report-6.1 || bad report-6.1 "screenshot blank or missing: $(tail -3 chrome.log)"
import sys
import matplotlib.image as mi
a = mi.imread(sys.argv[1])[:, :, :3]
h, w, _ = a.shape
assert (w, h) == (1200, 2000), (w, h)
ink = (a < 0.85).any(axis=2)                   # pixels that are not (near) white
assert ink.mean() > 0.03, ink.mean()
assert ink[: h // 2].mean() > 0.01 and ink[h // 2:].mean() > 0.01, "one half is empty"
colour = (a.max(axis=2) - a.min(axis=2)) > 0.25   # the bars are coloured, not only text
assert colour.mean() > 0.005, colour.mean()
print(round(float(ink.mean()), 3))
PY
timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$tmp/ud2" \
    --dump-dom "file://$tmp/rep/index.html" > dom.html 2>> chrome.log
n=$(grep -o '<svg ' dom.html | wc -l)
[ "$n" = 8 ] && grep -q 'id="t-heatmap"' dom.html && ok report-6.2 || bad report-6.2 "$n inline SVGs in Chromium's DOM, want 8"
cp page.png "$TB_BUILD/tests/report-page.png" 2>/dev/null && echo "screenshot: $TB_BUILD/tests/report-page.png"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
