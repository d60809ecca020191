#!/bin/bash
# gpu_gate.sh - tilebench gate on the GPU with the zoo's gated members (tests/zoo/zoo_gated.cu:
# one variant name, three builds): a library against itself passes; a head made 3 % slower by
# honest extra work fails and names zoo_gated, in every one of TB_GATE_ROUNDS gates (default 3;
# scripts/gate-study.sh runs ten and the shipped variants); a wrong head fails on validation;
# --confirm keeps a real regression; the stored-baseline gate (a control measured in both runs)
# passes the same code and catches the slowdown; a baseline from another GPU is refused, and
# compared with --allow-env-mismatch; cublaslt-tuned's two copies keep one algorithm (its record).
# An attention shape gates as a GEMM one does (issue 33).
set -u
. "$(dirname "$0")/gpu_common.sh"
G=$TB_ZOO/gated
rounds=${TB_GATE_ROUNDS:-3}
shape=1024x1024x1024
cd "$tmp"
mkdir -p same && cp "$G/zoo_gated.so" same/zoo_gated_copy.so
unset GITHUB_STEP_SUMMARY

"$TB" gate --base "$G/zoo_gated.so" --head same --shapes $shape --no-progress --quiet \
    --db g.db --json same.json > same.out 2>&1; rc=$?
cat same.out
[ $rc = 0 ] && [ "$($PY -c 'import json; print([r["change"] for r in json.load(open("same.json"))["rows"]])')" = "['unchanged']" ] && ok gate-gpu-1.1 || bad gate-gpu-1.1 "a library against itself: exit $rc"

caught=0
for r in $(seq 1 $rounds); do
    "$TB" gate --base "$G/zoo_gated.so" --head "$G/zoo_gated_slow3.so" --shapes $shape --no-progress \
        --quiet --db g.db --junit s$r.xml --json s$r.json > s$r.out 2>&1; rc=$?
    ratio=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join("%s %s %.4f [%.4f, %.4f]" % (r["variant"], r["change"], r["ratio"], r["lo"], r["hi"]) for r in d["rows"]))' s$r.json 2>/dev/null)
    echo "round $r: exit $rc: $ratio"
    [ $rc = 1 ] && grep -q 'classname="zoo_gated"' s$r.xml && grep -q '<failure type="slower"' s$r.xml && caught=$((caught+1))
done
cat s1.out
[ $caught = $rounds ] && ok gate-gpu-1.2 || bad gate-gpu-1.2 "the 3 % slower head failed the gate in $caught of $rounds"

"$TB" gate --base "$G/zoo_gated.so" --head "$G/zoo_gated_wrong.so" --shapes $shape --no-progress \
    --quiet --db g.db > w.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q 'FAIL newly invalid' w.out && ok gate-gpu-1.3 || bad gate-gpu-1.3 "a wrong head: exit $rc: $(tail -5 w.out)"

"$TB" gate --base "$G/zoo_gated.so" --head "$G/zoo_gated_slow3.so" --shapes $shape --confirm \
    --no-progress --quiet --db g.db > c.out 2>&1; rc=$?
[ $rc = 1 ] && grep -q 'confirmed in run' c.out && grep -q 'confirming pass' c.out && ok gate-gpu-1.4 \
    || bad gate-gpu-1.4 "--confirm: exit $rc: $(tail -6 c.out)"

# the stored baseline: a sweep of zoo_gated, zoo_fast (the same naive kernel under another name)
# and cublaslt saved, then gates against it. The control must drift as the variant does: the
# naive kernel against zoo_fast (tests 2.1, 2.2); against the default control cublaslt a 2.4 ms
# naive kernel moved 2.3 % relative to it between two gates (docs/perf.md), which a control of
# another kind cannot cancel, so 2.5 only checks that the default path runs and decides.
mkdir -p headc && cp "$G/zoo_gated.so" "$TB_ZOO/zoo_fast.so" headc/
mkdir -p slowc && cp "$G/zoo_gated_slow3.so" "$TB_ZOO/zoo_fast.so" slowc/
"$TB" sweep --variants "$G/zoo_gated.so" --variants "$TB_ZOO/zoo_fast.so" --variants "$TB_VARIANTS/cublaslt.so" \
    --shapes $shape --no-energy --max-time 0.5 --no-progress --quiet --db base.db > /dev/null 2>&1
"$TB" baseline save --db base.db --output base.json 2>/dev/null || bad gate-gpu-2.0 "baseline save"
"$TB" gate --baseline base.json --control zoo_fast --head headc --shapes $shape --no-progress --quiet \
    --db g.db > b1.out 2>&1; rc=$?
