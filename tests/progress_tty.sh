#!/bin/bash
# progress_tty.sh - the progress reporter on a pseudo-terminal (util-linux script): a bar with
# cursor control on a real terminal, none at all with TERM=dumb or NO_COLOR, and a failure's
# reason shown with its control characters escaped in every case. Environment: TB_BUILD.
set -u
pass=0; fail=0
ok()  { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail+1)); }
command -v script >/dev/null || { echo "SKIP: no script(1)"; exit 77; }
t="$TB_BUILD/tests/test_progress"
tty_run() { script -qec "env $1 $t" /dev/null 2>&1; }
out=$(tty_run "-u NO_COLOR TERM=xterm")
grep -q "draw=1" <<<"$out" && grep -q $'\x1b\\[K' <<<"$out" && ok progress-1.1 || bad progress-1.1 "no bar on a terminal: $(cat -v <<<"$out")"
for e in "-u NO_COLOR TERM=dumb" "TERM=xterm NO_COLOR=1"; do
    out=$(tty_run "$e")
    grep -q "draw=0" <<<"$out" && ! grep -q $'\x1b' <<<"$out" && grep -q 'died \\x1b\]0;pwned\\x07\\x1b\[2J here' <<<"$out" \
        && ok "progress-1.2 ($e)" || bad "progress-1.2 ($e)" "cursor control or raw escapes: $(cat -v <<<"$out")"
done
out=$(tty_run "-u NO_COLOR TERM=xterm")
! grep -q $'\x1b]0;pwned' <<<"$out" && ok progress-1.3 || bad progress-1.3 "the reason's OSC reached the terminal"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
