#!/bin/bash
# gpu_timing.sh - the timing method (issue 6): ties and a planted 5% slowdown across repeated
# sweeps, the stream and graph methods for short kernels, --l2 hot, the blocking kernel's timeout path,
# a clock per sample, and (where ncu exists) profiler detection and the exact ncu line that
# show --detail prints; a launch() slow on the host (issue 19: timing-9, timing-10).
# TB_TIMING_ROUNDS sets the sweeps per comparison (default 10); TB_TIMING_ONLY=host runs only
# timing-9 and timing-10 (about 10 s: to try them against another build's tilebench).
set -u
. "$(dirname "$0")/gpu_common.sh"
rounds=${TB_TIMING_ROUNDS:-10}
if [ "${TB_TIMING_ONLY:-}" != host ]; then
mkdir -p "$tmp/twins" "$tmp/pair"
cp "$TB_ZOO/zoo_twin.so" "$tmp/twins/twin_a.so"; cp "$TB_ZOO/zoo_twin.so" "$tmp/twins/twin_b.so"
cp "$TB_ZOO/zoo_fast.so" "$TB_ZOO/zoo_slow5.so" "$tmp/pair/"
tied=0; slower=0
for r in $(seq 1 $rounds); do
    "$TB" sweep --variants "$tmp/twins" --shapes 1024x1024x1024 --max-time 0.3 --no-progress \
        --db "$tmp/t$r.db" > "$tmp/t$r.out" 2>/dev/null
    grep -qE '^ +=1 +twin_' "$tmp/t$r.out" && tied=$((tied+1))
    "$TB" sweep --variants "$tmp/pair" --shapes 1024x1024x1024 --max-time 0.3 --no-progress \
        --db "$tmp/p$r.db" > "$tmp/p$r.out" 2>/dev/null
    grep -qE '^ +2 +zoo_slow5 ' "$tmp/p$r.out" && grep -qE '^ +1 +zoo_fast ' "$tmp/p$r.out" && slower=$((slower+1))
done
cat "$tmp/t1.out" "$tmp/p1.out"
echo "twins tied in $tied of $rounds sweeps; the 5% slower copy ranked slower in $slower of $rounds"
[ $tied -ge $(( rounds * 9 / 10 )) ] && ok timing-1.1 || bad timing-1.1 "twins tied in only $tied of $rounds"
[ $slower = $rounds ] && ok timing-1.2 || bad timing-1.2 "zoo_slow5 ranked slower in only $slower of $rounds"

# stream for short kernels, cold for long ones, the graph when asked, hot L2 when asked; a
# clock per sample, between half the card's maximum and 1 % above it. The stream and
# graph figures of one 256^3 kernel, measured in two sweeps a moment apart, differ by the
# stream's per-launch cost: neither is zero, and they agree within 2 us (docs/perf.md:
# 0.3-0.6 us per launch expected on the H100).
"$TB" sweep --filter cublaslt --shapes 256x256x256,4096x4096x4096 --no-progress --quiet --db "$tmp/g.db" 2>/dev/null
"$TB" sweep --filter cublaslt --shapes 256x256x256 --method graph --no-progress --quiet --db "$tmp/gg.db" 2>/dev/null
"$TB" sweep --filter cublaslt --shapes 256x256x256 --l2 hot --method cold --no-progress --quiet --db "$tmp/h.db" 2>/dev/null
for d in g gg h; do "$TB" export --db "$tmp/$d.db" --format json > "$tmp/$d.json"; done
$PY - "$tmp/g.json" "$tmp/h.json" "$tmp/gg.json" <<'PYEOF' && ok timing-2 || bad timing-2 "see above"
import json, sys
g = json.load(open(sys.argv[1]))["results"]; h = json.load(open(sys.argv[2]))["results"]
gg = json.load(open(sys.argv[3]))
envmax = (gg["environment"][0] if isinstance(gg["environment"], list) else gg["environment"]).get("sm_clock_max_mhz")
gg = gg["results"]
fails = []
by = {r["problem"]["m"]: r for r in g}
if by[256]["timing"]["method"] != "stream": fails.append(f"256^3 method {by[256]['timing']['method']}, want stream")
if by[4096]["timing"]["method"] != "cold": fails.append(f"4096^3 method {by[4096]['timing']['method']}, want cold")
if gg[0]["timing"]["method"] != "graph": fails.append(f"--method graph gave {gg[0]['timing']['method']}")
for r in (by[256], gg[0]):
    x = r["extra"]
    if not x.get("graph_reps") or not x.get("graph_sets") or x["graph_sets"] < 2: fails.append(f"reps/sets missing: {x}")
