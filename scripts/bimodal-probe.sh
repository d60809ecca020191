#!/bin/bash
# bimodal-probe.sh - issue 28's open question, in one device call: five separate tilebench runs of
# cublaslt at 1024^3 came back in two modes (7.45 us and 7.60-7.63 us, the clocks within 0.1 %;
# docs/perf.md, tenth session). Which per-process choice moves with the mode? For each method
# (the default stream, cold, graph) N separate processes (default 6), each printing its median,
# median SM clock, launches a sample (graph_reps), input sets, the estimate the method was
# chosen from, the stop reason and the host time of a launch, then a line per method: the two
# groups if the medians split by more than 1 %, and which field differs between them.
#   scripts/bimodal-probe.sh PREFIX [N]        (logs under $OUT, or /tmp/tb-bimodal)
set -u
P=$(cd "${1:?usage: bimodal-probe.sh PREFIX [N]}" && pwd) || exit 2
n=${2:-6}
out=${OUT:-/tmp/tb-bimodal}; mkdir -p "$out"
TB=$P/bin/tilebench; V=$P/lib/tilebench/variants/cublaslt.so
cat > "$out/summarise.py" <<'PYEOF'
import json, sys
rows = []
dec = json.JSONDecoder(); text = sys.stdin.read(); i = 0
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    d, i = dec.raw_decode(text, i)
    r = d["results"][0]; x = r.get("extra") or {}; t = r["timing"]
    rows.append(dict(ms=t["median_ms"] * 1e3, clock=t.get("clock_mhz"), reps=x.get("graph_reps"), sets=x.get("input_sets"),
                     est=x.get("estimate_ms"), stop=t.get("stop_reason"), host=x.get("host_launch_ms"), n=t.get("n_samples")))
m = sys.argv[1]
for r in rows: print(f"{m:6} {r['ms']:.3f} us  clock {r['clock'] or 0:.0f}  reps {r['reps']}  sets {r['sets']}  est {r['est']}  n {r['n']}  host {r['host']}  {r['stop']}")
ms = sorted(r["ms"] for r in rows)
spread = ms[-1] / ms[0] - 1
print(f"{m}: {len(rows)} runs, spread {spread * 100:.2f} %")
if spread > 0.01:
    cut = max(range(1, len(ms)), key=lambda k: ms[k] / ms[k - 1])
    lo = [r for r in rows if r["ms"] < ms[cut]]; hi = [r for r in rows if r["ms"] >= ms[cut]]
    for k in ("clock", "reps", "sets", "est", "n", "host"):
        a, b = {str(r[k]) for r in lo}, {str(r[k]) for r in hi}
        if not (a & b): print(f"  {k} separates the modes: fast {sorted(a)}, slow {sorted(b)}")
PYEOF
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
for m in stream cold graph; do
    for i in $(seq 1 "$n"); do
        db="$out/$m-$i.db"; rm -f "$db"
        "$TB" sweep --variants "$V" --shapes 1024x1024x1024 --method "$m" --no-energy --no-progress --quiet --db "$db" 2>/dev/null
        "$TB" export --db "$db" --format json
    done | /usr/bin/python3 "$out/summarise.py" "$m" | tee -a "$out/bimodal.txt"
done
