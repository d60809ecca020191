#!/bin/bash
# gate_cli.sh - compare, baseline save and the gate's reports without a GPU, on the invented
# runs of tests/make_gate_fixture.c (run 1 base, run 2 head 8 % slower throughout with slow5 a
# further 5 % slower, run 3 a same-run gate): the classes, the control cancelling a drift, the
# exit codes, JUnit validated against tests/junit.xsd, JSON parsed, the Markdown against
# tests/expected/compare-control.md, a baseline file round trip, and bad input.
# Environment (set by CTest): TB, TB_BUILD, TB_SRC.
set -u
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok()   { echo "ok   $1"; pass=$((pass+1)); }
bad()  { echo "FAIL $1: $2"; fail=$((fail+1)); }
run() {
    local id=$1 want=$2 needle=$3; shift 3
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" != "$want" ]; then bad "$id" "exit $rc, want $want: $out"; return; fi
    if [ -n "$needle" ] && ! grep -qF -- "$needle" <<<"$out"; then bad "$id" "no '$needle' in: $out"; return; fi
    ok "$id"
}
cd "$tmp"
"$TB_BUILD/tests/make_gate_fixture" g.db >/dev/null || { echo "FAIL gate-0: fixture"; exit 1; }
unset GITHUB_STEP_SUMMARY

# 1. classes: raw across runs the drift reads as slower; with the control it cancels
out=$("$TB" compare 1 2 --db g.db --format json 2>&1); rc=$?
[ $rc = 1 ] && ok gate-1.1 || bad gate-1.1 "exit $rc, want 1 (raw compare sees the 8 % drift)"
n=$(/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(1 for r in d["rows"] if r["variant"]=="steady" and r["change"]=="slower"))' <<<"$out")
[ "$n" = 2 ] && ok gate-1.2 || bad gate-1.2 "raw: steady slower on $n shapes, want 2"
"$TB" compare 1 2 --db g.db --control cublaslt --format json > c.json; rc=$?
[ $rc = 1 ] && ok gate-1.3 || bad gate-1.3 "exit $rc, want 1"
got=$(/usr/bin/python3 - c.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(f'{r["variant"]}@{r["shape"].split("x")[0]}={r["change"].replace(" ", "_")}' for r in d["rows"]))
PY
)
want="cublaslt@4096=control steady@4096=unchanged slow5@4096=slower breaks@4096=newly_invalid declines@4096=unchanged gone@4096=removed cublaslt@8192=control steady@8192=unchanged slow5@8192=slower breaks@8192=newly_invalid declines@8192=newly_unsupported gone@8192=removed newone@4096=new newone@8192=new"
[ "$got" = "$want" ] && ok gate-1.4 || bad gate-1.4 "classes: $got"
r=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open("c.json")); print([round(r["ratio"],2) for r in d["rows"] if r["variant"]=="slow5"], d["failures"], d["verdict"])')
[ "$r" = "[1.05, 1.05] 4 fail" ] && ok gate-1.5 || bad gate-1.5 "slow5 ratios, failures, verdict: $r"

# 2. the reports: Markdown as stored, JUnit valid, JSON strict
"$TB" compare 1 2 --db g.db --control cublaslt --format markdown > c.md
diff -u "$TB_SRC/tests/expected/compare-control.md" c.md > md.diff && ok gate-2.1 || bad gate-2.1 "Markdown differs: $(head -20 md.diff)"
"$TB" compare 1 2 --db g.db --control cublaslt --junit c.xml --format table > c.txt
if xmllint --noout --schema "$TB_SRC/tests/junit.xsd" c.xml 2>x.err; then ok gate-2.2; else bad gate-2.2 "$(cat x.err)"; fi
[ "$(grep -c '<testcase ' c.xml)" = 14 ] && [ "$(grep -c '<failure ' c.xml)" = 4 ] && ok gate-2.3 || bad gate-2.3 "testcases/failures in JUnit"
grep -q 'whole interval beyond the threshold of 2 %' c.xml && ok gate-2.4 || bad gate-2.4 "no failure message naming ratio, interval and threshold"
grep -q "compare: FAIL: 3 unchanged, 2 slower" c.txt && ok gate-2.5 || bad gate-2.5 "table summary: $(tail -4 c.txt)"
/usr/bin/python3 -c 'import json; json.load(open("c.json"), parse_constant=lambda x: (_ for _ in ()).throw(ValueError(x)))' \
    && ok gate-2.6 || bad gate-2.6 "JSON not strict"
