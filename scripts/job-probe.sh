#!/bin/bash
# job-probe.sh - issue 25's open question on the GPU (docs/search.md, "A first clue"): does a
# point measured in a job of a few points time as it does in a job of all of them? One shape
# (default 1x4096x4096, where the third search run was furthest from the sweep), every BF16
# wgmma grid point in layout tn: one sweep of all of them (one job, as the exhaustive sweep),
# then the same points in sweeps of GROUP (default 6, a search round's size), then the one-job
# sweep again. Prints, per point, each sweep's median and the ratios, and: the mean and spread
# of ln(small job / one job), the same for the two one-job sweeps (the run-to-run floor), and
# whether the two rankings agree on pairs more than 3 % apart.
#   scripts/job-probe.sh PREFIX [SHAPE [GROUP]]      (logs and databases under $OUT or /tmp/tb-job)
set -u
P=$(cd "${1:?usage: job-probe.sh PREFIX [SHAPE [GROUP]]}" && pwd) || exit 2
shape=${2:-1x4096x4096} group=${3:-6}
out=${OUT:-/tmp/tb-job}; mkdir -p "$out"
TB=$P/bin/tilebench G=$P/lib/tilebench/variants-grid
common=(--shapes "$shape" --no-energy --no-progress --quiet)
names=$("$TB" list --variants "$G" --filter 'wgmma_bf16_*_tn' --format json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys; print(" ".join(v["name"] for v in json.load(sys.stdin)))')
[ -n "$names" ] || { echo "job-probe: no wgmma_bf16_*_tn point in $G"; exit 2; }
read -r -a pts <<<"$names"
echo "== $(date +%T) ${#pts[@]} points on $shape; GPU: $(nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader)"
"$TB" sweep --variants "$G" --filter 'wgmma_bf16_*_tn' "${common[@]}" --db "$out/one-a.db" || exit 1
for ((i = 0; i < ${#pts[@]}; i += group)); do
    f=(); for n in "${pts[@]:i:group}"; do f+=(--filter "$n"); done
    "$TB" sweep --variants "$G" "${f[@]}" "${common[@]}" --db "$out/small.db" || exit 1
done
"$TB" sweep --variants "$G" --filter 'wgmma_bf16_*_tn' "${common[@]}" --db "$out/one-b.db" || exit 1
echo "== $(date +%T) done"
/usr/bin/python3 - "$out/one-a.db" "$out/small.db" "$out/one-b.db" <<'PYEOF'
import itertools, json, math, sqlite3, statistics as st, sys
def load(p):
    r = {}
    for name, med, ex in sqlite3.connect(p).execute(
            "SELECT v.name, x.median_ms, x.extra_json FROM measurements x JOIN variants v ON v.id = x.variant_id "
            "WHERE x.status = 'ok' AND x.disposition = 'passed'"):
        r[name] = (med, json.loads(ex or "{}").get("graph_reps"))
    return r
a, s, b = (load(p) for p in sys.argv[1:4])
names = sorted(set(a) & set(s) & set(b))
print(f"{'point':64} {'one job':>9} {'small':>9} {'again':>9} {'small/one':>9} {'reps one/small'}")
for n in names:
    print(f"{n:64} {a[n][0]*1e3:9.2f} {s[n][0]*1e3:9.2f} {b[n][0]*1e3:9.2f} {s[n][0]/a[n][0]:9.4f}  {a[n][1]}/{s[n][1]}")
def spread(x, y):
    d = [math.log(y[n][0] / x[n][0]) for n in names]
    return st.mean(d), st.pstdev(d)
for what, x, y in (("small jobs / one job", a, s), ("one job again / one job", a, b)):
    m, sd = spread(x, y)
    print(f"{what}: mean {m * 100:+.2f} %, sd {sd * 100:.2f} % over {len(names)} points")
flips = sum(1 for p, q in itertools.combinations(names, 2)
            if abs(a[p][0] / a[q][0] - 1) > 0.03 and abs(s[p][0] / s[q][0] - 1) > 0.03
            and (a[p][0] < a[q][0]) != (s[p][0] < s[q][0]))
print(f"pairs more than 3 % apart in both and ranked differently (one job against small jobs): {flips}")
PYEOF
