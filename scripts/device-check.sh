#!/bin/bash
# device-check.sh - the one check on the GPU machine. Uses the install prefix built here by
# scripts/make-prefix.sh (the GPU machine has no -dev headers to build with), records the
# GPU as found (clocks, power, throttle reasons; nothing is changed), runs the GPU tests
# (a test that reports skipped while a GPU is present is a failure), dumps SASS facts,
# runs the default sweep (timed), and prints a compact table last.
#   scripts/device-check.sh [PREFIX]      (default: prefix/; logs under $OUT or /tmp/tb-check)
# A device call is limited to 10 minutes, and the whole check does not fit in one: run it as
# the plan below, one call each (`scripts/device-check.sh PREFIX --call N`; `--plan` prints
# it). Durations measured on the H100 on 2026-11-27 at 3d286bb (docs/perf.md, eleventh session):
#   call 1  gpu_reference gpu_clock gpu_nvml_sampler gpu_counters gpu_calibrate gpu_zoo gpu_trust
#           gpu_problems gpu_timing gpu_metrics gpu_gate gpu_energy gpu_devices       257 s
#           (since then gpu_ref_attention, 1 s on the sixteenth session's H100, and
#           gpu_attn_rule, new, not yet run; gpu_gate 34 s with its attention cases)
#   call 2  gpu_smoke                                                                  95 s
#           gpu_attention (40 s on the sixteenth session's H100)
#           gpu_fp8 (13 s), gpu_wgmma_probe (342 runs, 50 s), gpu_wgmma_fp8_probe (21 s),
#           gpu_skinny_probe (8 s), gpu_layouts (65 s): fourteenth session, H100, about 255 s
#           with gpu_smoke. gpu_zoo took 19 s there; gpu_calibrate about 40 s.
#   call 3  gpu_resume, the SASS check and the default sweep (80 s)                   166 s
# The 15 GPU tests alone took 262 s; doctor and the SASS dump about 20 s a call.
# Finer knobs: DC_TESTS="gpu_zoo ..." runs only those tests, DC_SKIP_SWEEP=1 skips the default
# sweep, DC_SKIP_SASS=1 the SASS check, DC_SETS=1 adds the square+llm+odd validation sweep and DC_ONLY_SETS=1 runs only that.
set -u
cd "$(dirname "$0")/.."
plan_tests=("gpu_reference gpu_ref_attention gpu_attn_rule gpu_clock gpu_nvml_sampler gpu_counters gpu_calibrate gpu_zoo gpu_trust gpu_problems gpu_timing gpu_metrics gpu_gate gpu_energy gpu_devices"
            "gpu_smoke gpu_attention gpu_fp8 gpu_wgmma_probe gpu_wgmma_fp8_probe gpu_skinny_probe gpu_layouts" "gpu_resume")
if [ "${2:-}" = --plan ] || [ "${1:-}" = --plan ]; then
    sed -n '/^# A device call is limited/,/^# Finer knobs/p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi
if [ "${2:-}" = --call ]; then
    n=${3:-}
    case $n in 1|2) export DC_SKIP_SWEEP=1 ;; 3) ;; *) echo "device-check: --call takes 1, 2 or 3 (see --plan)"; exit 2 ;; esac
    export DC_TESTS="${plan_tests[$((n - 1))]}"
fi
P=$(cd "${1:-prefix}" 2>/dev/null && pwd) || { echo "device-check: no prefix '${1:-prefix}' (run scripts/make-prefix.sh here first)"; exit 2; }
out=${OUT:-/tmp/tb-check}; mkdir -p "$out"
export TB=$P/bin/tilebench TB_ZOO=$P/libexec/tilebench/zoo TB_VARIANTS=$P/lib/tilebench/variants
export TB_VARIANTS_GRID=$P/lib/tilebench/variants-grid
[ "${DC_ONLY_SETS:-0}" = 1 ] && DC_SETS=1
export PATH=/opt/torch/.venv/bin:$PATH
commit=$(cat "$P/COMMIT" 2>/dev/null | tr '\n' ' ')
gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv,noheader 2>&1 | head -1)
echo "== device-check: commit $commit"
echo "== gpu as found: $gpu"
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > "$out/nvidia-smi.txt" 2>&1
"$TB" doctor 2>&1 | tee "$out/doctor.txt"

