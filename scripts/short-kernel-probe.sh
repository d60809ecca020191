#!/bin/bash
# short-kernel-probe.sh - on the device machine: one short GEMM timed every way we know
# (tilebench's cold and graph methods, torch/cuBLAS under events and CUPTI activity records,
# Nsight Compute's gpu__time_duration with and without its cache flush), to place tilebench's
# short-kernel figure against ncu's (issue 6). A diagnostic; docs/perf.md keeps what it found.
#   scripts/short-kernel-probe.sh [PREFIX] [N]     (default prefix 1024)
set -u
cd "$(dirname "$0")/.."
P=$(cd "${1:-prefix}" && pwd); N=${2:-1024}; s=${N}x${N}x${N}
TB=$P/bin/tilebench
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
out=${OUT:-/tmp/tb-probe}/probe; mkdir -p "$out"
PY=python3
echo "== tilebench, cublaslt $s"
for m in cold graph; do
  for pace in 0 1; do
    "$TB" sweep --filter cublaslt --shapes $s --method $m --pace $pace --no-energy --no-progress --quiet \
        --db "$out/tb-$m-$pace.db" 2>/dev/null
    "$TB" export --db "$out/tb-$m-$pace.db" --format json 2>/dev/null | $PY -c '
import json,sys; r=json.load(sys.stdin)["results"][0]; x=r.get("extra") or {}
x = json.loads(x) if isinstance(x, str) else x
us = lambda k: "%6.3f" % (x[k] * 1e3) if isinstance(x.get(k), (int, float)) else "  -   "
print("  tilebench --method %-5s --pace %s: median %8.3f us; empty event pair %s us, events around an empty kernel %s us"
      % (sys.argv[1], sys.argv[2], r["timing"]["median_ms"] * 1e3, us("event_overhead_ms"), us("noop_event_ms")))' $m $pace
  done
done
echo "== torch (cuBLAS) $N^3"
$PY scripts/short-kernel-probe.py $N 2>&1 | tail -12
for cc in all none; do
  "$NCU" --clock-control none --cache-control $cc --metrics gpu__time_duration.sum --csv --page raw \
      --print-units base $PY scripts/short-kernel-probe.py $N --ncu > "$out/ncu-torch-$cc.csv" 2> "$out/ncu-torch-$cc.err"
  $PY - "$out/ncu-torch-$cc.csv" $cc <<'PYEOF'
import csv, io, statistics, sys, collections
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.DictReader(io.StringIO("".join(lines))))
by = collections.defaultdict(list)
for r in rows:
    try: by[r.get("Kernel Name", "")].append(float(r["gpu__time_duration.sum"].replace(",", "")))
    except (ValueError, KeyError): pass
for k, v in by.items():
    if "fill" in k.lower() or "elementwise" in k.lower() or len(v) < 10: continue
    print(f"  ncu --cache-control {sys.argv[2]:4s} {k[:50]:50s} n={len(v):3d} median {statistics.median(v[-40:])/1e3:8.3f} us")
PYEOF
done
