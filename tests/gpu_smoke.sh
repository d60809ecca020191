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

# --keep-worker (issue 25): one worker takes shape after shape (smaller, larger, odd, FP8 needs
# its own sweep), freeing and allocating the problem's buffers each time: every result as a
# worker per shape gives (the same dispositions; zoo_oob_row caught by the guard bands on every
# shape, so the bands were made for each new D), through a wrapper that logs each start
cat > "$tmp/wrap" <<SHEOF
#!/bin/bash
[ "\$1" = measure ] && echo \$\$ >> "$tmp/starts"
exec "$(dirname "$TB")/tilebench-worker" "\$@"
SHEOF
chmod +x "$tmp/wrap"
shp=256x256x256,2048x2048x1024,1000x1000x1000,64x4096x512,4096x256x2048
sel=(--variants "$TB_VARIANTS" --variants "$TB_ZOO/zoo_oob_row.so" --filter cublaslt --filter 'simt_tiled*'
     --filter 'wgmma_bf16_128x256x64_c2x1_s4_cooperative_rasterm_sw16*' --filter 'zoo_oob_row*' --filter wgmma_auto_bf16)
declare -A starts
for mode in keep one; do
    rm -f "$tmp/starts"
    extra=(); [ $mode = keep ] && extra=(--keep-worker)
    TILEBENCH_WORKER="$tmp/wrap" "$TB" sweep "${sel[@]}" --shapes $shp --db "$tmp/$mode.db" --no-progress --quiet \
        --no-energy "${extra[@]}" > "$tmp/$mode.out" 2>&1 || echo "sweep $mode exited $?: $(tail -3 "$tmp/$mode.out")"
    "$TB" export --db "$tmp/$mode.db" --format json > "$tmp/$mode.json"
    starts[$mode]=$(grep -c . "$tmp/starts" 2>/dev/null)
done
$PY - "$tmp/keep.json" "$tmp/one.json" <<'PYEOF' && ok smoke-2.1 || bad smoke-2.1 "see above"
import json, sys
def rows(f):
    return {(x["variant"]["name"], x["problem"]["m"], x["problem"]["n"], x["problem"]["k"]):
            (x["status"], x["disposition"], x["rule"], x["timing"]["median_ms"]) for x in json.load(open(f))["results"]}
k, o = rows(sys.argv[1]), rows(sys.argv[2])
fails = []
if set(k) != set(o) or len(k) < 20: fails.append(f"{len(k)} results with --keep-worker, {len(o)} without")
for key in sorted(set(k) & set(o)):
    a, b = k[key], o[key]
    if a[:3] != b[:3]: fails.append(f"{key}: {a[:3]} with --keep-worker, {b[:3]} without")
    if key[0].startswith("zoo_oob_row") and a[:3] != ("ok", "incorrect", "guard") and a[0] != "unsupported":
        fails.append(f"{key}: zoo_oob_row not caught by the guard bands: {a[:3]}")
    if a[0] == "ok" and a[1] == "passed" and not (0.5 < a[3] / b[3] < 2):
        fails.append(f"{key}: median {a[3]:.4f} ms with --keep-worker, {b[3]:.4f} without")
if not any(key[0].startswith("wgmma") and k[key][1] == "passed" for key in k): fails.append("no wgmma result passed")
for f in fails: print("FAIL smoke-2.1:", f)
sys.exit(1 if fails else 0)
PYEOF
[ "${starts[keep]}" = 1 ] && [ "${starts[one]}" = 5 ] && ok smoke-2.2 \
    || bad smoke-2.2 "measuring workers started: ${starts[keep]} with --keep-worker (want 1), ${starts[one]} without (want 5)"

finish
