#!/bin/bash
# search_cli.sh - tilebench search (issue 25) without a GPU, replaying the recorded H100 sweep in
# tests/data/h100-grid-search.db (the wgmma grid's 31 points on the llm shapes with M = 128 and
# 1024 and on 4096^3; 527 measurements, eleventh session, docs/search.md):
#   1 the search finds the sweep's winner (or a point within 1 %) on at least 90 % of the
#     shapes, spending at most a third of the sweep's GPU time as search rounds on the GPU cost
#     (the fourteenth session's round model; the recording's own share accounting overstates
#     this file's runs, docs/search.md), and refitting lowers the model's error on what it timed;
#     1.3 the same rounds cost less with one worker for every shape (twenty-first session's fit)
#   2 --explain: every timed point's prediction beside its time, the rank correlation
#   3 --table: a dispatch table in auto-table.json's form, written whole
#   4 bad input: one line, exit 2, nothing written
#   5 timing on the GPU goes through tilebench sweep: with a scripted worker that answers every
#     measure job from the same recording (the real worker probes the libraries), the search
#     stores one sweep run per round in --db, times fewer than all, and finds on each shape the
#     recording's winner or a point within 1 % of it; one worker per shape serves all its rounds
#     (jobs with "more", worker/job.h), each round still a run with its environment and phases;
#     a worker that crashes mid-session is replaced for the rest, one that ignores "more" (ends
#     after a job) is replaced each round, and SIGINT during a round ends the search and its
#     worker; the fitted model is stored in --db, and a later search starts from it only when
#     --model names the file (5.2, 5.2b)
#   6 scripts/search-gpu.sh --compare (issue 25's GPU run, judged here): a search that kept each
#     shape's winner at a quarter of the GPU time passes; one that kept the losers, or spent
#     half the time, fails; the search's winner is its last round's fastest when that round
#     re-timed a point (a final round), not the fastest of all its rounds, and its table, when
#     given, names it
#   7 --replay-noise (docs/search.md, fourteenth session): the same seed gives the same search,
#     another seed another; sigma 0 is no noise; the sweep's own medians judge the winners
#     (a noisy search's "found" line counts what the recording says of its picks); the
#     replay also prints the rounds' cost as the GPU's search rounds cost, and how many shapes
#     timed a point within 1 % of the sweep's best
#   7.5 --replay-noise's fifth field: a per-timing sigma growing with the kernel's time
#   7.4 the fifteenth session's rounds (docs/search.md): replayed with the round noise model
#     (0.0055 a timing, 0.035 a round), five seeds, the defaults (a final round of the best 3)
#     find at least 66 of 85 shape-seeds (measured: 71), and more than with --final 0 (61)
# Environment (set by CTest): TB, TB_SRC, TB_VARIANTS_GRID.
set -u
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok()   { echo "ok   $1"; pass=$((pass+1)); }
bad()  { echo "FAIL $1: $2"; fail=$((fail+1)); }
DB=$TB_SRC/tests/data/h100-grid-search.db
cp "$DB" "$tmp/rec.db"
before=$(sha256sum < "$tmp/rec.db")

out=$("$TB" search --replay "$tmp/rec.db" 2>&1); rc=$?
echo "$out" | tail -3
found=$(sed -n 's/.*within 1 % on \([0-9]*\) of \([0-9]*\) shapes.*/\1 \2/p' <<<"$out")
pct=$(sed -n 's/^as search rounds on the GPU .*: [0-9.]* s, \([0-9]*\) % of the sweep.s$/\1/p' <<<"$out")
# the same rounds with one worker for every shape cost less (twenty-first session's fit)
kept=$(sed -n 's/^as search rounds with --keep-worker (0.043 s a shape, 0.125 s a point, 44.3 times its median: .*): \([0-9.]*\) s, [0-9]* % of the sweep.s$/\1/p' <<<"$out")
per=$(sed -n 's/^as search rounds on the GPU .*: \([0-9.]*\) s, [0-9]* % of the sweep.s$/\1/p' <<<"$out")
[ -n "$kept" ] && [ -n "$per" ] && awk -v a="$kept" -v b="$per" 'BEGIN { exit !(a > 0 && a < b) }' \
    && ok search-1.3 || bad search-1.3 "kept '$kept' against per shape '$per'"
