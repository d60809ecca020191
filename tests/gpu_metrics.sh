#!/bin/bash
# gpu_metrics.sh - the counter pass of a sweep (issue 8) on real variants: the Hopper family's
# bank-conflict control shows its conflicts where the swizzled point does not; the counters
# come from a process that never timed anything; and the medians of sweeps with and without
# the counter pass, taken alternately, agree within their noise.
set -u
. "$(dirname "$0")/gpu_common.sh"
GRID=${TB_VARIANTS_GRID:-$(dirname "$TB_VARIANTS")/variants-grid}
ST=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum

# metrics-1: the conflict control against the same point with the swizzled epilogue
"$TB" sweep --variants "$GRID" --variants "$TB_VARIANTS" \
    --filter 'wgmma_bf16_128x256x64_c2x1_s4_cooperative_rasterm_sw16_*' --shapes 2048x2048x2048 \
    --metrics banks --max-time 0.3 --no-energy --no-progress --quiet --db "$tmp/c.db" 2>"$tmp/c.err"
"$TB" show --db "$tmp/c.db" --metrics > "$tmp/c.show" 2>&1; cat "$tmp/c.show"
"$TB" export --db "$tmp/c.db" --format json > "$tmp/c.json"
$PY - "$tmp/c.json" "$ST" <<'PYEOF'; rc=$?
import json, sys
res = json.load(open(sys.argv[1]))["results"]
val = {}
for r in res:
    if r["status"] != "ok": continue
    m = {x["name"]: x["value"] for x in r.get("metrics") or []}
    val["control" if "epilogue-conflict" in r["variant"]["name"] else "swizzled"] = m.get(sys.argv[2])
if len(val) < 2:
    print("the wgmma points did not run here (not a Hopper GPU?):", [(r["variant"]["name"], r["status"]) for r in res])
    sys.exit(2)
print(f"store bank conflicts at 2048^3: control {val['control']}, swizzled {val['swizzled']}")
c, s = val["control"], val["swizzled"]
sys.exit(0 if c is not None and s is not None and c > 1e5 and c > 8 * max(s, 1) else 1)
PYEOF
case $rc in 0) ok metrics-1;; 2) echo "metrics-1 not applicable here";; *) bad metrics-1 "the control's conflicts do not stand out";; esac

# metrics-2 and -3: sweeps without (A) and with (B) the counter pass, alternately
sel=(--filter cublaslt --filter 'mma_sync_bf16_128x128x32_s3*' --shapes 4096x4096x4096 --max-time 0.3
     --no-energy --no-progress --quiet)
for i in 1 2 3; do
    "$TB" sweep "${sel[@]}" --db "$tmp/a$i.db" 2>/dev/null
    "$TB" sweep "${sel[@]}" --metrics memory --db "$tmp/b$i.db" 2>/dev/null
done
for f in "$tmp"/a?.db "$tmp"/b?.db; do "$TB" export --db "$f" --format json > "${f%.db}.json"; done
$PY - "$tmp" <<'PYEOF' && ok metrics-2 || bad metrics-2 "see above"
import glob, json, sys
bad = n = 0
for f in sorted(glob.glob(sys.argv[1] + "/b?.json")):
    for r in json.load(open(f))["results"]:
        m = {x["name"]: x["value"] for x in r.get("metrics") or []}
        tp, cp = (r.get("extra") or {}).get("worker_pid"), m.get("tb.counters_pid")
        n += 1
        if not tp or not cp or tp == cp or m.get("dram__bytes_read.sum") is None:
            bad += 1
            print(f"{r['variant']['name']}: timing pid {tp}, counters pid {cp}, dram read {m.get('dram__bytes_read.sum')}")
        # the PM-sampled window (ncu's) against the range profiler's: the same reads, fewer
        # writes (the L2's write-back after the kernel is the range profiler's alone)
        pr, pw = m.get("pm:dram__bytes_read.sum"), m.get("pm:dram__bytes_write.sum")
        rr, rw = m.get("dram__bytes_read.sum"), m.get("dram__bytes_write.sum")
        print(f"{r['variant']['name']}: DRAM read {rr} (pm: {pr}), written {rw} (pm: {pw})")
        if None in (pr, pw, rr, rw) or abs(pr - rr) > 0.02 * rr or not 0 < pw <= rw * 1.01:
            bad += 1
            print("  the pm: figures are missing or do not fit the range profiler's")
print(f"{n} measurements with counters: timing and counters from different processes, "
      f"pm: figures consistent, in {n - bad}")
sys.exit(0 if n >= 2 and bad == 0 else 1)
PYEOF
$PY - "$tmp" <<'PYEOF' && ok metrics-3 || bad metrics-3 "see above"
import glob, json, statistics, sys
med = {}
for f in sorted(glob.glob(sys.argv[1] + "/[ab]?.json")):
    k = f.split("/")[-1][0]
    for r in json.load(open(f))["results"]:
        if r["status"] == "ok":
            med.setdefault(r["variant"]["name"], {}).setdefault(k, []).append(r["timing"]["median_ms"])
ok = True
for v, d in med.items():
    a, b = d.get("a", []), d.get("b", [])
    if len(a) < 3 or len(b) < 3: ok = False; print(v, "missing runs", d); continue
    ma, mb = statistics.median(a), statistics.median(b)
    noise = max(max(a) - min(a), max(b) - min(b)) + 0.01 * ma
    print(f"{v}: medians without counters {['%.5f' % x for x in a]}, with {['%.5f' % x for x in b]}; "
          f"difference {100 * (mb - ma) / ma:+.2f}% (allowed {100 * noise / ma:.2f}%)")
    ok = ok and abs(mb - ma) <= noise
sys.exit(0 if ok and len(med) >= 2 else 1)
PYEOF
finish
