#!/bin/bash
# make-prefix.sh - install the build into prefix/ (git-ignored) with the shared libraries the
# GPU machine lacks (libcjson) beside the binaries, so scripts/device-check.sh can run there
# without building. Run here, after scripts/setup.sh; carry "prefix" to the device.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
rm -rf prefix
cmake --install "$build" --prefix prefix >/dev/null
cp -a /usr/lib/x86_64-linux-gnu/libcjson.so.1* prefix/lib/
git rev-parse --short=12 HEAD > prefix/COMMIT 2>/dev/null || echo unknown > prefix/COMMIT
git diff --quiet HEAD 2>/dev/null || echo "+dirty" >> prefix/COMMIT
du -sh prefix