errs=$(sed -n 's/^model error .*: \([0-9.]*\) % with the default constants, \([0-9.]*\) % refitted$/\1 \2/p' <<<"$out")
read -r f n <<<"$found"; read -r e0 e1 <<<"$errs"
{ [ "${n:-0}" = 17 ] && [ $((f * 10)) -ge $((n * 9)) ] && [ -n "$pct" ] && [ "$pct" -le 33 ] \
  && awk -v a="$e0" -v b="$e1" 'BEGIN { exit !(b < a) }' && [ $rc -le 1 ]; } \
    && ok search-1.1 || bad search-1.1 "exit $rc, found '$found', cost '$pct' %, errors '$errs'"
[ "$(sha256sum < "$tmp/rec.db")" = "$before" ] && ok search-1.2 || bad search-1.2 "the replayed database changed"

out=$("$TB" search --replay "$tmp/rec.db" --explain --shapes 1024x8192x8192,128x4096x4096 2>&1); rc=$?
[ $rc -le 1 ] && [ "$(grep -c ' predicted [0-9.]* measured [0-9.]* ' <<<"$out")" -ge 4 ] \
    && [ "$(grep -c 'rank correlation' <<<"$out")" = 2 ] && grep -q '^search over 31 wgmma points on 2 shapes' <<<"$out" \
    && ok search-2.1 || bad search-2.1 "exit $rc: $(head -5 <<<"$out")"

"$TB" search --replay "$tmp/rec.db" --table "$tmp/t.json" > "$tmp/t.out" 2>&1; rc=$?
/usr/bin/python3 - "$tmp/t.json" "$tmp/t.out" "$tmp/rec.db" <<'PYEOF' && [ $rc -le 1 ] && [ ! -e "$tmp/t.json.tmp" ] && ok search-3.1 || bad search-3.1 "exit $rc; table: $(head -c 300 "$tmp/t.json" 2>&1)"
import json, sqlite3, sys
t = json.load(open(sys.argv[1]))
assert len(t["shapes"]) == 17 and t["points"], t
# each row names the point that won its shape: the spec of the winner the search printed
won = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f and f[0][0].isdigit() and "x" in f[0]: won[tuple(map(int, f[0].split("x")))] = f[1]
c = sqlite3.connect(sys.argv[3])
def spec(name):
    p = json.loads(c.execute("SELECT params_json FROM variants WHERE name = ?", (name,)).fetchone()[0])
    tail = " streamk" if p.get("tail") == "streamk" else " conflict" if p.get("epilogue") == "conflict" else ""
    return f'{p["tile_m"]} {p["tile_n"]} {p["stages"]} {p["cluster_m"]} {p["cluster_n"]} {p["schedule"]} {p["raster"]} {p["swizzle"]}{tail}'
assert len(set(t["points"])) == len(t["points"]), "a point twice"
for m, n, k, i in t["shapes"]:
    assert 0 <= i < len(t["points"])
    assert t["points"][i] == spec(won[(m, n, k)]), (m, n, k, t["points"][i], won[(m, n, k)])
PYEOF

one_line() {   # one_line ID EXPECT ARGS...: exit 2 and one line holding EXPECT
    local id=$1 want=$2; shift 2
    local o; o=$("$TB" search "$@" 2>&1); local r=$?
    [ $r = 2 ] && [ "$(wc -l <<<"$o")" = 1 ] && grep -q -- "$want" <<<"$o" && ok "$id" || bad "$id" "exit $r: $o"
}
one_line search-4.1 "--replay takes its timings from DB" --replay "$tmp/rec.db" --db "$tmp/other.db"
one_line search-4.2 "no-such.db" --replay "$tmp/no-such.db"
one_line search-4.3 "--quantile" --replay "$tmp/rec.db" --quantile 2
one_line search-4.4 "--per-round" --replay "$tmp/rec.db" --per-round 0
one_line search-4.5 "unknown" --replay "$tmp/rec.db" --frobnicate
one_line search-4.6 "family 'nosuch'" --replay "$tmp/rec.db" --family nosuch
one_line search-4.7 "takes no operand" --replay "$tmp/rec.db" extra
one_line search-4.10 "--replay-noise 'x'" --replay "$tmp/rec.db" --replay-noise x
one_line search-4.11 "--replay-noise '0.03,2'" --replay "$tmp/rec.db" --replay-noise 0.03,2
one_line search-4.12 "--replay-noise is for --replay" --replay-noise 0.03 --db "$tmp/none.db"
one_line search-4.13 "--refit" --replay "$tmp/rec.db" --refit sometimes
one_line search-4.14 "--incumbent" --replay "$tmp/rec.db" --incumbent sometimes
one_line search-4.15 "--final" --replay "$tmp/rec.db" --final 17
one_line search-4.16 "--replay-noise '0.01,0.03,1,0.03,0.03,5'" --replay "$tmp/rec.db" --replay-noise 0.01,0.03,1,0.03,0.03,5
one_line search-4.19 "--replay-noise '0.01,0.03,1,0.03,2'" --replay "$tmp/rec.db" --replay-noise 0.01,0.03,1,0.03,2
one_line search-4.17 "--model '$tmp/no-model.db': cannot read it" --replay "$tmp/rec.db" --model "$tmp/no-model.db"
one_line search-4.18 "holds no model fitted on" --replay "$tmp/rec.db" --model "$tmp/rec.db"
"$TB" search --help | grep -q "usage: tilebench search" && ok search-4.8 || bad search-4.8 "--help"
[ ! -e "$tmp/no-such.db" ] && ok search-4.9 || bad search-4.9 "a missing database was created"

