#!/bin/bash
# exp-point.sh - one experimental library of a wgmma grid point, built by hand (no CMake target):
# the family's source compiled with the point's knobs and extra -D flags (an experiment's
# TB_EXP_*: variants/wgmma/wgmma_kernel.cuh lists them), its variant named with "_exp-NAME"
# (TB_EXP_NAME), into OUTDIR. For a device session: build here, carry OUTDIR (git-ignored when
# named prefix-*) and give it to `sweep --variants` beside the shipped points.
#   scripts/exp-point.sh bf16 OUTDIR NAME "TM TN STAGES CM CN SCHED RASTER SW [EPILOGUE]" ["-D..."]
#   scripts/exp-point.sh e4m3 OUTDIR NAME "TM TN STAGES CM CN SCHED RASTER SW PROMOTE [STAGGER [TAIL]]" ["-D..."]
# The fields are the grid's (variants/wgmma/CMakeLists.txt, variants/wgmma_fp8/CMakeLists.txt).
# Prints ptxas's register and spill lines; exit 1 when nvcc fails.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
fam=$1 out=$2 name=$3 extra=${5:-}
read -r -a f <<<"$4"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
sched=${f[5]} raster=${f[6]}
pp=0; [ "$sched" = pingpong ] && pp=1
case $raster in m) rn=0 ;; n) rn=1 ;; h) rn=2 ;; *) echo "exp-point: raster m, n or h" >&2; exit 2 ;; esac
defs=(-DTB_TILE_M=${f[0]} -DTB_TILE_N=${f[1]} -DTB_STAGES=${f[2]} -DTB_CLUSTER_M=${f[3]} -DTB_CLUSTER_N=${f[4]}
      -DTB_PINGPONG=$pp -DTB_RASTER_N=$rn -DTB_SWIZZLE=${f[7]} "-DTB_SASS=\"sm_90a\"" "-DTB_EXP_NAME=\"$name\"")
case $fam in
    bf16)
        epi=${f[8]:-swizzled}; ec=0; sk=0
        [ "$epi" = conflict ] && ec=1
        [ "$epi" = streamk ] && sk=1
        defs+=(-DTB_EPI_CONFLICT=$ec -DTB_STREAMK=$sk)
        src=variants/wgmma/wgmma.cu
        lib=wgmma_bf16_${f[0]}x${f[1]}x64_c${f[3]}x${f[4]}_s${f[2]}_${sched}_raster${raster}_sw${f[7]}
        [ $ec = 1 ] && lib+=_epilogue-conflict
        [ $sk = 1 ] && lib+=_tail-streamk ;;
    e4m3)
        stg=${f[9]:-0}; sk=${f[10]:-0}
        defs+=(-DTB_PROMOTE=${f[8]} -DTB_PROMOTE_STAGGER=$stg -DTB_STREAMK=$sk)
        src=variants/wgmma_fp8/wgmma_fp8.cu
        lib=wgmma_e4m3_${f[0]}x${f[1]}x128_c${f[3]}x${f[4]}_s${f[2]}_${sched}_raster${raster}_sw${f[7]}_promote-${f[8]}
        [ "$stg" = 1 ] && lib+=_stagger-1
        [ "$sk" = 1 ] && lib+=_tail-streamk ;;
    *) echo "exp-point: family bf16 or e4m3" >&2; exit 2 ;;
esac
mkdir -p "$out"
# shellcheck disable=SC2086
"$nvcc" -O3 -DNDEBUG --generate-code=arch=compute_90a,code=[compute_90a,sm_90a] -Xcompiler=-fPIC \
    -Xcompiler=-fvisibility=hidden -Xptxas=-v --expt-relaxed-constexpr -Xcompiler=-Wall,-Wextra \
    "${defs[@]}" $extra -I"$PWD/harness/include" -shared -o "$out/${lib}_exp-$name.so" "$src" \
    -Xlinker -rpath -Xlinker '$ORIGIN/../lib' -lcudart > "$out/${lib}_exp-$name.log" 2>&1 ||
    { tail -20 "$out/${lib}_exp-$name.log" >&2; exit 1; }
grep -E "registers|spill" "$out/${lib}_exp-$name.log" | sort | uniq -c | sort -rn | head -6
echo "exp-point: $out/${lib}_exp-$name.so"
