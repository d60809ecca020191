#!/bin/bash
# merge_cli.sh - tilebench merge without a GPU, on databases written through the store's own
# code path (tests/make_fixture_db.c, tests/make_gate_fixture.c; so their runs have uids),
# copied and altered with python3's sqlite3 for variety (ids that clash, a problem only one
# file has, other sample values). Checked with a dump of every table's rows in which each id
# is replaced by what it stands for (a run by its uid, a variant by its name, a problem by its
# key): row counts and a hash per table, and a sum and an order-independent hash of
# (run uid, variant, problem, idx, ms, clock_mhz) over every sample.
#   1 a merge keeps every row and sample    2 merging again changes nothing
#   3 a file into itself changes nothing    4 the order of the inputs does not matter
#   5 inputs refused before anything is written (exit 2)
#   6 show and export read a merged run as they read it in its input
#   7 a failure, or SIGINT, rolls that input back whole (exit 1, 130)   8 --help
# Environment (set by CTest): TB, TB_BUILD, TB_SRC.
set -u
pass=0; fail=0
tmp=$(mktemp -d); trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
ok()   { echo "ok   $1"; pass=$((pass+1)); }
bad()  { echo "FAIL $1: $2"; fail=$((fail+1)); }
PY=/usr/bin/python3
cd "$tmp"

# dump.py DB          the dump of one database: "table rows hash" lines, then the samples line
# dump.py --expect DB...  what merging those files into a new one must give: every run once
#                         (by uid, the first file's), problems and calibration rows once each
# dump.py --whole DB  a hash of the whole file, ids included: for "nothing changed"
# dump.py --val DB SQL    the first value SQL gives
# Text is read as bytes: the gate fixture's hostile text is not all UTF-8. A file is opened as
# tilebench opens it (mode=rw, never creating it; nothing is written): a mode=ro connection
# would leave -wal and -shm beside it.
cat > dump.py <<'PY'
import hashlib, sqlite3, sys

def q(db, sql):
    return db.execute(sql).fetchall()

def connect(path):
    db = sqlite3.connect("file:%s?mode=rw" % path, uri=True)
    db.text_factory = bytes
    return db

def load(path):
    db = connect(path)
    uid = dict(q(db, "SELECT id, uid FROM runs"))
    var = dict(q(db, "SELECT id, name FROM variants"))
    cols = lambda t: [r[1].decode() for r in q(db, "PRAGMA table_info(%s)" % t)]
    pcols = [c for c in cols("problems") if c not in ("id", "label")]
    prob = {r[0]: r[1:] for r in q(db, "SELECT id, %s FROM problems" % ", ".join(pcols))}
    # a measurement: its run, variant, problem, and its rank among the measurements of those
    meas, seen = {}, {}
    for mid, run, v, p in q(db, "SELECT id, run_id, variant_id, problem_id FROM measurements ORDER BY id"):
        k = (uid[run], var[v], prob[p])
        seen[k] = seen.get(k, 0) + 1
        meas[mid] = k + (seen[k],)
    rows = {}   # table -> [(run uid, or None for a table of no run; the row as text)]
    def take(t, key, drop, fn):   # fn(the key's value) -> (run uid, what replaces the ids)
        cs = ", ".join(c for c in cols(t) if c not in drop)
        if key:
            rows[t] = [(fn(r[0])[0], repr(fn(r[0])[1] + r[1:]))
                       for r in q(db, "SELECT %s, %s FROM %s" % (key, cs, t))]
        else:
            rows[t] = [(None, repr(r)) for r in q(db, "SELECT %s FROM %s" % (cs, t))]
    take("runs", "uid", ("id",), lambda u: (u, ()))
    take("environment", "run_id", ("run_id",), lambda i: (uid[i], (uid[i],)))
    take("variants", "run_id", ("id", "run_id"), lambda i: (uid[i], (uid[i],)))
    take("problems", None, ("id",), None)
    take("measurements", "id", ("id", "run_id", "variant_id", "problem_id"), lambda i: (meas[i][0], meas[i]))
    take("samples", "measurement_id", ("measurement_id",), lambda i: (meas[i][0], meas[i]))
    take("metrics", "measurement_id", ("id", "measurement_id"), lambda i: (meas[i][0], meas[i]))
    take("calibration", None, ("id",), None)
    smp = [(meas[m][0], meas[m][1], meas[m][2], i, ms, ck)
           for m, i, ms, ck in q(db, "SELECT measurement_id, idx, ms, clock_mhz FROM samples")]
    return rows, smp

