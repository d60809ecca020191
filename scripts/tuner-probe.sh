#!/bin/bash
# tuner-probe.sh - does cublaslt-tuned's choice depend on the card's state? (issue 17's
# residual: its two copies in one gate chose algorithms 2.6 % apart in 1 of 20 gates.) On the
# GPU machine, from an install prefix (scripts/make-prefix.sh), in one device call (~3 min):
# N sweeps of cublaslt-tuned alone on one shape from a card left idle for IDLE s, and N right
# after LOAD s of back-to-back cublaslt on the same shape; prints the rank each setup kept,
# with its tuning time and the SM clock, so the next fix (a longer warm-up, or a tolerance
# above the swing) is chosen from figures, not guesses. Never changes the card's settings.
#   scripts/tuner-probe.sh PREFIX [SHAPE] [N] [IDLE] [LOAD]   (8192x8192x8192 5 20 10)
set -u
P=$(cd "${1:?usage: tuner-probe.sh PREFIX [SHAPE] [N] [IDLE] [LOAD]}" && pwd)
shape=${2:-8192x8192x8192}; n=${3:-5}; idle=${4:-20}; load=${5:-10}
out=${OUT:-/tmp/tuner-probe}; mkdir -p "$out"
TB=$P/bin/tilebench; V=$P/lib/tilebench/variants
echo "gpu as found: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader)"
probe() {   # probe LABEL: one sweep of cublaslt-tuned, its setup's choice
    local db="$out/$1.db"
    "$TB" sweep --variants "$V/cublaslt-tuned.so" --shapes "$shape" --no-energy --max-time 0.2 \
        --no-progress --quiet --db "$db" > /dev/null 2>&1 || { echo "$1: sweep failed"; return; }
    /usr/bin/python3 - "$db" "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
d, med, mid = c.execute("SELECT describe, median_ms, id FROM measurements").fetchone()
clk = [r[0] for r in c.execute("SELECT clock_mhz FROM samples WHERE measurement_id = ? AND clock_mhz > 0", (mid,))]
clk.sort()
print("%-8s %s  median %.4f ms  SM %s MHz" % (sys.argv[2], " ".join(d.split()[:6]), med, clk[len(clk) // 2] if clk else "?"))
PY
}
for i in $(seq 1 "$n"); do
    sleep "$idle"; probe "idle$i"
    "$TB" sweep --variants "$V/cublaslt.so" --shapes "$shape" --no-energy --stop "fixed:samples=1000000,max-samples=1000000,max-time=$load" \
        --no-progress --quiet --db "$out/load.db" > /dev/null 2>&1
    probe "loaded$i"
done
