#!/bin/bash
# gpu_layouts.sh - the Hopper family in every layout (issue 31): every shipped wgmma point (the
# default and grid directories) in tn, nn, nt and tt, on square, llm and odd-but-16-byte-aligned
# shapes (edges inside a 64-wide block in m, n and k; m != n != k), validated (three trials, the
# last after timing), five samples, no energy burst; every measurement must be ok/passed, and
# each layout must have measured every point on every shape. layouts-3: the skinny kernels in
# tn, nn, nt and tt (skinny.cuh: B column-major; skinny_rowb.cuh: B row-major) on small-m
# shapes, odd pitches (pad 1) and 16-byte rows one past a multiple of 8 (pad 7) included, the
# same way. Not a Hopper GPU (the family is
# sm_90a only): skipped. TB_LAYOUT_SHAPES overrides the shapes.
set -u
. "$(dirname "$0")/gpu_common.sh"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
if [ "$cc" != 9.0 ]; then echo "SKIP: the wgmma family needs compute capability 9.0 (found '$cc')"; exit 77; fi
GRID=${TB_VARIANTS_GRID:-$(dirname "$TB_VARIANTS")/variants-grid}
shapes=${TB_LAYOUT_SHAPES:-4096x4096x4096,512x512x512,128x4096x4096,1000x1000x1000,384x640x320,200x136x72}
nshapes=$(tr ',' '\n' <<<"$shapes" | grep -c .)
for lay in tn nn nt tt; do
    s=$(date +%s)
    npts=$("$TB" list --variants "$TB_VARIANTS" --variants "$GRID" --filter "wgmma_bf16_*_$lay" 2>/dev/null | grep -c '^wgmma_bf16_')
    "$TB" sweep --variants "$TB_VARIANTS" --variants "$GRID" --filter "wgmma_bf16_*_$lay" --layout $lay \
        --shapes "$shapes" --stop fixed:samples=5 --warmup 1 --method cold --no-energy --no-progress \
        --quiet --db "$tmp/$lay.db" 2>"$tmp/err-$lay"
    rc=$?
    echo "layout $lay: $npts points x $nshapes shapes, sweep exit $rc in $(( $(date +%s) - s )) s"
    [ $rc = 0 ] && ok "layouts-1.$lay" || bad "layouts-1.$lay" "sweep exited $rc: $(tail -3 "$tmp/err-$lay")"
    "$TB" export --db "$tmp/$lay.db" --format json > "$tmp/$lay.json" 2>/dev/null
    $PY - "$tmp/$lay.json" "$lay" "$npts" "$nshapes" <<'PYEOF' && ok "layouts-2.$lay" || bad "layouts-2.$lay" "see above"
import json, sys, collections
res = json.load(open(sys.argv[1]))["results"]
lay, npts, nshapes = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fails = []
if npts < 1: fails.append(f"no wgmma_bf16_*_{lay} variant found")
count = collections.Counter((r["status"], r["disposition"]) for r in res)
for r in res:
    p, n = r["problem"], r["variant"]["name"]
    tag = f"{n} {p['m']}x{p['n']}x{p['k']} {p['layouts']}"
    if p["layouts"] != lay or not n.endswith("_" + lay):
        fails.append(f"{tag}: not layout {lay}")
    if not (r["status"] == "ok" and r["disposition"] == "passed"):
        v = r.get("validation") or {}
        fails.append(f"{tag}: {r['status']}/{r['disposition']} {r['rule']} {r['reason'][:160]} "
                     f"(n_bad {v.get('n_bad')}, max abs err {v.get('max_abs_err')})")
if len(res) != npts * nshapes:
    fails.append(f"{len(res)} measurements, want {npts} points x {nshapes} shapes")
print(f"layout {lay}: {len(res)} measurements: " + ", ".join(f"{s}/{d} {c}" for (s, d), c in sorted(count.items())))
for f in fails[:40]: print("FAIL", f)
if len(fails) > 40: print(f"... {len(fails) - 40} more")
sys.exit(1 if fails else 0)
PYEOF
done

# layouts-3: skinny's four variants, each in its own layout, on m <= 64 with aligned and odd pitches
for lay in tn nn nt tt; do
    "$TB" sweep --variants "$GRID" --filter "skinny_bf16_*_$lay" --layout $lay \
        --shapes 1x4096x4096,16x4096x4096,33x1000x1000,1x4097x4093,7x999x1003,64x640x320 --pad 1 \
        --stop fixed:samples=5 --warmup 1 --method cold --no-energy --no-progress --quiet \
        --db "$tmp/skinny-pad-$lay.db" 2>"$tmp/err-skinny-$lay"
    "$TB" sweep --variants "$GRID" --filter "skinny_bf16_*_$lay" --layout $lay \
        --shapes 1x4096x4096,16x4096x4096,33x1000x1000,64x640x320,1x4096x1000,16x4096x1000 \
        --stop fixed:samples=5 --warmup 1 --method cold --no-energy --no-progress --quiet \
        --db "$tmp/skinny-$lay.db" 2>>"$tmp/err-skinny-$lay"
    "$TB" sweep --variants "$GRID" --filter "skinny_bf16_*_$lay" --layout $lay \
        --shapes 1x4097x4097,16x1001x1001,64x1001x329,3x7x5 --pad 7 \
        --stop fixed:samples=5 --warmup 1 --method cold --no-energy --no-progress --quiet \
        --db "$tmp/skinny-pad7-$lay.db" 2>>"$tmp/err-skinny-$lay"
    for d in skinny-pad skinny skinny-pad7; do
        "$TB" export --db "$tmp/$d-$lay.db" --format json > "$tmp/$d-$lay.json" 2>/dev/null
    done
    $PY - "$tmp/skinny-pad-$lay.json" "$tmp/skinny-$lay.json" "$tmp/skinny-pad7-$lay.json" <<'PYEOF' && ok "layouts-3.$lay" || bad "layouts-3.$lay" "$(tail -2 "$tmp/err-skinny-$lay")"
import json, sys
res = [r for f in sys.argv[1:] for r in json.load(open(f))["results"]]
bad = [f"{r['variant']['name']} {r['problem']['m']}x{r['problem']['n']}x{r['problem']['k']}: "
       f"{r['status']}/{r['disposition']} {r['reason'][:120]}" for r in res
       if not (r["status"] == "ok" and r["disposition"] == "passed")]
print(f"skinny: {len(res)} measurements, {len(bad)} not ok/passed")
for b in bad[:10]: print("FAIL", b)
sys.exit(1 if bad or len(res) != 16 else 0)
PYEOF
done
finish
