#!/bin/bash
# layouts.sh - issue 31 (the Hopper family in every layout) on the GPU, from an install prefix
# (scripts/make-prefix.sh), one part per device call:
#   scripts/layouts.sh PREFIX --part perf    wgmma_auto beside cublaslt and cublaslt-tuned in
#                                            tn, nn, nt and tt, interleaved per layout, on the
#                                            square and llm sets (default stop rule, validated,
#                                            no energy): perf-<layout>.db
#   scripts/layouts.sh PREFIX --part valid   every shipped wgmma point (the default set's) in
#                                            all four layouts on square and llm, validated, five
#                                            samples each: valid.db
#   scripts/layouts.sh PREFIX --part skinny  the skinny variants (skinny_bf16_max_m-64_<layout>,
#                                            the grid library) beside cublaslt and cublaslt-tuned
#                                            in tn, nn, nt and tt on the llm shapes with M = 1
#                                            and 16 (default stop rule, validated, no energy):
#                                            skinny-<layout>.db
#   scripts/layouts.sh PREFIX --part PART tn nn   ... only those layouts (default all four;
#                                            --part perf takes about 165 s a layout on an H200)
# Run --part perf in two device calls for issue 31's "two sweeps in separate device calls".
# Logs and databases under $OUT (or /tmp/tb-layouts): layouts.log, one file for the whole part.
#   scripts/layouts.sh --ratios DIR   per layout: better cuBLAS median / wgmma_auto median per
#                                     shape, and the geometric means, from DIR's perf-*.db
#   scripts/layouts.sh --skinny DIR   per layout and shape (DIR's skinny-*.db): skinny's median,
#                                     its fraction of the bandwidth bound (B's bytes over
#                                     3.0 TB/s), better cuBLAS / skinny, and skinny / tn's skinny
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = --skinny ]; then
    exec /usr/bin/python3 - "${2:?usage: layouts.sh --skinny DIR}" <<'PYEOF'
import math, os, sys
sys.path.insert(0, "scripts/report")
from report_data import connect   # reads without leaving -wal or -shm behind
d = sys.argv[1]
rows = {}
for lay in ("tn", "nn", "nt", "tt"):
    f = os.path.join(d, f"skinny-{lay}.db")
    if not os.path.isfile(f):
        print(f"{lay}: no {f}"); continue
    c = connect(f, tuples=True)
    for name, m, n, k, med, st, disp in c.execute(
            "SELECT v.name, p.m, p.n, p.k, x.median_ms, x.status, x.disposition FROM measurements x "
            "JOIN variants v ON v.id = x.variant_id JOIN problems p ON p.id = x.problem_id"):
        rows.setdefault((lay, m, n, k), {})[name] = (med, st, disp)
print(f"{'layout':6} {'shape':>16} {'skinny us':>10} {'bound':>6} {'cuBLAS/sk':>9} {'sk/tn sk':>8}")
for lay in ("tn", "nn", "nt", "tt"):
    rs, bad = [], 0
    for key in sorted(x for x in rows if x[0] == lay):
        _, m, n, k = key
        e = rows[key]
        s = e.get(f"skinny_bf16_max_m-64_{lay}")
        if not s or s[1] != "ok" or s[2] != "passed":
            bad += 1; print(f"{lay:6} {m}x{n}x{k:>6}: skinny {s}"); continue
        cb = [e[x][0] for x in ("cublaslt", "cublaslt-tuned") if x in e and e[x][1] == "ok" and e[x][0]]
        r = min(cb) / s[0] if cb else float("nan")
        tn = rows.get(("tn", m, n, k), {}).get("skinny_bf16_max_m-64_tn")
        rel = tn[0] / s[0] if tn and tn[1] == "ok" else float("nan")
        frac = n * k * 2 / 3.0e12 / (s[0] * 1e-3)
        rs.append(r)
        print(f"{lay:6} {f'{m}x{n}x{k}':>16} {s[0] * 1e3:10.1f} {frac:6.1%} {r:9.3f} {rel:8.3f}")
    ok = [x for x in rs if x == x]
    if ok:
        print(f"{lay}: {len(rs)} shapes ok/passed, {bad} not; geometric mean cuBLAS/skinny "
              f"{math.exp(sum(map(math.log, ok)) / len(ok)):.3f}")
PYEOF
fi
# Exit: 0 when every layout's sweep exited 0, 1 otherwise (2: bad arguments).
if [ "${1:-}" = --ratios ]; then
    exec /usr/bin/python3 - "${2:?usage: layouts.sh --ratios DIR}" <<'PYEOF'
