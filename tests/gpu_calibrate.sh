#!/bin/bash
# gpu_calibrate.sh - doctor --calibrate (issue 8, the roofline position): the two ceilings it
# prints and stores lie in the range of a data-centre GPU (DRAM 500-10000 GB/s, BF16 GEMM
# 100-2000 TFLOP/s); --device GPU-<uuid> finds the same GPU; and a sweep with the memory
# counters is then placed under the newest calibration by show --metrics and the JSON export.
set -u
. "$(dirname "$0")/gpu_common.sh"
db="$tmp/c.db"

"$TB" doctor --calibrate --db "$db" > "$tmp/cal1.out" 2>&1; rc=$?
cat "$tmp/cal1.out"
[ $rc = 0 ] && ok calibrate-1.1 || bad calibrate-1.1 "doctor --calibrate exited $rc"
dram=$(awk '$1 == "dram" { print $2 }' "$tmp/cal1.out")
tensor=$(awk '$1 == "tensor" { print $2 }' "$tmp/cal1.out")
uuid=$(awk '$1 == "gpu" { print $NF }' "$tmp/cal1.out")
$PY - "$dram" "$tensor" <<'PYEOF' && ok calibrate-1.2 || bad calibrate-1.2 "printed ceilings out of range"
import sys
try: d, t = float(sys.argv[1]), float(sys.argv[2])
except ValueError: print("no figures printed:", sys.argv[1:]); sys.exit(1)
print(f"printed: DRAM {d} GB/s, GEMM {t} TFLOP/s")
sys.exit(0 if 500 <= d <= 10000 and 100 <= t <= 2000 else 1)
PYEOF
grep -q "^stored  *calibration 1 in $db" "$tmp/cal1.out" && ok calibrate-1.3 || bad calibrate-1.3 "no 'stored calibration 1'"

# the same GPU by its UUID: a second calibration, the one show and export must use
"$TB" doctor --calibrate --device "$uuid" --db "$db" > "$tmp/cal2.out" 2>&1; rc=$?
cat "$tmp/cal2.out"
[ $rc = 0 ] && grep -q "^stored  *calibration 2 " "$tmp/cal2.out" && grep -q "^gpu .*$uuid" "$tmp/cal2.out" \
    && ok calibrate-1.4 || bad calibrate-1.4 "--device $uuid: exit $rc"

# a measurement with DRAM counters, placed under the roofline
"$TB" sweep --filter cublaslt --shapes 4096x4096x4096 --metrics memory --max-time 0.3 --no-energy \
    --no-progress --quiet --db "$db" > /dev/null 2>"$tmp/sweep.err"; rc=$?
[ $rc = 0 ] && ok calibrate-2.1 || bad calibrate-2.1 "sweep exited $rc: $(tail -3 "$tmp/sweep.err")"
"$TB" show --db "$db" --metrics > "$tmp/show.out" 2>&1; cat "$tmp/show.out"
grep -qE "^roofline ceilings: DRAM [0-9.]+ GB/s .*doctor --calibrate .*\(calibration 2\), not datasheet" "$tmp/show.out" \
    && ok calibrate-2.2 || bad calibrate-2.2 "show --metrics names no measured ceilings"
grep -qE "derived: arithmetic intensity [0-9.]+ FLOP/byte .* achieved DRAM bandwidth [0-9.]+ GB/s" "$tmp/show.out" \
    && ok calibrate-2.3 || bad calibrate-2.3 "show --metrics prints no intensity or bandwidth"
grep -qE "roofline position: [0-9.]+% of the attainable [0-9.]+ TFLOP/s .*(memory|compute)-bound" "$tmp/show.out" \
    && ok calibrate-2.4 || bad calibrate-2.4 "show --metrics prints no roofline position"
"$TB" export --db "$db" --format json > "$tmp/e.json"
$PY - "$tmp/e.json" "$dram" <<'PYEOF' && ok calibrate-2.5 || bad calibrate-2.5 "see above"
import json, sys
res = [r for r in json.load(open(sys.argv[1]))["results"] if r["status"] == "ok"]
if not res: print("no measurement ran"); sys.exit(1)
d = res[0].get("derived") or {}
roof = d.get("roofline") or {}
c = roof.get("ceilings") or {}
print("derived:", json.dumps(d))
fails = []
if not d.get("arithmetic_intensity") or not d.get("dram_gbps"): fails.append("no intensity or bandwidth")
if not (0.2 <= (roof.get("position") or 0) <= 1.5): fails.append(f"position {roof.get('position')}")
if roof.get("bound") not in ("memory", "compute"): fails.append(f"bound {roof.get('bound')}")
if c.get("calibration_id") != 2: fails.append(f"ceilings of calibration {c.get('calibration_id')}, want 2")
if not (500 <= (c.get("dram_gbps") or 0) <= 10000 and 100 <= (c.get("gemm_tflops") or 0) <= 2000):
    fails.append(f"stored ceilings out of range: {c}")
if "not datasheet" not in (c.get("source") or ""): fails.append("ceilings not marked as measured")
if "cuBLASLt" not in (c.get("method") or "") or "cudaMemcpyAsync" not in (c.get("method") or ""):
    fails.append("method does not describe both measurements")
for f in fails: print("FAIL", f)
sys.exit(1 if fails else 0)
PYEOF
finish
