#!/bin/bash
# fuzz_submission.sh - fuzzes the submission parser with clang's libFuzzer (Debian's clang-14)
# for a bounded time (TB_FUZZ_SECONDS, default 20) from the seed corpus kept in the tree
# (tests/fuzz/corpus-submission/; new inputs go to a temporary directory). A crash, leak or
# sanitizer report fails the test and leaves the input in the log. Skipped (77) without clang.
# Environment (set by CTest): TB_SRC.
set -u
cc=$(command -v clang-14 || command -v clang || true)
[ -n "$cc" ] || { echo "SKIP: no clang"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
H="$TB_SRC/harness"
"$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$H" -I"$H/include" \
    "$TB_SRC/tests/fuzz/fuzz_submission.c" "$H/format/submission_parse.c" "$H/format/submission_plausible.c" \
    "$H/common/op.c" "$H/common/op_gemm.c" "$H/common/op_attention.c" "$H/common/text.c" "$H/common/tb.c" "$H/common/peak.c" \
    -lcjson -lm -o "$tmp/fuzz" 2> "$tmp/build.log" || { echo "FAIL fuzz-0: build"; cat "$tmp/build.log"; exit 1; }
mkdir -p "$tmp/corpus"
"$tmp/fuzz" -max_total_time="${TB_FUZZ_SECONDS:-20}" -max_len=65536 -timeout=5 -rss_limit_mb=1024 \
    "$tmp/corpus" "$TB_SRC/tests/fuzz/corpus-submission" > "$tmp/fuzz.log" 2>&1
rc=$?
tail -3 "$tmp/fuzz.log"
if [ $rc = 0 ]; then echo "ok   fuzz-1 no crash, leak or undefined behaviour in ${TB_FUZZ_SECONDS:-20} s"; exit 0; fi
echo "FAIL fuzz-1: libFuzzer exit $rc"; grep -E "ERROR|SUMMARY|Test unit written" "$tmp/fuzz.log" | head -10
exit 1