# GPU tests: the same scripts and programs CTest runs under the label gpu
declare -A res
tests=(gpu_reference gpu_ref_attention gpu_attn_rule gpu_clock gpu_nvml_sampler gpu_counters gpu_calibrate gpu_zoo gpu_trust gpu_problems gpu_smoke gpu_resume gpu_timing gpu_metrics gpu_gate gpu_energy gpu_devices gpu_attention gpu_fp8 gpu_wgmma_probe gpu_wgmma_fp8_probe gpu_skinny_probe gpu_layouts)
[ -n "${DC_TESTS:-}" ] && read -r -a tests <<<"$DC_TESTS"
[ "${DC_ONLY_SETS:-0}" = 1 ] && tests=()
for t in "${tests[@]}"; do
    s=$(date +%s)
    if [ $t = gpu_reference ]; then "$P/libexec/tilebench/tests/test_reference" > "$out/$t.log" 2>&1; rc=$?
    elif [ $t = gpu_ref_attention ]; then "$P/libexec/tilebench/tests/test_ref_attention" > "$out/$t.log" 2>&1; rc=$?
    elif [ $t = gpu_attn_rule ]; then "$P/libexec/tilebench/tests/test_attn_rule_device" > "$out/$t.log" 2>&1; rc=$?
    elif [ $t = gpu_clock ]; then "$P/libexec/tilebench/tests/test_clock" > "$out/$t.log" 2>&1; rc=$?
    elif [ $t = gpu_counters ]; then "$P/libexec/tilebench/tests/test_counters" > "$out/$t.log" 2>&1; rc=$?
    elif [ $t = gpu_wgmma_probe ]; then   # as CTest's gpu_wgmma_probe: clusters 2x1 and 1x2, pingpong, stream-K, wgmma_auto (issue 22's odd shapes)
        "$P/libexec/tilebench/tests/wgmma_layout_probe" "$TB_VARIANTS"/wgmma_bf16_128x256x64_c2x1_s4_cooperative_rasterm_sw16.so \
            "$TB_VARIANTS_GRID"/wgmma_bf16_128x256x64_c1x2_s4_cooperative_rasterm_sw16.so \
            "$TB_VARIANTS_GRID"/wgmma_bf16_64x256x64_c2x1_s4_pingpong_rasterm_sw16.so \
            "$TB_VARIANTS_GRID"/wgmma_bf16_256x128x64_c1x1_s4_cooperative_rasterm_sw8_tail-streamk.so \
            "$TB_VARIANTS"/wgmma_auto_bf16.so > "$out/$t.log" 2>&1; rc=$?
    elif [ $t = gpu_wgmma_fp8_probe ]; then   # as CTest's: every FP8 point (issue 23)
        "$P/libexec/tilebench/tests/wgmma_fp8_probe" "$TB_VARIANTS_GRID"/wgmma_e4m3_*.so > "$out/$t.log" 2>&1; rc=$?
    elif [ $t = gpu_skinny_probe ]; then   # as CTest's gpu_skinny_probe (tests/CMakeLists.txt)
        "$P/libexec/tilebench/tests/wgmma_layout_probe" --shapes 1x4096x4096,16x4096x1024,64x640x320,33x1000x1000,7x999x1003,1x4097x4093,16x1001x1001,3x7x5,1x1x1,40x129x31 \
            --pads 0,1,7 "$TB_VARIANTS_GRID"/skinny_bf16_max_m-64.so > "$out/$t.log" 2>&1; rc=$?
    elif [ $t = gpu_nvml_sampler ]; then "$P/libexec/tilebench/tests/test_nvml_sampler" --gpu > "$out/$t.log" 2>&1; rc=$?
    else bash "$P/libexec/tilebench/tests/$t.sh" > "$out/$t.log" 2>&1; rc=$?; fi
    case $rc in 0) r=passed;; 77) r="SKIPPED (a failure here: a GPU is present)";; *) r="FAILED ($rc)";; esac
    res[$t]="$r in $(( $(date +%s) - s )) s"
    grep -E "^(FAIL|ok )" "$out/$t.log" | grep FAIL | head -20
done