# 5. the GPU path, through sweep, with a worker that replays the recording
cat > "$tmp/rec_worker" <<'PYEOF'
#!/usr/bin/python3
# a worker that answers from the recording; a job with "more" is followed by more jobs for the
# same problem (worker/job.h) until stdin ends. REC_STARTS: a line per worker start. REC_COUNT:
# the jobs so far, all workers; REC_CRASH=N: the N-th job dies by SIGSEGV after its first begin;
# REC_HANG=N: the N-th job hangs there (REC_HUNG gets the pid); REC_ONE_JOB=1: ends after one
# job whatever "more" says (a worker without sessions)
import json, os, signal, sqlite3, sys, time
a = sys.argv[1:]
if a[:1] not in (["measure"], ["env"]):
    os.execv(os.environ["REAL_WORKER"], [os.environ["REAL_WORKER"]] + a)
out = os.fdopen(3, "w", buffering=1)
say = lambda **o: print(json.dumps(o), file=out)
def env():
    say(type="env", gpu_name="recorded H100", gpu_uuid="GPU-5ea5c400-0000-0000-0000-000000000000", cc_major=9, cc_minor=0, sm_count=132)
if a[0] == "env":
    env(); sys.exit(0)
if "--device" in a:
    env()
with open(os.environ["REC_STARTS"], "a") as f:
    f.write(f"{os.getpid()}\n")
c = sqlite3.connect("file:" + os.environ["REC_DB"] + "?mode=ro", uri=True)
first = None
while True:
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    job = json.loads(line)
    more = job.pop("more", False)
    variants = job.pop("variants")
    if first is None:
        first = job
        env()
    elif job != first and not (first.get("keep_worker") and
                               {k: v for k, v in job.items() if k not in ("problem", "seed")} ==
                               {k: v for k, v in first.items() if k not in ("problem", "seed")}):
        say(type="fatal", error="a follow-up job for another problem"); sys.exit(2)
    n = int(open(os.environ["REC_COUNT"]).read() or 0) + 1 if os.path.exists(os.environ["REC_COUNT"]) else 1
    open(os.environ["REC_COUNT"], "w").write(str(n))
    p = job["problem"]
    say(type="ready")
    for i, v in enumerate(variants):
        say(type="begin", variant=v["name"])
        if i == 0 and str(n) == os.environ.get("REC_CRASH"):
            os.kill(os.getpid(), signal.SIGSEGV)
        if i == 0 and str(n) == os.environ.get("REC_HANG"):
            open(os.environ["REC_HUNG"], "w").write(str(os.getpid()))
            time.sleep(600)
        r = c.execute("SELECT x.median_ms, x.clock_mhz FROM measurements x JOIN variants w ON w.id = x.variant_id JOIN problems q "
                      "ON q.id = x.problem_id WHERE w.name = ? AND q.m = ? AND q.n = ? AND q.k = ?", (v["name"], p["m"], p["n"], p["k"])).fetchone()
        if r:
            say(type="result", variant=v["name"], status="ok", disposition="passed", median_ms=r[0], n_samples=3, samples_ms=[r[0]] * 3,
                samples_clock_mhz=[r[1]] * 3, method="cold", stop_reason="replayed")
        else:
            say(type="result", variant=v["name"], status="unsupported", disposition="not_verified", reason="not in the recording")
        with open(os.environ["REC_JOBS"], "a") as f:
            f.write(f'{p["m"]}x{p["n"]}x{p["k"]} {v["name"]}\n')
    say(type="done", phases={"validation_s": 0.01})
    if not more or os.environ.get("REC_ONE_JOB"):
        sys.exit(0)
