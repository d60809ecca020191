#!/bin/bash
# before-after.sh - the same GPU tests and the default sweep against two builds, in one device
# call: a test of a fix must fail on the build before it and pass on the build after it
# (issue 19: trust-6, timing-9, timing-10), and the default sweep's wall time and phases of each
# build say what the change cost. NEW and OLD are install prefixes (scripts/make-prefix.sh;
# PREFIX_DIR=prefix-old for the second); the tests are NEW's, run with each build's tilebench
# (and its worker) over NEW's zoo. Logs under $OUT (or /tmp/tb-ba): every test's whole output in
# one file, tests.log (a device call returns at most 8 files).
#   scripts/before-after.sh NEW OLD tests     gpu_trust and gpu_timing's host part, each build
#   scripts/before-after.sh NEW OLD sweep     the default sweep, NEW then OLD, timed
set -u
cd "$(dirname "$0")/.."
N=$(cd "${1:?NEW prefix}" && pwd) && O=$(cd "${2:?OLD prefix}" && pwd) || exit 2
out=${OUT:-/tmp/tb-ba}; mkdir -p "$out"
export PATH=/opt/torch/.venv/bin:$PATH
export TB_ZOO=$N/libexec/tilebench/zoo TB_VARIANTS=$N/lib/tilebench/variants
# a build-tree binary (the old side, often) has no CUDA library path of its own
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
gpu() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv,noheader; }
case ${3:-} in
tests)
    for side in new old; do
        P=$N; [ $side = old ] && P=$O
        echo "== $side: $(cat "$P/COMMIT" | tr '\n' ' ') gpu: $(gpu)"
        TB=$P/bin/tilebench bash "$N/libexec/tilebench/tests/gpu_trust.sh" 2>&1 | tee -a "$out/tests.log" | grep -E "^(ok|FAIL)|passed,"
        TB=$P/bin/tilebench TB_TIMING_ONLY=host bash "$N/libexec/tilebench/tests/gpu_timing.sh" 2>&1 \
            | tee -a "$out/tests.log" | grep -E "^(ok|FAIL)|passed,|median ratio"
    done ;;
sweep)
    for side in new old; do
        P=$N; [ $side = old ] && P=$O
        echo "== $side: $(cat "$P/COMMIT" | tr '\n' ' ') gpu: $(gpu)"
        s=$(date +%s%N)
        "$P/bin/tilebench" sweep --no-progress --db "$out/default-$side.db" > "$out/default-$side.txt" 2>&1
        rc=$?; echo "exit $rc, wall $(( ($(date +%s%N) - s) / 1000000 )) ms"
        grep -E "^time:" "$out/default-$side.txt"
        echo "gpu after: $(gpu)"
    done ;;
*) echo "before-after: the third argument is 'tests' or 'sweep'" >&2; exit 2 ;;
esac
