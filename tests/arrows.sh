#!/bin/bash
# arrows.sh - the arrows that must never exist (docs/architecture.md), checked folder by folder,
# so a new file is covered the day it is added:
#   1.1 the tilebench binary links no CUDA library
#   1.2 nothing of the parent (cli/ driver/ store/ report/ client/) or of common/ includes a CUDA, CUPTI,
#       NVTX or cuBLAS header, or anything of worker/ or device/
#   1.3 sqlite3.h is included under store/ and nowhere else
#   1.4 dlopen is called in worker/loader.c and common/nvml.c and nowhere else
#   1.5 variants include nothing of the harness but the public ABI header (a sibling variant
#       folder's .cuh, ../wgmma/wgmma_ptx.cuh say, is variants, not harness)
#   1.6 nothing of the worker (worker/ device/) includes the store, the driver, the cli or report
#   1.7 common/ includes only common/ and the ABI header; store/ only store/ and common/
#       (the store never prints, never calls up into the cli); report/ never includes cli/
#       or driver/
#   1.8 every #include of a harness header names its folder, and no include cycle exists
#       between modules (x.c, x.h and a private x_int.h are one module)
#   1.9 every source file under harness/ opens with a comment saying what it owns
#   1.10 server/ includes nothing of the harness but format/ and common/, and only its
#       store_sqlite.c includes sqlite3.h, only its store_pg_int.h libpq-fe.h
set -u
pass=0; fail=0
ok() { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail+1)); }
cd "$TB_SRC"
H=harness
# the files of some folders of harness/, one path a line (not recursing into the folders of
# another rule: worker/ includes worker/counters/)
files() { local d; for d in "$@"; do [ -d "$H/$d" ] && find "$H/$d" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \); done | sort; }
# the includes (file:line:text) of those files that match an extended regex
includes() { local re=$1; shift; files "$@" | xargs -r grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($re)" || true; }
# the same for quoted includes only (the project's own headers)
qincludes() { local re=$1; shift; files "$@" | xargs -r grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($re)" || true; }

libs=$(ldd "$TB" 2>/dev/null | grep -E 'libcuda|libcudart|libcublas|libcupti|libnvidia' || true)
[ -z "$libs" ] && ok arrows-1.1 || bad arrows-1.1 "tilebench links CUDA: $libs"

parent="cli driver store report client format"
hits=$(includes 'cuda|cublas|cupti|nvtx|nvperf|device/|worker/' $parent common)
[ -z "$hits" ] && ok arrows-1.2 || bad arrows-1.2 "the parent includes CUDA or the worker: $hits"

hits=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"]sqlite3.h' harness reference variants tests/zoo \
       | grep -v "^$H/store/" || true)   # (server/ has its own engine: 1.10)
[ -z "$hits" ] && ok arrows-1.3 || bad arrows-1.3 "sqlite3.h outside harness/store/: $hits"

hits=$(files cli driver store report client format common worker device | grep -E '\.(c|cu)$' | xargs -r grep -lE '\bdlopen *\(' \
       | grep -vE "^$H/(worker/loader|common/nvml)\.c$" || true)
[ -z "$hits" ] && ok arrows-1.4 || bad arrows-1.4 "dlopen outside worker/loader.c and common/nvml.c: $hits"

hits=$(grep -rhoE '#include *"[^"]*"' variants | grep -vE '"(tilebench/variant.h|[^/]*\.cuh|\.\./[a-z0-9_]+/[^/"]*\.cuh|\.\./common/[^"]*)"' || true)
[ -z "$hits" ] && ok arrows-1.5 || bad arrows-1.5 "variants include harness internals: $hits"

hits=$(includes 'sqlite|store/|driver/|cli/|report/|client/|curl' worker device)
[ -z "$hits" ] && ok arrows-1.6 || bad arrows-1.6 "the worker knows the store or the parent: $hits"

hits=$( (qincludes '[a-z_]+/' common | grep -vE '"(common|tilebench)/'
         qincludes '[a-z_]+/' store | grep -vE '"(common|store)/'
         qincludes 'cli/|driver/' report
         qincludes '[a-z_]+/' format | grep -vE '"(common|format)/') || true)
[ -z "$hits" ] && ok arrows-1.7 || bad arrows-1.7 "a lower folder includes a higher one: $hits"

# 1.8: every quoted include under harness/ must name an existing file from the include root
# (harness/, or the project root for reference/); then the module graph must sort
bare=""; edges=""
while IFS=: read -r f _ text; do
    inc=$(sed -E 's/.*"([^"]+)".*/\1/' <<<"$text")
    if [ -f "$H/$inc" ]; then tgt="$H/$inc"
    elif [ -f "$H/include/$inc" ]; then tgt="$H/include/$inc"
    elif [ -f "$inc" ]; then tgt="$inc"
    elif [ -f "$(dirname "$f")/$inc" ] && [[ $inc != */* ]] && [[ $f == $H/device/* || $f == $H/worker/counters/cupti_c/* ]]; then
        tgt="$(dirname "$f")/$inc"
    else bare+=" $f:$inc"; continue; fi
    a=${f%.*}; a=${a%_int}; b=${tgt%.*}; b=${b%_int}
    [ "$a" != "$b" ] && edges+="$a $b"$'\n'
done < <(files cli driver store report client format common worker device include | xargs -r grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"')
loop=$(printf '%s' "$edges" | tsort 2>&1 >/dev/null | grep -v '^tsort: -: input contains a loop:$' || true)
if [ -n "$bare" ]; then bad arrows-1.8 "includes that do not name their folder:$bare"
elif [ -n "$loop" ]; then bad arrows-1.8 "an include cycle: $(tr '\n' ' ' <<<"$loop")"
else ok arrows-1.8; fi

hits=""
for f in $(files cli driver store report client format common worker device include); do
    head -c 3 "$f" | grep -qE '^(/\*|//)' || hits+=" $f"
done
[ -z "$hits" ] && ok arrows-1.9 || bad arrows-1.9 "files that do not open with a comment:$hits"
# 1.10: the server shares only the submission format's parser (harness/format/) and what it
# needs (common/); behind its storage seam, only store_sqlite.c includes sqlite3.h and only
# the PostgreSQL engine's private header (store_pg_int.h, for store_pg.c and store_pg_import.c)
# libpq-fe.h
hits=$( (grep -HnE '#[[:space:]]*include[[:space:]]*"[a-z_]+/' server/*.c server/*.h 2>/dev/null | grep -vE '"(format|common)/'
         grep -lE '#[[:space:]]*include[[:space:]]*[<"]sqlite3\.h' server/*.c server/*.h 2>/dev/null | grep -v '^server/store_sqlite.c$'
         grep -lE '#[[:space:]]*include[[:space:]]*[<"]libpq-fe\.h' server/*.c server/*.h 2>/dev/null | grep -v '^server/store_pg_int.h$') || true)
[ -z "$hits" ] && ok arrows-1.10 || bad arrows-1.10 "the server reaches past its seam or the format: $hits"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
