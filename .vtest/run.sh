#!/bin/bash
# throwaway device script (not part of the repo)
ROOT=$(cd .. && pwd)
set -o pipefail
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv
GRID="128 128 32 2 4 3 2;128 128 32 2 4 4 2;128 256 32 2 4 3 1;256 128 32 4 2 3 1;64 128 32 2 2 4 2;128 64 32 2 2 4 2;128 128 64 2 4 3 1;64 64 64 2 2 4 4;128 128 32 2 2 4 1;128 256 64 2 4 3 1;256 128 64 4 2 3 1;128 128 64 2 2 3 1"
t0=$(date +%s)
cmake -S . -B b -G Ninja -DTB_MAIN=$ROOT "-DTB_MMA_SYNC_GRID=$GRID" > $OUT/cmake.log 2>&1 || { cat $OUT/cmake.log; exit 1; }
cmake --build b -j16 > $OUT/build.log 2>&1 || { tail -50 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
nvcc -std=c++17 -O2 -arch=sm_90 -I$ROOT/harness/include -o vtest vtest.cu -ldl || exit 1
L=b/lib/tilebench/variants
./vtest check $L/*.so > $OUT/check.log 2>&1; echo "check rc=$?"
grep -E "FAIL|LAUNCH|SETUP" $OUT/check.log | head -40; tail -1 $OUT/check.log
./vtest time $L/*.so 2>&1 | grep TIME | tee $OUT/time.log
for f in $L/mma_sync_128x128x32_s3_w8.so $L/mma_sync_128x256x32_s3_w8.so; do cuobjdump -sass -arch sm_90 $f > $OUT/$(basename $f .so).sass 2>&1; done
grep -c "LDL\|STL" $OUT/*.sass
