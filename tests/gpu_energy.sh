#!/bin/bash
# gpu_energy.sh - joules per launch (harness/worker/energy.c): the window runs from one update
# of NVML's energy counter to the second after it, its figure carries a stated uncertainty,
# and it costs a fraction of the old 1 s burst. On the GPU: cublaslt at a small and a large
# shape with the default energy measurement, then at the large shape with a 10-period window
# (TILEBENCH_ENERGY_PERIODS=10), which the 2-period figure must agree with.
set -u
. "$(dirname "$0")/gpu_common.sh"
row() {   # row DB SHAPE: the energy fields of cublaslt's measurement at SHAPE, one line
    "$TB" export --db "$1" --format json | $PY -c '
import json, sys
for r in json.load(sys.stdin)["results"]:
    if r["problem"]["m"] != int(sys.argv[1]): continue
    x = r.get("extra") or {}
    print(x.get("energy_j_per_launch", "nan"), x.get("power_w", "nan"), x.get("energy_unc", "nan"),
          x.get("energy_window_s", "nan"), x.get("energy_periods", 0), r["timing"]["median_ms"], x.get("energy_note", "-"))
' "$2"
}
s0=$(date +%s%N)
"$TB" sweep --variants "$TB_VARIANTS/cublaslt.so" --shapes 1024x1024x1024,8192x8192x8192 --max-time 0.2 \
    --no-progress --db "$tmp/e.db" > "$tmp/e.out" 2>&1; rc=$?
wall=$(( ($(date +%s%N) - s0) / 1000000 ))
grep "time:" "$tmp/e.out"
energy_s=$(grep -oE "energy [0-9.]+ s" "$tmp/e.out" | head -1 | awk '{print $2}')
for n in 1024 8192; do
    read -r j p u win np med note <<<"$(row "$tmp/e.db" $n)"
    echo "$n^3: $j J/launch at $p W, unc $u, window $win s over $np periods, median $med ms ($note)"
    $PY -c "
import sys
j, p, u, w, np_, med = map(float, sys.argv[1:7])
ok = j > 0 and 50 <= p <= 1000 and 0 < u < 0.25 and 0.15 <= w <= 0.3 and np_ == 2
# J/launch = power x GPU time per launch of the back-to-back burst, near the timed median
ok = ok and 0.5 <= j / (p * med * 1e-3) <= 2.0
sys.exit(0 if ok else 1)" $j $p $u $win $np $med && ok "energy-1 [$n]" || bad "energy-1 [$n]" "the figure or its window is off"
done
# two measurements: the energy phase at most 0.5 s each (the 1 s burst took 0.95 s each)
$PY -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 1.0 else 1)" "${energy_s:-99}" && ok energy-2 ||
    bad energy-2 "energy phase ${energy_s:-?} s for two measurements (sweep wall $wall ms)"
TILEBENCH_ENERGY_PERIODS=10 "$TB" sweep --variants "$TB_VARIANTS/cublaslt.so" --shapes 8192x8192x8192 --max-time 0.2 \
    --no-progress --quiet --db "$tmp/e10.db" > /dev/null 2>&1
read -r j10 p10 u10 win10 np10 med10 note10 <<<"$(row "$tmp/e10.db" 8192)"
read -r j2 p2 u2 win2 np2 med2 note2 <<<"$(row "$tmp/e.db" 8192)"
echo "8192^3, 10 periods: $j10 J/launch at $p10 W, window $win10 s; 2 periods: $j2 J/launch at $p2 W"
$PY -c "
import sys
j10, w10, n10, j2, m10, m2 = map(float, sys.argv[1:7])
# the joules per GEMM agree within 10 % (two sweeps, one after the other: the card's pace moves)
sys.exit(0 if n10 == 10 and 0.9 <= w10 <= 1.1 and abs(j2 / j10 - 1) <= 0.10 else 1)" $j10 $win10 $np10 $j2 $med10 $med2 &&
    ok energy-3 || bad energy-3 "a 2-period figure far from the 10-period one, or the window knob ignored"
finish
