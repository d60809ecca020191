#!/bin/bash
# files_cli.sh - files and streams the CLI writes (issues 27 and 32): output never replaces what
# it should write into (--output -, /dev/stdout, /dev/full, a FIFO, a symbolic link, an existing
# file's mode), never the database itself (by any name), never a file at the name-length limit;
# every byte of standard output is checked (/dev/full, closed stdout) for every command; export
# picks the format from the extension; show --format json|csv. No GPU needed.
# Environment (set by CTest): TB, TB_BUILD.
set -u
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok()   { echo "ok   $1"; pass=$((pass+1)); }
bad()  { echo "FAIL $1: $2"; fail=$((fail+1)); }
cd "$tmp"
"$TB_BUILD/tests/make_fixture_db" f.db >/dev/null || { echo "FAIL files-0: fixture"; exit 1; }
dbsum=$(sha256sum f.db | cut -c1-64)
PY=/usr/bin/python3

# 1. where output goes
"$TB" export --db f.db --format json --output - | $PY -m json.tool >/dev/null && ok files-1.1 || bad files-1.1 "--output - is not JSON on stdout"
"$TB" export --db f.db --format json | $PY -m json.tool >/dev/null && ok files-1.2 || bad files-1.2 "no --output: not stdout"
out=$("$TB" export --db f.db --format json --output /dev/full 2>&1); rc=$?
[ $rc != 0 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "No space left on device" <<<"$out" && ok files-1.3 \
    || bad files-1.3 "/dev/full: exit $rc: $out"
"$TB" export --db f.db --format csv --output /dev/stdout > via-stdout.csv && [ -s via-stdout.csv ] && [ ! -L /dev/stdout -o -e /dev/stdout ] \
    && ok files-1.4 || bad files-1.4 "/dev/stdout"
# as root an old tilebench replaced /dev/full and /dev/stdout with regular files: check they
# are still what they were (a character device, a link)
[ -c /dev/full ] && [ -L /dev/stdout ] && ok files-1.4b || bad files-1.4b "/dev/full or /dev/stdout was replaced: $(ls -l /dev/full /dev/stdout)"
# /dev/stdout is the shell's descriptor: an append (>>) stays an append
: > app.log
"$TB" export --db f.db --format csv --output /dev/stdout >> app.log
"$TB" export --db f.db --format csv --output /dev/stdout >> app.log
[ "$(grep -c '^run_id,' app.log)" = 2 ] && ok files-1.4c || bad files-1.4c "/dev/stdout >> lost the first export"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    f=/dev/shm/tb-files-cli-$$.csv
    "$TB" export --db f.db --output $f && [ -f $f ] && ok files-1.4d || bad files-1.4d "a new regular file under /dev/shm"
    rm -f $f
fi
mkfifo fifo; (cat fifo > from-fifo.csv &) ; "$TB" export --db f.db --format csv --output fifo; sleep 0.2
[ -p fifo ] && [ -s from-fifo.csv ] && ok files-1.5 || bad files-1.5 "a FIFO was replaced or not written"
echo old > real.csv; ln -s real.csv link.csv
"$TB" export --db f.db --output link.csv && [ -L link.csv ] && grep -q "^run_id," real.csv && ok files-1.6 \
    || bad files-1.6 "a symbolic link output did not stay a link written through"
echo old > keep.csv; chmod 640 keep.csv
"$TB" export --db f.db --output keep.csv && [ "$(stat -c %a keep.csv)" = 640 ] && ok files-1.7 || bad files-1.7 "mode not kept: $(stat -c %a keep.csv)"
(umask 077; "$TB" export --db f.db --output new.csv) && [ "$(stat -c %a new.csv)" = 600 ] && ok files-1.8 || bad files-1.8 "umask not used: $(stat -c %a new.csv)"
(umask 022; "$TB" export --db f.db --output new2.csv) && [ "$(stat -c %a new2.csv)" = 644 ] && ok files-1.9 || bad files-1.9 "umask 022: $(stat -c %a new2.csv)"
"$TB" export --db f.db --output auto.json && $PY -m json.tool auto.json >/dev/null && ok files-1.10 || bad files-1.10 "format from .json"
out=$("$TB" export --db f.db --output plain.txt 2>&1); rc=$?
[ $rc = 2 ] && grep -q "give --format json or --format csv" <<<"$out" && [ ! -e plain.txt ] && ok files-1.11 || bad files-1.11 "$out"

# 2. never the database, by any name; nothing left behind
ln f.db hard.db; ln -s f.db soft.db; mkdir -p sub
for o in f.db ./f.db hard.db soft.db "sub/../f.db" "$tmp/f.db"; do
    out=$("$TB" export --db f.db --format csv --output "$o" 2>&1); rc=$?
    [ $rc = 2 ] && grep -q "is the database" <<<"$out" || bad files-2.1 "output '$o': exit $rc: $out"
done
[ "$(sha256sum f.db | cut -c1-64)" = "$dbsum" ] && ok files-2.1 || bad files-2.1 "the database changed"
[ -z "$(ls -a | grep '\.tmp\.')" ] && ok files-2.2 || bad files-2.2 "temporary files left: $(ls -a | grep '\.tmp\.')"
"$TB" baseline save --db f.db --output hard.db 2>/dev/null; [ $? = 2 ] && [ "$(sha256sum f.db | cut -c1-64)" = "$dbsum" ] \
    && ok files-2.3 || bad files-2.3 "baseline save over the database"

# 3. a name at the filesystem's limit: refused before anything is touched
long=$(printf 'k%.0s' $(seq 1 255))
echo precious > "$long"
out=$("$TB" export --db f.db --format csv --output "$long" 2>&1); rc=$?
[ $rc != 0 ] && [ "$(cat "$long")" = precious ] && [ "$(wc -l <<<"$out")" = 1 ] && ok files-3.1 \
    || bad files-3.1 "a 255-byte name: exit $rc, content '$(head -c 20 "$long")': $out"
[ -z "$(ls -a | grep '\.tmp\.')" ] && ok files-3.2 || bad files-3.2 "temporary files left after the long name"
# a path of 4095 bytes (PATH_MAX less its NUL): no temporary name may be cut into the real one
d=""; for i in $(seq 1 20); do d="$d$(printf 'd%.0s' $(seq 1 200))/"; done
mkdir -p "$d"
f="$d$(printf 'f%.0s' $(seq 1 $((4095 - ${#d}))))"
echo precious > "$f"
out=$("$TB" export --db f.db --format csv --output "$f" 2>&1); rc=$?
[ ${#f} = 4095 ] && [ $rc != 0 ] && [ "$(cat "$f")" = precious ] && [ "$(wc -l <<<"$out")" = 1 ] && ok files-3.3 \
    || bad files-3.3 "a 4095-byte path: exit $rc, content '$(head -c 20 "$f" 2>&1)': $out"

# 3b. a signal while an output is written: the temporary file removed, the old output kept,
# the shell's exit status (a preloaded rename() that sleeps holds the window open)
for sig in TERM:143 INT:130 HUP:129; do
    name=${sig%:*}; want=${sig#*:}
    echo keep > sig.csv; rm -f mark
    # a background job of a script starts with SIGINT ignored (and an ignored signal stays
    # ignored: 3.5); python restores the defaults, as an interactive shell's job has them
    TB_TEST_RENAME_MARK=$tmp/mark LD_PRELOAD="$TB_BUILD/tests/libtb_slow_rename.so" $PY -c '
import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$TB" export --db f.db --output sig.csv & pid=$!
    for i in $(seq 1 50); do [ -e mark ] && break; sleep 0.1; done
    had=$(ls -a | grep -c '^\.sig\.csv\.tmp\.')
    kill -$name $pid; wait $pid; rc=$?
    left=$(ls -a | grep -c '^\.sig\.csv\.tmp\.')
    [ -e mark ] && [ "$had" = 1 ] && [ $rc = $want ] && [ "$left" = 0 ] && [ "$(cat sig.csv)" = keep ] \
        && ok "files-3.4-$name" || bad "files-3.4-$name" "SIG$name: temp before $had, exit $rc (want $want), temp after $left, output '$(head -c 20 sig.csv)'"
done

# an ignored SIGHUP (nohup) stays ignored while an output is written
echo keep > hup.csv; rm -f mark
(trap '' HUP; TB_TEST_RENAME_MARK=$tmp/mark LD_PRELOAD="$TB_BUILD/tests/libtb_slow_rename.so" \
    exec "$TB" export --db f.db --output hup.csv) & pid=$!
for i in $(seq 1 50); do [ -e mark ] && break; sleep 0.1; done
kill -HUP $pid; kill -CONT $pid 2>/dev/null
wait $pid; rc=$?
[ $rc = 0 ] && grep -q '^run_id,' hup.csv && ok files-3.5 || bad files-3.5 "an ignored SIGHUP killed the export: exit $rc"

# 4. every command checks what it wrote to standard output
for cmd in "--version" "--help" "show --db f.db" "show --db f.db --format json" "list --variants $TB_BUILD/tests/zoo/zoo_fast.so" \
           "doctor" "compare 1 1 --db f.db" "export --db f.db --format csv"; do
    out=$("$TB" $cmd 2>&1 >/dev/full); rc=$?
    { [ $rc != 0 ] && grep -q "No space left on device" <<<"$out"; } || bad files-4.1 "'$cmd' > /dev/full: exit $rc: $out"
    out=$("$TB" $cmd 2>&1 >&-); rc=$?
    [ $rc != 0 ] || bad files-4.2 "'$cmd' with stdout closed: exit $rc"
done
ok files-4.1; ok files-4.2
# a reader gone before the first byte: EPIPE (SIGPIPE ignored, as under some CI runners) is a
# quiet exit 141; with SIGPIPE at its default the shell sees 141 too
for cmd in "--version" "show --db f.db" "export --db f.db --format json" "list --variants $TB_BUILD/tests/zoo/zoo_fast.so" \
           "compare 1 1 --db f.db"; do
    r=$($PY - "$TB" $cmd <<'PY'
import os, signal, subprocess, sys
r, w = os.pipe(); os.close(r)                      # nobody will ever read
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE,
                   preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
print(p.returncode, len(p.stderr))
PY
)
    [ "$r" = "141 0" ] || bad files-4.5 "'$cmd' into a closed pipe: exit and stderr bytes '$r' (want 141 0)"
done
ok files-4.5
for cmd in "compare 1 1 --db f.db" "export --db f.db --format json" "show --db f.db"; do
    out=$("$TB" $cmd 2>&1 >/dev/full); [ "$(wc -l <<<"$out")" = 1 ] || bad files-4.6 "'$cmd' > /dev/full: $(wc -l <<<"$out") lines: $out"
done
ok files-4.6
out=$("$TB" check -xy 2>&1); grep -q "unknown or incomplete option '-x' for 'check'" <<<"$out" && ok files-4.7 || bad files-4.7 "$out"
"$TB" show --db f.db --format csv | head -1 | grep -q '^run_id,' && ok files-4.3 || bad files-4.3 "show --format csv"
out=$("$TB" show --db f.db --format xml 2>&1); [ $? = 2 ] && grep -q "unknown --format 'xml'" <<<"$out" && ok files-4.4 || bad files-4.4 "$out"
# 5. reading needs no write access; an older database is never migrated by a reader
chmod 755 "$tmp"; mkdir -p ro rodir rofile; chmod 755 ro rodir; chmod 777 rofile
cp f.db ro/r.db; chmod 444 ro/r.db
cp f.db rofile/r.db; chmod 444 rofile/r.db
cp f.db rodir/r.db; chmod 555 rodir
# ro: a read-only file in a folder the reader may not write; rofile: a read-only file in a
# folder anyone may write (where SQLite would leave -wal and -shm); rodir: a read-only folder.
# As root permissions do not bind: read as nobody then (setpriv, util-linux)
as_reader() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
for d in ro rofile rodir; do
    before=$(sha256sum $d/r.db | cut -c1-64)
    as_reader "$TB" show --db $d/r.db > show-$d.txt 2>&1; rc1=$?
    as_reader "$TB" export --db $d/r.db --format json > exp-$d.json 2>&1; rc2=$?
    left=$(ls -a $d | grep -E 'r\.db-(wal|shm)' || true)
    [ $rc1 = 0 ] && [ $rc2 = 0 ] && grep -q cublaslt show-$d.txt && $PY -m json.tool exp-$d.json >/dev/null && \
    [ -z "$left" ] && [ "$(sha256sum $d/r.db | cut -c1-64)" = "$before" ] && ok "files-5.1-$d" \
        || bad "files-5.1-$d" "read-only $d: show $rc1, export $rc2, left '$left': $(head -2 show-$d.txt)"
done
chmod 755 rodir
"$TB_BUILD/tests/make_fixture_db" old.db --schema 1 || bad files-5.0 "old fixture"
oldsum=$(sha256sum old.db | cut -c1-64)
for cmd in "show --db old.db" "export --db old.db --format csv" "sweep --db old.db --resume 1"; do
    out=$("$TB" $cmd 2>&1); rc=$?
    [ $rc = 2 ] && grep -q "run 'tilebench migrate --db old.db' first" <<<"$out" && [ "$(wc -l <<<"$out")" = 1 ] \
        || bad files-5.2 "'$cmd' on an older database: exit $rc: $out"
done
[ "$(sha256sum old.db | cut -c1-64)" = "$oldsum" ] && [ -z "$(ls -a | grep -E 'old\.db-(wal|shm)')" ] && ok files-5.2 \
    || bad files-5.2 "a reader changed the older database or left files beside it"
out=$("$TB" migrate --db old.db 2>&1); [ $? = 0 ] && grep -q "migrated from schema version 1 to" <<<"$out" && ok files-5.3 || bad files-5.3 "$out"
out=$("$TB" migrate --db old.db 2>&1); [ $? = 0 ] && grep -q "already" <<<"$out" && ok files-5.4 || bad files-5.4 "$out"
# 6. shape lists: names are sets, paths look like paths; bounded, fast, right line numbers
shapes_err() {   # ID NEEDLE SPEC: sweep refuses SPEC in one line naming NEEDLE, in under 2 s
    local id=$1 needle=$2 spec=$3 s=$(date +%s%N)
    local out; out=$("$TB" sweep --shapes "$spec" --db sw.db 2>&1); local rc=$?
    local ms=$(( ($(date +%s%N) - s) / 1000000 ))
    [ $rc = 2 ] && grep -qF -- "$needle" <<<"$out" && [ "$(wc -l <<<"$out")" = 1 ] && [ $ms -lt 2000 ] && [ ! -e sw.db ] \
        && ok "$id" || bad "$id" "exit $rc in $ms ms: $out"
}
shapes_err files-6.1 "empty item 1 in the shape list" ",,,"
shapes_err files-6.2 "empty item 2 in the shape list" "4096x4096x4096,,8x8x8"
: > empty.txt; shapes_err files-6.3 "shape file './empty.txt' has no shapes" ./empty.txt
shapes_err files-6.4 "shape file '/dev/zero'" /dev/zero
$PY -c "
with open('big.txt', 'w') as f:
    for i in range(200000): f.write('%dx%dx64\n' % (i % 500 + 1, i % 300 + 1))
    f.write('12x3\n')"
shapes_err files-6.5 "./big.txt:200001: malformed shape '12x3'" ./big.txt
$PY -c "print('# ' + 'c' * 5000); print('1x2x3 ok'); print('bad')" > longline.txt
shapes_err files-6.6 "./longline.txt:1: line longer than 4096 bytes" ./longline.txt
$PY -c "print('# ' + 'c' * 600); print('1x2x3 ok'); print('bad')" > comment.txt
shapes_err files-6.7 "./comment.txt:3: malformed shape 'bad'" ./comment.txt
echo "1x2x3" > square; shapes_err files-6.8 "'square' names both a shipped shape set and a file here: write ./square" square
echo "1x2x3" > mine; shapes_err files-6.9 "unknown shape set 'mine'" mine
rm -f mine square
printf '1x2x3 a\033[31mred\n' > ctl.txt; shapes_err files-6.10 "./ctl.txt:1: a label longer than" ./ctl.txt
# a valid list reaches the next step (no GPU here: the GPU error, not a shape error)
$PY -c "print('# ' + 'c' * 600); print('1x2x3 ok  # a label')" > good.txt
out=$("$TB" sweep --shapes "4096x4096x4096 , ./good.txt" --db sw.db 2>&1)
grep -q "malformed\|shape file" <<<"$out" && bad files-6.11 "$out" || ok files-6.11
mkdir -p num && echo 1x2x3 > num/1k.txt
out=$(cd num && "$TB" sweep --shapes 1k.txt --db sw.db 2>&1); grep -q "malformed" <<<"$out" && bad files-6.14 "1k.txt read as a shape: $out" || ok files-6.14
printf '1x2x3 a\xc2\x9b31mb\n' > c1.txt; shapes_err files-6.15 "./c1.txt:1: a label longer than 63 bytes, not UTF-8" ./c1.txt
$PY -c "print('1x2x3 ' + 'l' * 0 + '#' + 'c' * 4088)" > at.txt; $PY -c "print('1x2x3 ' + '#' + 'c' * 4090)" > over.txt
out=$("$TB" sweep --shapes ./at.txt --db sw.db 2>&1); grep -q "line longer" <<<"$out" && bad files-6.16 "a 4096-byte line refused: $out" || ok files-6.16
shapes_err files-6.17 "./over.txt:1: line longer than 4096 bytes" ./over.txt
many=""; for i in $(seq 1 65); do many="$many --filter f$i"; done
out=$("$TB" list $many 2>&1); rc=$?
[ $rc = 2 ] && grep -q "more than 64 --filter" <<<"$out" && ok files-6.12 || bad files-6.12 "65 --filter: exit $rc: $(tail -1 <<<"$out")"
out=$("$TB" list --filter 'no-such-variant*' --format json 2>/dev/null); rc=$?
[ $rc = 0 ] && [ "$(tr -d ' \n' <<<"$out")" = "[]" ] && ok files-6.13 || bad files-6.13 "list --format json with no match: exit $rc: $out"
# 7. text that came from outside reaches a terminal escaped and a JSON file as valid UTF-8
z="$TB_BUILD/tests/zoo/zoo_hostile_text.so"
"$TB" list --variants "$z" > l.out 2> l.err; rc=$?
[ $rc = 0 ] && grep -q zoo_hostile_ok l.out && [ "$(grep -c 'refused:' l.err)" = 3 ] && ! grep -q $'\x1b' l.err \
    && grep -q 'zoo\\x1b\]0;pwned\\x07' l.err && ok files-7.1 || bad files-7.1 "hostile variant text at load: exit $rc: $(cat -v l.err | head -3)"
grep -q "is longer than the limit" l.err && grep -q "is not valid UTF-8" l.err && ok files-7.2 || bad files-7.2 "refusal reasons"
"$TB" list --variants "$z" --format json 2>/dev/null | $PY -c 'import json,sys; d=json.load(sys.stdin); assert [v["name"] for v in d] == ["zoo_hostile_ok"]' \
    && ok files-7.3 || bad files-7.3 "list --format json"
"$TB_BUILD/tests/make_gate_fixture" h.db >/dev/null
script -qc "$TB show --db h.db --run 3 --detail" /dev/null > pty.out 2>&1
! grep -q $'\x1b' pty.out && grep -q 'x1b\]0;pwned' pty.out && ok files-7.4 || bad files-7.4 "show on a terminal: $(grep -c $'\x1b' pty.out) escape bytes"
for f in json csv; do "$TB" export --db h.db --run 3 --format $f --output h3.$f; done
$PY -c '
import json
raw = open("h3.json", "rb").read(); raw.decode("utf-8")
json.loads(raw, parse_constant=lambda x: (_ for _ in ()).throw(ValueError(x)))
open("h3.csv", "rb").read().decode("utf-8")' && ok files-7.5 || bad files-7.5 "an export is not valid UTF-8 or not strict JSON"
script -qc "$TB export --db h.db --run 3 --format csv" /dev/null > pty2.out 2>&1
! grep -q $'\x1b' pty2.out && ok files-7.6 || bad files-7.6 "export to a terminal carried escape bytes"
out=$("$TB" compare 1 9 --db h.db 2>&1 >/dev/null); [ "$(wc -l <<<"$out")" = 1 ] && ok files-7.7 || bad files-7.7 "$out"
# 8a. a library's output is never quoted as another's (issue 19): one prints at load, the next
# dies at load in the same probe worker
A="$TB_BUILD/tests/zoo/attribution"
out=$("$TB" list --variants "$A/zoo_ctor_print.so" --variants "$A/zoo_ctor_segv.so" 2>&1)
grep -q "zoo_ctor_segv.so': loading it ended the probe (killed by signal 11" <<<"$out" && \
    ! grep "zoo_ctor_segv" <<<"$out" | grep -q "belongs to zoo_ctor_print" && grep -q "^zoo_ctor_print " <<<"$out" \
    && ok files-8.0 || bad files-8.0 "output attributed to the wrong library: $out"

# 8. a damaged database never gives a quiet answer; tilebench check says what is wrong
"$TB_BUILD/tests/make_fixture_db" dmg.db >/dev/null
out=$("$TB" check --db dmg.db 2>&1); [ $? = 0 ] && grep -q "whole" <<<"$out" && ok files-8.1 || bad files-8.1 "a whole file: $out"
$PY - <<'PY'
import sqlite3
c = sqlite3.connect("dmg.db")
pg = c.execute("SELECT pageno FROM dbstat WHERE name = 'samples'").fetchone()[0]
ps = c.execute("PRAGMA page_size").fetchone()[0]
c.close()
d = bytearray(open("dmg.db", "rb").read())
for i in range((pg - 1) * ps + 8, pg * ps):   # the samples' page overwritten, header kept
    d[i] = 0x41
open("dmg.db", "wb").write(d)
PY
for cmd in "show --db dmg.db" "export --db dmg.db --format json" "export --db dmg.db --format csv"; do
    out=$("$TB" $cmd 2>&1 >/dev/null); rc=$?
    [ $rc != 0 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "dmg.db" <<<"$out" || bad files-8.2 "'$cmd' on a damaged file: exit $rc: $out"
done
ok files-8.2
out=$("$TB" check --db dmg.db 2>&1); rc=$?
[ $rc = 1 ] && grep -q "integrity:" <<<"$out" && grep -q "has 0 of its 4 samples" <<<"$out" && ok files-8.3 || bad files-8.3 "check: exit $rc: $out"
head -c 3000 /dev/urandom > noise.db
out=$("$TB" check --db noise.db 2>&1); [ $? = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && ok files-8.4 || bad files-8.4 "$out"
# 9. messages a user can act on
s0=$(date +%s)
out=$(TILEBENCH_PROBE_TIMEOUT=1 "$TB" list --variants "$TB_BUILD/tests/zoo/ctor_hang" --variants "$TB_BUILD/tests/zoo/zoo_fast.so" 2>&1)
rc=$?; took=$(( $(date +%s) - s0 ))
[ $rc = 0 ] && grep -q "did not finish within 1 s (timed out" <<<"$out" && grep -q "TILEBENCH_PROBE_TIMEOUT" <<<"$out" \
    && ! grep -q "signal 9" <<<"$out" && grep -q zoo_fast <<<"$out" && [ $took -lt 10 ] && ok files-9.1 \
    || bad files-9.1 "a hanging constructor: exit $rc in $took s: $out"
n=$(for i in 1 2 3 4 5; do echo "--variants $TB_BUILD/tests/zoo/zoo_null_name.so"; done)
out=$("$TB" list $n 2>&1 >/dev/null)
[ "$(grep -c "variant 0: no name" <<<"$out")" = 1 ] && grep -q "the warning above repeated 4 more times" <<<"$out" \
    && ok files-9.2 || bad files-9.2 "identical warnings not folded: $out"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
