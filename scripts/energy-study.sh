#!/bin/bash
# energy-study.sh - does a 2-period energy window (the default, harness/worker/energy.c) give
# the joules per launch a 10-period one gives, and how far apart are repeats? On the GPU
# machine, from an install prefix (scripts/make-prefix.sh), one device call (~2 min): for each
# shape, ROUNDS rounds of two single-variant sweeps of cublaslt, TILEBENCH_ENERGY_PERIODS=2
# then 10 (alternating, so the card's drift falls on both alike). Prints one row per sweep
# and, per shape, the spread of each and the ratio of their medians, as a Markdown table.
#   scripts/energy-study.sh PREFIX [ROUNDS] [SHAPES]     (4, 1024,4096,8192)
set -u
P=$(cd "${1:?usage: energy-study.sh PREFIX [ROUNDS] [SHAPES]}" && pwd); rounds=${2:-4}; sizes=${3:-1024,4096,8192}
out=${OUT:-/tmp/energy-study}; mkdir -p "$out"
TB=$P/bin/tilebench; V=$P/lib/tilebench/variants
echo "gpu as found: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader)"
for n in ${sizes//,/ }; do
    for r in $(seq 1 "$rounds"); do
        for np in 2 10; do
            db="$out/e-$n-$r-$np.db"
            TILEBENCH_ENERGY_PERIODS=$np "$TB" sweep --variants "$V/cublaslt.so" --shapes ${n}x${n}x${n} --max-time 0.2 \
                --no-progress --quiet --db "$db" > /dev/null 2>&1
            "$TB" export --db "$db" --format json | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]; x = r.get("extra") or {}
print(sys.argv[1], sys.argv[2], sys.argv[3], x.get("energy_j_per_launch", "nan"), x.get("power_w", "nan"),
      x.get("energy_unc", "nan"), x.get("energy_window_s", "nan"), r["timing"]["median_ms"], r["timing"]["clock_mhz"])' $n $np $r
            rm -f "$db"
        done
    done
done | tee "$out/energy-study.txt" | /usr/bin/python3 -c '
import sys, statistics
rows = [l.split() for l in sys.stdin if l.strip()]
for r in rows: print("  %sx%sx%s periods %-2s round %s: %.4g J/launch  %.0f W  unc %.1f %%  window %.3f s  median %.4f ms  %s MHz"
                     % (r[0], r[0], r[0], r[1], r[2], float(r[3]), float(r[4]), 100 * float(r[5]), float(r[6]), float(r[7]), r[8]))
print("| shape | 2 periods: J/launch median (spread) | stated unc (median) | 10 periods: J/launch median (spread) | ratio 2/10 |")
print("|---|---|---|---|---|")
for n in sorted({r[0] for r in rows}, key=int):
    a = [float(r[3]) for r in rows if r[0] == n and r[1] == "2"]; b = [float(r[3]) for r in rows if r[0] == n and r[1] == "10"]
    u = [float(r[5]) for r in rows if r[0] == n and r[1] == "2"]
    sp = lambda v: 100 * (max(v) / min(v) - 1)
    print("| %s³ | %.4g (%.1f %%) | %.1f %% | %.4g (%.1f %%) | %.3f |" % (n, statistics.median(a), sp(a), 100 * statistics.median(u),
          statistics.median(b), sp(b), statistics.median(a) / statistics.median(b)))
'