def show(rows, smp):
    for t, rs in rows.items():
        h = hashlib.sha256("\n".join(sorted(r for _, r in rs)).encode()).hexdigest()[:16]
        print(t, len(rs), h)
    h = 0
    for s in smp:   # order-independent: a sum of per-sample hashes modulo 2^64
        h = (h + int.from_bytes(hashlib.sha256(repr(s).encode()).digest()[:8], "little")) % 2**64
    print("samples", len(smp), "sum_ms=%.9g" % sum(s[4] or 0 for s in smp), "hash=%016x" % h)

if sys.argv[1] == "--whole":
    db = connect(sys.argv[2])
    out = [repr(q(db, "PRAGMA user_version")), repr(q(db, "SELECT * FROM sqlite_master ORDER BY name"))]
    for (t,) in q(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        out += sorted(repr(r) for r in q(db, 'SELECT * FROM "%s"' % t.decode()))
    print(hashlib.sha256("\n".join(out).encode()).hexdigest())
elif sys.argv[1] == "--val":
    v = q(connect(sys.argv[2]), sys.argv[3])[0][0]
    print(v.decode() if isinstance(v, bytes) else v)
elif sys.argv[1] != "--expect":
    show(*load(sys.argv[1]))
else:
    rows, smp, runs = {}, [], set()
    for path in sys.argv[2:]:
        r, s = load(path)
        new = {run for run, _ in r["runs"]} - runs
        for t, rs in r.items():
            have = set(x for _, x in rows.get(t, []))
            for run, x in rs:   # a run's rows if the run is new; other rows if not there yet
                if (run in new) if run is not None else (x not in have):
                    rows.setdefault(t, []).append((run, x))
                    have.add(x)
        smp += [x for x in s if x[0] in new]
        runs |= new
    show(rows, smp)
PY
dump()   { $PY dump.py "$1"; }
expect() { $PY dump.py --expect "$@"; }
whole()  { $PY dump.py --whole "$1"; }
sql()    { $PY -c 'import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); db.executescript(sys.argv[2]); db.commit()' "$1" "$2"; }
val()    { $PY dump.py --val "$1" "$2"; }

"$TB_BUILD/tests/make_fixture_db" a.db >/dev/null && "$TB_BUILD/tests/make_gate_fixture" b.db >/dev/null \
    && "$TB_BUILD/tests/make_gate_fixture" c.db >/dev/null || { echo "FAIL merge-0: fixtures"; exit 1; }
# c: other runs (new uids) with ids that clash with b's in every table, other sample values, and
# a problem only c has
sql c.db "UPDATE problems SET id = id + 1000; UPDATE measurements SET problem_id = problem_id + 1000;
          UPDATE variants SET id = id + 100; UPDATE measurements SET variant_id = variant_id + 100;
          UPDATE problems SET m = 3000, label = 'c only' WHERE id = 1001;
          UPDATE samples SET ms = ms * 1.5, clock_mhz = 1234.5 WHERE idx % 2 = 0;
          UPDATE runs SET command_line = 'c: ' || command_line;"
cp b.db d.db   # the same runs as b (same uids) under another name
[ "$(val c.db 'SELECT count(*) FROM problems WHERE m = 3000')" = 1 ] && ok merge-0.1 || bad merge-0.1 "c.db not altered"

# 1. one merge keeps every row and every sample
out=$("$TB" merge o.db a.db b.db c.db 2>&1); rc=$?
[ $rc = 0 ] && ok merge-1.1 || bad merge-1.1 "exit $rc: $out"
grep -qx 'merged b.db: 3 runs (0 already present), 36 measurements, 1860 samples, 0 metrics, 0 calibrations' <<<"$out" \
    && ok merge-1.2 || bad merge-1.2 "line of b.db: $out"
grep -q '^total into o.db from 3 inputs: 7 runs (0 already present), 75 measurements, 3728 samples, 4 metrics, 1 calibration$' <<<"$out" \
    && ok merge-1.3 || bad merge-1.3 "total line: $out"
dump o.db > o.dump; expect a.db b.db c.db > o.want
diff o.want o.dump > d.diff && ok merge-1.4 || bad merge-1.4 "rows differ (want, got): $(cat d.diff)"
[ "$(val o.db 'SELECT count(*) FROM samples')" = $(( $(val a.db 'SELECT count(*) FROM samples') + 2 * $(val b.db 'SELECT count(*) FROM samples') )) ] \
    && ok merge-1.5 || bad merge-1.5 "samples: not the sum of the inputs'"
[ "$(val o.db 'SELECT count(*) FROM problems')" = 4 ] && ok merge-1.6 || bad merge-1.6 "problems: $(val o.db 'SELECT count(*) FROM problems'), want 4 (1 + 2 shared + c's own)"
"$TB" check --db o.db >/dev/null 2>&1 && ok merge-1.7 || bad merge-1.7 "check finds o.db not whole"
[ "$(val o.db 'SELECT count(DISTINCT uid) FROM runs WHERE length(uid) = 32')" = 7 ] && ok merge-1.8 || bad merge-1.8 "uids not kept"

# 2. merging again (and a copy of b: the same runs) changes nothing
before=$(whole o.db)
[ ${#before} = 64 ] || bad merge-2.0 "no hash of o.db: $before"
out=$("$TB" merge o.db a.db b.db c.db d.db 2>&1); rc=$?
[ $rc = 0 ] && ok merge-2.1 || bad merge-2.1 "exit $rc: $out"
grep -q '^total into o.db from 4 inputs: 0 runs (10 already present), 0 measurements, 0 samples, 0 metrics, 0 calibrations$' <<<"$out" \
    && ok merge-2.2 || bad merge-2.2 "$out"
[ "$(whole o.db)" = "$before" ] && ok merge-2.3 || bad merge-2.3 "o.db changed by a second merge"
dump o.db | diff - o.want >/dev/null && ok merge-2.4 || bad merge-2.4 "rows changed"

# 3. a file into itself, by its name, another name and a hard link: skipped, nothing changed
ln o.db link.db
out=$("$TB" merge o.db o.db ./o.db link.db "$tmp/o.db" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(grep -c '^skipped .*: it is o.db itself$' <<<"$out")" = 4 ] && ok merge-3.1 || bad merge-3.1 "exit $rc: $out"
[ "$(whole o.db)" = "$before" ] && ok merge-3.2 || bad merge-3.2 "o.db changed by merging itself"
rm -f link.db

# 4. the order of the inputs does not matter (up to ids)
"$TB" merge bc.db b.db c.db >/dev/null 2>&1 && "$TB" merge cb.db c.db b.db >/dev/null 2>&1 \
    && ok merge-4.1 || bad merge-4.1 "merges failed"
diff <(dump bc.db) <(dump cb.db) > d.diff && ok merge-4.2 || bad merge-4.2 "b,c and c,b differ: $(cat d.diff)"
[ "$(val bc.db 'SELECT group_concat(id) FROM (SELECT id FROM problems ORDER BY id)')" = 1,2,3 ] \
    && [ "$(val cb.db "SELECT count(*) FROM problems WHERE label = 'c only'")" = 1 ] && ok merge-4.3 || bad merge-4.3 "problems"
# merging into a database that has runs of its own: its ids are not assumed free
cp a.db ab.db; "$TB" merge ab.db b.db >/dev/null 2>&1 && diff <(dump ab.db) <(expect a.db b.db) >/dev/null \
    && ok merge-4.4 || bad merge-4.4 "into a database with runs"

# 5. refused before anything is written: exit 2, one line naming the file, OUT not made or changed
cp a.db v99.db; sql v99.db "PRAGMA user_version = 99"
cp a.db v4.db;  sql v4.db "PRAGMA user_version = 4"
echo "not a database" > text.db; mkdir dir.db
refuse() {   # id want-in-message args...
    local id=$1 needle=$2; shift 2
    local out rc; out=$("$TB" merge "$@" 2>&1); rc=$?
    if [ $rc != 2 ]; then bad "$id" "exit $rc, want 2: $out"
    elif ! grep -qF -- "$needle" <<<"$out" || [ "$(wc -l <<<"$out")" != 1 ]; then bad "$id" "want one line with '$needle': $out"
    elif [ -e new.db ]; then bad "$id" "new.db was created"; rm -f new.db*
    else ok "$id"; fi
}
refuse merge-5.1 "'v99.db' has schema version 99, newer than this tilebench ($(val a.db 'PRAGMA user_version'))" new.db a.db v99.db
refuse merge-5.2 "run 'tilebench migrate --db v4.db' first" new.db v4.db a.db
refuse merge-5.3 "'text.db' is not a tilebench database" new.db text.db
refuse merge-5.4 "cannot open 'missing.db': no such file" new.db a.db missing.db
refuse merge-5.5 "'dir.db': is a directory" dir.db a.db
refuse merge-5.6 "at least one input" new.db
refuse merge-5.7 "unknown or incomplete option '--nope'" new.db a.db --nope
out=$("$TB" merge o.db b.db v99.db 2>&1); rc=$?
[ $rc = 2 ] && [ "$(whole o.db)" = "$before" ] && ok merge-5.8 || bad merge-5.8 "exit $rc, o.db changed? $out"
left=$(ls ./*-wal ./*-shm 2>/dev/null)
[ "$(val v4.db 'PRAGMA user_version')" = 4 ] && [ -z "$left" ] && ok merge-5.9 || bad merge-5.9 "v4.db changed, or left beside the files: $left"

# 6. show and export read a merged run as they read it in its input: the same rows, ids aside.
# Both list a run's shapes in the order of their problem ids, which are the target's (c's own
# shape comes last in o.db), so rows are compared as sets; and show's bootstrap intervals draw
# from a stream seeded by the run's and the problem's ids (report/show.c), so their last digit
# may move: left out
noids() { $PY -c '
import json, sys
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k != "id"}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
d = strip(json.load(sys.stdin))
d["results"] = sorted(d["results"], key=lambda r: json.dumps(r, sort_keys=True))
print(json.dumps(d, sort_keys=True))'; }
ci='s/\[[0-9.]+,[0-9.]+\]/[ci]/g'
n6=0; bad6=""
for src in a.db b.db c.db; do
    for r in $(val "$src" "SELECT group_concat(id, ' ') FROM runs"); do
        u=$(val "$src" "SELECT uid FROM runs WHERE id = $r"); m=$(val o.db "SELECT id FROM runs WHERE uid = '$u'")
        e1=$("$TB" export --db "$src" --run "$r" --format json | noids); e2=$("$TB" export --db o.db --run "$m" --format json | noids)
        # (history lines left out: the merged file holds more runs of the same libraries, so show
        # rightly says how far they moved between runs there; the input alone has no history)
        s1=$("$TB" show --db "$src" --run "$r" --detail --metrics | tail -n +2 | grep -v '^ *history: ' | sed -E "$ci" | sort)
        s2=$("$TB" show --db o.db --run "$m" --detail --metrics | tail -n +2 | grep -v '^ *history: ' | sed -E "$ci" | sort)
        if [ -n "$e1" ] && [ "$e1" = "$e2" ] && [ -n "$s1" ] && [ "$s1" = "$s2" ]; then n6=$((n6+1)); else bad6+=" $src:$r->$m"; fi
    done
done
[ $n6 = 7 ] && [ -z "$bad6" ] && ok merge-6.1 || bad merge-6.1 "export/show differ for$bad6 ($n6 of 7 same)"
grep -q '"samples_ms":' <("$TB" export --db o.db --run 2 --format json) && ok merge-6.2 || bad merge-6.2 "no samples in export"

# 7. a failure mid-merge rolls back that input, those before it stay; SIGINT likewise
"$TB" merge x.db b.db >/dev/null 2>&1
v=$(val c.db "SELECT ms FROM samples WHERE idx = 4 ORDER BY measurement_id DESC LIMIT 1")
sql x.db "CREATE TRIGGER planted BEFORE INSERT ON samples WHEN NEW.ms = $v BEGIN SELECT RAISE(ABORT, 'planted failure'); END;"
out=$("$TB" merge x.db a.db c.db 2>&1); rc=$?
[ $rc = 1 ] && grep -q "cannot merge 'c.db' (nothing of it was written; 1 input before it merged): .*planted failure" <<<"$out" \
    && [ "$(grep -c 'error' <<<"$out")" = 1 ] && ok merge-7.1 || bad merge-7.1 "exit $rc: $out"
diff <(dump x.db) <(expect b.db a.db) > d.diff && ok merge-7.2 || bad merge-7.2 "x.db is not b + a: $(cat d.diff)"
sql x.db "DROP TRIGGER planted"
"$TB" merge x.db a.db c.db >/dev/null 2>&1 && diff <(dump x.db) <(expect b.db a.db c.db) >/dev/null \
    && ok merge-7.3 || bad merge-7.3 "c.db not merged whole after the failure"
# SIGINT while an input is being copied (a trigger makes each sample slow): exit 130, nothing of it
"$TB" merge y.db b.db >/dev/null 2>&1
sql y.db "CREATE TRIGGER slow BEFORE INSERT ON samples BEGIN
          SELECT count(*) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) SELECT i FROM n); END;"
want=$(whole y.db)
[ ${#want} = 64 ] || bad merge-7.0 "no hash of y.db: $want"
rc=$($PY -c '
import signal, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "merge", "y.db", "c.db"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1.0)
p.send_signal(signal.SIGINT)
r = p.wait()
print(128 - r if r < 0 else r)' "$TB")
[ "$rc" = 130 ] && ok merge-7.4 || bad merge-7.4 "exit $rc after SIGINT, want 130"
[ "$(whole y.db)" = "$want" ] && ok merge-7.5 || bad merge-7.5 "y.db changed by an interrupted merge"

# 8. help
"$TB" --help | grep -q '^  merge ' && ok merge-8.1 || bad merge-8.1 "merge not in tilebench --help"
out=$("$TB" merge --help); rc=$?
[ $rc = 0 ] && grep -q '^usage: tilebench merge OUT.db IN.db...' <<<"$out" && grep -q '^examples:' <<<"$out" \
    && ok merge-8.2 || bad merge-8.2 "exit $rc: $out"
"$TB" merge o.db a.db --help >/dev/null && [ "$(whole o.db)" = "$before" ] && ok merge-8.3 || bad merge-8.3 "--help after arguments"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