# SASS facts of every shipped variant (default and grid); every wgmma point must have HGMMA
# and no HMMA fallback, TMA loads (UTMALDG), and a cluster point the multicast form; an FP8
# point (wgmma_e4m3_*) QGMMA .F32.E4M3.E4M3 instead of HGMMA, and no local memory. A wgmma
# point's library holds one kernel per layout (issue 31: wgmma_gemm<AMN, BMN>, tn nn nt tt):
# each is counted on a line of its own and must pass those checks by itself, with no local
# memory traffic (LDL/STL: a spill; ptxas -v says 0 bytes at build time)
sass_bad=0
# DC_SKIP_SASS=1 leaves it out: over the 4-layout libraries it took more than 70 s of a call on
# the H200s of the fifteenth session (docs/perf.md), time a call of tests may not have
if [ "${DC_SKIP_SASS:-0}" = 1 ]; then echo "sass check: skipped (DC_SKIP_SASS=1)" > "$out/sass.txt"; else
# every library disassembled first, all cores at once (one at a time took most of the check)
sass_dir=$(mktemp -d)
ls "$TB_VARIANTS"/*.so "$TB_VARIANTS_GRID"/*.so 2>/dev/null | xargs -P "$(nproc)" -I{} \
    sh -c 'cuobjdump -sass "$1" > "$2/$(basename "$1" .so).sass" 2>/dev/null' _ {} "$sass_dir"
{ for so in "$TB_VARIANTS"/*.so "$TB_VARIANTS_GRID"/*.so; do
    [ -e "$so" ] || continue
    n=$(basename "$so" .so)
    s=$(cat "$sass_dir/$n.sass" 2>/dev/null)
    hg=$(grep -c HGMMA <<<"$s"); hm=$(grep -c 'HMMA' <<<"$s"); tl=$(grep -c UTMALDG <<<"$s"); mc=$(grep -c MULTICAST <<<"$s")
    printf "%-64s HGMMA %4d HMMA %5d UTMALDG %3d MULTICAST %2d UTMASTG %2d LDGSTS %4d LDSM %4d\n" "$n" \
      $hg $hm $tl $mc "$(grep -c UTMASTG <<<"$s")" "$(grep -c LDGSTS <<<"$s")" "$(grep -c LDSM <<<"$s")"
    if [[ $n == attn_hopper_* ]]; then   # issue 33's Hopper attention: wgmma, TMA, no spills
        ll=$(grep -cE '\b(LDL|STL)\b' <<<"$s")
        if [ $hg = 0 ] || [ $tl = 0 ]; then echo "  NOT A HOPPER KERNEL: $n"; sass_bad=1; fi
        if [ $ll != 0 ]; then echo "  LOCAL MEMORY (spills?): $n"; sass_bad=1; fi
    elif [[ $n == wgmma_auto* ]]; then   # its points are Hopper kernels; its skinny path is mma.sync
        if [ $hg = 0 ] || [ $tl = 0 ]; then echo "  NOT A HOPPER KERNEL: $n"; sass_bad=1; fi
    elif [[ $n == wgmma_e4m3_* ]]; then   # FP8 (issue 23): one tn kernel; the E4M3 warpgroup MMA
        # disassembles as QGMMA (QGMMA.64xNx32.F32.E4M3.E4M3), never HGMMA or an HMMA fallback
        qg=$(grep -c 'QGMMA' <<<"$s"); qe=$(grep -c 'QGMMA\.64x[0-9]*x32\.F32\.E4M3\.E4M3' <<<"$s")
        ll=$(grep -cE '\b(LDL|STL)\b' <<<"$s")
        printf "  tn  QGMMA %4d (.F32.E4M3.E4M3 %4d) HGMMA %d HMMA %d UTMALDG %3d MULTICAST %2d LDL/STL %d\n" \
          $qg $qe $hg $hm $tl $mc $ll
        if [ $qg = 0 ] || [ $qe != $qg ] || [ $hg != 0 ] || [ $hm != 0 ] || [ $tl = 0 ]; then
            echo "  NOT AN FP8 HOPPER KERNEL: $n"; sass_bad=1; fi
        if [[ $n == *_c2x1_* || $n == *_c1x2_* ]] && [ $mc = 0 ]; then echo "  NO MULTICAST: $n"; sass_bad=1; fi
        if [ $ll != 0 ]; then echo "  LOCAL MEMORY (spills?): $n"; sass_bad=1; fi
    elif [[ $n == wgmma_* ]]; then
        if [ $hg = 0 ] || [ $hm != 0 ] || [ $tl = 0 ]; then echo "  NOT A HOPPER KERNEL: $n"; sass_bad=1; fi
        if [[ $n == *_c2x1_* || $n == *_c1x2_* ]] && [ $mc = 0 ]; then echo "  NO MULTICAST: $n"; sass_bad=1; fi
        cl=0; [[ $n == *_c2x1_* || $n == *_c1x2_* ]] && cl=1
        printf '%s\n' "$s" > "$out/sass-one.txt"
        /usr/bin/python3 - "$n" "$cl" "$out/sass-one.txt" <<'PYEOF' || sass_bad=1
import re, sys
name, cluster = sys.argv[1], sys.argv[2] == "1"
lay = {"Lb0ELb0E": "tn", "Lb1ELb0E": "nn", "Lb1ELb1E": "nt", "Lb0ELb1E": "tt"}
fn, k = None, {}
for line in open(sys.argv[3]):
    m = re.search(r"Function : (\S+)", line)
    if m:
        t = re.search(r"wgmma_gemmI(Lb[01]ELb[01]E)E", m.group(1))
        fn = lay.get(t.group(1)) if t else None
        if fn: k[fn] = dict(HGMMA=0, HMMA=0, UTMALDG=0, MULTICAST=0, LDL=0, STL=0)
        continue
    if fn:
        for op in ("HGMMA", "UTMALDG", "MULTICAST", "LDL", "STL"):
            k[fn][op] += op in line
        k[fn]["HMMA"] += "HMMA" in line and "HGMMA" not in line
bad = 0
for l in ("tn", "nn", "nt", "tt"):
    c = k.get(l)
    if not c:
        print(f"  {l}: NO KERNEL for layout {l}: {name}"); bad = 1; continue
    print(f"  {l}  HGMMA {c['HGMMA']:4d} HMMA {c['HMMA']:3d} UTMALDG {c['UTMALDG']:3d} MULTICAST {c['MULTICAST']:2d} LDL {c['LDL']} STL {c['STL']}")
    if not c["HGMMA"] or c["HMMA"] or not c["UTMALDG"]: print(f"  {l}: NOT A HOPPER KERNEL: {name}"); bad = 1
    if cluster and not c["MULTICAST"]: print(f"  {l}: NO MULTICAST: {name}"); bad = 1
    if c["LDL"] or c["STL"]: print(f"  {l}: LOCAL MEMORY (spills?): {name}"); bad = 1
sys.exit(bad)
PYEOF
    fi
  done; echo "sass check: $([ $sass_bad = 0 ] && echo passed || echo FAILED)"; } > "$out/sass.txt" 2>&1
grep -q "sass check: passed" "$out/sass.txt" || sass_bad=1
rm -rf "$sass_dir"
fi

# every shipped variant on every shape of square, llm and odd it supports: validation is the
# point here (three trials each), so few samples and no energy burst. Several minutes: only
# with DC_SETS=1 (a device call is limited to 10 minutes; run it as a call of its own)
src=0; setsrc=0; swall=0; sets_summary="not run (DC_SETS=1 runs it)"
if [ "${DC_SETS:-0}" = 1 ]; then
s=$(date +%s)
"$TB" sweep --shapes square,llm,odd --stop fixed:samples=3 --no-energy --no-progress --quiet \
    --db "$out/sets.db" 2> "$out/sets.log"; src=$?
swall=$(( $(date +%s) - s ))
"$TB" export --db "$out/sets.db" --format csv --output "$out/sets.csv" 2>/dev/null
sets_summary=$(/usr/bin/python3 - "$out/sets.csv" <<'PYEOF'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
c = collections.Counter((r["status"], r["disposition"]) for r in rows)
bad = [r for r in rows if r["status"] != "unsupported" and not (r["status"] == "ok" and r["disposition"] == "passed")]
print(f"{len(rows)} measurements: " + ", ".join(f"{k[0]}/{k[1]} {v}" for k, v in sorted(c.items())))
for r in bad[:20]: print(f"  NOT PASSED {r['variant']} {r['m']}x{r['n']}x{r['k']}: {r['status']}/{r['disposition']} {r['rule']} {r['reason'][:100]}")
sys.exit(1 if bad else 0)
PYEOF
); setsrc=$?
fi
[ "${DC_ONLY_SETS:-0}" = 1 ] && { echo "sets: exit $src in $swall s; $sets_summary"; exit $(( src || setsrc )); }

# the default sweep (README's first command), timed
drc=0; dwall=0
if [ "${DC_SKIP_SWEEP:-0}" != 1 ]; then
s=$(date +%s)
"$TB" sweep --db "$out/default.db" --no-progress --quiet 2> "$out/default.log"; drc=$?
dwall=$(( $(date +%s) - s ))
"$TB" show --db "$out/default.db" > "$out/default-show.txt" 2>&1
"$TB" export --db "$out/default.db" --format csv --output "$out/default.csv" 2>/dev/null
fi
gpu_after=$(nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader 2>&1 | head -1)

echo
echo "== SASS (instruction counts per library)"; cat "$out/sass.txt"
echo "== default sweep (square set, all shipped variants): exit $drc, wall $dwall s; gpu after: $gpu_after"
cat "$out/default-show.txt" 2>/dev/null
echo
echo "== summary: commit $commit | $gpu"
for t in "${tests[@]}"; do
    echo "   $t: ${res[$t]}  ($(tail -1 "$out/$t.log"))"
    # a failure's own lines again here, so that the summary alone (a call's tail) says which
    [[ ${res[$t]} == passed* ]] || grep -E "^FAIL" "$out/$t.log" | head -3 | sed 's/^/      /'
done
echo "   $(tail -1 "$out/sass.txt")"
[ "${DC_SKIP_SWEEP:-0}" = 1 ] && echo "   default sweep: skipped (DC_SKIP_SWEEP=1)" || echo "   default sweep: exit $drc in $dwall s"
echo "   square+llm+odd validation sweep: exit $src in $swall s; $sets_summary"
fail=$sass_bad; for t in "${tests[@]}"; do [[ ${res[$t]} == passed* ]] || fail=1; done
[ $drc = 0 ] || fail=1
[ $src = 0 ] && [ $setsrc = 0 ] || fail=1
exit $fail
