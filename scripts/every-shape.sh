#!/bin/bash
# every-shape.sh - issue 22 (the Hopper family on every shape) in one device call, from an
# install prefix (scripts/make-prefix.sh). In order of what matters most if the call is cut:
#   1. measure: wgmma_auto, skinny, cublaslt and cublaslt-tuned interleaved on the odd and
#      square sets and the llm set's M <= LLM_MAX_M shapes (validated, default stop rule, no
#      energy); `show` of it;
#   1b. the same two under compute-sanitizer's memcheck on six small shapes;
#   2. the wgmma grid at 4096^3 beside cuBLAS (issue 20's H100 grid report);
#   3. the kernel cuBLAS runs on every odd shape and 4096^3 (CUPTI's kernel record, `show --metrics`);
#   3b. the row pitch alone: one shape, 8192^3, with every leading dimension padded by 0, 8 and
#      64 elements (16-byte but not 128-byte aligned rows at 8);
#   4. tune: wgmma_auto's own points, each as its own library, on the llm shapes with
#      M >= 128 (scripts/wgmma-auto-table.py turns tune.db into auto-table.json).
# Every log goes to one file, every-shape.log; the databases beside it (a device call brings
# back at most 8 files). Logs and databases under $OUT (or /tmp/tb-every-shape).
#   scripts/every-shape.sh PREFIX        (LLM_MAX_M=1024 by default)
# ES_STEPS="1 3b" runs only those steps (default: all, in the order above), so the steps can be
# spread over device calls.
set -u
cd "$(dirname "$0")/.."
P=$(cd "${1:?usage: every-shape.sh PREFIX}" && pwd) || exit 2
out=${OUT:-/tmp/tb-every-shape}; mkdir -p "$out"
log=$out/every-shape.log
TB=$P/bin/tilebench V=$P/lib/tilebench/variants G=$P/lib/tilebench/variants-grid
max_m=${LLM_MAX_M:-1024}
step() { echo "== $(date +%T) $*" | tee -a "$log"; }
steps=" ${ES_STEPS:-1 1b 2 3 3b 4} "
want() { [[ $steps == *" $1 "* ]]; }
step "GPU as found: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader)"
awk -v mx="$max_m" '!/^#/ && NF { split($1, d, "x"); if (d[1] + 0 <= mx) print }' results/shapes/llm.txt > "$out/llm-lite.txt"
awk '!/^#/ && NF { split($1, d, "x"); if (d[1] + 0 >= 128) print }' "$out/llm-lite.txt" > "$out/llm-tune.txt"

if want 1; then
    step "1. measure: wgmma_auto, skinny, cublaslt, cublaslt-tuned on odd, square, llm M <= $max_m"
    s=$(date +%s)
    "$TB" sweep --variants "$V" --variants "$G" --filter 'wgmma_auto*' --filter 'skinny*' --filter 'cublaslt*' \
        --shapes "odd,square,$out/llm-lite.txt" --no-energy --no-progress --quiet --db "$out/auto.db" >> "$log" 2>&1
    step "   exit $? in $(( $(date +%s) - s )) s"
    "$TB" show --db "$out/auto.db" >> "$log" 2>&1
fi

if want 1b; then
    step "1b. compute-sanitizer (memcheck) on the new paths at small shapes"
    "$TB" sweep --variants "$V" --variants "$G" --filter 'wgmma_auto*' --filter 'skinny*' --sanitize \
        --shapes 127x129x136,777x1234x552,1x4097x4096,16x4096x4096,33x1000x1000,1023x1025x1032 \
        --stop fixed:samples=3 --no-energy --no-progress --quiet --db "$out/sanitize.db" >> "$log" 2>&1
    step "   exit $?"
    "$TB" show --db "$out/sanitize.db" >> "$log" 2>&1
fi

if want 2; then
    step "2. the wgmma grid at 4096^3 beside cuBLAS"
    "$TB" sweep --variants "$G" --variants "$V" --filter 'wgmma_bf16*' --filter 'cublaslt*' --shapes 4096x4096x4096 \
        --no-progress --quiet --db "$out/grid.db" >> "$log" 2>&1
    step "   exit $?"
fi

if want 3; then
    step "3. the kernel cuBLAS runs on odd shapes"
    "$TB" sweep --variants "$V" --filter cublaslt --shapes odd,4096x4096x4096 --metrics memory \
        --no-energy --no-progress --quiet --db "$out/names.db" >> "$log" 2>&1
    "$TB" show --db "$out/names.db" --metrics >> "$log" 2>&1
fi

if want 3b; then
    step "3b. the row pitch: wgmma's best point and wgmma_auto at 8192^3 with lda = ldb = ldd padded by 0, 8 and 64"
    for pad in 0 8 64; do
        "$TB" sweep --variants "$V" --filter 'wgmma_bf16_128x256x64_c1x1_s4_cooperative_rasterm_sw16_tn' --filter 'wgmma_auto*' \
            --filter cublaslt --shapes 8192x8192x8192 --pad $pad --no-energy --no-progress --quiet --db "$out/pitch.db" >> "$log" 2>&1
        step "   pad $pad: exit $?"
    done
    "$TB" show --db "$out/pitch.db" --run all >> "$log" 2>&1
fi

if want 4; then
    step "4. tune: wgmma_auto's points on llm M >= 128"
    filters=()
    while read -r n; do filters+=(--filter "$n"); done < <(/usr/bin/python3 - <<'PYEOF'
import importlib.util, json
spec = importlib.util.spec_from_file_location("table", "scripts/wgmma-auto-table.py")
t = importlib.util.module_from_spec(spec); spec.loader.exec_module(t)
for p in json.load(open("variants/wgmma/auto-table.json"))["points"]:
    print(t.point_name(p))
PYEOF
    )
    [ ${#filters[@]} -gt 0 ] || { step "   no points read from auto-table.json: not tuned"; exit 1; }
    s=$(date +%s)
    "$TB" sweep --variants "$G" --variants "$V" "${filters[@]}" --shapes "$out/llm-tune.txt" --no-energy \
        --no-progress --quiet --db "$out/tune.db" >> "$log" 2>&1
    step "   exit $? in $(( $(date +%s) - s )) s"
fi
step "done"

