#!/bin/bash
# test.sh - runs the tests (CTest) of a build made by scripts/setup.sh and says plainly what
# ran: a machine without a GPU skips the tests labelled gpu, and a run that skipped them must
# not read as a full one. Exit status: CTest's (0 when nothing failed).
#   scripts/test.sh            (BUILD_DIR=build)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
log=$(mktemp); trap 'rm -f "$log"' EXIT
ctest --test-dir "$build" --output-on-failure 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
total=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#' "$log")
skipped=$(grep -cE '\*\*\*Skipped' "$log")
# each failed test once: its progress line (***Failed, ***Timeout, ***Exception), not also the
# "NN - name (Failed)" line of CTest's closing list
failed=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*(Failed|Timeout|Exception)' "$log" | wc -l)
echo
echo "tests: $total run, $((total - skipped - failed)) passed, $skipped skipped, $failed failed"
if [ "$skipped" -gt 0 ]; then
    gpu=$(ctest --test-dir "$build" -N -L gpu 2>/dev/null | grep -oE 'Test +#[0-9]+: [A-Za-z0-9_]+' | awk '{print $3}')
    names=$(grep -E '\*\*\*Skipped' "$log" | grep -oE 'Test +#[0-9]+: [A-Za-z0-9_]+' | awk '{print $3}')
    ngpu=$(grep -cxF -f <(printf '%s\n' $gpu) <<<"$names" || true)
    [ "$ngpu" -gt 0 ] && echo "tests: $ngpu of the skipped are GPU tests (label gpu): this was NOT a full run; run them on a machine with an NVIDIA GPU"
    others=$(grep -vxF -f <(printf '%s\n' $gpu) <<<"$names" | tr '\n' ' ')
    [ -n "${others// /}" ] && echo "tests: also skipped (each says why in its output): $others"
fi
exit "$rc"