st, gr = by[256]["timing"]["median_ms"], gg[0]["timing"]["median_ms"]
print(f"256^3 cublaslt: stream {st*1e3:.2f} us, graph {gr*1e3:.2f} us per launch")
if not (0 < gr and 0 < st and abs(st - gr) < 0.002): fails.append("stream and graph disagree by 2 us or more")
if h[0]["extra"].get("l2") != "hot" or h[0]["timing"]["method"] != "cold": fails.append(f"--l2 hot not recorded: {h[0]['extra']}")
for r in g + gg:
    c = r["timing"].get("samples_clock_mhz") or []
    if len(c) != r["timing"]["n_samples"] or not all(300 < v < 3500 for v in c):
        fails.append(f"clock per sample: {len(c)} clocks for {r['timing']['n_samples']} samples, {c[:5]}")
    if not r["extra"].get("blocking_kernel"): fails.append("blocking kernel not used")
    # the clock over the sample (stamps around it) cannot run above the card's maximum; a
    # probe after the sample read 2041-2066 MHz on this 1980 MHz card (sixth session)
    cmax = envmax or 0
    print(f"{r['problem']['m']}^3 {r['timing']['method']}: clock {r['timing'].get('clock_mhz') or 0:.0f} MHz (max {cmax})")
    if cmax and not (0.5 * cmax < (r["timing"].get("clock_mhz") or 0) <= 1.01 * cmax):
        fails.append(f"clock {r['timing'].get('clock_mhz')} MHz against the card's maximum {cmax}")
for f in fails: print("FAIL timing-2:", f)
sys.exit(1 if fails else 0)
PYEOF

# the blocking kernel's timeout path: with a 1 us limit every sample times out, and says so
# (--l2 hot: with a flush before it the GPU is busy while the host queues, and no timeout shows)
TILEBENCH_BLOCK_TIMEOUT_MS=0.001 "$TB" sweep --filter cublaslt --shapes 512x512x512 --method cold --l2 hot \
    --stop fixed:samples=20 --no-progress --quiet --db "$tmp/b.db" 2>/dev/null
"$TB" export --db "$tmp/b.db" --format json | $PY -c "
import json,sys; r=json.load(sys.stdin)['results'][0]; n=r['extra'].get('block_timeouts',0)
print('block timeouts', n, 'of', r['timing']['n_samples']); sys.exit(0 if n >= 15 else 1)" \
    && ok timing-3 || bad timing-3 "blocking-kernel timeouts not counted"

# the same sweep twice gives the same ranking outside ties: two variants whose intervals
# against the best (show's "vs best [95% CI]") do not overlap in either run are ordered the
# same way in both; the spread of every median (rse) is shown
rep=(--filter 'simt_tiled*' --filter 'mma_sync_bf16_64x64x64*' --filter 'mma_sync_bf16_128x128x32_s3*'
     --filter cublaslt --filter 'wgmma_bf16_128x256x64_c1x1*' --filter 'wgmma_bf16_128x128x64_c1x1*'
     --shapes 2048x2048x2048 --max-time 0.3 --no-energy --no-progress)
"$TB" sweep "${rep[@]}" --db "$tmp/r1.db" > "$tmp/r1.out" 2>/dev/null
"$TB" sweep "${rep[@]}" --db "$tmp/r2.db" > "$tmp/r2.out" 2>/dev/null
cat "$tmp/r1.out" "$tmp/r2.out"
$PY - "$tmp/r1.out" "$tmp/r2.out" <<'PYEOF' && ok timing-5 || bad timing-5 "see above"
import re, sys
row = re.compile(r"^\s+=?\d+\s+(\S+)\s+[\d.]+\s+([\d.]+)\s+([\d.]+)%\s+(best|([\d.]+) \[([\d.]+),([\d.]+)\])")
def runs(path):
    out = {}
    for l in open(path):
        m = row.match(l)
        if not m: continue
        lo, hi = (1.0, 1.0) if m.group(4) == "best" else (float(m.group(6)), float(m.group(7)))
        out[m.group(1)] = (float(m.group(2)), lo, hi, float(m.group(3)))
    return out
a, b = runs(sys.argv[1]), runs(sys.argv[2])
names = sorted(set(a) & set(b))
print(f"{len(names)} variants in both runs; spread (rse) shown for each: " +
      ", ".join(f"{n} {a[n][3]}%/{b[n][3]}%" for n in names))
