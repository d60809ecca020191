#!/bin/bash
# search-gpu.sh - issue 25 on the GPU: the model-guided search beside the exhaustive sweep of
# the same wgmma grid on the same shapes, in one device session, from an install prefix
# (scripts/make-prefix.sh). A device call is limited to 10 minutes and the exhaustive sweep of
# square and llm does not fit in one, so the work is three parts, one call each, then a
# comparison here:
#   scripts/search-gpu.sh PREFIX --part small    exhaustive: the grid on square + llm M <= 1024
#   scripts/search-gpu.sh PREFIX --part large    exhaustive: the grid on llm M = 4096, 16384
#   scripts/search-gpu.sh PREFIX --part search   tilebench search over square,llm (--explain,
#                                                --table)
#   scripts/search-gpu.sh --compare DIR...       per shape: the search's winner against the
#                                                exhaustive sweep's, and both GPU times
# Each part writes its database and a log under $OUT (or /tmp/tb-search-gpu). The grid is the
# tn points of variants-grid (the shape sets are tn). "GPU time" is what search and the table
# script count: the sweep runs' wall time (runs.phases_json total_s).
# --compare reads small.db, large.db and search.db from the directories given (the device
# tool's files_at folders), and counts a shape found when the search's winner, as the
# EXHAUSTIVE sweep measured it, is within 1 % of that sweep's best (a point tied with it: the
# two runs' own medians differ by their run-to-run noise, so the exhaustive sweep judges both).
# Exit 0 when >= 90 % of shapes are found at <= 1/3 of the exhaustive GPU time, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = --compare ]; then
    shift
    exec /usr/bin/python3 - "$@" <<'PYEOF'
import json, os, sqlite3, sys
def find(name):
    for d in sys.argv[1:]:
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    sys.exit(f"search-gpu: no {name} in {' '.join(sys.argv[1:])}")
def gpu_s(c):
    return sum(json.loads(pj or "{}").get("total_s", 0.0) for (pj,) in c.execute("SELECT phases_json FROM runs"))
def medians(c):
    out = {}
    for name, m, n, k, med in c.execute(
            "SELECT v.name, p.m, p.n, p.k, x.median_ms FROM measurements x JOIN variants v ON v.id = x.variant_id "
            "JOIN problems p ON p.id = x.problem_id WHERE x.status = 'ok' AND x.disposition = 'passed' "
            "AND x.median_ms > 0 AND v.name LIKE 'wgmma_bf16%'"):
        d = out.setdefault((m, n, k), {})
        d[name] = min(med, d.get(name, med))
    return out
exh, exh_s = {}, 0.0
for part in ("small.db", "large.db"):
    c = sqlite3.connect(f"file:{find(part)}?mode=ro", uri=True)
    exh.update(medians(c)); exh_s += gpu_s(c)
c = sqlite3.connect(f"file:{find('search.db')}?mode=ro", uri=True)
srch, srch_s = medians(c), gpu_s(c)
found, rows = 0, []
for shape in sorted(exh):
    e = exh[shape]
    best = min(e, key=e.get)
    s = srch.get(shape, {})
    pick = min(s, key=s.get) if s else None
    ratio = e[pick] / e[best] if pick in e else float("inf")
    ok = ratio <= 1.01
    found += ok
    rows.append(f"{'x'.join(map(str, shape)):>20}  {len(s):>2} of {len(e):>2} timed  "
                f"{'found' if ok else 'MISSED'}  {ratio:.3f}  {pick or '-'}  (sweep: {best})")
print("\n".join(rows))
share = srch_s / exh_s if exh_s else float("inf")
print(f"found {found} of {len(exh)} shapes ({100.0 * found / max(len(exh), 1):.0f} %); GPU time: search "
      f"{srch_s:.1f} s, exhaustive {exh_s:.1f} s ({100.0 * share:.0f} %)")
sys.exit(0 if found >= 0.9 * len(exh) and share <= 1 / 3 else 1)
PYEOF
fi
P=$(cd "${1:?usage: search-gpu.sh PREFIX --part small|large|search, or --compare DIR...}" && pwd) || exit 2
[ "${2:-}" = --part ] || { echo "search-gpu: --part small|large|search" >&2; exit 2; }
out=${OUT:-/tmp/tb-search-gpu}; mkdir -p "$out"
TB=$P/bin/tilebench G=$P/lib/tilebench/variants-grid
log=$out/${3:-}.log
echo "== $(date +%T) GPU as found: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader)" | tee -a "$log"
awk '!/^#/ && NF { split($1, d, "x"); if (d[1] + 0 <= 1024) print }' results/shapes/llm.txt > "$out/llm-small.txt"
# (4096x4096x4096 is in square too: measured once, in part small)
awk '!/^#/ && NF { split($1, d, "x"); if (d[1] + 0 > 1024 && !(d[1] == d[2] && d[2] == d[3])) print }' \
    results/shapes/llm.txt > "$out/llm-large.txt"
s=$(date +%s)
case ${3:-} in
    small) "$TB" sweep --variants "$G" --filter 'wgmma_bf16_*_tn' --shapes "square,$out/llm-small.txt" \
               --no-energy --no-progress --quiet --db "$out/small.db" >> "$log" 2>&1 ;;
    large) "$TB" sweep --variants "$G" --filter 'wgmma_bf16_*_tn' --shapes "$out/llm-large.txt" \
               --no-energy --no-progress --quiet --db "$out/large.db" >> "$log" 2>&1 ;;
    search) "$TB" search --variants "$G" --shapes square,llm --quantile 0.7 --explain --table "$out/search-table.json" \
               --db "$out/search.db" >> "$log" 2>&1 ;;
    *) echo "search-gpu: --part small|large|search" >&2; exit 2 ;;
esac
rc=$?
rm -f "$out/llm-small.txt" "$out/llm-large.txt"
echo "== $(date +%T) part ${3}: exit $rc in $(( $(date +%s) - s )) s" | tee -a "$log"
