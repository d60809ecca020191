#!/bin/bash
# gpu_devices.sh - several GPUs in one sweep (issue 21, --devices) on whatever the machine has:
# --devices all and --devices 0 rank the same variants the same way on each shape, outside
# ties (pairs more than 3 % apart in both runs), every result recording its GPU's UUID; and
# with two workers sharing GPU 0 (--devices 0,0), the worker of slot 1 made to fail before
# measuring (TILEBENCH_TEST_FAIL_SLOT=1) gives its shapes back and slot 0 finishes every one. About
# 40 s on one H100.
set -u
. "$(dirname "$0")/gpu_common.sh"
sel=(--variants "$TB_ZOO" --filter zoo_fast --filter zoo_slow5 --variants "$TB_VARIANTS/cublaslt.so"
     --variants "$TB_VARIANTS/simt_tiled.so")
shp=512x512x512,1024x1024x1024,2048x2048x2048,768x768x768
"$TB" sweep "${sel[@]}" --shapes $shp --devices all --no-energy --no-progress --quiet --db "$tmp/all.db" 2> "$tmp/all.err"
a=$?
"$TB" sweep "${sel[@]}" --shapes $shp --devices 0 --no-energy --no-progress --quiet --db "$tmp/one.db" 2> "$tmp/one.err"
b=$?
echo "--devices all exited $a, --devices 0 exited $b"; tail -2 "$tmp/all.err" "$tmp/one.err"
$PY - "$tmp/all.db" "$tmp/one.db" <<'PYEOF' && ok devices-1 || bad devices-1 "see above"
import itertools, json, sqlite3, sys
def load(p):
    c = sqlite3.connect(p); r = {}
    for name, m, med, status, x in c.execute("SELECT v.name, p.m, x.median_ms, x.status, x.extra_json FROM measurements x "
                                             "JOIN variants v ON v.id = x.variant_id JOIN problems p ON p.id = x.problem_id"):
        r[(name, m)] = (med, status, json.loads(x or "{}"))
    return r
a, b = load(sys.argv[1]), load(sys.argv[2])
fails = []
if set(a) != set(b) or not a: fails.append(f"different items: {sorted(set(a) ^ set(b))}")
uu = {k: v[2].get("gpu_uuid") for k, v in a.items()}
for m in {k[1] for k in a}:
    per = {uu[k] for k in a if k[1] == m}
    if len(per) != 1: fails.append(f"{m}: the shape's variants ran on {per}")
print("GPUs used by --devices all:", sorted({u for u in uu.values() if u} or {"(one GPU: no uuid recorded)"}))
for m in sorted({k[1] for k in a}):
    names = [k[0] for k in a if k[1] == m and a[k][1] == "ok" and b.get(k, (0, ""))[1] == "ok"]
    for x, y in itertools.combinations(names, 2):
        ra, rb = a[(x, m)][0] / a[(y, m)][0], b[(x, m)][0] / b[(y, m)][0]
        if abs(ra - 1) > 0.03 and abs(rb - 1) > 0.03 and (ra > 1) != (rb > 1):
            fails.append(f"{m}: {x} vs {y}: {ra:.3f} with --devices all, {rb:.3f} with --devices 0")
for f in fails: print("FAIL devices-1:", f)
sys.exit(1 if fails else 0)
PYEOF
out=$(TILEBENCH_TEST_FAIL_SLOT=1 "$TB" sweep "${sel[@]}" --shapes $shp --devices 0,0 --no-energy --no-progress --quiet \
      --db "$tmp/fail.db" 2>&1); rc=$?
echo "$out" | grep -v '^\[' | tail -4
$PY - "$tmp/fail.db" <<'PYEOF' && [ $rc = 0 ] && grep -q "its worker failed before measuring; shape .* goes to another GPU" <<<"$out" && ok devices-2 || bad devices-2 "exit $rc"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("SELECT status, count(*) FROM measurements GROUP BY status").fetchall()
print("statuses with slot 1 failing:", rows)
bad = [r for r in rows if r[0] not in ("ok", "unsupported")]
sys.exit(1 if bad or not rows else 0)
PYEOF
finish
