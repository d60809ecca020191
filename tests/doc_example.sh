#!/bin/sh
# doc_example.sh - builds the example variant of docs/writing-a-variant.md exactly as the page
# tells a user to, and checks that the library exports the entry symbol.
#
#   tests/doc_example.sh [NVCC]
#
# Takes the first ```cuda block of the page as my_gemm.cu, and the build command from the
# first line starting with "nvcc " after the marker line <!-- build-command -->, with
# <tilebench> replaced by this checkout and "nvcc" by NVCC (default: nvcc on PATH, then
# /usr/local/cuda/bin/nvcc). Runs it in a temporary directory, then requires
# `nm -D --defined-only` to list tilebench_variant_query as a text symbol.
# Exit 0: pass; 1: fail (each failure says why); 77: skipped, no nvcc.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
doc="$root/docs/writing-a-variant.md"
nvcc=${1:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

fail() { echo "FAIL doc-example: $*"; exit 1; }

[ -r "$doc" ] || fail "cannot read '$doc'"
if [ ! -x "$nvcc" ] && ! command -v "$nvcc" >/dev/null 2>&1; then
    echo "SKIP doc-example: no nvcc (tried '$nvcc')"
    exit 77
fi

tmp=$(mktemp -d) || fail "cannot make a temporary directory"
trap 'rm -rf "$tmp"' EXIT

# The first ```cuda block, fences excluded.
awk '/^```cuda[ \t]*$/ { inb = 1; next }
     inb && /^```[ \t]*$/ { exit }
     inb { print }' "$doc" > "$tmp/my_gemm.cu"
[ -s "$tmp/my_gemm.cu" ] || fail "no \`\`\`cuda block in '$doc'"

# The first "nvcc ..." line after the marker.
cmd=$(awk '/<!-- build-command -->/ { seen = 1; next }
           seen && /^nvcc / { print; exit }' "$doc")
[ -n "$cmd" ] || fail "no 'nvcc ...' line after <!-- build-command --> in '$doc'"
echo "documented: $cmd"
case "$cmd" in *"<tilebench>"*) ;; *) fail "the build command does not use <tilebench>" ;; esac
case "$cmd" in *"my_gemm.cu"*"-o my_gemm.so"*) ;; *) fail "the build command does not build my_gemm.cu into my_gemm.so" ;; esac

# Substitute the checkout and the compiler; the rest runs as written, in the temp directory.
run=$(printf '%s\n' "$cmd" | sed -e "s#<tilebench>#$root#g" -e "s#^nvcc #$nvcc #")
echo "running:    $run"
(cd "$tmp" && eval "$run") || fail "the documented build command failed"
[ -f "$tmp/my_gemm.so" ] || fail "the documented build command made no my_gemm.so"

syms=$(nm -D --defined-only "$tmp/my_gemm.so") || fail "nm -D could not read my_gemm.so"
printf '%s\n' "$syms"
printf '%s\n' "$syms" | grep -q ' T tilebench_variant_query$' ||
    fail "my_gemm.so does not export tilebench_variant_query"
echo "PASS doc-example"
exit 0
