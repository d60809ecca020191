#!/bin/bash
# setup.sh - install what is missing (apt), then configure and build tilebench into build/.
# On a machine that has everything it goes straight to building. Needs the CUDA toolkit
# (nvcc) at /usr/local/cuda or on PATH; the NVIDIA driver only to run sweeps.
#   scripts/setup.sh            (BUILD_DIR=build, JOBS=$(nproc))
set -euo pipefail
cd "$(dirname "$0")/.."
need=(cmake make pkg-config gcc g++ libsqlite3-dev libcjson-dev libssl-dev libcurl4-openssl-dev
      libmicrohttpd-dev python3 python3-yaml python3-jsonschema python3-matplotlib libxml2-utils curl chromium wrk
      postgresql libpq-dev slurm-wlm)
missing=()
for p in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || nvcc=/usr/local/cuda/bin/nvcc
if [ ! -x "$nvcc" ]; then
    echo "setup: error: no CUDA toolkit (nvcc not on PATH nor at /usr/local/cuda/bin): install the CUDA toolkit" >&2
    exit 2
fi
build=${BUILD_DIR:-build}
start=$(date +%s)
mkdir -p "$build"
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" > "$build/configure.log" 2>&1; then
    tail -20 "$build/configure.log" >&2
    echo "setup: error: cmake could not configure the build (see $build/configure.log)" >&2
    exit 1
fi
# the build's own exit status decides: a binary left by an earlier build proves nothing
if ! cmake --build "$build" -j "${JOBS:-$(nproc)}" > "$build/build.log" 2>&1; then
    grep -E "error|Error" "$build/build.log" | head -20 >&2 || true
    echo "setup: error: the build failed (see $build/build.log)" >&2
    exit 1
fi
grep -E "warning|error|Error" "$build/build.log" || true
echo "setup: built in $(( $(date +%s) - start )) s ($build/, log in $build/build.log)"
# ptxas -v of every kernel compiled by this build: none may spill (docs/perf.md)
k=$(grep -c "bytes spill stores" "$build/build.log" || true)
s=$(grep "bytes spill stores" "$build/build.log" | grep -vc " 0 bytes spill stores, 0 bytes spill loads" || true)
echo "setup: ptxas: $k kernel compilations in this build, $s with spills"