import math, os, sys
sys.path.insert(0, "scripts/report")
from report_data import connect   # reads without leaving -wal or -shm behind
d = sys.argv[1]
gms = {}
for lay in ("tn", "nn", "nt", "tt"):
    f = os.path.join(d, f"perf-{lay}.db")
    if not os.path.isfile(f):
        print(f"{lay}: no {f}"); continue
    c = connect(f, tuples=True)
    by = {}
    for name, m, n, k, med, st, disp in c.execute(
            "SELECT v.name, p.m, p.n, p.k, x.median_ms, x.status, x.disposition FROM measurements x "
            "JOIN variants v ON v.id = x.variant_id JOIN problems p ON p.id = x.problem_id"):
        by.setdefault((m, n, k), {})[name] = (med, st, disp)
    ratios, bad = [], []
    for shape in sorted(by):
        e = by[shape]
        a = e.get(f"wgmma_auto_bf16_{lay}")
        cb = [e[x][0] for x in ("cublaslt", "cublaslt-tuned") if x in e and e[x][1] == "ok" and e[x][0]]
        if not a or a[1] != "ok" or a[2] != "passed":
            bad.append(f"{'x'.join(map(str, shape))}: {a}")
            continue
        if cb:
            ratios.append((shape, min(cb) / a[0]))
    for shape, r in ratios:
        print(f"{lay} {'x'.join(map(str, shape)):>18} {r:.3f}")
    sq = [r for s, r in ratios if s[0] == s[1] == s[2]]
    llm = [r for s, r in ratios if not (s[0] == s[1] == s[2])]
    gm = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
    gms[lay] = gm(sq + llm)
    print(f"{lay}: {len(ratios)} shapes, wgmma_auto not ok/passed on {len(bad)}; geometric mean square "
          f"{gm(sq):.3f}, llm {gm(llm):.3f}, all {gms[lay]:.3f}")
    for b in bad[:5]:
        print(f"   not ok/passed: {b}")
if "tn" in gms:
    print("geometric mean against tn's: " + ", ".join(f"{l} {g / gms['tn']:.3f}" for l, g in gms.items()))
PYEOF
fi
P=$(cd "${1:?usage: layouts.sh PREFIX --part perf|valid|skinny}" && pwd) || exit 2
[ "${2:-}" = --part ] || { echo "layouts: --part perf|valid|skinny" >&2; exit 2; }
lays=("${@:4}"); [ ${#lays[@]} = 0 ] && lays=(tn nn nt tt)   # LAYOUTS after the part: a subset
for lay in "${lays[@]}"; do
    case $lay in tn|nn|nt|tt) ;; *) echo "layouts: '$lay' is not a layout (tn nn nt tt)" >&2; exit 2 ;; esac
done
out=${OUT:-/tmp/tb-layouts}; mkdir -p "$out"
log=$out/layouts.log
TB=$P/bin/tilebench V=$P/lib/tilebench/variants
echo "== $(date +%T) GPU as found: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader)" | tee -a "$log"
status=0
for lay in "${lays[@]}"; do
    s=$(date +%s)
    case ${3:-} in
        perf) "$TB" sweep --variants "$V" --layout $lay --filter "wgmma_auto_bf16_$lay" --filter 'cublaslt*' \
                  --shapes square,llm --no-energy --no-progress --quiet --db "$out/perf-$lay.db" >> "$log" 2>&1 ;;
        skinny) awk '!/^#/ && NF { split($1, d, "x"); if (d[1] + 0 <= 16) print }' results/shapes/llm.txt > "$out/llm-m16.txt"
                "$TB" sweep --variants "$V" --variants "$P/lib/tilebench/variants-grid" --layout $lay \
                  --filter "skinny_bf16_*_$lay" --filter 'cublaslt*' --shapes "$out/llm-m16.txt" \
                  --no-energy --no-progress --quiet --db "$out/skinny-$lay.db" >> "$log" 2>&1 ;;
        valid) "$TB" sweep --variants "$V" --layout $lay --filter "wgmma_bf16_*_$lay" --shapes square,llm \
                  --stop fixed:samples=5 --warmup 1 --method cold --no-energy --no-progress --quiet \
                  --db "$out/valid.db" >> "$log" 2>&1 ;;
        *) echo "layouts: --part perf|valid|skinny" >&2; exit 2 ;;
    esac
    rc=$?
    [ $rc = 0 ] || status=1
    echo "== $(date +%T) ${3} $lay: exit $rc in $(( $(date +%s) - s )) s" | tee -a "$log"
done
exit $status
