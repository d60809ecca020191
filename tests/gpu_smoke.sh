#!/bin/bash
# gpu_smoke.sh - the default sweep (every shipped variant) end to end on the smoke set: all
# measured, every variant that ran passed validation, stored, shown, exported. (The store's
# resilience, a killed and an interrupted sweep finished by --resume: gpu_resume.sh.)
set -u
. "$(dirname "$0")/gpu_common.sh"
db="$tmp/smoke.db"
"$TB" sweep --shapes smoke --db "$db" --no-progress >"$tmp/out" 2>"$tmp/err"; rc=$?
cat "$tmp/out"; tail -3 "$tmp/err"
[ $rc = 0 ] && ok smoke-1.1 || bad smoke-1.1 "default sweep on smoke exited $rc: $(tail -5 "$tmp/err")"
# the GEMM variants: a sweep of GEMM shapes leaves out a variant that computes no GEMM (attn_*)
nv=$("$TB" list --format json 2>/dev/null | $PY -c "import json,sys; print(sum('gemm' in v['ops'] for v in json.load(sys.stdin)))")
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

finish
