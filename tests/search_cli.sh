#!/bin/bash
# search_cli.sh - tilebench search (issue 25) without a GPU, replaying the recorded H100 sweep in
# tests/data/h100-grid-search.db (the wgmma grid's 31 points on the llm shapes with M = 128 and
# 1024 and on 4096^3; 527 measurements, eleventh session, docs/search.md):
#   1 the search finds the sweep's winner (or a point within 1 %) on at least 90 % of the
#     shapes, spending at most a third of the sweep's GPU time, and refitting lowers the
#     model's error on what it timed
#   2 --explain: every timed point's prediction beside its time, the rank correlation
#   3 --table: a dispatch table in auto-table.json's form, written whole
#   4 bad input: one line, exit 2, nothing written
# Environment (set by CTest): TB, TB_SRC.
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
pct=$(sed -n 's/.* s (\([0-9]*\) %)$/\1/p' <<<"$out")
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

"$TB" search --replay "$tmp/rec.db" --table "$tmp/t.json" > /dev/null 2>&1; rc=$?
/usr/bin/python3 - "$tmp/t.json" <<'PYEOF' && [ $rc -le 1 ] && [ ! -e "$tmp/t.json.tmp" ] && ok search-3.1 || bad search-3.1 "exit $rc; table: $(head -c 300 "$tmp/t.json" 2>&1)"
import json, sys
t = json.load(open(sys.argv[1]))
assert len(t["shapes"]) == 17 and t["points"], t
for m, n, k, i in t["shapes"]:
    assert 0 <= i < len(t["points"])
    f = t["points"][i].split()
    assert len(f) in (8, 9) and f[5] in ("cooperative", "pingpong"), f
PYEOF

one_line() {   # one_line ID EXPECT ARGS...: exit 2 and one line holding EXPECT
    local id=$1 want=$2; shift 2
    local o; o=$("$TB" search "$@" 2>&1); local r=$?
    [ $r = 2 ] && [ "$(wc -l <<<"$o")" = 1 ] && grep -q -- "$want" <<<"$o" && ok "$id" || bad "$id" "exit $r: $o"
}
one_line search-4.1 "--replay" --shapes square
one_line search-4.2 "no-such.db" --replay "$tmp/no-such.db"
one_line search-4.3 "--quantile" --replay "$tmp/rec.db" --quantile 2
one_line search-4.4 "--per-round" --replay "$tmp/rec.db" --per-round 0
one_line search-4.5 "unknown" --replay "$tmp/rec.db" --frobnicate
one_line search-4.6 "family 'nosuch'" --replay "$tmp/rec.db" --family nosuch
one_line search-4.7 "takes no operand" --replay "$tmp/rec.db" extra
"$TB" search --help | grep -q "usage: tilebench search" && ok search-4.8 || bad search-4.8 "--help"
[ ! -e "$tmp/no-such.db" ] && ok search-4.9 || bad search-4.9 "a missing database was created"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
