#!/bin/bash
# two-gpu.sh - issue 24 in one device call on a host with two GPUs (nvidia-h200-x2 or
# nvidia-h100-x2): the default sweep over both GPUs (--devices all) and over one (--devices 0),
# their wall times, GPUs and clocks, and whether they rank alike outside ties (pairs more than
# 3 % apart in both); then the same sweep as two --plan-only shards, each measured on its own GPU
# at once (--resume with CUDA_VISIBLE_DEVICES), merged, against the two-GPU sweep: every item
# once in both databases. Logs and databases under $OUT (or /tmp/tb-two-gpu).
#   scripts/two-gpu.sh PREFIX [SWEEP OPTIONS...]     (default: the default sweep)
set -u
P=$(cd "${1:?usage: two-gpu.sh PREFIX [sweep options]}" && pwd) || exit 2
shift
out=${OUT:-/tmp/tb-two-gpu}; mkdir -p "$out"
TB=$P/bin/tilebench
gpu() { nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader; }
echo "== GPUs as found"; gpu
[ "$(nvidia-smi -L | grep -c '^GPU')" -ge 2 ] || { echo "two-gpu: fewer than two GPUs here"; exit 2; }
timed() {   # timed NAME ARGS...: run tilebench, print its wall time and phases
    local name=$1; shift
    local s=$(date +%s%N)
    "$TB" "$@" --no-progress > "$out/$name.txt" 2>&1; local rc=$?
    echo "$name: exit $rc, wall $(( ($(date +%s%N) - s) / 1000000 )) ms; $(grep -E '^time:' "$out/$name.txt" | head -1)"
}
timed both sweep "$@" --devices all --db "$out/both.db"
echo "   GPUs after: $(gpu | tr '\n' ';')"
timed one sweep "$@" --devices 0 --db "$out/one.db"
# the shards: planned once each, measured at once, one GPU each, then merged
"$TB" sweep "$@" --plan-only --shard 0/2 --no-progress --db "$out/shard-0.db" > /dev/null 2>&1
"$TB" sweep "$@" --plan-only --shard 1/2 --no-progress --db "$out/shard-1.db" > /dev/null 2>&1
s=$(date +%s%N)
CUDA_VISIBLE_DEVICES=0 "$TB" sweep --db "$out/shard-0.db" --resume 1 --no-progress --quiet > "$out/shard-0.txt" 2>&1 &
CUDA_VISIBLE_DEVICES=1 "$TB" sweep --db "$out/shard-1.db" --resume 1 --no-progress --quiet > "$out/shard-1.txt" 2>&1 &
wait
echo "shards: wall $(( ($(date +%s%N) - s) / 1000000 )) ms for both at once"
"$TB" merge "$out/merged.db" "$out/shard-0.db" "$out/shard-1.db"
/usr/bin/python3 - "$out/both.db" "$out/one.db" "$out/merged.db" <<'PYEOF'
import itertools, json, sqlite3, sys
def load(p):
    c = sqlite3.connect(p); r = {}
    for name, m, n, k, med, st, x in c.execute("SELECT v.name, p.m, p.n, p.k, x.median_ms, x.status, x.extra_json FROM measurements x "
                                               "JOIN variants v ON v.id = x.variant_id JOIN problems p ON p.id = x.problem_id"):
        r.setdefault((name, m, n, k), []).append((med, st, json.loads(x or "{}")))
    return r
both, one, merged = (load(p) for p in sys.argv[1:4])
print("items: both GPUs", len(both), "one GPU", len(one), "merged shards", len(merged),
      "; any item twice:", any(len(v) > 1 for d in (both, one, merged) for v in d.values()))
print("same items in the two-GPU sweep and the merged shards:", set(both) == set(merged))
gpus = {}
for key, v in both.items():
    gpus.setdefault(key[1:], set()).add(v[0][2].get("gpu_uuid"))
print("shapes per GPU (--devices all):", {str(u)[-8:]: sum(1 for s in gpus.values() if s == {u}) for u in set().union(*gpus.values())})
print("a shape split over GPUs:", any(len(s) > 1 for s in gpus.values()))
bad = 0
for shape in {k[1:] for k in both}:
    names = [k[0] for k in both if k[1:] == shape and both[k][0][1] == "ok" and one.get(k, [(0, "")])[0][1] == "ok"]
    for a, b in itertools.combinations(names, 2):
        ra = both[(a,) + shape][0][0] / both[(b,) + shape][0][0]; rb = one[(a,) + shape][0][0] / one[(b,) + shape][0][0]
        if abs(ra - 1) > 0.03 and abs(rb - 1) > 0.03 and (ra > 1) != (rb > 1):
            bad += 1; print(f"  ranked differently: {shape} {a} vs {b}: {ra:.3f} on two GPUs, {rb:.3f} on one")
print("pairs ranked differently outside ties:", bad)
PYEOF