sep = lambda r, x, y: r[x][2] < r[y][1] or r[y][2] < r[x][1]
pairs = bad = 0
for i, x in enumerate(names):
    for y in names[i + 1:]:
        if not (sep(a, x, y) and sep(b, x, y)): continue
        pairs += 1
        if (a[x][0] < a[y][0]) != (b[x][0] < b[y][0]):
            bad += 1
            print(f"order of {x} and {y} differs: {a[x][0]} vs {a[y][0]} ms, then {b[x][0]} vs {b[y][0]} ms")
print(f"{pairs} separated pairs compared, {bad} ordered differently")
sys.exit(0 if len(names) >= 4 and pairs >= 3 and bad == 0 else 1)
PYEOF

# one method per shape under auto: the 1 ms SIMT kernel of that 2048^3 sweep is timed as the
# 27 us ones are (the stream method), from estimates with no host time in them
"$TB" export --db "$tmp/r1.db" --format json > "$tmp/r1.json"; "$TB" export --db "$tmp/r2.db" --format json > "$tmp/r2.json"
$PY - "$tmp/r1.json" "$tmp/r2.json" <<'PYEOF' && ok timing-6 || bad timing-6 "see above"
import json, sys
fails = []
for f in sys.argv[1:]:
    # the rows that were timed: a wgmma point's other layouts (_nn, _nt, _tt; issue 31) decline
    # a tn problem and have no method, by design
    rows = [r for r in json.load(open(f))["results"] if r["status"] == "ok"]
    ms = {r["variant"]["name"]: (r["timing"]["method"], r["extra"].get("estimate_ms")) for r in rows}
    if len(ms) < 5: fails.append(f"only {len(ms)} timed rows")
    print(f.split("/")[-1], ms)
    if {m for m, _ in ms.values()} != {"stream"}: fails.append(f"methods {ms}")
    if any(not isinstance(e, (int, float)) or e <= 0 for _, e in ms.values()): fails.append("estimate missing")
for x in fails: print("FAIL timing-6:", x)
sys.exit(1 if fails else 0)
PYEOF

