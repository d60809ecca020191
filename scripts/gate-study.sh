#!/bin/bash
# gate-study.sh - the gate's evidence on the GPU machine (docs/perf.md), from an install prefix
# (scripts/make-prefix.sh). Each mode fits one device call; logs and JSON reports go to $OUT.
#   scripts/gate-study.sh PREFIX same N      N same-run gates of the shipped variants (plus
#                                            zoo_gated_lt) against themselves: every one must
#                                            pass
#   scripts/gate-study.sh PREFIX slow N      N gates whose head is the shipped variants plus
#                                            zoo_gated_lt made 3 % slower: every one must fail,
#                                            naming zoo_gated_lt and nothing else
#   scripts/gate-study.sh PREFIX wrong       one gate, the shipped variants and zoo_gated against
#                                            the same with zoo_gated made wrong (1024^3 added)
#   scripts/gate-study.sh PREFIX save        a sweep (shapes gate) of the shipped variants and
#                                            zoo_gated_lt, saved as $OUT/baseline.json
#   scripts/gate-study.sh PREFIX check FILE  gates against FILE (from an earlier call): the same
#                                            code, then zoo_gated_lt 3 % slower; the control's
#                                            drift printed beside the verdicts
# Every gate is the command the CI templates run (scripts/ci/): default shapes (gate),
# --threshold 2 --confirm. The 3 % slower member is zoo_gated_lt (tests/zoo/zoo_gated_lt.cu):
# a cuBLASLt GEMM, so that a stored baseline's cublaslt control drifts alike with it.
# Each gate starts with an empty record of cublaslt-tuned's choices (TB_TUNE_CACHE, a file of
# its own), so every gate tunes afresh once and its second copy takes the first one's choice,
# as on a runner whose record is new; TB_TUNE_CACHE=off in the caller's environment makes both
# copies tune, as before the record existed (docs/perf.md, eighth session).
# Prints one line per gate: exit code, wall time, the rows that failed, the rows the first
# pass left to --confirm, and the control's drift where there is one.
set -u
P=$(cd "$1" && pwd); mode=$2; arg=${3:-}
out=${OUT:-/tmp/gate-study}; mkdir -p "$out"
TB=$P/bin/tilebench; V=$P/lib/tilebench/variants; G=$P/libexec/tilebench/zoo/gated
rm -rf /tmp/gs; mkdir -p /tmp/gs/base /tmp/gs/head /tmp/gs/slow /tmp/gs/wbase /tmp/gs/wrong
for d in base head slow wbase wrong; do cp "$V"/*.so /tmp/gs/$d/; done
cp "$G/zoo_gated_lt.so" /tmp/gs/base/; cp "$G/zoo_gated_lt.so" /tmp/gs/head/
cp "$G/zoo_gated_lt_slow3.so" /tmp/gs/slow/
cp "$G/zoo_gated.so" /tmp/gs/wbase/; cp "$G/zoo_gated_wrong.so" /tmp/gs/wrong/
echo "gpu as found: $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader)"
gate() {   # gate NAME ARGS...: one gate, a summary line
    local name=$1; shift
    local s=$(date +%s%N)
    [ "${TB_TUNE_CACHE:-}" = off ] || { export TB_TUNE_CACHE=$out/tuned-$name.tsv; rm -f "$TB_TUNE_CACHE"; }
    "$TB" gate "$@" --threshold 2 --confirm --no-progress --quiet --db "$out/gate.db" --json "$out/$name.json" > "$out/$name.txt" 2>&1
    local rc=$?
    local w=$(( ($(date +%s%N) - s) / 1000000 ))
    local fails=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(",".join(r["variant"]+"@"+r["shape"].split()[0]+"="+r["change"] for r in d["rows"] if r["fails"]) or "-")' "$out/$name.json" 2>/dev/null)
    local drift=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s %.4f" % (r["shape"].split()[0], r["control_drift"]) for r in d["rows"] if r["change"]=="control") or "")' "$out/$name.json" 2>/dev/null)
    local second=$(grep -oE "(confirmed|not confirmed|undecided in the first pass[^(]*)in run [0-9]+" "$out/$name.txt" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    printf "%-10s exit %d  %6d ms  failed: %s%s%s\n" "$name" $rc "$w" "$fails" "${drift:+  control drift: $drift}" "${second:+  second pass: $second}"
    grep -E "^  cost:" "$out/$name.txt"
}
case $mode in
same) for i in $(seq 1 "$arg"); do gate same$i --base /tmp/gs/base --head /tmp/gs/head; done ;;
slow) for i in $(seq 1 "$arg"); do gate slow$i --base /tmp/gs/base --head /tmp/gs/slow; done ;;
wrong) gate wrong --base /tmp/gs/wbase --head /tmp/gs/wrong --shapes gate,1024x1024x1024 ;;
save) "$TB" sweep --variants /tmp/gs/base --shapes gate --no-energy --max-time 0.5 --no-progress --quiet \
          --db "$out/base.db" 2> "$out/save.log"; echo "sweep exit $?"
      "$TB" baseline save --db "$out/base.db" --output "$out/baseline.json" ;;
check) gate bsame --baseline "$arg" --head /tmp/gs/head
       gate bslow --baseline "$arg" --head /tmp/gs/slow ;;
*) echo "gate-study: unknown mode '$mode'"; exit 2 ;;
esac
