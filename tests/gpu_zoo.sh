#!/bin/bash
# gpu_zoo.sh - the zoo's run-time members in one sweep with good variants: each misbehaviour
# is reported as tests/zoo/README.md says, and the good variants are still measured and
# ranked on every shape; then the validation rule in layout tt (zoo_ldb_as_k, zoo-4).
set -u
. "$(dirname "$0")/gpu_common.sh"
db="$tmp/zoo.db"
"$TB" sweep --variants "$TB_ZOO" --variants "$TB_VARIANTS" \
    --filter 'zoo_crash' --filter 'zoo_illegal' --filter 'zoo_hang' --filter 'zoo_exit' \
    --filter 'zoo_abort' --filter 'zoo_wrong' --filter 'zoo_zeros' --filter 'zoo_slowsetup_fail' \
    --filter 'zoo_unsupported' --filter 'zoo_nosass' --filter cublaslt --filter 'simt_*' \
    --shapes 256x512x256,320x200x136 --timeout 3 --max-time 0.5 --no-progress --db "$db" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
[ $rc = 0 ] && ok zoo-1.1 || bad zoo-1.1 "sweep exited $rc"
grep -q "refused: .*zoo_nosass.*no SASS for this GPU" "$tmp/err" && ok zoo-1.2 || bad zoo-1.2 "zoo_nosass not refused for its SASS"
"$TB" export --db "$db" --format json > "$tmp/e.json" || bad zoo-1.3 "export failed"
$PY - "$tmp/e.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
res = {}
for r in d["results"]:
    res.setdefault(r["variant"]["name"], []).append(r)
fails = []
def check(name, cond, what):
    rows = res.get(name, [])
    if len(rows) != 2:
        fails.append(f"{name}: {len(rows)} results, want 2")
        return
    for r in rows:
        if not cond(r):
            fails.append(f"{name} {r['problem']['m']}x{r['problem']['n']}x{r['problem']['k']}: {what}: "
                         f"{r['status']}/{r['disposition']} {r['reason']!r}")
check("zoo_crash", lambda r: r["status"] == "crashed" and "signal 11" in r["reason"], "crashed by SIGSEGV")
check("zoo_illegal", lambda r: r["status"] == "crashed" and "illegal memory access" in r["reason"], "crashed, illegal address")
check("zoo_hang", lambda r: r["status"] == "timeout" and "watchdog" in r["reason"], "timeout")
check("zoo_exit", lambda r: r["status"] == "crashed" and "status 3" in r["reason"], "crashed, exit 3")
check("zoo_abort", lambda r: r["status"] == "crashed" and "signal 6" in r["reason"], "crashed by SIGABRT")
def wrong_ok(r):
    p = r["problem"]
    want = min(p["m"], 128) * min(p["n"], 128)
    return r["status"] == "ok" and r["disposition"] == "incorrect" and r["rule"] == "elementwise" \
        and r["validation"]["n_bad"] == want
check("zoo_wrong", wrong_ok, "incorrect by the elementwise rule, exactly the planted tile")
check("zoo_zeros", lambda r: r["status"] == "ok" and r["disposition"] == "incorrect", "incorrect")
check("zoo_slowsetup_fail", lambda r: r["status"] == "error" and "planted setup failure" in r["reason"], "setup error")
check("zoo_unsupported", lambda r: r["status"] == "unsupported" and "planted: supports nothing" in r["reason"], "unsupported")
for good in ("cublaslt", "simt_naive", "simt_tiled"):
    names = [n for n in res if n.startswith(good)]
    if not names:
        fails.append(f"{good}: not measured")
    for n in names:
        check(n, lambda r: r["status"] == "ok" and r["disposition"] == "passed" and r["tflops"] and
              r["timing"]["n_samples"] >= 10 and len(r["timing"]["samples_ms"]) == r["timing"]["n_samples"],
              "measured and passed")
for f in fails:
    print("FAIL zoo-2:", f)
print(f"zoo-2: {len(fails)} failures over {sum(len(v) for v in res.values())} results")
sys.exit(1 if fails else 0)
PYEOF
[ $? = 0 ] && ok zoo-2 || bad zoo-2 "see above"
"$TB" show --db "$db" > "$tmp/show" 2>&1 && grep -qE '^ +1 +(cublaslt|simt)' "$tmp/show" && ok zoo-3 || bad zoo-3 "show did not rank a good variant first: $(cat "$tmp/show")"

# zoo-4: the rule in layout tt (issue 31). zoo_ldb_as_k reads tt's row-major B with pitch k:
# exact on a square shape (k = n = ldb), wrong where k != n; cublaslt passes both
db4="$tmp/zoo4.db"
"$TB" sweep --variants "$TB_ZOO" --variants "$TB_VARIANTS" --filter zoo_ldb_as_k --filter cublaslt \
    --layout tt --shapes 256x256x256,384x640x320,128x512x256 --stop fixed:samples=3 --no-energy \
    --no-progress --quiet --db "$db4" 2>"$tmp/err4"
rc=$?
[ $rc = 0 ] && ok zoo-4.1 || bad zoo-4.1 "tt sweep exited $rc: $(tail -3 "$tmp/err4")"
"$TB" export --db "$db4" --format json > "$tmp/e4.json" || bad zoo-4.2 "export failed"
$PY - "$tmp/e4.json" <<'PYEOF'
import json, sys
fails, seen = [], 0
for r in json.load(open(sys.argv[1]))["results"]:
    p, n = r["problem"], r["variant"]["name"]
    tag = f"{n} {p['m']}x{p['n']}x{p['k']} {p['layouts']}"
    if p["layouts"] != "tt": fails.append(f"{tag}: not layout tt")
    ok = r["status"] == "ok" and r["disposition"] == "passed"
    if n == "cublaslt" or (n == "zoo_ldb_as_k" and p["k"] == p["n"]):
        seen += 1
        if not ok: fails.append(f"{tag}: want passed, got {r['status']}/{r['disposition']} {r['rule']} {r['reason']}")
    elif n == "zoo_ldb_as_k":
        seen += 1
        v = r["validation"]
        if not (r["status"] == "ok" and r["disposition"] == "incorrect" and r["rule"] == "elementwise"
                and v["n_bad"] > p["m"] * p["n"] // 2 and v["n_nonfinite"] == 0):
            fails.append(f"{tag}: want incorrect by the elementwise rule, got {r['status']}/{r['disposition']} "
                         f"{r['rule']} {r['reason']}")
    print(f"{tag}: {r['status']}/{r['disposition']} {r['rule']}")
if seen != 6: fails.append(f"{seen} results of zoo_ldb_as_k and cublaslt, want 6")
for f in fails: print("FAIL zoo-4.2:", f)
sys.exit(1 if fails else 0)
PYEOF
[ $? = 0 ] && ok zoo-4.2 || bad zoo-4.2 "see above"
finish
