#!/bin/bash
# setup_fail.sh - scripts/setup.sh must exit non-zero when the build fails, even beside a
# binary an earlier build left: a copy of the tracked tree with a compile error planted in
# harness/common/tb.c (the first C file built), built into a fresh directory holding a stale
# bin/tilebench. Environment (set by CTest): TB_SRC. Skipped (77) without nvcc.
set -u
command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || { echo "SKIP: no nvcc"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$TB_SRC"
git ls-files -z --cached --others --exclude-standard | (cd "$TB_SRC" && xargs -0 tar cf -) | (cd "$tmp" && tar xf -)
echo 'this is not C;' >> "$tmp/harness/common/tb.c"
mkdir -p "$tmp/build/bin"; printf '#!/bin/sh\necho stale\n' > "$tmp/build/bin/tilebench"; chmod +x "$tmp/build/bin/tilebench"
out=$(cd "$tmp" && JOBS=1 scripts/setup.sh 2>&1); rc=$?
if [ $rc != 0 ] && grep -q "setup: error: the build failed" <<<"$out" && grep -q "tb.c" <<<"$out"; then
    echo "ok   setup-1.1 setup.sh exits $rc on a planted compile error, naming the file"
    exit 0
fi
echo "FAIL setup-1.1: exit $rc: $(tail -5 <<<"$out")"
exit 1
