#!/bin/bash
# ncu-compare.sh - tilebench's median for a variant beside Nsight Compute's gpu__time_duration
# for the same kind of launches (ncu: --clock-control none --cache-control all, every kernel
# the variant launches summed per launch, 20 launches of tilebench's own cold method found by
# the --nvtx-include line `show --detail` prints), on the device machine, from the prefix.
#
# The protocol (docs/method.md, "Checking against Nsight Compute"): neither tool may inherit
# a card the other left hot, so every run, of either tool, starts after the same rest
# (REST seconds idle, default 10; the GPU's temperature at its start is printed); per shape,
# ROUNDS rounds (default 3) of one ncu run and one tilebench sweep of that shape alone, in
# alternating order (ncu first in odd rounds), and each tilebench figure is set beside the
# ncu figure of its own round. CONFIGS picks tilebench's method per round (default "auto";
# also pace1 = --pace 1, cold, stream, graph: one sweep each).
#   scripts/ncu-compare.sh [PREFIX] [VARIANT] [SHAPES]   (default prefix cublaslt 8192^3,4096^3,1024^3)
set -u
cd "$(dirname "$0")/.."
P=$(cd "${1:-prefix}" && pwd); V=${2:-cublaslt}; SHAPES=${3:-8192x8192x8192,4096x4096x4096,1024x1024x1024}
TB=$P/bin/tilebench
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
out=${OUT:-/tmp/tb-ncu}; mkdir -p "$out"
PY=/usr/bin/python3; [ -x $PY ] || PY=python3
CONFIGS=${CONFIGS:-auto}; ROUNDS=${ROUNDS:-3}; REST=${REST:-10}
temp() { nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader,nounits 2>/dev/null | head -1; }
rest() { sleep "$REST"; t=$(temp); }

run_ncu() {   # shape round -> $out/ncu-$1-$2.csv
    rest; echo "ncu $1 $2 $t" >> "$out/temps.txt"
    "$NCU" --nvtx --nvtx-include "tb/$V/$1/timed/" --clock-control none --cache-control all \
        --metrics gpu__time_duration.sum --csv --page raw --print-units base \
        "$TB" sweep --filter "$V" --shapes "$1" --method cold --profile --stop fixed:samples=20 \
        --max-time 600 --timeout 600 --no-progress --quiet --db "$out/ncu-prof-$1-$2.db" \
        > "$out/ncu-$1-$2.csv" 2> "$out/ncu-$1-$2.err"
    rm -f "$out/ncu-prof-$1-$2.db"
}
run_tb() {    # shape round -> $out/tb-$1-$2-$cf.json for each config
    local cf a
    for cf in $CONFIGS; do
        case $cf in auto) a=();; pace1) a=(--pace 1);; cold|stream|graph) a=(--method $cf);;
            *) echo "unknown config $cf"; exit 2;; esac
        rest; echo "tb $1 $2 $cf $t" >> "$out/temps.txt"
        "$TB" sweep --filter "$V" --shapes "$1" "${a[@]}" --no-progress --quiet --db "$out/tb.db" 2>/dev/null
        "$TB" export --db "$out/tb.db" --format json > "$out/tb-$1-$2-$cf.json"
        rm -f "$out/tb.db"
    done
}

: > "$out/temps.txt"
for s in ${SHAPES//,/ }; do
    for r in $(seq 1 "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then run_ncu "$s" "$r"; run_tb "$s" "$r"; else run_tb "$s" "$r"; run_ncu "$s" "$r"; fi
    done
done

$PY - "$out" "$V" "$SHAPES" "$ROUNDS" "$CONFIGS" <<'PYEOF'
import csv, io, json, os, statistics, sys
out, V, shapes, rounds, configs = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4]), sys.argv[5].split()
temps = {}
for l in open(os.path.join(out, "temps.txt")):
    f = l.split()
    temps[tuple(f[:-1])] = f[-1]
def num(v):
    v = (v or "").replace(",", "")
    try: return float(v)
    except ValueError: return None
def ncu_ms(path):
    try: lines = [l for l in open(path) if l.startswith('"')]
    except OSError: return None, 0
    rows = list(csv.DictReader(io.StringIO("".join(lines))))
    col = "gpu__time_duration.sum"
    t = [num(x[col]) for x in rows if num(x.get(col)) is not None]
    if not t: return None, 0
    unit = next((x[col] for x in rows if x.get(col) and num(x[col]) is None), "ns")
    per = max(1, round(len(t) / 20))            # kernels per launch
    launches = [sum(t[i:i + per]) for i in range(0, len(t) - per + 1, per)]
    scale = {"ns": 1e-6, "nsecond": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0}.get(unit, 1e-6)
    return statistics.median(launches) * scale, per
print(f"{'shape':<16} {'round':>5} {'config':>6} {'tilebench ms':>12} {'method':>8} {'SM MHz':>6} "
      f"{'°C':>3} {'ncu ms':>10} {'°C':>3} {'diff':>8} {'kernels':>7}")
summary = {}
for s in shapes:
    for r in range(1, rounds + 1):
        ncu, per = ncu_ms(os.path.join(out, f"ncu-{s}-{r}.csv"))
        for cf in configs:
            try: res = json.load(open(os.path.join(out, f"tb-{s}-{r}-{cf}.json")))["results"]
            except (OSError, ValueError): res = []
            res = [x for x in res if x.get("timing") and x["timing"].get("median_ms")]
            if not res or ncu is None:
                print(f"{s:<16} {r:>5} {cf:>6} {'missing' if not res else '':>12} ncu {'missing' if ncu is None else ncu}")
                continue
            t = res[0]["timing"]; tb = t["median_ms"]; d = 100 * (tb - ncu) / ncu
            summary.setdefault((s, cf), []).append(d)
            print(f"{s:<16} {r:>5} {cf:>6} {tb:12.5f} {t['method']:>8} {t.get('clock_mhz') or 0:6.0f} "
                  f"{temps.get(('tb', s, str(r), cf), '?'):>3} {ncu:10.5f} {temps.get(('ncu', s, str(r)), '?'):>3} "
                  f"{d:+7.2f}% {per:7d}")
for (s, cf), ds in summary.items():
    print(f"{s} {cf}: {len(ds)} rounds, differences {', '.join(f'{d:+.2f}' for d in ds)} %; "
          f"median {statistics.median(ds):+.2f} %, largest |d| {max(abs(d) for d in ds):.2f} %")
PYEOF