GITHUB_STEP_SUMMARY=summary.md "$TB" compare 1 2 --db g.db --control cublaslt >/dev/null
GITHUB_STEP_SUMMARY=summary.md "$TB" compare 1 2 --db g.db --control cublaslt >/dev/null
[ "$(grep -c '^### tilebench compare' summary.md)" = 2 ] && ok gate-2.7 || bad gate-2.7 "GITHUB_STEP_SUMMARY not appended twice"

# 3. the same-run gate's namespaces, through baseline files of each side; hostile text escaped
"$TB" baseline save --db g.db --run 3 --ns base --output b3.json 2>/dev/null && \
"$TB" baseline save --db g.db --run 3 --ns head --output h3.json 2>/dev/null && ok gate-3.1 || bad gate-3.1 "baseline save --ns"
"$TB" compare b3.json h3.json --format json --junit g3.xml > g3.json; rc=$?
got=$(/usr/bin/python3 -c 'import json; d=json.load(open("g3.json")); print(" ".join(r["variant"]+"="+r["change"].replace(" ","_") for r in d["rows"]))')
[ $rc = 1 ] && [ "$got" = "steady=unchanged slow5=slower breaks=newly_invalid steady=unchanged slow5=slower breaks=newly_invalid" ] \
    && ok gate-3.2 || bad gate-3.2 "exit $rc: $got"
grep -q "setup chose differently: base 'algo=1 tile=20', head 'algo=1 tile=24'" g3.json && ok gate-3.4 \
    || bad gate-3.4 "a slower row whose setups differ does not say so"
xmllint --noout --schema "$TB_SRC/tests/junit.xsd" g3.xml 2>/dev/null && grep -q '&lt;Segmentation fault&gt; &amp; &quot;planted&quot;' g3.xml \
    && ok gate-3.3 || bad gate-3.3 "a reason with < > & \" is not escaped in JUnit"

# 4. a baseline file round trip: the same verdicts as the run it came from
"$TB" baseline save --db g.db --run 1 --output b1.json 2>/dev/null
"$TB" compare b1.json 2 --db g.db --control cublaslt --format json > cb.json
a=$(/usr/bin/python3 -c 'import json; print([(r["variant"],r["change"],round(r["ratio"] or 0,4)) for r in json.load(open("c.json"))["rows"]])')
b=$(/usr/bin/python3 -c 'import json; print([(r["variant"],r["change"],round(r["ratio"] or 0,4)) for r in json.load(open("cb.json"))["rows"]])')
[ "$a" = "$b" ] && ok gate-4.1 || bad gate-4.1 "baseline verdicts differ from the run's"
/usr/bin/python3 -c 'import json; d=json.load(open("b1.json")); assert d["format"]=="tilebench-baseline" and d["version"]==1 and d["environment"]["gpu_name"]=="fixture GPU" and len(d["results"])==12' \
    && ok gate-4.2 || bad gate-4.2 "baseline file content"
"$TB" compare 1 1 --db g.db >/dev/null; [ $? = 0 ] && ok gate-4.3 || bad gate-4.3 "a run against itself must pass"

