#!/bin/bash
# arrows.sh - the arrows that must never exist (../shared/architecture.md): the parent never
# links or includes CUDA; only store.c includes sqlite3.h; only loader.c and nvml.c dlopen;
# variants include nothing of the harness but the public ABI header.
set -u
pass=0; fail=0
ok() { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail+1)); }
cd "$TB_SRC"
libs=$(ldd "$TB" 2>/dev/null | grep -E 'libcuda|libcudart|libcublas|libcupti|libnvidia' || true)
[ -z "$libs" ] && ok arrows-1.1 || bad arrows-1.1 "tilebench links CUDA: $libs"
parent="main.c cmd_list.c cmd_sweep.c cmd_show.c cmd_export.c cmd_doctor.c spawn.c shapes.c paths.c hash.c catalog.c store.c export.c show.c sweep.c tb.c record.c wire.c stats.c sass.c nvml.c roofline.c"
hits=$(cd harness && grep -lE '#include *[<"](cuda|cublas|cupti|device/)' $parent 2>/dev/null || true)
[ -z "$hits" ] && ok arrows-1.2 || bad arrows-1.2 "parent sources include CUDA: $hits"
hits=$(grep -rlE '#include *[<"]sqlite3.h' harness reference variants | grep -v '^harness/store.c$' || true)
[ -z "$hits" ] && ok arrows-1.3 || bad arrows-1.3 "sqlite3.h outside store.c: $hits"
hits=$(grep -lE '\bdlopen *\(' harness/*.c | grep -vE '^harness/(loader|nvml).c$' || true)
[ -z "$hits" ] && ok arrows-1.4 || bad arrows-1.4 "dlopen outside loader.c/nvml.c: $hits"
hits=$(grep -rhoE '#include *"[^"]*"' variants | grep -vE '"(tilebench/variant.h|[^/]*\.cuh|\.\./common/[^"]*)"' || true)
[ -z "$hits" ] && ok arrows-1.5 || bad arrows-1.5 "variants include harness internals: $hits"
hits=$(cd harness && grep -lE 'sqlite|store\.h' measure_cold.c validate.c worker.c worker_calibrate.c loader.c device/*.cu 2>/dev/null || true)
[ -z "$hits" ] && ok arrows-1.6 || bad arrows-1.6 "worker side knows the store: $hits"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
