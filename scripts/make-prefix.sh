#!/bin/bash
# make-prefix.sh - install the build into prefix/ (git-ignored) with the shared libraries the
# GPU machine lacks (libcjson) beside the binaries, so scripts/device-check.sh can run there
# without building. Run here, after scripts/setup.sh; carry "prefix" to the device
# (PREFIX_DIR=prefix-NAME builds another beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
p=${PREFIX_DIR:-prefix}   # another name must be git-ignored too (prefix-*/) to be carried
# build first: the binary's commit stamp (cmake/tb_git_sha.cmake) is taken at build time, and
# an install alone would carry the stamp of the last build (the twentieth session's runs read
# b9fd97e+dirty for commits after it)
[ -f "$build/CMakeCache.txt" ] || { echo "make-prefix: no build in '$build' (run scripts/setup.sh first)" >&2; exit 2; }
if ! cmake --build "$build" -j "$(nproc)" > "$build/prefix-build.log" 2>&1; then
    tail -5 "$build/prefix-build.log" >&2
    echo "make-prefix: the build failed (see $build/prefix-build.log)" >&2
    exit 1
fi
rm -rf "$p"
cmake --install "$build" --prefix "$p" >/dev/null
cp -a /usr/lib/x86_64-linux-gnu/libcjson.so.1* "$p/lib/"
git rev-parse --short=12 HEAD > "$p/COMMIT" 2>/dev/null || echo unknown > "$p/COMMIT"
git diff --quiet HEAD 2>/dev/null || echo "+dirty" >> "$p/COMMIT"
du -sh "$p"
