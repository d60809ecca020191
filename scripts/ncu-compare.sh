#!/bin/bash
# ncu-compare.sh - tilebench's median for a variant beside Nsight Compute's gpu__time_duration
# for the same kind of launches (ncu: --clock-control none --cache-control all, every kernel
# the variant launches summed per launch), on the device machine, from the install prefix.
# tilebench runs once per configuration in CONFIGS (default "auto pace1 cold": the default
# method; the same resting as long as it works after each sample (--pace 1), which keeps the
# card under its power cap as ncu's isolated launches do; and --method cold everywhere, the
# isolated launches ncu itself profiles; "stream" and "graph" force those methods).
#   scripts/ncu-compare.sh [PREFIX] [VARIANT] [SHAPES]   (default prefix cublaslt 8192^3,4096^3,1024^3)
set -u
cd "$(dirname "$0")/.."
P=$(cd "${1:-prefix}" && pwd); V=${2:-cublaslt}; SHAPES=${3:-8192x8192x8192,4096x4096x4096,1024x1024x1024}
TB=$P/bin/tilebench
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
out=${OUT:-/tmp/tb-ncu}; mkdir -p "$out"
PY=/usr/bin/python3; [ -x $PY ] || PY=python3
CONFIGS=${CONFIGS:-auto pace1 cold}
for cf in $CONFIGS; do
    case $cf in auto) a=();; pace1) a=(--pace 1);; cold|stream|graph) a=(--method $cf);;
        *) echo "unknown config $cf"; exit 2;; esac
    "$TB" sweep --filter "$V" --shapes "$SHAPES" "${a[@]}" --no-progress --quiet --db "$out/ncu-tb-$cf.db" 2>/dev/null
    "$TB" export --db "$out/ncu-tb-$cf.db" --format json > "$out/ncu-tb-$cf.json"
done
printf "%-16s %6s %12s %8s %6s %9s %12s %9s %8s\n" shape config "tilebench ms" method "MHz" "ev.pair us" "ncu ms" "diff" kernels
for s in ${SHAPES//,/ }; do
    m=${s%%x*}; rest=${s#*x}; n=${rest%%x*}; k=${rest#*x}
    "$NCU" --nvtx --nvtx-include "tb/$V/$s/timed/" --clock-control none --cache-control all \
        --metrics gpu__time_duration.sum --csv --page raw --print-units base \
        "$TB" sweep --filter "$V" --shapes "$s" --method cold --profile --stop fixed:samples=20 \
        --max-time 600 --timeout 600 --no-progress --quiet --db "$out/ncu-prof-$s.db" \
        > "$out/ncu-$s.csv" 2> "$out/ncu-$s.err"
    for cf in $CONFIGS; do
    $PY - "$out/ncu-tb-$cf.json" "$out/ncu-$s.csv" "$m" "$n" "$k" "$cf" <<'PYEOF'
import csv, io, json, statistics, sys
tb = json.load(open(sys.argv[1]))["results"]; m, n, k = map(int, sys.argv[3:6])
r = [x for x in tb if (x["problem"]["m"], x["problem"]["n"], x["problem"]["k"]) == (m, n, k)][0]
lines = [l for l in open(sys.argv[2]) if l.startswith('"')]
rows = list(csv.DictReader(io.StringIO("".join(lines))))
def num(v):
    v = (v or "").replace(",", "")
    try: return float(v)
    except ValueError: return None
col = "gpu__time_duration.sum"
t = [num(x[col]) for x in rows if num(x.get(col)) is not None]
unit = next((x[col] for x in rows if x.get(col) and num(x[col]) is None), "ns")
if not t: print(f"{m}x{n}x{k}: ncu reported nothing"); sys.exit(0)
per = max(1, round(len(t) / 20))            # kernels per launch
launches = [sum(t[i:i + per]) for i in range(0, len(t) - per + 1, per)]
scale = {"ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "nsecond": 1e-6}.get(unit, 1e-6)
ncu = statistics.median(launches) * scale
tbm = r["timing"]["median_ms"]
clk = r["timing"].get("clock_mhz") or 0
ev = (r.get("extra") or {}).get("event_overhead_ms")
evs = f"{ev*1e3:9.3f}" if isinstance(ev, (int, float)) else f"{'-':>9}"
print(f"{m}x{n}x{k:<8} {sys.argv[6]:>6} {tbm:12.5f} {r['timing']['method']:>8} {clk:6.0f} {evs} {ncu:12.5f} {100*(tbm-ncu)/ncu:+8.2f}% {per:8d}")
PYEOF
    done
done