cat b1.out
[ $rc = 0 ] && grep -qE '^zoo_fast .* control' b1.out && ok gate-gpu-2.1 || bad gate-gpu-2.1 "baseline, same code: exit $rc"
"$TB" gate --baseline base.json --control zoo_fast --head slowc --shapes $shape --no-progress --quiet \
    --db g.db > b2.out 2>&1; rc=$?
cat b2.out
[ $rc = 1 ] && grep -qE '^zoo_gated .*FAIL slower' b2.out && ok gate-gpu-2.2 || bad gate-gpu-2.2 "baseline, 3 % slower: exit $rc"
$PY -c 'import json; d=json.load(open("base.json")); d["environment"]["gpu_name"]="Another GPU"; json.dump(d, open("other.json","w"))'
"$TB" gate --baseline other.json --head same --shapes $shape --no-progress --quiet --db g.db > o.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q "measured elsewhere (GPU 'Another GPU'" o.out && [ "$(wc -l < o.out)" = 1 ] && ok gate-gpu-2.3 \
    || bad gate-gpu-2.3 "a baseline from another GPU: exit $rc: $(cat o.out)"
"$TB" gate --baseline other.json --allow-env-mismatch --head same --shapes $shape --no-progress --quiet \
    --db g.db > o2.out 2>&1; rc=$?
cat o2.out
{ [ $rc = 0 ] || [ $rc = 1 ]; } && grep -qE '^cublaslt .* control' o2.out && ok gate-gpu-2.4 \
    || bad gate-gpu-2.4 "--allow-env-mismatch with the default control: exit $rc: $(tail -3 o2.out)"

# the pair of the vendor's kind (tests/zoo/zoo_gated_lt.cu) at 4096^3, where its tail is the
# stated fraction: same-run, 3 % slower named; then against a stored baseline with the
# default control, cublaslt, which drifts alike with it: the same code passes, the slower fails
big=4096x4096x4096
"$TB" gate --base "$G/zoo_gated_lt.so" --head "$G/zoo_gated_lt_slow3.so" --shapes $big --no-progress \
    --quiet --db g.db --json lt.json > lt.out 2>&1; rc=$?
cat lt.out
[ $rc = 1 ] && grep -qE '^zoo_gated_lt .*FAIL slower' lt.out && ok gate-gpu-3.1 || bad gate-gpu-3.1 "zoo_gated_lt 3 % slower, same run: exit $rc"
mkdir -p lthead && cp "$G/zoo_gated_lt.so" lthead/
mkdir -p ltslow && cp "$G/zoo_gated_lt_slow3.so" ltslow/
"$TB" sweep --variants "$G/zoo_gated_lt.so" --variants "$TB_VARIANTS/cublaslt.so" --shapes $big --no-energy \
    --max-time 0.5 --no-progress --quiet --db ltbase.db > /dev/null 2>&1
"$TB" baseline save --db ltbase.db --output ltbase.json 2>/dev/null || bad gate-gpu-3.0 "baseline save"
"$TB" gate --baseline ltbase.json --head lthead --shapes $big --no-progress --quiet --db g.db > lb1.out 2>&1; rc=$?
cat lb1.out
[ $rc = 0 ] && grep -qE '^cublaslt .* control' lb1.out && ok gate-gpu-3.2 || bad gate-gpu-3.2 "baseline (cublaslt control), same code: exit $rc"
"$TB" gate --baseline ltbase.json --head ltslow --shapes $big --no-progress --quiet --db g.db > lb2.out 2>&1; rc=$?
cat lb2.out
[ $rc = 1 ] && grep -qE '^zoo_gated_lt .*FAIL slower' lb2.out && ok gate-gpu-3.3 || bad gate-gpu-3.3 "baseline (cublaslt control), 3 % slower: exit $rc"

# cublaslt-tuned writes its choice down (variants/cublaslt_tuned/tune_cache.cuh): in a gate of
# the library against itself, the copy set up second takes the first one's algorithm untimed;
# with the record off both tune; a recorded algorithm that is no longer a candidate is retuned
describe() {   # describe DB: "name<TAB>describe" of every cublaslt-tuned measurement, newest run
    $PY - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
run = c.execute("SELECT max(id) FROM runs").fetchone()[0]
for n, d in c.execute("SELECT v.name, m.describe FROM measurements m JOIN variants v ON v.id = m.variant_id "
                      "WHERE m.run_id = ? AND v.name LIKE '%cublaslt-tuned' ORDER BY v.name", (run,)):
    print("%s\t%s" % (n, d))
PY
}
algo() { sed 's/.*\(algo=.*\)/\1/'; }
mkdir -p tunedhead && cp "$TB_VARIANTS/cublaslt-tuned.so" tunedhead/
export TB_TUNE_CACHE=$tmp/tuned.tsv
"$TB" gate --base "$TB_VARIANTS/cublaslt-tuned.so" --head tunedhead --shapes $shape --no-confirm \
    --no-progress --quiet --db t.db > t1.out 2>&1; rc=$?
