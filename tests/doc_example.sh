#!/bin/sh
# doc_example.sh - builds the example variants of docs/writing-a-variant.md exactly as the page
# tells a user to (the GEMM one, and the attention one of "An attention variant, outside the
# tree"), and checks that each library exports the entry symbol. With DOC_EXAMPLE_KEEP=DIR the
# libraries are copied there (tests/gpu_attention.sh runs the attention one).
#
#   tests/doc_example.sh [NVCC]
#
# Takes the first ```cuda block of the page as my_gemm.cu, and the build command from the
# first line starting with "nvcc " after the marker line <!-- build-command -->, with
# <tilebench> replaced by this checkout and "nvcc" by NVCC (default: nvcc on PATH, then
# /usr/local/cuda/bin/nvcc). Runs it in a temporary directory, then requires
# `nm -D --defined-only` to list tilebench_variant_query as a text symbol. The attention
# example: the first ```cuda block after <!-- attention-example --> as my_attention.cu, the
# first "nvcc " line after <!-- attention-build-command -->.
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

# build SRC SO BLOCK_MARKER CMD_MARKER: the first ```cuda block after BLOCK_MARKER (or the
# page's first when it is empty) as SRC, built by the first "nvcc " line after CMD_MARKER
build() {
    src=$1 so=$2
    awk -v m="$3" 'm == "" || index($0, m) == 1 { armed = 1 }
         armed && /^```cuda[ \t]*$/ { inb = 1; next }
         inb && /^```[ \t]*$/ { exit }
         inb { print }' "$doc" > "$tmp/$src"
    [ -s "$tmp/$src" ] || fail "no \`\`\`cuda block for $src in '$doc'"
    cmd=$(awk -v m="$4" 'index($0, m) == 1 { seen = 1; next }
               seen && /^nvcc / { print; exit }' "$doc")
    [ -n "$cmd" ] || fail "no 'nvcc ...' line after $4 in '$doc'"
    echo "documented: $cmd"
    case "$cmd" in *"<tilebench>"*) ;; *) fail "the build command of $src does not use <tilebench>" ;; esac
    case "$cmd" in *"$src"*"-o $so"*) ;; *) fail "the build command does not build $src into $so" ;; esac
    # Substitute the checkout and the compiler; the rest runs as written, in the temp directory.
    run=$(printf '%s\n' "$cmd" | sed -e "s#<tilebench>#$root#g" -e "s#^nvcc #$nvcc #")
    echo "running:    $run"
    (cd "$tmp" && eval "$run") || fail "the documented build command of $src failed"
    [ -f "$tmp/$so" ] || fail "the documented build command made no $so"
    syms=$(nm -D --defined-only "$tmp/$so") || fail "nm -D could not read $so"
    printf '%s\n' "$syms"
    printf '%s\n' "$syms" | grep -q ' T tilebench_variant_query$' ||
        fail "$so does not export tilebench_variant_query"
    if [ -n "${DOC_EXAMPLE_KEEP:-}" ]; then cp "$tmp/$so" "$DOC_EXAMPLE_KEEP/" || fail "cannot copy $so"; fi
}
build my_gemm.cu my_gemm.so "" "<!-- build-command -->"
build my_attention.cu my_attention.so "<!-- attention-example -->" "<!-- attention-build-command -->"
echo "PASS doc-example"
exit 0