# 5. bad input: one line, exit 2, nothing written
run gate-5.1 2 "compare takes two runs" "$TB" compare 1 --db g.db
run gate-5.2 2 "invalid value 'abc' for --threshold" "$TB" compare 1 2 --db g.db --threshold abc
run gate-5.3 2 "unknown --format 'xml'" "$TB" compare 1 2 --db g.db --format xml
run gate-5.4 2 "'nope' is not a run id" "$TB" compare nope 2 --db g.db
echo '{"format":"something-else"}' > other.json
run gate-5.5 2 "is not a tilebench baseline" "$TB" compare other.json 2 --db g.db
echo '{"format":"tilebench-baseline","version":9,"results":[]}' > newer.json
run gate-5.6 2 "has version 9" "$TB" compare newer.json 2 --db g.db
run gate-5.7 2 "baseline save needs --output" "$TB" baseline save --db g.db
run gate-5.8 2 "no run 9 in 'g.db'" "$TB" baseline save --db g.db --run 9 --output x.json
[ ! -e x.json ] && ok gate-5.9 || bad gate-5.9 "a failed baseline save left x.json"
run gate-5.10 2 "needs either --base PATH or --baseline FILE" "$TB" gate --head .
run gate-5.11 2 "gate needs --head" "$TB" gate --base .
run gate-5.12 2 "two reports name the same file" "$TB" gate --base . --head . --junit a --json a
if ! (command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'); then
    run gate-5.14 2 "gate needs an NVIDIA GPU" "$TB" gate --base "$TB_BUILD/tests/zoo/gated/zoo_gated.so" \
        --head "$TB_BUILD/tests/zoo/gated/zoo_gated_slow3.so" --db nogpu/g.db
    [ ! -e nogpu ] && ok gate-5.15 || bad gate-5.15 "a gate without a GPU created its database"
fi
for c in gate compare baseline; do run "gate-5.13-$c" 0 "usage: tilebench $c" "$TB" $c --help; done

# 7. the before/after chart (--chart, issue 20): drawn by the report's own figure code from the
# comparison, one point and whisker per row with a ratio, the Markdown linking to it by a path
# relative to the Markdown file; bad input refused before anything is written
mkdir -p out/md
"$TB" compare 1 2 --db g.db --control cublaslt --json ch.json --markdown out/md/c.md --chart out/c.svg > /dev/null; rc=$?
n=$(/usr/bin/python3 -c 'import json; print(sum(1 for r in json.load(open("ch.json"))["rows"] if isinstance(r.get("ratio"), (int, float))))')
pts=$(grep -c 'id="ratio-[0-9]*"' out/c.svg 2>/dev/null); cis=$(grep -c 'id="ratioci-[0-9]*"' out/c.svg 2>/dev/null)
[ $rc = 1 ] && [ "$n" -gt 0 ] && [ "$pts" = "$n" ] && [ "$cis" = "$n" ] && grep -q "compare, run 2 of g.db against run 1 of g.db" out/c.svg \
    && ok gate-7.1 || bad gate-7.1 "exit $rc; chart has $pts points and $cis intervals for $n rows with a ratio"
link=$(grep -o '](\.\./c\.svg)' out/md/c.md)
[ -n "$link" ] && [ -f out/md/../c.svg ] && ok gate-7.2 || bad gate-7.2 "the Markdown does not link the chart: $(tail -2 out/md/c.md)"
GITHUB_STEP_SUMMARY=sum7.md "$TB" compare 1 2 --db g.db --chart c7.svg --format markdown > c7.md
grep -q '^Before/after chart: c7.svg (an SVG' sum7.md && grep -q '^Before/after chart: c7.svg' c7.md \
    && ok gate-7.3 || bad gate-7.3 "the step summary and standard output do not name the chart"
"$TB" compare 1 2 --db g.db --format markdown > c8.md
! grep -q "Before/after chart" c8.md && ok gate-7.4 || bad gate-7.4 "Markdown names a chart that was not asked for"
run gate-7.5 2 "the chart is an SVG file: name one ending in .svg" "$TB" compare 1 2 --db g.db --chart c.png --markdown m75.md
run gate-7.6 2 "no folder 'nowhere' to write it in" "$TB" compare 1 2 --db g.db --chart nowhere/c.svg --markdown m76.md
run gate-7.7 2 "two reports name the same file 'x.svg'" "$TB" compare 1 2 --db g.db --chart x.svg --json x.svg
run gate-7.8 2 "cannot run python3 '/nonexistent/python3'" env TILEBENCH_PYTHON=/nonexistent/python3 "$TB" compare 1 2 --db g.db --chart c9.svg --markdown m78.md
printf '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n' > nompl; chmod +x nompl   # no site-packages: no matplotlib
run gate-7.9 2 "matplotlib is missing" env TILEBENCH_PYTHON="$tmp/nompl" "$TB" compare 1 2 --db g.db --chart c9.svg --markdown m79.md
[ ! -e m75.md ] && [ ! -e m76.md ] && [ ! -e m78.md ] && [ ! -e m79.md ] && [ ! -e c9.svg ] && [ ! -e x.svg ] \
    && ok gate-7.10 || bad gate-7.10 "a refused --chart left files: $(ls m7*.md c9.svg x.svg 2>/dev/null)"
run gate-7.11 2 "the chart is an SVG file" "$TB" gate --base . --head . --chart gate.png
cp g.db gdb.svg; sum=$(md5sum < gdb.svg)
run gate-7.12 1 "is the database" "$TB" compare 1 2 --db gdb.svg --chart gdb.svg
[ "$(md5sum < gdb.svg)" = "$sum" ] && ok gate-7.12b || bad gate-7.12b "--chart wrote over the database"
ls -A out | grep -q '\.tmp\.svg' && bad gate-7.13 "a temporary SVG was left" || ok gate-7.13

# 8. two runs at SM clocks more than 1 % apart (issue 28): the rows say so with both clocks, the
# summary says on how many rows, JSON carries both clocks; equal clocks say nothing
cp g.db gclk.db
/usr/bin/python3 -c "
import sqlite3, sys; c = sqlite3.connect(sys.argv[1])
c.execute(\"UPDATE measurements SET clock_mhz = 1649 WHERE run_id = 2 AND variant_id IN (SELECT id FROM variants WHERE run_id = 2 AND name = 'steady') AND problem_id = (SELECT id FROM problems WHERE m = 4096)\")
c.commit()" gclk.db
"$TB" compare 1 2 --db gclk.db --format json > clk.json
"$TB" compare 1 2 --db gclk.db > clk.txt
/usr/bin/python3 - clk.json <<'PY' && grep -q "^steady .*SM clock base 1700 MHz, head 1649 MHz (-3.0 %): a difference this size can be the card's pace" clk.txt \
    && grep -q "clocks: on 1 row the two sides ran at SM clocks more than 1 % apart (at most -3.0 %)" clk.txt \
    && ok gate-8.1 || bad gate-8.1 "the clock difference is not reported: $(grep -i clock clk.txt)"
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["rows"] if x["variant"] == "steady" and x["shape"].startswith("4096")][0]
assert d["clock_moved"] == 1 and r["base_clock_mhz"] == 1700 and r["head_clock_mhz"] == 1649, (d["clock_moved"], r)
PY
"$TB" compare 1 2 --db g.db > noclk.txt
! grep -qi "clock" noclk.txt && [ "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clock_moved"])' c.json)" = 0 ] \
    && ok gate-8.2 || bad gate-8.2 "equal clocks reported as moved: $(grep -i clock noclk.txt)"

# 6. the CI templates parse (every tilebench line in them)
TB="$TB" TB_SRC="$TB_SRC" /usr/bin/python3 "$TB_SRC/tests/ci_templates.py" > ci.txt 2>&1 && ok gate-6.1 || bad gate-6.1 "$(grep FAIL ci.txt)"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