PYEOF
chmod +x "$tmp/rec_worker"
shp=128x4096x4096,1024x8192x8192,4096x4096x4096
# the grid the recording holds (a point's library: its variant name less the layout): the
# built grid may have grown since (points the recording never
# timed would be "unsupported" here, and the search would spend its rounds on them)
mkdir -p "$tmp/grid"
/usr/bin/python3 -c "import sqlite3,sys; [print(r[0]) for r in sqlite3.connect(sys.argv[1]).execute('SELECT DISTINCT name FROM variants')]" "$tmp/rec.db" |
    while read -r name; do   # a point's library holds its four layouts: named without the _tn
        for f in "$TB_VARIANTS_GRID/${name%_tn}.so" "$TB_VARIANTS_GRID/$name.so"; do
            [ -e "$f" ] && ln -sf "$f" "$tmp/grid/"
        done
    done
export REAL_WORKER="$(dirname "$TB")/tilebench-worker" REC_DB="$tmp/rec.db" TILEBENCH_WORKER="$tmp/rec_worker"
out=$(REC_JOBS="$tmp/jobs" REC_STARTS="$tmp/starts" REC_COUNT="$tmp/count" \
      "$TB" search --variants "$tmp/grid" --variants "$TB_VARIANTS" --shapes $shp --db "$tmp/gpu.db" 2>&1); rc=$?
got=$(awk '/^[0-9]+x/ { print $1, $2 }' <<<"$out")
# each winner within 1 % of the recording's best on its shape (points that predict alike may be
# taken in another order than the replay's, which reads the points in the file's order)
near=$(/usr/bin/python3 - "$tmp/rec.db" "$got" <<'PYEOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
ok = 0
for line in sys.argv[2].splitlines():
    shape, name = line.split()
    m, n, k = map(int, shape.split("x"))
    q = "SELECT min(x.median_ms) FROM measurements x JOIN variants w ON w.id = x.variant_id JOIN problems p ON p.id = x.problem_id WHERE p.m=? AND p.n=? AND p.k=?"
    best = c.execute(q, (m, n, k)).fetchone()[0]
    mine = c.execute(q + " AND w.name=?", (m, n, k, name)).fetchone()[0]
    ok += mine is not None and mine <= 1.01 * best
print(ok)
PYEOF
)
runs=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM runs').fetchone()[0])" "$tmp/gpu.db" 2>&1)
jobs=$(wc -l < "$tmp/jobs" 2>/dev/null)
[ $rc = 0 ] && [ "$near" = 3 ] && grep -q "on the GPU, each round a sweep run in" <<<"$out" \
    && [ "$runs" -ge 3 ] && [ "$jobs" -lt 93 ] && "$TB" show --db "$tmp/gpu.db" --run all > /dev/null 2>&1 \
    && ok search-5.1 || bad search-5.1 "exit $rc, winners '$got' ($near of 3 within 1 % of the recording's best), $runs runs, $jobs timings: $(tail -3 <<<"$out")"
# one worker per shape: 3 started for all the rounds, each round a run with its environment and
# its own phases, the search's cost their sum
starts=$(wc -l < "$tmp/starts" 2>/dev/null)
chk=$(/usr/bin/python3 - "$tmp/gpu.db" <<'PYEOF'
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
runs = c.execute("SELECT id, status, phases_json FROM runs").fetchall()
env = {r for (r,) in c.execute("SELECT DISTINCT run_id FROM environment")}
bad = [r for r, st, pj in runs if st != "complete" or r not in env or not json.loads(pj or "{}").get("total_s", 0) > 0]
print(len(runs), len(bad))
PYEOF
)
[ "$starts" = 3 ] && [ "$chk" = "$runs 0" ] && [ "$(cat "$tmp/count")" = "$runs" ] \
    && grep -q "^$runs rounds, 3 workers started" <<<"$out" \
    && ok search-5.3 || bad search-5.3 "$starts workers for $runs rounds (runs, runs without environment or phases: $chk): $(tail -1 <<<"$out")"

# the fitted model is kept per GPU model and family (schema 6, search_models); a search on that
# GPU starts from it when --model names the file, and from the default constants without
n1=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM search_models WHERE gpu_name = 'recorded H100' AND family = 'wgmma'\").fetchone()[0])" "$tmp/gpu.db" 2>&1)
out=$(REC_JOBS="$tmp/jobs2" REC_STARTS="$tmp/starts2" REC_COUNT="$tmp/count2" \
      "$TB" search --variants "$tmp/grid" --variants "$TB_VARIANTS" --shapes $shp --db "$tmp/gpu.db" --model "$tmp/gpu.db" 2>&1); rc=$?
n2=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM search_models').fetchone()[0])" "$tmp/gpu.db" 2>&1)
[ $rc = 0 ] && [ "$n1" = 1 ] && [ "$n2" = 2 ] && grep -q "starting from the model fitted on [0-9]* timings on recorded H100" <<<"$out" \
    && grep -q "the fitted model stored in" <<<"$out" && ok search-5.2 || bad search-5.2 "exit $rc, models $n1 then $n2: $(head -2 <<<"$out")"
