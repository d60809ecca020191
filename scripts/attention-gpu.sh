#!/bin/bash
# attention-gpu.sh - issue 33's figures on the GPU, from an install prefix (scripts/make-prefix.sh),
# in one device call: the attention families (attn_fa2's grid, attn_hopper's grid, attn_naive is
# left out: it refuses these sizes) swept on the head_dim-128 prefill shapes of the `attn` set that
# issue 33's bars name (non-causal and causal, 4k, 8k and 16k tokens; Llama-3 8B's GQA and the
# 16-head decoder), validated and timed as any sweep (default stop rule, no energy), then per
# shape the best point of each family, its TFLOP/s and clock, against the bars: the best Hopper
# point >= 550 TFLOP/s non-causal and >= 450 causal at head_dim 128, 4k-16k.
#   scripts/attention-gpu.sh PREFIX [SWEEP OPTIONS...]   (e.g. --shapes 4x16x4096x4096x128 to narrow)
#   scripts/attention-gpu.sh --summary DB                 the table again, from a database
# Logs and the database under $OUT (or /tmp/tb-attention): attention.log, attention.db.
set -u
summary() {
    TB_REPORT_PY="$(cd "$(dirname "$0")" && pwd)/report" /usr/bin/python3 - "$1" <<'PYEOF'
import os, sys
sys.path.insert(0, os.environ["TB_REPORT_PY"])
from report_data import connect   # reads without leaving -wal or -shm behind
c = connect(sys.argv[1], tuples=True)
rows = c.execute(
    "SELECT v.name, p.batch, p.heads, p.heads_kv, p.seq_q, p.seq_k, p.head_dim, p.causal, x.status, "
    "x.disposition, x.median_ms, x.tflops, x.clock_mhz, x.reason FROM measurements x "
    "JOIN variants v ON v.id = x.variant_id JOIN problems p ON p.id = x.problem_id "
    "WHERE p.op = 'attention_fwd'").fetchall()
shapes = {}
bad = []
for name, b, h, hkv, sq, sk, d, causal, st, disp, med, tf, clk, why in rows:
    key = f"{b}x{h}x{sq}x{sk}x{d}" + (":causal" if causal else "") + (f":hkv={hkv}" if hkv != h else "")
    fam = "attn_hopper" if name.startswith("attn_hopper") else "attn_fa2" if name.startswith("attn_fa2") else name
    if st != "ok" or disp != "passed":
        if st != "unsupported": bad.append(f"{name} {key}: {st}/{disp} {why}")
        continue
    best = shapes.setdefault((key, causal, d, sk), {})
    if fam not in best or tf > best[fam][1]:
        best[fam] = (name, tf, clk)
print(f"{'shape':34} {'best attn_hopper':48} {'TFLOP/s':>8} {'MHz':>5}   {'best attn_fa2':30} {'TFLOP/s':>8}   bar")
met = {0: [], 1: []}
for (key, causal, d, sk), best in sorted(shapes.items()):
    hp = best.get("attn_hopper", ("-", 0.0, 0.0)); fa = best.get("attn_fa2", ("-", 0.0, 0.0))
    bar = (450 if causal else 550) if d == 128 and 4096 <= sk <= 16384 else None
    if bar: met[causal].append(hp[1] >= bar)
    print(f"{key:34} {hp[0]:48} {hp[1]:8.1f} {hp[2]:5.0f}   {fa[0]:30} {fa[1]:8.1f}   "
          + (f">= {bar}: {'met' if hp[1] >= bar else 'MISSED'}" if bar else ""))
for causal, what in ((0, "non-causal >= 550"), (1, "causal >= 450")):
    print(f"issue 33's bar, {what}: met on {sum(met[causal])} of {len(met[causal])} shapes")
for x in bad: print("NOT VALID:", x)
sys.exit(1 if bad else 0)
PYEOF
}
if [ "${1:-}" = --summary ]; then summary "${2:?usage: attention-gpu.sh --summary DB}"; exit; fi
P=$(cd "${1:?usage: attention-gpu.sh PREFIX [sweep options]}" && pwd) || exit 2
shift
out=${OUT:-/tmp/tb-attention}; mkdir -p "$out"
TB=$P/bin/tilebench V=$P/lib/tilebench/variants G=$P/lib/tilebench/variants-grid
shapes=4x32x4096x4096x128:hkv=8,4x32x4096x4096x128:causal:hkv=8,2x32x8192x8192x128:hkv=8
shapes=$shapes,2x32x8192x8192x128:causal:hkv=8,1x32x16384x16384x128:hkv=8,1x32x16384x16384x128:causal:hkv=8
shapes=$shapes,4x16x4096x4096x128,4x16x4096x4096x128:causal,1x16x16384x16384x128,1x16x16384x16384x128:causal
echo "== $(date +%T) GPU as found: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader)" | tee -a "$out/attention.log"
s=$(date +%s)
args=(--shapes "$shapes")
for a in "$@"; do [ "$a" = --shapes ] && args=(); done   # the caller's shapes replace these
"$TB" sweep --variants "$G" --variants "$V" --filter 'attn_fa2*' --filter 'attn_hopper*' "${args[@]}" \
    --no-energy --no-progress "$@" --db "$out/attention.db" >> "$out/attention.log" 2>&1
rc=$?
echo "== $(date +%T) sweep: exit $rc in $(( $(date +%s) - s )) s; GPU after: $(nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader)" | tee -a "$out/attention.log"
summary "$out/attention.db" | tee -a "$out/attention.log"