# under ncu: the profiler is found, the blocking kernel is off, and the ncu line from
# show --detail selects exactly the timed launches of one variant on one shape
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
    "$TB" sweep --filter cublaslt --filter 'simt_tiled*' --shapes 1024x1024x1024 --no-progress --quiet --db "$tmp/n.db" 2>/dev/null
    line=$("$TB" show --db "$tmp/n.db" --detail | grep -m1 -A0 "profile:.*cublaslt" | sed 's/^ *profile: *//')
    echo "ncu line: $line"
    line=${line/ncu /$NCU }; line=${line//tilebench sweep/$TB sweep}; line=${line//profile.db/$tmp\/prof.db}
    eval "$line" > "$tmp/ncu.out" 2>&1
    n=$(grep -c "gpu__time_duration.sum" "$tmp/ncu.out")
    echo "ncu profiled $n kernel launches"; grep -E "==PROF==|gpu__time_duration" "$tmp/ncu.out" | head -8
    [ "$n" -ge 5 ] && [ "$n" -le 20 ] && ok timing-4.1 || bad timing-4.1 "ncu line profiled $n launches, want the 5 timed ones"
    ! grep -q "simt_tiled\|naive" "$tmp/ncu.out" && ok timing-4.2 || bad timing-4.2 "another variant's kernels were profiled"
    "$TB" export --db "$tmp/prof.db" --format json | $PY -c "
import json,sys; r=json.load(sys.stdin)['results'][0]; x=r['extra']
print('under ncu:', x.get('blocking_kernel'), x.get('no_blocking_because')); sys.exit(0 if x.get('blocking_kernel') is False else 1)" \
        && ok timing-4.3 || bad timing-4.3 "the blocking kernel was not turned off under ncu"
else
    echo "no ncu here: profiler checks skipped"
fi
# a short kernel under the default stop rule ends by noise, not by the 1 s timeout: min-time
# counts the GPU time of the stream method's batches (issue 28; common/stop.h)
s0=$(date +%s%N)
"$TB" sweep --variants "$TB_VARIANTS/cublaslt.so" --shapes 1024x1024x1024 --no-energy --no-progress \
    --quiet --db "$tmp/stop.db" 2>/dev/null
ms=$(( ($(date +%s%N) - s0) / 1000000 ))
why=$("$TB" export --db "$tmp/stop.db" --format json | $PY -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["timing"]["stop_reason"])')
echo "1024^3 cublaslt, default stop rule: '$why', sweep wall $ms ms"
[[ $why == "stdrel: noise"* ]] && ok timing-7 || bad timing-7 "stopped by '$why', not by noise"
# where the time went (issue 28): printed at the end of a sweep, stored with the run, shown by
# show; the worker's phases and the parent's add up to no more than the whole
"$TB" sweep --variants "$TB_VARIANTS/cublaslt.so" --shapes 2048x2048x2048 --no-progress --quiet \
    --db "$tmp/ph.db" > "$tmp/ph.out" 2> "$tmp/ph.err"
echo "$(grep '^time:' "$tmp/ph.err")"
"$TB" show --db "$tmp/ph.db" | grep -q '^time: ' && grep -qE '^time: [0-9.]+ s: .*timing' "$tmp/ph.err" \
    && $PY - "$tmp/ph.db" <<'PYEOF' && ok timing-8 || bad timing-8 "phases: $(cat "$tmp/ph.err" | tail -2)"
import json, sqlite3, sys
p = json.loads(sqlite3.connect(sys.argv[1]).execute("SELECT phases_json FROM runs").fetchone()[0])
parts = sum(v for k, v in p.items() if k != "total_s")
assert p["worker_start_s"] > 0 and p["validation_s"] > 0 and p["timing_s"] > 0 and p["energy_s"] > 0, p
assert p["store_s"] > 0 and parts <= p["total_s"] * 1.01, p
PYEOF
fi   # TB_TIMING_ONLY
# a launch() slow on the host (zoo_host_bound, issue 19 hole 1: TB_ZOO_HOST_MS of host work,
# then zoo_fast's kernel). Queued behind the blocking kernel, a stream sample of 256 or more
# such launches outlasts its 500 ms timeout and times the host's pace (every sample did, and
# the median was ~100 x the GPU's). Now the stream method queues only as many as the host gets
# through in a quarter of the timeout (125 ms / 3 ms = 41): no kept sample timed out, the
# figure is zoo_fast's, and the host time of a launch is stored and shown. About 5 s.
TB_ZOO_HOST_MS=3 "$TB" sweep --variants "$TB_ZOO" --filter zoo_host_bound --filter zoo_fast \
    --shapes 128x128x128 --method stream --stop fixed:samples=12 --no-energy --no-progress \
    --db "$tmp/hb.db" > "$tmp/hb.out" 2> "$tmp/hb.err"
echo "host-bound sweep exited $?"; cat "$tmp/hb.out"; grep -v "^\[" "$tmp/hb.err" | tail -3
"$TB" export --db "$tmp/hb.db" --format json > "$tmp/hb.json"
$PY - "$tmp/hb.json" "$tmp/hb.out" <<'PYEOF' && ok timing-9 || bad timing-9 "see above"
import json, re, sys
res = {r["variant"]["name"]: r for r in json.load(open(sys.argv[1]))["results"]}
fails = []
for n in ("zoo_host_bound", "zoo_fast"):
    r = res.get(n)
    if not r: fails.append(f"{n}: no result"); continue
    x = r["extra"] or {}
    print(f"{n}: {r['status']}/{r['disposition']} {r['timing'].get('method')} median "
          f"{r['timing'].get('median_ms')} ms, n {r['timing'].get('n_samples')}, reps {x.get('graph_reps')} "
          f"(wanted {x.get('reps_wanted')}, host cap {x.get('host_reps_cap')}), host_launch_ms {x.get('host_launch_ms')}, "
          f"block_timeouts {x.get('block_timeouts')}, retaken {x.get('retaken_samples', 0)}, host_bound {x.get('host_bound')}, "
          f"input_sets {x.get('input_sets')}, refreshes {x.get('input_refreshes')} ({x.get('refresh_ms')} ms each)")
    if (r["status"], r["disposition"], r["timing"].get("method")) != ("ok", "passed", "stream"):
        fails.append(f"{n}: {r['status']}/{r['disposition']} method {r['timing'].get('method')} ({r['reason']})")
    if x.get("block_timeouts") != 0 or x.get("host_bound"):
        fails.append(f"{n}: {x.get('block_timeouts')} kept samples timed out (host_bound {x.get('host_bound')})")
if not fails:
    hb, fast = res["zoo_host_bound"], res["zoo_fast"]
    xh, xf = hb["extra"], fast["extra"]
    if not (xh.get("host_launch_ms", 0) >= 2.5): fails.append(f"host time of a launch {xh.get('host_launch_ms')} ms, planted 3")
    if not (xf.get("host_launch_ms", 1) < 0.5): fails.append(f"zoo_fast's host time {xf.get('host_launch_ms')} ms")
    if not (xh.get("graph_reps", 999) <= 41):
        fails.append(f"launches per sample {xh.get('graph_reps')}, cap {xh.get('host_reps_cap')}: want <= 125 ms / 3 ms")
    ratio = hb["timing"]["median_ms"] / fast["timing"]["median_ms"]
    print(f"zoo_host_bound / zoo_fast median: {ratio:.3f} (the same kernel; before: ~100)")
    if not (0.67 < ratio < 1.5): fails.append(f"median ratio {ratio:.3f}: not the GPU's time")
    # the table shows the host time of a launch, and ranks the clean figure
    row = [l for l in open(sys.argv[2]) if re.match(r"^\s+(=1|\d+)\s+zoo_host_bound\s", l)]
    if not row: fails.append("zoo_host_bound not ranked in show's table")
    elif not re.search(r"\s(2\.[5-9]\d*|[3-9]\.\d+)\s+ok/passed stream", row[0]): fails.append(f"no host ms in {row[0]!r}")
for f in fails: print("FAIL timing-9:", f)
sys.exit(1 if fails else 0)
PYEOF

# ... and a launch() slower on the host than the blocking kernel's whole timeout (20 ms
# against 5 ms here): every sample times out, in the cold method too; after 5 retakes the
# samples are kept, counted, and the measurement is marked host-bound: show prints the mark and
# no rank, export carries it, and zoo_fast beside it is ranked first. About 2 s.
TILEBENCH_BLOCK_TIMEOUT_MS=5 TB_ZOO_HOST_MS=20 "$TB" sweep --variants "$TB_ZOO" --filter zoo_host_bound \
    --filter zoo_fast --shapes 128x128x128 --method cold --stop fixed:samples=6 --no-energy \
    --no-progress --db "$tmp/hb2.db" > "$tmp/hb2.out" 2> "$tmp/hb2.err"
echo "host-bound (timeouts) sweep exited $?"; cat "$tmp/hb2.out"; grep -v "^\[" "$tmp/hb2.err" | tail -3
"$TB" export --db "$tmp/hb2.db" --format json > "$tmp/hb2.json"
"$TB" export --db "$tmp/hb2.db" --format csv > "$tmp/hb2.csv"
$PY - "$tmp/hb2.json" "$tmp/hb2.out" "$tmp/hb2.csv" <<'PYEOF' && ok timing-10 || bad timing-10 "see above"
import csv, json, re, sys
res = {r["variant"]["name"]: r for r in json.load(open(sys.argv[1]))["results"]}
out = open(sys.argv[2]).read()
cs = {r["variant"]: r for r in csv.DictReader(open(sys.argv[3]))}
fails = []
hb, fast = res.get("zoo_host_bound"), res.get("zoo_fast")
for n, r in (("zoo_host_bound", hb), ("zoo_fast", fast)):
    if not r: fails.append(f"{n}: no result"); continue
    x = r["extra"] or {}
    print(f"{n}: {r['status']}/{r['disposition']} median {r['timing'].get('median_ms')} ms, n {r['timing'].get('n_samples')}, "
          f"block_timeouts {x.get('block_timeouts')}, retaken {x.get('retaken_samples', 0)}, host_bound {x.get('host_bound')}, "
          f"host_launch_ms {x.get('host_launch_ms')}; csv host_bound {cs.get(n, {}).get('host_bound')!r}")
if hb and fast:
    x = hb["extra"] or {}
    if (hb["status"], hb["disposition"]) != ("ok", "passed"): fails.append(f"zoo_host_bound {hb['status']}/{hb['disposition']}: {hb['reason']}")
    if x.get("host_bound") is not True: fails.append("zoo_host_bound not marked host-bound")
    if x.get("block_timeouts") != hb["timing"]["n_samples"] or x.get("retaken_samples") != 5:
        fails.append(f"timeouts {x.get('block_timeouts')} of {hb['timing']['n_samples']} kept, {x.get('retaken_samples')} retaken: want all, 5")
    if not (x.get("host_launch_ms", 0) >= 15): fails.append(f"host time {x.get('host_launch_ms')} ms, planted 20")
    if cs.get("zoo_host_bound", {}).get("host_bound") != "true": fails.append("csv does not carry host_bound")
    if (fast["extra"] or {}).get("host_bound"): fails.append("zoo_fast marked host-bound")
    if not re.search(r"^\s+-\s+zoo_host_bound\s.*HOST-BOUND", out, re.M): fails.append("show: zoo_host_bound ranked or unmarked")
    if not re.search(r"^\s+1\s+zoo_fast\s", out, re.M): fails.append("show: zoo_fast not ranked first")
for f in fails: print("FAIL timing-10:", f)
sys.exit(1 if fails else 0)
PYEOF
finish