describe t.db > t1.desc; cat t1.desc
n=$(grep -c . "$TB_TUNE_CACHE" 2>/dev/null)
[ $rc = 0 ] && [ "$(grep -c 'recorded=1' t1.desc)" = 1 ] && [ "$(grep -c ' rounds=' t1.desc)" = 1 ] && [ "$n" = 1 ] &&
    [ "$(algo < t1.desc | sort -u | wc -l)" = 1 ] && ok gate-gpu-4.1 ||
    bad gate-gpu-4.1 "cublaslt-tuned against itself: exit $rc, $n record lines, one tuned and one recorded with one algorithm expected"
TB_TUNE_CACHE=off "$TB" sweep --variants "$TB_VARIANTS/cublaslt-tuned.so" --shapes $shape --no-energy \
    --max-time 0.2 --no-progress --quiet --db t.db > /dev/null 2>&1
describe t.db > t2.desc
grep -q ' rounds=' t2.desc && ! grep -q 'recorded=1' t2.desc && [ "$(grep -c . "$TB_TUNE_CACHE")" = 1 ] &&
    ok gate-gpu-4.2 || bad gate-gpu-4.2 "TB_TUNE_CACHE=off: tuned, the record untouched: $(cat t2.desc)"
printf '%s\t0\t%0128d\n' "$(cut -f1 "$TB_TUNE_CACHE" | head -1)" 0 >> "$TB_TUNE_CACHE"
"$TB" sweep --variants "$TB_VARIANTS/cublaslt-tuned.so" --shapes $shape --no-energy \
    --max-time 0.2 --no-progress --quiet --db t.db > /dev/null 2>&1
describe t.db > t3.desc
grep -q ' rounds=' t3.desc && [ "$(grep -c . "$TB_TUNE_CACHE")" = 3 ] && ok gate-gpu-4.3 ||
    bad gate-gpu-4.3 "a recorded algorithm no longer offered is retuned and recorded again: $(cat t3.desc)"
unset TB_TUNE_CACHE

# attention (issue 33): a gate takes attention shapes; the naive variant against a copy of
# itself in one run is unchanged, and the row names the shape's token
mkdir -p attn && cp "$TB_VARIANTS/attn_naive.so" attn/attn_naive_copy.so
ash=1x8x512x512x64:causal
"$TB" gate --base "$TB_VARIANTS/attn_naive.so" --head attn --shapes $ash --no-progress --quiet \
    --db g.db --json attn.json > attn.out 2>&1; rc=$?
cat attn.out
[ $rc = 0 ] && [ "$($PY -c 'import json; print([(r["shape"].split()[0], r["change"]) for r in json.load(open("attn.json"))["rows"]])')" = "[('$ash', 'unchanged')]" ] \
    && ok gate-gpu-5.1 || bad gate-gpu-5.1 "attention, a library against itself: exit $rc"
# against a stored baseline, with the attention control by default (attn_fa2's shipped point)
"$TB" sweep --variants "$TB_VARIANTS" --filter 'attn_*' --shapes $ash \
    --no-energy --max-time 0.3 --no-progress --quiet --db abase.db > /dev/null 2>&1
"$TB" baseline save --db abase.db --output abase.json 2>/dev/null || bad gate-gpu-5.2 "baseline save"
mkdir -p ahead && cp "$TB_VARIANTS/attn_naive.so" ahead/
"$TB" gate --baseline abase.json --head ahead --shapes $ash --no-progress --quiet --db g.db > ab.out 2>&1; rc=$?
cat ab.out
{ [ $rc = 0 ] || [ $rc = 1 ]; } && grep -qE '^attn_fa2_bf16_128x64_s2_w4 .* control' ab.out \
    && grep -qE '^attn_naive_bf16 ' ab.out && ok gate-gpu-5.2 \
    || bad gate-gpu-5.2 "attention against a baseline, the default control: exit $rc: $(tail -3 ab.out)"
finish