out=$(REC_JOBS="$tmp/jobs2b" REC_STARTS="$tmp/starts2b" REC_COUNT="$tmp/count2b" \
      "$TB" search --variants "$tmp/grid" --variants "$TB_VARIANTS" --shapes $shp --db "$tmp/gpu.db" 2>&1); rc=$?
[ $rc -le 1 ] && ! grep -q "starting from" <<<"$out" && grep -q "on the GPU, each round a sweep run in" <<<"$out" \
    && ok search-5.2b || bad search-5.2b "exit $rc: $(head -2 <<<"$out")"

# a crash in the second job (the first shape's second round) ends that worker: the crashed
# variant is recorded, the rest of the round and the shape's later rounds go to a new worker
out=$(REC_JOBS="$tmp/jobs3" REC_STARTS="$tmp/starts3" REC_COUNT="$tmp/count3" REC_CRASH=2 \
      "$TB" search --variants "$tmp/grid" --variants "$TB_VARIANTS" --shapes $shp --db "$tmp/crash.db" 2>&1); rc=$?
crashed=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM measurements WHERE status = 'crashed' AND reason LIKE '%signal 11%'\").fetchone()[0])" "$tmp/crash.db" 2>&1)
[ $rc -le 1 ] && [ "$crashed" = 1 ] && [ "$(wc -l < "$tmp/starts3")" = 4 ] && grep -q "^[0-9]* rounds, 4 workers started" <<<"$out" \
    && ok search-5.4 || bad search-5.4 "exit $rc, $crashed crashed, $(wc -l < "$tmp/starts3") workers: $(tail -2 <<<"$out")"
# a worker that ends after one job whatever "more" says: a new one each round, nothing lost
out=$(REC_JOBS="$tmp/jobs4" REC_STARTS="$tmp/starts4" REC_COUNT="$tmp/count4" REC_ONE_JOB=1 \
      "$TB" search --variants "$tmp/grid" --variants "$TB_VARIANTS" --shapes $shp --db "$tmp/one.db" 2>&1); rc=$?
