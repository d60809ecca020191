#!/bin/bash
# ncu-metrics-compare.sh - tilebench's counters for a variant beside Nsight Compute's for the
# same launch (ncu --clock-control none --cache-control all, on the counter worker's launch
# inside the NVTX range tb/<variant>/<shape>/counters), each tool run twice, on the device
# machine from the install prefix (issue 8; docs/perf.md keeps the tables).
#   scripts/ncu-metrics-compare.sh [PREFIX] [SHAPE] [VARIANT...]
# NCU_EXTRA_DIR adds a variant directory (the zoo: zoo_zeros writes D and reads little).
# NCU_CACHE=none NCU_REPLAY=application profiles the launch in tilebench's own cache state:
# the counter worker flushes the L2 (reads 2 x L2) right before it, and ncu neither flushes
# nor restores memory (application replay reruns the whole sweep for each of its passes).
set -u
cd "$(dirname "$0")/.."
P=$(cd "${1:-prefix}" && pwd); S=${2:-4096x4096x4096}; shift 2 2>/dev/null || shift $#
VS=("$@"); [ ${#VS[@]} = 0 ] && VS=(mma_sync_bf16_128x128x32_s3_w8_tn wgmma_bf16_128x256x64_c2x1_s4_cooperative_rasterm_sw16_epilogue-conflict_tn)
TB=$P/bin/tilebench; SEL=(--variants "$P/lib/tilebench/variants-grid" --variants "$P/lib/tilebench/variants")
[ -n "${NCU_EXTRA_DIR:-}" ] && SEL+=(--variants "$NCU_EXTRA_DIR")
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
M=smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
# tilebench also PM-samples the DRAM bytes over the kernel's own window (pm:), ncu's window
PMM=pm:dram__bytes_read.sum,pm:dram__bytes_write.sum
out=${OUT:-/tmp/tb-ncum}/ncum; mkdir -p "$out"
PY=/usr/bin/python3; [ -x $PY ] || PY=python3
for v in "${VS[@]}"; do
    for i in 1 2; do
        "$TB" sweep "${SEL[@]}" --filter "$v" --shapes "$S" --metrics "$M,$PMM" --stop fixed:samples=3 --no-energy \
            --no-progress --quiet --db "$out/tb-$v-$i.db" 2>"$out/tb-$v-$i.err"
        "$TB" export --db "$out/tb-$v-$i.db" --format json > "$out/tb-$v-$i.json"
        "$NCU" --nvtx --nvtx-include "tb/$v/$S/counters/" --clock-control none --cache-control "${NCU_CACHE:-all}" \
            --replay-mode "${NCU_REPLAY:-kernel}" --metrics "$M" --csv --page raw --print-units base \
            "$TB" sweep "${SEL[@]}" --filter "$v" --shapes "$S" --metrics "$M" --stop fixed:samples=3 \
            --no-energy --max-time 600 --timeout 600 --no-progress --quiet --db "$out/ncu-$v-$i.db" \
            > "$out/ncu-$v-$i.csv" 2> "$out/ncu-$v-$i.err"
    done
    $PY - "$out" "$v" "$M" <<'PYEOF'
import csv, io, json, os, sys
d, v, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
def tb(i):
    r = json.load(open(f"{d}/tb-{v}-{i}.json"))["results"][0]
    return {x["name"]: x["value"] for x in r.get("metrics") or []}
def ncu(i):
    lines = [l for l in open(f"{d}/ncu-{v}-{i}.csv") if l.startswith('"')]
    rows = [r for r in csv.DictReader(io.StringIO("".join(lines))) if r.get("ID", "").isdigit()]
    out = {}
    for n in names:
        vals = [float(r[n].replace(",", "")) for r in rows if r.get(n, "").replace(",", "").replace(".", "").isdigit()]
        out[n] = sum(vals) if vals else None
    return out, len(rows)
t = [tb(1), tb(2)]; (n1, k1), (n2, k2) = ncu(1), ncu(2)
print(f"== {v}: ncu (--cache-control {os.environ.get('NCU_CACHE', 'all')} --replay-mode {os.environ.get('NCU_REPLAY', 'kernel')}) profiled {k1} and {k2} kernels")
print(f"{'metric':58s} {'tilebench (2 runs)':>30s} {'ncu (2 runs)':>30s} {'diff':>8s}")
for n in names + [p for p in ("pm:dram__bytes_read.sum", "pm:dram__bytes_write.sum")]:
    a = [x.get(n) for x in t]; b = [n1.get(n.replace("pm:", "")), n2.get(n.replace("pm:", ""))]
    f = lambda z: "/".join("-" if q is None else f"{q:.0f}" for q in z)
    diff = ""
    if all(q is not None for q in a + b) and sum(b) > 0:
        diff = f"{100 * (sum(a) - sum(b)) / sum(b):+.2f}%"
    print(f"{n:58s} {f(a):>30s} {f(b):>30s} {diff:>8s}")
for x in json.load(open(f"{d}/tb-{v}-1.json"))["results"][0].get("metrics") or []:
    if x.get("value") is None: print(f"  tilebench: {x['name']} unavailable: {x.get('reason', '?')}")
PYEOF
done
