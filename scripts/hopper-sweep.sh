#!/bin/bash
# hopper-sweep.sh - the Hopper family (wgmma) and both cuBLAS baselines through tilebench on
# the device machine, from the install prefix (issue 7; docs/perf.md keeps the tables).
#   scripts/hopper-sweep.sh [PREFIX] square   every point on square 2048-16384 (one interleaved
#                                             run per shape), plus the SASS facts of every point
#   scripts/hopper-sweep.sh [PREFIX] llm      the leading points on llm M >= 1024
#   scripts/hopper-sweep.sh [PREFIX] validate every point, every square and llm shape: three
#                                             validation trials, a few samples (correctness)
#   scripts/hopper-sweep.sh [PREFIX] raster   the Hilbert-order points validated on square and
#                                             llm, then beside their band-raster twins and both
#                                             cuBLAS baselines on square 4096-16384, with joules
#                                             per launch and the memory counters
# Logs and databases under $OUT (or /tmp/tb-hopper).
set -u
cd "$(dirname "$0")/.."
P=$(cd "${1:-prefix}" && pwd); what=${2:-square}
TB=$P/bin/tilebench; ST=$P/lib/tilebench/variants-grid; SH=$P/lib/tilebench/variants
out=${OUT:-/tmp/tb-hopper}; mkdir -p "$out"
sel=(--variants "$ST" --variants "$SH" --filter 'wgmma*' --filter 'cublaslt*')
llm=$(grep -v '^#' results/shapes/llm.txt | awk '{split($1,a,"x"); if (a[1] >= 1024) print $1}' | paste -sd,)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv,noheader
s=$(date +%s)
case $what in
square)
    "$TB" sweep "${sel[@]}" --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192,16384x16384x16384 \
        --no-energy --no-progress --quiet --db "$out/hopper-square.db" 2> "$out/hopper-square.log"; rc=$?
    db=hopper-square
    for so in "$ST"/wgmma*.so; do
        t=$(cuobjdump -sass "$so" 2>/dev/null)
        printf "%-64s HGMMA %4d HMMA %3d UTMALDG %3d MULTICAST %3d UTMASTG %3d STSM %3d\n" "$(basename "$so" .so)" \
          "$(grep -c HGMMA <<<"$t")" "$(grep -c 'HMMA' <<<"$t")" "$(grep -c UTMALDG <<<"$t")" \
          "$(grep -c 'MULTICAST' <<<"$t")" "$(grep -c UTMASTG <<<"$t")" "$(grep -c STSM <<<"$t")"
    done > "$out/hopper-sass.txt";;
llm)
    "$TB" sweep "${sel[@]}" --exclude '*epilogue-conflict*' --exclude '*_s2_*' --exclude '*_s3_*' \
        --exclude '*c1x2*' --exclude '*rastern*' --exclude '*sw32*' --exclude '*128x128x64_c2x1*' \
        --exclude '*64x256x64_c2x1*' --shapes "$llm" --max-time 0.5 --no-energy --no-progress --quiet \
        --db "$out/hopper-llm.db" 2> "$out/hopper-llm.log"; rc=$?
    db=hopper-llm;;
validate)
    "$TB" sweep "${sel[@]}" --shapes square,llm --stop fixed:samples=3 --no-energy --no-progress \
        --quiet --db "$out/hopper-validate.db" 2> "$out/hopper-validate.log"; rc=$?
    db=hopper-validate;;
raster)   # HS_SKIP_VALIDATE=1: the comparison alone
    if [ -z "${HS_SKIP_VALIDATE:-}" ]; then
        "$TB" sweep --variants "$ST" --filter '*rasterh*' --shapes square,llm --stop fixed:samples=3 \
            --no-energy --no-progress --quiet --db "$out/hopper-rasterh-validate.db" 2> "$out/hopper-rasterh-validate.log"
        echo "rasterh validation: exit $?"
        "$TB" show --db "$out/hopper-rasterh-validate.db" 2>&1 | grep -ciE 'incorrect|crash|error' | sed 's/^/rows not ok: /'
    fi
    "$TB" sweep --variants "$ST" --variants "$SH" --filter '*rasterh*' --filter 'cublaslt*' \
        --filter wgmma_bf16_128x256x64_c1x1_s4_cooperative_rasterm_sw16_tn \
        --filter wgmma_bf16_256x128x64_c1x1_s4_cooperative_rasterm_sw8_tn \
        --filter wgmma_bf16_128x128x64_c1x1_s6_pingpong_rasterm_sw8_tn \
        --shapes 4096x4096x4096,8192x8192x8192,16384x16384x16384 --metrics memory \
        --no-progress --quiet --db "$out/hopper-raster.db" 2> "$out/hopper-raster.log"; rc=$?
    db=hopper-raster
    "$TB" export --db "$out/$db.db" --format json --output "$out/$db.json" 2>/dev/null
    /usr/bin/python3 - "$out/$db.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
print(f"{'shape':>6} {'variant':58s} {'TFLOP/s':>8} {'MHz':>5} {'J/launch':>9} {'W':>5} {'DRAM rd MB':>10} {'pm wr MB':>9} {'L2 hit':>6}")
for r in sorted(rows, key=lambda r: (r["problem"]["m"], -(r.get("tflops") or 0))):
    m = {x["name"]: x.get("value") for x in r.get("metrics") or []}
    x = r.get("extra") or {}
    f = lambda v, s=1, d=1: "-" if v is None else f"{v / s:.{d}f}"
    print(f"{r['problem']['m']:>6} {r['variant']['name'][:58]:58s} {f(r.get('tflops')):>8} {f(r['timing'].get('clock_mhz'), 1, 0):>5} "
          f"{f(x.get('energy_j_per_launch'), 1, 4):>9} {f(x.get('power_w'), 1, 0):>5} {f(m.get('dram__bytes_read.sum'), 1e6):>10} "
          f"{f(m.get('pm:dram__bytes_write.sum'), 1e6):>9} {f(m.get('lts__t_sector_hit_rate.pct')):>6}")
PYEOF
    ;;
*) echo "hopper-sweep: unknown '$what' (square, llm, validate or raster)"; exit 2;;
esac
echo "hopper-sweep $what: exit $rc in $(( $(date +%s) - s )) s"
"$TB" show --db "$out/$db.db" > "$out/$db-show.txt" 2>&1
"$TB" export --db "$out/$db.db" --format csv --output "$out/$db.csv" 2>/dev/null
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader
exit $rc