r4=$(/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('SELECT count(*) FROM runs').fetchone()[0], c.execute(\"SELECT count(*) FROM measurements WHERE status != 'ok'\").fetchone()[0])" "$tmp/one.db" 2>&1)
[ $rc = 0 ] && [ "$r4" = "$(wc -l < "$tmp/starts4") 0" ] && ok search-5.5 || bad search-5.5 "exit $rc, runs and failures '$r4', $(wc -l < "$tmp/starts4") workers: $(tail -2 <<<"$out")"
# --keep-worker: one worker for every shape's rounds, the same winners (the recording decides)
out=$(REC_JOBS="$tmp/jobs7" REC_STARTS="$tmp/starts7" REC_COUNT="$tmp/count7" \
      "$TB" search --variants "$tmp/grid" --variants "$TB_VARIANTS" --shapes $shp --db "$tmp/keep.db" --keep-worker 2>&1); rc=$?
[ $rc = 0 ] && [ "$(wc -l < "$tmp/starts7")" = 1 ] && grep -q "^[0-9]* rounds, 1 worker started (one for every shape, --keep-worker" <<<"$out" \
    && [ "$(awk '/^[0-9]+x/ { print $1, $2 }' <<<"$out")" = "$got" ] \
    && ok search-5.7 || bad search-5.7 "exit $rc, $(wc -l < "$tmp/starts7") workers, winners $(awk '/^[0-9]+x/ { print $1, $2 }' <<<"$out" | tr '\n' ';') against $(tr '\n' ';' <<<"$got"): $(tail -2 <<<"$out")"
out=$("$TB" search --replay "$tmp/rec.db" --keep-worker 2>&1); rc=$?
[ $rc = 2 ] && grep -q "keep-worker" <<<"$out" && ok search-5.8 || bad search-5.8 "--keep-worker with --replay: exit $rc: $out"
# SIGINT while a kept worker hangs in its third job: the search stops (130), the round's run is
# interrupted, the worker is gone
REC_JOBS="$tmp/jobs5" REC_STARTS="$tmp/starts5" REC_COUNT="$tmp/count5" REC_HANG=3 REC_HUNG="$tmp/hung" \
    "$TB" search --variants "$tmp/grid" --variants "$TB_VARIANTS" --shapes $shp --db "$tmp/int.db" > "$tmp/int.out" 2>&1 &
tbpid=$!
for _ in $(seq 100); do [ -s "$tmp/hung" ] && break; sleep 0.1; done
kill -INT $tbpid; wait $tbpid; rc=$?
st=$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT status FROM runs ORDER BY id DESC LIMIT 1').fetchone()[0])" "$tmp/int.db" 2>&1)
[ $rc = 130 ] && [ "$st" = interrupted ] && [ -s "$tmp/hung" ] && ! kill -0 "$(cat "$tmp/hung")" 2>/dev/null \
    && ok search-5.6 || bad search-5.6 "exit $rc, last run '$st', hung worker $(cat "$tmp/hung" 2>/dev/null): $(tail -2 "$tmp/int.out")"

# 6: search-gpu.sh --compare on searches made from the recording (the exhaustive sweep: the
# recording as small.db, an empty large.db)
mkdir -p "$tmp/exh" "$tmp/s-good" "$tmp/s-miss" "$tmp/s-dear"
cp "$DB" "$tmp/exh/small.db"; cp "$DB" "$tmp/exh/large.db"
/usr/bin/python3 - "$tmp" <<'PYEOF'
import json, sqlite3, shutil, sys
t = sys.argv[1]
c = sqlite3.connect(f"{t}/exh/large.db"); c.execute("DELETE FROM measurements"); c.execute("DELETE FROM runs"); c.commit()
def make(dirname, keep_best, share):
    f = f"{t}/{dirname}/search.db"
    shutil.copy(f"{t}/exh/small.db", f)
    c = sqlite3.connect(f)
    rows = c.execute("SELECT x.id, x.problem_id, x.median_ms FROM measurements x JOIN variants v ON v.id = x.variant_id "
                     "WHERE x.status = 'ok' AND x.disposition = 'passed' AND v.name LIKE 'wgmma_bf16%'").fetchall()
    by = {}
    for i, pid, med in rows: by.setdefault(pid, []).append((med, i))
    keep = {sorted(v)[0 if keep_best else -1][1] for v in by.values()}
    c.execute(f"DELETE FROM measurements WHERE id NOT IN ({','.join(map(str, keep))})")
    for rid, pj in c.execute("SELECT id, phases_json FROM runs").fetchall():
        d = json.loads(pj or "{}"); d["total_s"] = d.get("total_s", 0.0) * share
        c.execute("UPDATE runs SET phases_json = ? WHERE id = ?", (json.dumps(d), rid))
    c.commit()
make("s-good", True, 0.25); make("s-miss", False, 0.25); make("s-dear", True, 0.5)
PYEOF
out=$(bash "$TB_SRC/scripts/search-gpu.sh" --compare "$tmp/exh" "$tmp/s-good" 2>&1); rc=$?
[ $rc = 0 ] && grep -q "^found 17 of 17 shapes (100 %); GPU time: search .* (25 %)$" <<<"$out" \
    && ok search-6.1 || bad search-6.1 "exit $rc: $(tail -2 <<<"$out")"
out=$(bash "$TB_SRC/scripts/search-gpu.sh" --compare "$tmp/exh" "$tmp/s-miss" 2>&1); rc=$?
[ $rc = 1 ] && [ "$(grep -c MISSED <<<"$out")" = 17 ] && ok search-6.2 || bad search-6.2 "exit $rc: $(tail -2 <<<"$out")"
out=$(bash "$TB_SRC/scripts/search-gpu.sh" --compare "$tmp/exh" "$tmp/s-dear" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "(50 %)$" <<<"$out" && ok search-6.3 || bad search-6.3 "exit $rc: $(tail -2 <<<"$out")"
# a final round per shape (a run of its own) that re-times the best and the slowest point, the
# slowest coming out fastest there: that is the search's pick, though the best's first median
# is the fastest of all rounds (the rule before the fifteenth session found all 17 here)
mkdir -p "$tmp/s-final" "$tmp/s-table"
/usr/bin/python3 - "$tmp" <<'PYEOF'
import json, sqlite3, shutil, sys
t = sys.argv[1]
f = f"{t}/s-final/search.db"
shutil.copy(f"{t}/s-good/search.db", f)
c = sqlite3.connect(f)
cols = [r[1] for r in c.execute("PRAGMA table_info(measurements)")]
rcols = [r[1] for r in c.execute("PRAGMA table_info(runs)")]
run0 = c.execute("SELECT max(id) FROM runs").fetchone()[0]
full = sqlite3.connect(f"{t}/exh/small.db")
q = ("SELECT x.id, x.problem_id, x.median_ms FROM measurements x JOIN variants v ON v.id = x.variant_id "
     "WHERE x.status = 'ok' AND x.disposition = 'passed' AND v.name LIKE 'wgmma_bf16%'")
by = {}
for i, pid, med in full.execute(q): by.setdefault(pid, []).append((med, i))
new = run0
for pid, v in by.items():
    v.sort()
    new += 1
    sel = {"id": str(new), "uid": f"uid || '-final-{new}'", "phases_json": "'{\"total_s\": 0}'"}
    c.execute(f"INSERT INTO runs ({','.join(rcols)}) SELECT {','.join(sel.get(x, x) for x in rcols)} "
              f"FROM runs WHERE id = {run0}")
    # the best re-timed 20 % slow, the slowest 10 %: both above the best's first median (the
    # fastest of all rounds), the slowest the fastest of the final round
    for mid, med in ((v[0][1], 1.2 * v[0][0]), (v[-1][1], 1.1 * v[0][0])):
        row = dict(zip(cols, full.execute(f"SELECT {','.join(cols)} FROM measurements WHERE id = ?", (mid,)).fetchone()))
        row.update(id=None, run_id=new, median_ms=med)
        c.execute(f"INSERT INTO measurements ({','.join(cols)}) VALUES ({','.join('?' * len(cols))})", [row[x] for x in cols])
c.commit()
shutil.copy(f, f"{t}/s-table/search.db")
# the table names each shape's best point (as search --table writes it), overriding the rounds
pts, shapes = [], []
for pid, v in by.items():
    name, pj = full.execute("SELECT v.name, v.params_json FROM variants v JOIN measurements x ON x.variant_id = v.id "
                            "WHERE x.id = ?", (v[0][1],)).fetchone()
    m, n, k = full.execute("SELECT m, n, k FROM problems WHERE id = ?", (pid,)).fetchone()
    p = json.loads(pj)
    tail = " streamk" if p.get("tail") == "streamk" else " conflict" if p.get("epilogue") == "conflict" else ""
    sp = f'{p["tile_m"]} {p["tile_n"]} {p["stages"]} {p["cluster_m"]} {p["cluster_n"]} {p["schedule"]} {p["raster"]} {p["swizzle"]}{tail}'
    if sp not in pts: pts.append(sp)
    shapes.append([m, n, k, pts.index(sp)])
json.dump({"points": pts, "shapes": shapes}, open(f"{t}/s-table/search-table.json", "w"))
PYEOF
out=$(bash "$TB_SRC/scripts/search-gpu.sh" --compare "$tmp/exh" "$tmp/s-final" 2>&1); rc=$?
[ $rc = 1 ] && [ "$(grep -c MISSED <<<"$out")" = 17 ] && grep -q "^side by side, final rounds: sigma [0-9.]* (robust [0-9.]*) over 17 pairs timed in one round$" <<<"$out" \
    && ok search-6.4 || bad search-6.4 "exit $rc: $(tail -3 <<<"$out")"
out=$(bash "$TB_SRC/scripts/search-gpu.sh" --compare "$tmp/exh" "$tmp/s-table" 2>&1); rc=$?
grep -q "^found 17 of 17 shapes (100 %)" <<<"$out" && ok search-6.5 || bad search-6.5 "exit $rc: $(tail -2 <<<"$out")"

# 7: the replay's noise
"$TB" search --replay "$tmp/rec.db" > "$tmp/n0.out" 2>&1
"$TB" search --replay "$tmp/rec.db" --replay-noise 0,0,9 > "$tmp/n00.out" 2>&1
"$TB" search --replay "$tmp/rec.db" --replay-noise 0.035,0.035,3 > "$tmp/n3a.out" 2>&1; rc=$?
"$TB" search --replay "$tmp/rec.db" --replay-noise 0.035,0.035,3 > "$tmp/n3b.out" 2>&1
"$TB" search --replay "$tmp/rec.db" --replay-noise 0.035,0.035,4 > "$tmp/n4.out" 2>&1
[ $rc -le 1 ] && cmp -s "$tmp/n3a.out" "$tmp/n3b.out" && ! cmp -s "$tmp/n3a.out" "$tmp/n4.out" \
    && grep -q "^replayed with noise: .* (sigma 0.035) .* (sigma 0.035), lognormal, seed 3$" "$tmp/n3a.out" \
    && ok search-7.1 || bad search-7.1 "exit $rc: $(tail -4 "$tmp/n3a.out")"
cmp -s "$tmp/n0.out" "$tmp/n00.out" && ! grep -q "replayed with noise" "$tmp/n0.out" \
    && ok search-7.2 || bad search-7.2 "sigma 0 is not the noiseless replay: $(diff "$tmp/n0.out" "$tmp/n00.out" | head -3)"
# judged by the recording: each shape "same"/"tied" only when the recording's median of the
# search's winner is within 1 % of the recording's best; the line counts those
/usr/bin/python3 - "$tmp/n3a.out" "$tmp/rec.db" <<'PYEOF' && ok search-7.3 || bad search-7.3 "$(tail -5 "$tmp/n3a.out")"
import re, sqlite3, sys
out = open(sys.argv[1]).read()
c = sqlite3.connect(sys.argv[2])
q = ("SELECT min(x.median_ms) FROM measurements x JOIN variants w ON w.id = x.variant_id JOIN problems p ON p.id = x.problem_id "
     "WHERE x.status = 'ok' AND x.disposition = 'passed' AND p.layouts = 'tn' AND p.m=? AND p.n=? AND p.k=?")
good = 0
for line in out.splitlines():
    f = line.split()
    if not f or not re.match(r"^\d+x\d+x\d+$", f[0]): continue
    m, n, k = map(int, f[0].split("x"))
    best, mine = c.execute(q, (m, n, k)).fetchone()[0], c.execute(q + " AND w.name=?", (m, n, k, f[1])).fetchone()[0]
    ok = mine <= 1.01 * best
    assert (f[-1] in ("same", "(<=1%)")) == ok, line
    good += ok
found = int(re.search(r"within 1 % on (\d+) of 17 shapes", out).group(1))
assert found == good, (found, good)
cov = int(re.search(r"^timed the sweep's winner or a point within 1 % of it on (\d+) of 17", out, re.M).group(1))
assert found <= cov <= 17, (found, cov)
assert re.search(r"^as search rounds on the GPU \(0.77 s a shape, 0.106 s a point, 43.8 times its median: "
                 r"docs/search.md\): [0-9.]+ s, \d+ % of the sweep's$", out, re.M), "no modelled cost"
PYEOF

# 7.5: the fifth field (LONG, twenty-first session): equal to POINT it is the four-field replay;
# larger, it changes only what kernels above 0.25 ms draw (the recording's run from 0.02 to 1.8
# ms), and the line says so
"$TB" search --replay "$tmp/rec.db" --replay-noise 0.005,0.01,3,0.006 > "$tmp/l4.out" 2>&1
"$TB" search --replay "$tmp/rec.db" --replay-noise 0.005,0.01,3,0.006,0.005 > "$tmp/l5.out" 2>&1
"$TB" search --replay "$tmp/rec.db" --replay-noise 0.005,0.01,3,0.006,0.2 > "$tmp/l6.out" 2>&1
diff <(grep -v "^replayed with noise" "$tmp/l4.out") <(grep -v "^replayed with noise" "$tmp/l5.out") > /dev/null \
    && ! diff <(grep -v "^replayed with noise" "$tmp/l5.out") <(grep -v "^replayed with noise" "$tmp/l6.out") > /dev/null \
    && grep -q "per-timing factor (sigma 0.0050, growing to 0.2000 from 0.25 to 4 ms)" "$tmp/l6.out" \
    && ok search-7.5 || bad search-7.5 "$(diff "$tmp/l4.out" "$tmp/l5.out" | head -3; tail -2 "$tmp/l6.out")"

# 7.4: the final round, replayed with the round noise model
found_sum() {   # found_sum ARGS...: the found shapes summed over seeds 1-5
    local t=0 f
    for sd in 1 2 3 4 5; do
        f=$("$TB" search --replay "$tmp/rec.db" "$@" --replay-noise "0.0055,0.035,$sd,0.035" 2>&1 |
            sed -n 's/^found the sweep.s winner or a point within 1 % on \([0-9]*\) of 17 shapes.*/\1/p')
        t=$((t + ${f:-0}))
    done
    echo $t
}
with=$(found_sum); without=$(found_sum --final 0)
"$TB" search --replay "$tmp/rec.db" --replay-noise 0.0055,0.035,1,0.035 > "$tmp/r1.out" 2>&1
[ "$with" -ge 66 ] && [ "$with" -gt "$without" ] \
    && grep -q "^replayed with noise: .* per-round factor (sigma 0.0350) x a per-timing factor (sigma 0.0055), lognormal, seed 1$" "$tmp/r1.out" \
    && grep -q "^re-timed [1-9][0-9]* points beside the new ones (the incumbent off, final rounds of up to 3 on [1-9][0-9]* shapes" "$tmp/r1.out" \
    && ok search-7.4 || bad search-7.4 "found $with of 85 with the final round, $without without: $(tail -3 "$tmp/r1.out")"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
